// SPDX-License-Identifier: MIT
/*
 * The agent's record file: <dir>/<pid>.gpu, a header and fixed-size
 * records, appended in whole records. Application threads only stage
 * records in memory (under agent.lock); the flusher thread writes them a
 * few times a second, swapping the stage for a spare so that nobody waits
 * on the disk, and a process that dies loses well under a second. A full
 * stage drops records and counts them. Strings and launch stacks are
 * interned: each is written once, before the first record that names it,
 * and defined anew when a definition was dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cuda/agent/agent.h"

#define STAGE_RECORDS 32768 /* 4 MiB: a quarter second of 130 000 records a second */

static void intern_free(struct agent_intern *t)
{
	if (t->texts)
		for (uint32_t i = 0; i < t->cap; i++)
			free(t->texts[i]);
	free(t->keys), free(t->ids), free(t->texts), free(t->stack_keys);
	memset(t, 0, sizeof(*t));
}

/* Everything defined so far is forgotten (lock held): a new file knows
 * none of it, and after a dropped definition it is written again. */
static void forget_definitions(void)
{
	/* Ids go on rising: a launch in flight may still name an old one,
	 * which must not come to mean something else. */
	intern_free(&agent.strings);
	intern_free(&agent.stacks);
	agent.definitions++;
	memset(agent.thread_names, 0, sizeof(agent.thread_names));
	agent.definitions_lost = false;
	if (agent.py.codes) {
		/* Code objects cache their names' string ids. */
		py_code_cache_free(agent.py.codes);
		agent.py.codes = NULL;
		if (py_code_cache_new(&agent.py.codes) < 0)
			agent.py.ready = false;
	}
}

/* The file, made anew: a pid reused within one recording (the old file
 * not yet read and removed) gets a name of its own. */
static int create_file(const char *dir)
{
	int fd = -1;

	for (int n = 0; n < 100 && fd < 0; n++) {
		if (n)
			snprintf(agent.path, sizeof(agent.path), "%s/%d-%d.gpu", dir, (int)getpid(), n);
		else
			snprintf(agent.path, sizeof(agent.path), "%s/%d.gpu", dir, (int)getpid());
		fd = open(agent.path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	return fd < 0 ? -EEXIST : fd;
}

int agent_out_open(const char *dir)
{
	struct gpu_file_header h = { .version = GPU_FILE_VERSION, .record_size = GPU_RECORD_SIZE };
	struct rlimit lim;
	int fd = create_file(dir);

	if (fd < 0)
		return fd;
	memcpy(h.magic, GPU_FILE_MAGIC, sizeof(h.magic));
	h.pid = (uint32_t)getpid();
	h.start_ns = monotonic_ns();
	if (write(fd, &h, sizeof(h)) != sizeof(h)) {
		close(fd);
		unlink(agent.path);
		return -EIO;
	}
	pthread_mutex_lock(&agent.write_lock);
	pthread_mutex_lock(&agent.lock);
	forget_definitions();
	if (!agent.staged) {
		agent.staged = calloc(STAGE_RECORDS, sizeof(*agent.staged));
		agent.spare = calloc(STAGE_RECORDS, sizeof(*agent.spare));
		agent.capstaged = agent.staged && agent.spare ? STAGE_RECORDS : 0;
	}
	agent.nstaged = 0;
	agent.dropped = 0;
	agent.written = sizeof(h);
	/* Past RLIMIT_FSIZE a write raises SIGXFSZ, which kills: stop short. */
	agent.size_limit = getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
				   ? (uint64_t)lim.rlim_cur : UINT64_MAX;
	agent.fd = fd; /* published with its header written */
	pthread_mutex_unlock(&agent.lock);
	pthread_mutex_unlock(&agent.write_lock);
	return 0;
}

static void lost(uint64_t records)
{
	pthread_mutex_lock(&agent.lock);
	agent.dropped += records;
	agent.definitions_lost = true;
	pthread_mutex_unlock(&agent.lock);
}

/* Writes n records from buf (write_lock held). A short write that cannot
 * be finished is cut back to whole records, so the file stays readable. */
static void write_records(const struct gpu_record *buf, uint32_t n)
{
	size_t len = (size_t)n * sizeof(*buf), done = 0;

	if (agent.fd < 0 || agent.written + len + (1u << 20) > agent.size_limit) {
		lost(n);
		return;
	}
	while (done < len) {
		ssize_t w = write(agent.fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (done < len) {
		size_t whole = done - done % sizeof(*buf);

		if (whole != done && ftruncate(agent.fd, (off_t)(agent.written + whole)) < 0) {
			close(agent.fd); /* misaligned for good: no more records */
			agent.fd = -1;
		}
		lost((len - whole) / sizeof(*buf));
		done = whole;
	}
	agent.written += done;
}

void agent_stage(const struct gpu_record *r)
{
	if (!agent.capstaged || agent.fd < 0 || agent.nstaged == agent.capstaged) {
		agent.dropped++;
		if (r->type == GPU_REC_STRING || r->type == GPU_REC_STACK)
			agent.definitions_lost = true;
		return;
	}
	agent.staged[agent.nstaged++] = *r;
	if (agent.nstaged == agent.capstaged / 2)
		pthread_cond_signal(&agent.flush_now);
}

void agent_flush(void)
{
	struct gpu_record *full;
	uint32_t n;

	pthread_mutex_lock(&agent.write_lock);
	pthread_mutex_lock(&agent.lock);
	if (agent.dropped && agent.nstaged < agent.capstaged) {
		struct gpu_record r = { .type = GPU_REC_DROPPED };

		r.u.dropped.records = agent.dropped;
		agent.dropped = 0;
		agent.staged[agent.nstaged++] = r;
	}
	full = agent.staged;
	n = agent.nstaged;
	agent.staged = agent.spare;
	agent.spare = full;
	agent.nstaged = 0;
	if (agent.definitions_lost)
		forget_definitions(); /* what comes next defines them again */
	pthread_mutex_unlock(&agent.lock);
	if (n)
		write_records(full, n);
	pthread_mutex_unlock(&agent.write_lock);
}

void agent_out_close(void)
{
	agent_flush();
	pthread_mutex_lock(&agent.write_lock);
	pthread_mutex_lock(&agent.lock);
	if (agent.fd >= 0)
		close(agent.fd);
	agent.fd = -1;
	pthread_mutex_unlock(&agent.lock);
	pthread_mutex_unlock(&agent.write_lock);
}

void agent_out_unlink(void)
{
	char *slash;

	if (!agent.path[0])
		return;
	unlink(agent.path);
	/* The folder too, when this was its last file: trainsample, which
	 * made it, is gone or never read it. */
	slash = strrchr(agent.path, '/');
	if (slash) {
		*slash = 0;
		rmdir(agent.path);
		*slash = '/';
	}
}

static uint64_t hash_bytes(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h | 1; /* 0 marks an empty slot */
}

/* A 64-bit finalizer (splitmix64's): every launch hashes its stack's
 * nodes, so this is kept cheap. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Grows t to twice its size (lock held); false when memory is short. */
static bool intern_grow(struct agent_intern *t, bool strings)
{
	uint32_t cap = t->cap ? t->cap * 2 : 1024;
	struct agent_intern n = { .cap = cap, .count = t->count };

	n.keys = calloc(cap, sizeof(*n.keys));
	n.ids = calloc(cap, sizeof(*n.ids));
	if (strings)
		n.texts = calloc(cap, sizeof(*n.texts));
	else
		n.stack_keys = calloc(cap, 2 * sizeof(*n.stack_keys));
	if (!n.keys || !n.ids || (strings ? !n.texts : !n.stack_keys)) {
		free(n.keys), free(n.ids), free(n.texts), free(n.stack_keys);
		return false;
	}
	for (uint32_t i = 0; i < t->cap; i++) {
		uint32_t j;

		if (!t->keys[i])
			continue;
		for (j = (uint32_t)t->keys[i] & (cap - 1); n.keys[j]; j = (j + 1) & (cap - 1))
			;
		n.keys[j] = t->keys[i];
		n.ids[j] = t->ids[i];
		if (strings) {
			n.texts[j] = t->texts[i];
		} else {
			n.stack_keys[2 * j] = t->stack_keys[2 * i];
			n.stack_keys[2 * j + 1] = t->stack_keys[2 * i + 1];
		}
	}
	free(t->keys), free(t->ids), free(t->texts), free(t->stack_keys);
	*t = n;
	return true;
}

uint32_t agent_string(const char *text)
{
	struct agent_intern *t = &agent.strings;
	size_t len = strnlen(text, 1u << 16);
	uint64_t h = hash_bytes(text, len, 0xcbf29ce484222325ull);
	struct gpu_record r = { .type = GPU_REC_STRING };
	uint32_t j, id;

	if ((t->count + 1) * 2 > t->cap && !intern_grow(t, true))
		return 0;
	for (j = (uint32_t)h & (t->cap - 1); t->keys[j]; j = (j + 1) & (t->cap - 1))
		if (t->keys[j] == h && !strncmp(t->texts[j], text, len) && !t->texts[j][len])
			return t->ids[j];
	t->texts[j] = strndup(text, len);
	if (!t->texts[j])
		return 0;
	id = ++agent.next_string;
	t->keys[j] = h;
	t->ids[j] = id;
	t->count++;
	for (size_t off = 0; off < len || off == 0; off += GPU_STRING_PIECE) {
		size_t n = len - off < GPU_STRING_PIECE ? len - off : GPU_STRING_PIECE;

		memset(&r.u, 0, sizeof(r.u));
		r.u.string = (struct gpu_rec_string){ .id = id, .total = (uint32_t)len,
						      .offset = (uint32_t)off, .len = (uint16_t)n };
		memcpy(r.u.string.text, text + off, n);
		agent_stage(&r);
		if (!len)
			break;
	}
	return id;
}

uint32_t agent_stack_node(uint32_t parent, uint32_t name, uint32_t file, uint32_t line)
{
	struct agent_intern *t = &agent.stacks;
	uint64_t k0 = (uint64_t)parent << 32 | name, k1 = (uint64_t)file << 32 | line;
	uint64_t h = mix(k0 ^ mix(k1)) | 1;
	struct gpu_record r = { .type = GPU_REC_STACK };
	uint32_t j;

	if ((t->count + 1) * 2 > t->cap && !intern_grow(t, false))
		return 0;
	for (j = (uint32_t)h & (t->cap - 1); t->keys[j]; j = (j + 1) & (t->cap - 1))
		if (t->keys[j] == h && t->stack_keys[2 * j] == k0 && t->stack_keys[2 * j + 1] == k1)
			return t->ids[j];
	t->keys[j] = h;
	t->ids[j] = ++agent.next_stack;
	t->stack_keys[2 * j] = k0;
	t->stack_keys[2 * j + 1] = k1;
	t->count++;
	r.u.stack = (struct gpu_rec_stack){ t->ids[j], parent, name, file, line };
	agent_stage(&r);
	return t->ids[j];
}

void agent_status(enum gpu_status status, const char *text)
{
	struct gpu_record r = { .type = GPU_REC_STATUS };

	pthread_mutex_lock(&agent.lock);
	r.u.status.status = status;
	r.u.status.text = text ? agent_string(text) : 0;
	agent_stage(&r);
	pthread_mutex_unlock(&agent.lock);
	agent_flush();
}

// SPDX-License-Identifier: MIT
/*
 * The agent's record file: <dir>/<pid>.gpu, a header and fixed-size
 * records, appended in whole records. Records are staged in memory under
 * agent.lock and written by agent_flush (the flusher thread calls it a few
 * times a second, so a process that dies loses well under a second), or
 * when the stage is full. Strings and launch stacks are interned: each is
 * written once, before the first record that names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda/agent.h"

#define STAGE_RECORDS 8192

uint64_t agent_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void intern_free(struct agent_intern *t)
{
	if (t->texts)
		for (uint32_t i = 0; i < t->cap; i++)
			free(t->texts[i]);
	free(t->keys), free(t->ids), free(t->texts), free(t->stack_keys);
	memset(t, 0, sizeof(*t));
}

/* A new file knows none of the strings and stacks the last one defined. */
static void forget_definitions(void)
{
	pthread_mutex_lock(&agent.lock);
	intern_free(&agent.strings);
	intern_free(&agent.stacks);
	agent.next_string = agent.next_stack = 0;
	memset(agent.thread_names, 0, sizeof(agent.thread_names));
	if (agent.py.codes) {
		/* Code objects cache their names' string ids. */
		py_code_cache_free(agent.py.codes);
		agent.py.codes = NULL;
		if (py_code_cache_new(&agent.py.codes) < 0)
			agent.py.ready = false;
	}
	pthread_mutex_unlock(&agent.lock);
}

int agent_out_open(const char *dir)
{
	struct gpu_file_header h = { .version = GPU_FILE_VERSION, .record_size = GPU_RECORD_SIZE };
	char path[320];

	forget_definitions();
	snprintf(path, sizeof(path), "%s/%d.gpu", dir, (int)getpid());
	/* O_EXCL: a pid reused within one recording starts a file of its own
	 * only after the old one is read and removed. */
	agent.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (agent.fd < 0)
		return -errno;
	memcpy(h.magic, GPU_FILE_MAGIC, sizeof(h.magic));
	h.pid = (uint32_t)getpid();
	h.start_ns = agent_now_ns();
	if (write(agent.fd, &h, sizeof(h)) != sizeof(h)) {
		close(agent.fd);
		agent.fd = -1;
		unlink(path);
		return -EIO;
	}
	if (!agent.staged) {
		agent.staged = calloc(STAGE_RECORDS, sizeof(*agent.staged));
		agent.capstaged = agent.staged ? STAGE_RECORDS : 0;
	}
	return 0;
}

/* Lock held. */
static void write_staged(void)
{
	size_t len = (size_t)agent.nstaged * sizeof(*agent.staged);
	const char *at = (const char *)agent.staged;

	while (len && agent.fd >= 0) {
		ssize_t n = write(agent.fd, at, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			agent.dropped += len / sizeof(*agent.staged);
			break;
		}
		at += n;
		len -= (size_t)n;
	}
	agent.nstaged = 0;
}

void agent_stage(const struct gpu_record *r)
{
	if (!agent.capstaged || agent.fd < 0) {
		agent.dropped++;
		return;
	}
	if (agent.nstaged == agent.capstaged)
		write_staged();
	agent.staged[agent.nstaged++] = *r;
}

void agent_flush(void)
{
	pthread_mutex_lock(&agent.lock);
	if (agent.dropped && agent.nstaged < agent.capstaged) {
		struct gpu_record r = { .type = GPU_REC_DROPPED };

		r.u.dropped.records = agent.dropped;
		agent.dropped = 0;
		agent.staged[agent.nstaged++] = r;
	}
	write_staged();
	pthread_mutex_unlock(&agent.lock);
}

void agent_out_close(void)
{
	agent_flush();
	pthread_mutex_lock(&agent.lock);
	if (agent.fd >= 0)
		close(agent.fd);
	agent.fd = -1;
	pthread_mutex_unlock(&agent.lock);
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

// SPDX-License-Identifier: MIT
/* The .tsprof writer and reader: round trips, truncation, corruption. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/formats.h"
#include "formats/profile_hooks.h"
#include "formats/tsprof_layout.h"
#include "formats/tsprof_replay.h"

/* ---- temporary files ---- */

static char test_dir[64];

static void make_dir(void)
{
	strcpy(test_dir, "/tmp/tsprof_test.XXXXXX");
	cr_assert_not_null(mkdtemp(test_dir));
}

static void remove_dir(void)
{
	DIR *d = opendir(test_dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	rmdir(test_dir);
}

TestSuite(tsprof, .init = make_dir, .fini = remove_dir, .timeout = 120);

static const char *tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", test_dir, name);
	return buf;
}

static uint8_t *read_whole(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *data;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	data = malloc((size_t)st.st_size + 1);
	cr_assert_not_null(data);
	cr_assert_eq(read(fd, data, (size_t)st.st_size), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return data;
}

static void write_whole(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, data, size), (ssize_t)size);
	close(fd);
}

static off_t file_size(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	return st.st_size;
}

/* ---- building profiles ---- */

struct sample_log {
	struct sample *s;
	size_t n, cap;
};

static void log_sample(struct sample_log *log, const struct sample *s)
{
	if (log->n == log->cap) {
		log->cap = log->cap ? log->cap * 2 : 1024;
		log->s = realloc(log->s, log->cap * sizeof(*log->s));
		cr_assert_not_null(log->s);
	}
	log->s[log->n++] = *s;
}

static void on_sample(void *ctx, const struct sample *s)
{
	log_sample(ctx, s);
}

static const struct profile_listener sample_listener = { .sample = on_sample };

static uint64_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 16;
}

struct content {
	uint64_t random;
	uint64_t time_ns;
	uint32_t stacks[64];
	int nstacks;
	struct sample_log written;
};

static uint32_t intern(struct profile *p, const char *s)
{
	uint32_t id;

	cr_assert_eq(profile_intern_string(p, s, &id), 0);
	return id;
}

/* New strings, frames of every kind, stacks, threads and meta for `round`,
 * then `nsamples` samples over the stacks made so far. */
static void add_content(struct profile *p, struct content *c, int round,
			int nsamples)
{
	char name[64];

	for (int i = 0; i < 8; i++) {
		struct frame f = { .kind = (uint32_t)(i % 4), .line = (uint32_t)i };
		uint32_t frame, parent;

		snprintf(name, sizeof(name), "fn_%d_%d", round, i);
		f.name = intern(p, name);
		snprintf(name, sizeof(name), "mod_%d.so", i % 3);
		f.module = i % 2 ? intern(p, name) : 0;
		cr_assert_eq(profile_intern_frame(p, &f, &frame), 0);
		parent = c->nstacks ? c->stacks[next_random(&c->random) %
						(uint64_t)c->nstacks] : 0;
		if (c->nstacks < 64)
			cr_assert_eq(profile_intern_stack(p, parent, frame,
							  &c->stacks[c->nstacks++]), 0);
	}
	snprintf(name, sizeof(name), "worker-%d", round);
	cr_assert_eq(profile_set_thread(p, 1000, 1001, name), 0);
	cr_assert_eq(profile_set_thread(p, 1000, 1002 + (uint32_t)round, "pool"), 0);
	snprintf(name, sizeof(name), "%d", round);
	cr_assert_eq(profile_set_meta(p, "round", name), 0);
	cr_assert_eq(profile_set_meta(p, "period_ns", "1000000"), 0);
	for (int i = 0; i < nsamples; i++) {
		uint64_t r = next_random(&c->random);
		struct sample s = {
			.pid = 1000,
			.tid = 1001 + (uint32_t)(r % 3),
			.stack = c->stacks[r % (uint64_t)c->nstacks],
			.weight_ns = r % 7 ? 1000000 + r % 5000 : r << 20,
			.flags = (uint32_t)(r >> 8) % 4,
		};

		/* Mostly forward, sometimes a little back (GPU records). */
		c->time_ns += r % 11 ? 1000000 : (uint64_t)-5000;
		s.time_ns = c->time_ns;
		cr_assert_eq(profile_add_sample(p, &s), 0);
		log_sample(&c->written, &s);
	}
}

/* ---- comparing profiles ---- */

static int compare_rows(const void *a, const void *b)
{
	const struct profile_aggregate *x = a, *y = b;
	const uint32_t kx[] = { x->pid, x->tid, x->stack, x->flags };
	const uint32_t ky[] = { y->pid, y->tid, y->stack, y->flags };

	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

struct rows {
	struct profile_aggregate *r;
	size_t n, cap;
};

static int collect_row(const struct profile_aggregate *row, void *ctx)
{
	struct rows *rows = ctx;

	if (rows->n == rows->cap) {
		rows->cap = rows->cap ? rows->cap * 2 : 256;
		rows->r = realloc(rows->r, rows->cap * sizeof(*rows->r));
		cr_assert_not_null(rows->r);
	}
	rows->r[rows->n++] = *row;
	return 0;
}

static void sorted_rows(const struct profile *p, struct rows *rows)
{
	*rows = (struct rows){ 0 };
	cr_assert_eq(profile_for_each_aggregate(p, collect_row, rows), 0);
	qsort(rows->r, rows->n, sizeof(*rows->r), compare_rows);
}

struct other {
	const struct profile *p;
	int count;
};

static int same_thread(uint32_t pid, uint32_t tid, uint32_t name, void *ctx)
{
	struct other *o = ctx;
	const char *got = profile_thread_name(o->p, pid, tid);

	o->count++;
	if (name)
		cr_assert_str_eq(got, profile_string(o->p, name));
	else
		cr_assert_null(got);
	return 0;
}

static int count_thread(uint32_t pid, uint32_t tid, uint32_t name, void *ctx)
{
	(void)pid, (void)tid, (void)name;
	(*(int *)ctx)++;
	return 0;
}

static int same_meta(const char *key, const char *value, void *ctx)
{
	struct other *o = ctx;

	o->count++;
	cr_assert_str_eq(profile_meta(o->p, key), value, "meta %s", key);
	return 0;
}

static int count_meta(const char *key, const char *value, void *ctx)
{
	(void)key, (void)value;
	(*(int *)ctx)++;
	return 0;
}

static void assert_same_profile(const struct profile *a, const struct profile *b)
{
	struct other o = { .p = b };
	struct rows ra, rb;
	int count = 0;

	cr_assert_eq(profile_string_count(a), profile_string_count(b));
	for (uint32_t i = 0; i < profile_string_count(a); i++)
		cr_assert_str_eq(profile_string(a, i), profile_string(b, i));
	cr_assert_eq(profile_frame_count(a), profile_frame_count(b));
	for (uint32_t i = 0; i < profile_frame_count(a); i++)
		cr_assert_arr_eq(profile_frame(a, i), profile_frame(b, i),
				 sizeof(struct frame));
	cr_assert_eq(profile_stack_count(a), profile_stack_count(b));
	for (uint32_t i = 0; i < profile_stack_count(a); i++)
		cr_assert_arr_eq(profile_stack(a, i), profile_stack(b, i),
				 sizeof(struct stack_node));
	profile_for_each_thread(a, same_thread, &o);
	profile_for_each_thread(b, count_thread, &count);
	cr_assert_eq(o.count, count);
	o.count = count = 0;
	profile_for_each_meta(a, same_meta, &o);
	profile_for_each_meta(b, count_meta, &count);
	cr_assert_eq(o.count, count);
	cr_assert_eq(profile_sample_count(a), profile_sample_count(b));
	sorted_rows(a, &ra);
	sorted_rows(b, &rb);
	cr_assert_eq(ra.n, rb.n);
	cr_assert_arr_eq(ra.r, rb.r, ra.n * sizeof(*ra.r));
	free(ra.r);
	free(rb.r);
}

static void assert_same_samples(const struct sample_log *a,
				const struct sample_log *b)
{
	cr_assert_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct sample *x = &a->s[i], *y = &b->s[i];

		cr_assert(x->time_ns == y->time_ns && x->pid == y->pid &&
			  x->tid == y->tid && x->stack == y->stack &&
			  x->weight_ns == y->weight_ns && x->flags == y->flags,
			  "sample %zu differs", i);
	}
}

/* ---- reading ---- */

struct read_result {
	int ret;
	struct tsprof_read_info info;
	char err[256];
	struct profile *p;
};

static void read_recording(const char *path, struct read_result *r,
			   struct sample_log *log)
{
	memset(r, 0, sizeof(*r));
	r->p = profile_new();
	cr_assert_not_null(r->p);
	if (log)
		cr_assert_eq(profile_attach(r->p, &sample_listener, log), 0);
	r->ret = tsprof_read(path, r->p, &r->info, r->err, sizeof(r->err));
	if (log)
		profile_detach(r->p);
}

static struct tsprof_writer *open_writer(const char *path, struct profile *p)
{
	struct tsprof_writer *w = NULL;
	char err[256] = "";
	int ret = tsprof_writer_open(&w, path, p, err, sizeof(err));

	cr_assert_eq(ret, 0, "tsprof_writer_open: %d %s", ret, err);
	return w;
}

struct chunk_pos {
	size_t start, end;
	uint8_t kind;
};

/* Where each chunk of a well-formed file starts and ends. */
static size_t list_chunks(const uint8_t *file, size_t size,
			  struct chunk_pos *out, size_t max)
{
	size_t n = 0, at = TSPROF_HEADER_LEN;

	while (at < size) {
		uint32_t stored = tsprof_get_u32(file + at + 4);

		cr_assert_lt(n, max);
		out[n].start = at;
		out[n].kind = file[at];
		at += TSPROF_CHUNK_HEAD_LEN + stored + TSPROF_CHUNK_TAIL_LEN;
		out[n++].end = at;
	}
	cr_assert_eq(at, size);
	return n;
}

/* A recording of `chunks` records chunks (each flushed by hand) and the
 * samples there are after each of them; returns the profile written. */
static struct profile *write_chunked(const char *path, int chunks,
				     uint64_t *samples_after)
{
	struct profile *p = profile_new();
	struct tsprof_writer *w = open_writer(path, p);
	struct content c = { .random = 42 };

	samples_after[0] = 0;
	for (int k = 0; k < chunks; k++) {
		add_content(p, &c, k, 50 + 30 * k);
		cr_assert_eq(tsprof_writer_flush(w), 0);
		samples_after[k + 1] = profile_sample_count(p);
	}
	cr_assert_eq(tsprof_writer_close(w), 0);
	free(c.written.s);
	return p;
}

/* ---- tests ---- */

Test(tsprof, round_trip_across_many_chunks)
{
	struct profile *p = profile_new();
	struct content c = { .random = 7, .time_ns = 1ull << 40 };
	struct sample_log got = { 0 };
	struct read_result r;
	struct tsprof_writer *w;
	char path[128];

	tmp_path(path, sizeof(path), "round.tsprof");
	w = open_writer(path, p);
	for (int round = 0; round < 8; round++) {
		/* Round 5 passes the size threshold: the writer flushes alone. */
		add_content(p, &c, round, round == 5 ? 60000 : 500);
		if (round % 2)
			cr_assert_eq(tsprof_writer_flush(w), 0);
		cr_assert_eq(tsprof_writer_tick(w, (uint64_t)round), 0);
	}
	cr_assert_eq(tsprof_writer_close(w), 0);

	read_recording(path, &r, &got);
	cr_assert_eq(r.ret, 0, "%s", r.err);
	cr_assert(r.info.complete);
	cr_assert_not(r.info.damaged, "%s", r.info.note);
	cr_assert_geq(r.info.chunks, 7);
	cr_assert_eq(r.info.samples, profile_sample_count(p));
	assert_same_profile(p, r.p);
	cr_assert_str_eq(profile_meta(r.p, "round"), "7");
	cr_assert_str_eq(profile_thread_name(r.p, 1000, 1001), "worker-7");
	assert_same_samples(&got, &c.written);
	free(got.s);
	free(c.written.s);
	profile_free(r.p);
	profile_free(p);
}

Test(tsprof, writer_writes_what_the_profile_held_before)
{
	struct profile *p = profile_new();
	struct content c = { .random = 3 };
	struct read_result r;
	struct tsprof_writer *w;
	char path[128];

	tmp_path(path, sizeof(path), "before.tsprof");
	add_content(p, &c, 0, 300);
	add_content(p, &c, 1, 300);
	cr_assert_eq(profile_set_thread(p, 1000, 1002, "renamed"), 0);
	w = open_writer(path, p);
	add_content(p, &c, 2, 100);
	cr_assert_eq(tsprof_writer_close(w), 0);

	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, 0, "%s", r.err);
	cr_assert(r.info.complete);
	cr_assert_not(r.info.damaged);
	cr_assert_eq(r.info.samples, 700);
	assert_same_profile(p, r.p);
	cr_assert_str_eq(profile_thread_name(r.p, 1000, 1002), "renamed");
	free(c.written.s);
	profile_free(r.p);
	profile_free(p);
}

Test(tsprof, second_writer_on_a_profile_is_refused)
{
	struct profile *p = profile_new();
	struct tsprof_writer *w, *w2 = NULL;
	char path[128], other[128], err[256] = "";

	tmp_path(path, sizeof(path), "one.tsprof");
	tmp_path(other, sizeof(other), "two.tsprof");
	w = open_writer(path, p);
	cr_assert_eq(tsprof_writer_open(&w2, other, p, err, sizeof(err)), -EBUSY);
	cr_assert_null(w2);
	cr_assert_neq(err[0], '\0');
	cr_assert_neq(access(other, F_OK), 0);
	cr_assert_eq(tsprof_writer_close(w), 0);
	profile_free(p);
}

/* Reads the first `cut` bytes of the file and checks what comes back. */
static void check_cut(const uint8_t *file, size_t size, size_t cut,
		      const struct chunk_pos *chunks, size_t nchunks,
		      const uint64_t *samples_after)
{
	struct read_result r;
	uint64_t whole = 0;
	bool inside = false;
	char path[128];

	tmp_path(path, sizeof(path), "cut.tsprof");
	write_whole(path, file, cut);
	read_recording(path, &r, NULL);
	if (cut < TSPROF_HEADER_LEN) {
		cr_assert_lt(r.ret, 0, "cut at %zu", cut);
		cr_assert_neq(r.err[0], '\0');
		profile_free(r.p);
		return;
	}
	for (size_t i = 0; i < nchunks; i++) {
		if (chunks[i].end <= cut)
			whole++;
		else if (chunks[i].start < cut)
			inside = true;
	}
	cr_assert_eq(r.ret, 0, "cut at %zu: %s", cut, r.err);
	cr_assert_eq(r.info.chunks, whole, "cut at %zu", cut);
	cr_assert_eq(r.info.complete, cut == size, "cut at %zu", cut);
	cr_assert_eq(r.info.damaged, cut != size, "cut at %zu", cut);
	/* The last chunk is the end chunk: it holds no samples. */
	cr_assert_eq(r.info.samples,
		     samples_after[whole < nchunks ? whole : nchunks - 1]);
	cr_assert_eq(profile_sample_count(r.p), r.info.samples);
	if (r.info.damaged)
		cr_assert_neq(r.info.note[0], '\0');
	if (inside)
		cr_assert_not_null(strstr(r.info.note, "truncated"), "%s",
				   r.info.note);
	profile_free(r.p);
}

Test(tsprof, truncation_at_every_boundary_and_inside_chunks)
{
	struct chunk_pos chunks[16];
	uint64_t samples_after[8];
	struct profile *p;
	size_t size, n;
	uint8_t *file;
	char path[128];

	tmp_path(path, sizeof(path), "whole.tsprof");
	p = write_chunked(path, 6, samples_after);
	file = read_whole(path, &size);
	n = list_chunks(file, size, chunks, 16);
	cr_assert_eq(n, 7);
	cr_assert_eq(chunks[6].kind, TSPROF_CHUNK_END);
	for (size_t cut = 0; cut <= TSPROF_HEADER_LEN; cut++)
		check_cut(file, size, cut, chunks, n, samples_after);
	for (size_t i = 0; i < n; i++) {
		const struct chunk_pos *c = &chunks[i];
		size_t inside[] = {
			c->start + 1, c->start + TSPROF_CHUNK_HEAD_LEN - 1,
			c->start + TSPROF_CHUNK_HEAD_LEN,
			(c->start + c->end) / 2, c->end - 1, c->end,
		};

		for (size_t j = 0; j < sizeof(inside) / sizeof(inside[0]); j++)
			check_cut(file, size, inside[j], chunks, n, samples_after);
	}
	free(file);
	profile_free(p);
}

Test(tsprof, recording_cut_before_its_end_chunk_has_everything_else)
{
	struct chunk_pos chunks[16];
	uint64_t samples_after[8];
	struct read_result r;
	struct profile *p;
	size_t size, n;
	uint8_t *file;
	char path[128];

	tmp_path(path, sizeof(path), "noend.tsprof");
	p = write_chunked(path, 3, samples_after);
	file = read_whole(path, &size);
	n = list_chunks(file, size, chunks, 16);
	write_whole(path, file, chunks[n - 1].start);
	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, 0, "%s", r.err);
	cr_assert_not(r.info.complete);
	cr_assert_eq(r.info.chunks, 3);
	cr_assert_not_null(strstr(r.info.note, "no end chunk"), "%s", r.info.note);
	assert_same_profile(p, r.p);
	free(file);
	profile_free(r.p);
	profile_free(p);
}

Test(tsprof, every_flipped_byte_of_a_chunk_is_caught)
{
	struct chunk_pos chunks[16];
	uint64_t samples_after[8];
	struct read_result r;
	struct profile *p;
	size_t size, n;
	uint8_t *file;
	char path[128];

	tmp_path(path, sizeof(path), "flip.tsprof");
	p = write_chunked(path, 3, samples_after);
	file = read_whole(path, &size);
	n = list_chunks(file, size, chunks, 16);
	cr_assert_eq(n, 4);
	for (size_t at = chunks[1].start; at < chunks[1].end; at++) {
		file[at] ^= 0x10;
		write_whole(path, file, size);
		file[at] ^= 0x10;
		read_recording(path, &r, NULL);
		cr_assert_eq(r.ret, 0, "flip at %zu: %s", at, r.err);
		cr_assert(r.info.damaged, "flip at %zu", at);
		cr_assert_not(r.info.complete, "flip at %zu", at);
		cr_assert_eq(r.info.chunks, 1, "flip at %zu", at);
		cr_assert_eq(r.info.samples, samples_after[1], "flip at %zu", at);
		if (at >= chunks[1].start + TSPROF_CHUNK_HEAD_LEN)
			cr_assert_not_null(strstr(r.info.note, "CRC"), "flip at %zu: %s",
					   at, r.info.note);
		profile_free(r.p);
	}
	free(file);
	profile_free(p);
}

Test(tsprof, bad_files_are_errors)
{
	const char version2[] = "\x89TSPROF\n\x02\0\0\0\0\0\0\0";
	struct profile *busy = profile_new();
	struct tsprof_read_info info;
	struct read_result r;
	char path[128], err[256];
	uint32_t id;

	tmp_path(path, sizeof(path), "empty.tsprof");
	write_whole(path, "", 0);
	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, -EINVAL);
	cr_assert_not_null(strstr(r.err, "empty"), "%s", r.err);
	profile_free(r.p);

	tmp_path(path, sizeof(path), "text.tsprof");
	write_whole(path, "main;compute 12\nmain;idle 3\n", 28);
	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, -EINVAL);
	cr_assert_not_null(strstr(r.err, "not a .tsprof"), "%s", r.err);
	profile_free(r.p);

	tmp_path(path, sizeof(path), "v2.tsprof");
	write_whole(path, version2, TSPROF_HEADER_LEN);
	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, -ENOTSUP);
	cr_assert_not_null(strstr(r.err, "version 2"), "%s", r.err);
	profile_free(r.p);

	tmp_path(path, sizeof(path), "missing.tsprof");
	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, -ENOENT);
	profile_free(r.p);

	read_recording(test_dir, &r, NULL);
	cr_assert_lt(r.ret, 0);
	profile_free(r.p);

	/* Ids are checked against the file's, so the profile must be fresh. */
	tmp_path(path, sizeof(path), "v2.tsprof");
	cr_assert_eq(profile_intern_string(busy, "x", &id), 0);
	cr_assert_eq(tsprof_read(path, busy, &info, err, sizeof(err)), -EINVAL);
	profile_free(busy);
}

Test(tsprof, tick_flushes_once_the_buffer_is_a_second_old)
{
	const uint64_t t0 = 5000000000ull, second = 1000000000ull;
	struct profile *p = profile_new();
	struct content c = { .random = 9 };
	struct tsprof_writer *w;
	char path[128];
	off_t size;

	tmp_path(path, sizeof(path), "tick.tsprof");
	w = open_writer(path, p);
	cr_assert_eq(file_size(path), TSPROF_HEADER_LEN);
	cr_assert_eq(tsprof_writer_tick(w, t0), 0);
	cr_assert_eq(tsprof_writer_tick(w, t0 + 5 * second), 0);
	cr_assert_eq(file_size(path), TSPROF_HEADER_LEN, "nothing to flush");

	add_content(p, &c, 0, 10);
	cr_assert_eq(tsprof_writer_tick(w, t0 + 6 * second), 0);
	cr_assert_eq(tsprof_writer_tick(w, t0 + 7 * second - 1), 0);
	cr_assert_eq(file_size(path), TSPROF_HEADER_LEN);
	cr_assert_eq(tsprof_writer_tick(w, t0 + 7 * second), 0);
	size = file_size(path);
	cr_assert_gt(size, TSPROF_HEADER_LEN);

	add_content(p, &c, 1, 10);
	cr_assert_eq(tsprof_writer_tick(w, t0 + 7 * second + 1), 0);
	cr_assert_eq(tsprof_writer_tick(w, t0 + 8 * second), 0);
	cr_assert_eq(file_size(path), size);
	cr_assert_eq(tsprof_writer_tick(w, t0 + 8 * second + 1), 0);
	cr_assert_gt(file_size(path), size);
	cr_assert_eq(tsprof_writer_close(w), 0);
	free(c.written.s);
	profile_free(p);
}

/* A recorder killed with SIGKILL leaves every flushed chunk readable. */
Test(tsprof, killed_recorder_leaves_a_readable_prefix)
{
	struct read_result r;
	char path[128];
	uint64_t flushed;
	pid_t child;
	int status;

	tmp_path(path, sizeof(path), "killed.tsprof");
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct profile *p = profile_new();
		struct tsprof_writer *w = NULL;
		struct content c = { .random = 5 };

		if (!p || tsprof_writer_open(&w, path, p, NULL, 0))
			_exit(1);
		add_content(p, &c, 0, 400);
		if (tsprof_writer_flush(w))
			_exit(1);
		add_content(p, &c, 1, 400); /* pending: lost */
		raise(SIGKILL);
		_exit(1);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	read_recording(path, &r, NULL);
	flushed = 400;
	cr_assert_eq(r.ret, 0, "%s", r.err);
	cr_assert_not(r.info.complete);
	cr_assert(r.info.damaged);
	cr_assert_eq(r.info.chunks, 1);
	cr_assert_eq(r.info.samples, flushed);
	cr_assert_not_null(strstr(r.info.note, "no end chunk"), "%s", r.info.note);
	profile_free(r.p);
}

/* A full disk (here a file size limit) stops the recording, not sampling. */
Test(tsprof, write_errors_are_sticky_and_sampling_goes_on)
{
	struct rlimit limit, old;
	struct profile *p = profile_new();
	struct content c = { .random = 11 };
	struct tsprof_writer *w;
	struct read_result r;
	char path[128];

	tmp_path(path, sizeof(path), "full.tsprof");
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	limit = (struct rlimit){ .rlim_cur = 8192, .rlim_max = old.rlim_max };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
	w = open_writer(path, p);
	/* 20000 varied samples do not compress below the limit. */
	add_content(p, &c, 0, 20000);
	cr_assert_eq(tsprof_writer_flush(w), -EFBIG);
	add_content(p, &c, 1, 100);
	cr_assert_eq(profile_sample_count(p), 20100);
	cr_assert_eq(tsprof_writer_tick(w, 0), -EFBIG);
	cr_assert_eq(tsprof_writer_tick(w, 5000000000ull), -EFBIG);
	cr_assert_eq(tsprof_writer_flush(w), -EFBIG);
	cr_assert_eq(tsprof_writer_close(w), -EFBIG);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	cr_assert_leq(file_size(path), 8192);

	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, 0, "%s", r.err);
	cr_assert_not(r.info.complete);
	cr_assert(r.info.damaged);
	cr_assert_not_null(strstr(r.info.note, "truncated"), "%s", r.info.note);
	free(c.written.s);
	profile_free(r.p);
	profile_free(p);
}

/* ---- hand-made recordings ---- */

struct bytes {
	uint8_t b[512];
	size_t n;
};

static void put_v(struct bytes *b, uint64_t v)
{
	b->n = (size_t)(tsprof_put_varint(b->b + b->n, v) - b->b);
}

static void put_raw(struct bytes *b, const void *data, size_t n)
{
	memcpy(b->b + b->n, data, n);
	b->n += n;
}

static void put_string(struct bytes *b, uint32_t id, const char *s)
{
	put_v(b, TSPROF_REC_STRING);
	put_v(b, id);
	put_v(b, strlen(s));
	put_raw(b, s, strlen(s));
}

/* Appends a chunk whose head claims `stored` and `raw` bytes around
 * `len` payload bytes, with a CRC that matches. */
static void put_chunk(struct bytes *file, uint8_t kind, uint8_t flags,
		      const void *payload, size_t len, uint32_t stored,
		      uint32_t raw)
{
	uint8_t *head = file->b + file->n;

	head[0] = kind;
	head[1] = flags;
	head[2] = head[3] = 0;
	tsprof_put_u32(head + 4, stored);
	tsprof_put_u32(head + 8, raw);
	file->n += TSPROF_CHUNK_HEAD_LEN;
	put_raw(file, payload, len);
	tsprof_put_u32(file->b + file->n,
		       (uint32_t)crc32(0, head, (uInt)(TSPROF_CHUNK_HEAD_LEN + len)));
	file->n += TSPROF_CHUNK_TAIL_LEN;
}

/* A file header and one good chunk defining string 1, "ok". */
static void start_file(struct bytes *file)
{
	struct bytes good = { .n = 0 };

	file->n = 0;
	put_raw(file, TSPROF_MAGIC, TSPROF_MAGIC_LEN);
	put_raw(file, "\x01\0\0\0\0\0\0\0", 8);
	put_string(&good, 1, "ok");
	put_chunk(file, TSPROF_CHUNK_RECORDS, 0, good.b, good.n, (uint32_t)good.n,
		  (uint32_t)good.n);
}

/* Reads a file whose second chunk is bad: only the first one counts. */
static void expect_second_chunk_bad(struct bytes *file, size_t second,
				    const char *want)
{
	struct read_result r;
	char path[128], where[64];

	put_chunk(file, TSPROF_CHUNK_END, 0, "", 0, 0, 0);
	tmp_path(path, sizeof(path), "made.tsprof");
	write_whole(path, file->b, file->n);
	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, 0, "%s", r.err);
	cr_assert(r.info.damaged, "want %s", want);
	cr_assert_not(r.info.complete);
	cr_assert_eq(r.info.chunks, 1);
	/* Nothing of the bad chunk is applied, not even its good records. */
	cr_assert_eq(profile_string_count(r.p), 2);
	cr_assert_str_eq(profile_string(r.p, 1), "ok");
	cr_assert_not_null(strstr(r.info.note, want), "want \"%s\" in: %s", want,
			   r.info.note);
	snprintf(where, sizeof(where), "chunk 1 at byte %zu ", second);
	cr_assert_not_null(strstr(r.info.note, where), "want \"%s\" in: %s",
			   where, r.info.note);
	profile_free(r.p);
}

static void expect_bad_records(const struct bytes *payload, const char *want)
{
	struct bytes file;
	size_t second;

	start_file(&file);
	second = file.n;
	put_chunk(&file, TSPROF_CHUNK_RECORDS, 0, payload->b, payload->n,
		  (uint32_t)payload->n, (uint32_t)payload->n);
	expect_second_chunk_bad(&file, second, want);
}

Test(tsprof, bad_records_stop_the_reading_before_their_chunk)
{
	struct bytes b;

	b.n = 0;
	put_string(&b, 3, "x");
	expect_bad_records(&b, "string 3 is defined out of order (expected 2)");

	b.n = 0;
	put_string(&b, 2, "y");
	put_v(&b, TSPROF_REC_SAMPLE);
	for (int i = 0; i < 6; i++)
		put_v(&b, i == 3 ? 5 : 1);
	expect_bad_records(&b, "stack 5 is used before its definition");

	b.n = 0;
	put_string(&b, 2, "f");
	put_v(&b, TSPROF_REC_FRAME);
	put_v(&b, 0);
	put_v(&b, 7);
	put_v(&b, 2);
	put_v(&b, 0);
	put_v(&b, 0);
	expect_bad_records(&b, "unknown kind 7");

	b.n = 0;
	put_v(&b, TSPROF_REC_SAMPLE);
	put_raw(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
	expect_bad_records(&b, "overflows 64 bits");

	b.n = 0;
	put_v(&b, TSPROF_REC_STACK);
	put_v(&b, 1ull << 32);
	put_v(&b, 0);
	put_v(&b, 0);
	expect_bad_records(&b, "over 32 bits");

	b.n = 0;
	put_v(&b, TSPROF_REC_STRING);
	put_v(&b, 2);
	put_v(&b, 3);
	put_raw(&b, "a\0b", 3);
	expect_bad_records(&b, "NUL");

	b.n = 0;
	put_v(&b, TSPROF_REC_STRING);
	put_v(&b, 2);
	put_v(&b, PROFILE_MAX_STRING + 1);
	expect_bad_records(&b, "bytes is over the");

	b.n = 0;
	put_v(&b, TSPROF_REC_STRING);
	put_v(&b, 2);
	put_v(&b, 10);
	put_raw(&b, "abc", 3);
	expect_bad_records(&b, "ends early");

	b.n = 0;
	put_v(&b, 99);
	expect_bad_records(&b, "unknown record tag 99");

	b.n = 0;
	put_string(&b, 2, "ok");
	expect_bad_records(&b, "string 2 repeats string 1");

	b.n = 0;
	put_v(&b, TSPROF_REC_THREAD);
	put_v(&b, 1);
	put_v(&b, 2);
	put_v(&b, 9);
	expect_bad_records(&b, "string 9 is used before");

	b.n = 0;
	put_v(&b, TSPROF_REC_META);
	put_v(&b, 0);
	put_v(&b, 1);
	put_raw(&b, "v", 1);
	expect_bad_records(&b, "empty key");

	b.n = 0;
	put_v(&b, TSPROF_REC_AGGREGATE);
	for (int i = 0; i < 6; i++)
		put_v(&b, 0);
	expect_bad_records(&b, "counts no samples");
}

static void expect_bad_chunk(uint8_t flags, const void *payload, size_t len,
			     uint32_t stored, uint32_t raw, const char *want)
{
	struct bytes file;
	size_t second;

	start_file(&file);
	second = file.n;
	put_chunk(&file, TSPROF_CHUNK_RECORDS, flags, payload, len, stored, raw);
	expect_second_chunk_bad(&file, second, want);
}

Test(tsprof, bad_chunk_heads_and_payloads)
{
	struct bytes records = { .n = 0 };
	uint8_t packed[128];
	uLongf packed_len = sizeof(packed);
	uint32_t n;

	put_string(&records, 2, "compressed records");
	put_string(&records, 3, "compressed records, again");
	cr_assert_eq(compress2(packed, &packed_len, records.b, records.n, 9), Z_OK);
	n = (uint32_t)packed_len;

	expect_bad_chunk(TSPROF_CHUNK_ZLIB, packed, n, n,
			 (uint32_t)records.n + 1, "decompresses to");
	expect_bad_chunk(TSPROF_CHUNK_ZLIB, packed, n, n,
			 (uint32_t)records.n - 1, "more than");
	expect_bad_chunk(TSPROF_CHUNK_ZLIB, records.b, records.n,
			 (uint32_t)records.n, (uint32_t)records.n, "zlib error");
	expect_bad_chunk(0, records.b, records.n, (uint32_t)records.n,
			 (uint32_t)records.n + 1, "differs");
	expect_bad_chunk(0x80, records.b, records.n, (uint32_t)records.n,
			 (uint32_t)records.n, "flags");
	expect_bad_chunk(0, "", 0, 65u << 20, 65u << 20, "limit");
}

Test(tsprof, compressed_and_unknown_chunks_are_read)
{
	struct bytes records = { .n = 0 }, file;
	uint8_t packed[128];
	uLongf packed_len = sizeof(packed);
	struct read_result r;
	char path[128];

	put_string(&records, 2, "compressed records");
	cr_assert_eq(compress2(packed, &packed_len, records.b, records.n, 9), Z_OK);
	start_file(&file);
	put_chunk(&file, 9, 0, "future", 6, 6, 6);
	put_chunk(&file, TSPROF_CHUNK_RECORDS, TSPROF_CHUNK_ZLIB, packed,
		  packed_len, (uint32_t)packed_len, (uint32_t)records.n);
	put_chunk(&file, TSPROF_CHUNK_END, 0, "", 0, 0, 0);
	tmp_path(path, sizeof(path), "made.tsprof");
	write_whole(path, file.b, file.n);
	read_recording(path, &r, NULL);
	cr_assert_eq(r.ret, 0, "%s", r.err);
	cr_assert(r.info.complete);
	cr_assert_not(r.info.damaged, "%s", r.info.note);
	cr_assert_eq(r.info.chunks, 4);
	cr_assert_str_eq(profile_string(r.p, 2), "compressed records");
	profile_free(r.p);
}

/* One recording of a leaf under a root, on `host`, with its own strings
 * in its own order (so the ids of the two files differ). */
static void write_small(const char *path, const char *host, const char *leaf, const char *pad,
			uint32_t pid, uint64_t t0, const char *offset)
{
	struct profile *p = profile_new();
	struct tsprof_writer *w;
	struct frame f = { .kind = FRAME_NATIVE };
	uint32_t root, leaf_frame, s1, s2;

	cr_assert_not_null(p);
	w = open_writer(path, p);
	cr_assert_eq(profile_set_meta(p, "hostname", host), 0);
	cr_assert_eq(profile_set_meta(p, "clock_offset_ns", offset), 0);
	intern(p, pad);
	f.name = intern(p, "main");
	cr_assert_eq(profile_intern_frame(p, &f, &root), 0);
	f.name = intern(p, leaf);
	cr_assert_eq(profile_intern_frame(p, &f, &leaf_frame), 0);
	cr_assert_eq(profile_intern_stack(p, 0, root, &s1), 0);
	cr_assert_eq(profile_intern_stack(p, s1, leaf_frame, &s2), 0);
	cr_assert_eq(profile_set_thread(p, pid, pid, leaf), 0);
	for (int i = 0; i < 10; i++) {
		struct sample s = { .time_ns = t0 + (uint64_t)i * 1000000, .pid = pid, .tid = pid,
				    .stack = s2, .weight_ns = 1000000 };

		cr_assert_eq(profile_add_sample(p, &s), 0);
	}
	cr_assert_eq(tsprof_writer_close(w), 0);
	profile_free(p);
}

struct leaf_count {
	const struct profile *p;
	uint64_t a, b;
	uint32_t pid_a, pid_b;
};

static int count_leaves(const struct profile_aggregate *row, void *ctx)
{
	struct leaf_count *c = ctx;
	const struct stack_node *n = profile_stack(c->p, row->stack);
	const char *leaf = profile_string(c->p, profile_frame(c->p, n->frame)->name);
	const char *parent =
		profile_string(c->p, profile_frame(c->p, profile_stack(c->p, n->parent)->frame)->name);

	cr_assert_str_eq(parent, "main");
	if (!strcmp(leaf, "leaf_a")) {
		c->a += row->count;
		c->pid_a = row->pid;
	} else if (!strcmp(leaf, "leaf_b")) {
		c->b += row->count;
		c->pid_b = row->pid;
	}
	return 0;
}

Test(tsprof, recordings_merge_with_their_own_ids_hosts_and_clocks)
{
	char a[256], b[256], c[256], err[256] = "";
	struct profile *p = profile_new();
	struct leaf_count n = { .p = p };
	struct tsprof_read_info info;

	make_dir();
	tmp_path(a, sizeof(a), "a.tsprof");
	tmp_path(b, sizeof(b), "b.tsprof");
	tmp_path(c, sizeof(c), "c.tsprof");
	write_small(a, "node0", "leaf_a", "pad0", 100, 5000000000ull, "1000000000");
	/* Another host, the same PID, other string ids, a clock 2 s behind. */
	write_small(b, "node1", "leaf_b", "a longer pad that shifts ids", 100, 7000000000ull,
		    "3000000000");
	cr_assert_eq(tsprof_read_merge(a, p, 0, 0, UINT64_MAX, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tsprof_read_merge(b, p, 1, 0, UINT64_MAX, &info, err, sizeof(err)), 0, "%s", err);
	profile_for_each_aggregate(p, count_leaves, &n);
	cr_assert_eq(n.a, 10);
	cr_assert_eq(n.b, 10);
	cr_assert_eq(n.pid_a, 100);
	cr_assert_eq(n.pid_b, 100 + (1u << 22), "pid %u", n.pid_b);
	cr_assert_str_eq(profile_meta(p, "hostname"), "node0");
	cr_assert_str_eq(profile_thread_name(p, 100 + (1u << 22), 100), "leaf_b");
	/* The same host: PIDs stay, only ids are mapped. */
	write_small(c, "node0", "leaf_b", "pad", 200, 9000000000ull, "1000000000");
	cr_assert_eq(tsprof_read_merge(c, p, 2, 0, UINT64_MAX, &info, err, sizeof(err)), 0, "%s", err);
	n.a = n.b = 0;
	profile_for_each_aggregate(p, count_leaves, &n);
	cr_assert_eq(n.b, 20);
	cr_assert_str_eq(profile_thread_name(p, 200, 200), "leaf_b");
	/* The first read still wants a fresh profile. */
	cr_assert_lt(tsprof_read(a, p, &info, err, sizeof(err)), 0);
	profile_free(p);
	remove_dir();
}

/* Issue 30: what a recording may make the reader hold, from its size; a
 * chunk past a limit is refused whole (-EFBIG, the limit named) and
 * nothing of it applied. */
Test(tsprof, limits_on_strings_and_definitions_refuse_a_chunk_whole)
{
	struct profile *p = profile_new();
	struct tsprof_replay rp = { .profile = p };
	struct bytes b = { .n = 0 };
	char why[240] = "", text[48];

	cr_assert_eq(tsprof_replay_begin(&rp, 0), 0);
	tsprof_replay_limits(&rp, 1000);
	cr_assert_eq(rp.limit_string_bytes, TSPROF_LIMIT_STRING_BYTES_LEAST);
	cr_assert_eq(rp.limit_definitions, TSPROF_LIMIT_DEFINITIONS_LEAST);
	tsprof_replay_limits(&rp, 1ull << 30);
	cr_assert_eq(rp.limit_string_bytes, 32ull << 30);
	cr_assert_eq(rp.limit_definitions, 8ull << 30);

	/* Twelve strings where ten definitions may be (the empty string,
	 * the root stack and these). */
	rp.limit_definitions = 10;
	for (uint32_t i = 1; i <= 12; i++) {
		snprintf(text, sizeof(text), "s%u", i);
		put_string(&b, i, text);
	}
	cr_assert_eq(tsprof_replay_chunk(&rp, b.b, b.n, why, sizeof(why)), -EFBIG);
	cr_assert_not_null(strstr(why, "its strings, frames and stacks pass 10,"), "%s", why);
	cr_assert_eq(profile_string_count(p), 1, "nothing of the chunk applied");

	/* Three strings of 40 bytes where 100 bytes may be. */
	rp.limit_definitions = 0; /* the least */
	rp.limit_string_bytes = 100;
	b.n = 0;
	memset(text, 'a', 40);
	text[40] = 0;
	for (uint32_t i = 1; i <= 2; i++) {
		text[0] = (char)('0' + i);
		put_string(&b, i, text);
	}
	cr_assert_eq(tsprof_replay_chunk(&rp, b.b, b.n, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(profile_string_count(p), 3);
	b.n = 0;
	put_string(&b, 3, text + 1);
	cr_assert_eq(tsprof_replay_chunk(&rp, b.b, b.n, why, sizeof(why)), -EFBIG);
	cr_assert_not_null(strstr(why, "its strings pass "), "%s", why);
	cr_assert_eq(profile_string_count(p), 3);
	tsprof_replay_release(&rp);
	profile_free(p);
}

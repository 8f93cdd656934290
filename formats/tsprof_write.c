// SPDX-License-Identifier: MIT
/*
 * The .tsprof writer: listens to a profile and streams every definition and
 * sample into chunks. Each chunk goes out in one write(2), with no stdio
 * buffer in between, so a killed recorder loses only what was pending.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/common.h"
#include "formats/profile_hooks.h"
#include "formats/tsprof_layout.h"

#define NS_PER_SEC 1000000000ull
/* Fast: the writer runs beside the sampler. */
#define ZLIB_LEVEL 1

struct tsprof_writer {
	struct profile *profile;
	int fd;
	int error;       /* the first failure; later records are dropped */
	uint8_t *buf;    /* room for the chunk head, then pending records */
	size_t len, cap; /* len includes the head room */
	uint8_t *zbuf;   /* chunk head room, then the compressed payload */
	size_t zcap;
	bool stamped;    /* a tick has seen the pending records */
	uint64_t stamp_ns;
	uint64_t prev_time_ns; /* the last sample's time, for deltas */
	uint64_t prev_gpu_ns;  /* the last GPU activity's start */
	uint64_t prev_counter_ns;
	char *path;
	struct file_stage stage; /* its folder, held (common/file.c) */
};

static int write_all(int fd, const uint8_t *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Fills the head and CRC around `stored` payload bytes at chunk +
 * TSPROF_CHUNK_HEAD_LEN (the tail's room is there) and writes it whole. */
static int write_chunk(struct tsprof_writer *w, uint8_t *chunk, uint8_t kind,
		       uint8_t flags, uint32_t stored, uint32_t raw)
{
	size_t body = TSPROF_CHUNK_HEAD_LEN + stored;

	chunk[0] = kind;
	chunk[1] = flags;
	chunk[2] = 0;
	chunk[3] = 0;
	tsprof_put_u32(chunk + 4, stored);
	tsprof_put_u32(chunk + 8, raw);
	tsprof_put_u32(chunk + body, (uint32_t)crc32(0, chunk, (uInt)body));
	return write_all(w->fd, chunk, body + TSPROF_CHUNK_TAIL_LEN);
}

/* Compresses the pending records; returns false to store them as they are. */
static bool compress_pending(struct tsprof_writer *w, uint32_t raw,
			     uint32_t *stored)
{
	uLong bound = compressBound(raw);
	uLongf zlen = bound;

	if (ARRAY_RESERVE(w->zbuf, w->zcap, TSPROF_CHUNK_HEAD_LEN + bound + TSPROF_CHUNK_TAIL_LEN,
			  4096))
		return false;
	if (compress2(w->zbuf + TSPROF_CHUNK_HEAD_LEN, &zlen,
		      w->buf + TSPROF_CHUNK_HEAD_LEN, raw, ZLIB_LEVEL) != Z_OK)
		return false;
	if (zlen >= raw)
		return false;
	*stored = (uint32_t)zlen;
	return true;
}

int tsprof_writer_flush(struct tsprof_writer *w)
{
	uint32_t raw, stored;
	int err;

	if (!w)
		return -EINVAL;
	if (w->error || w->len <= TSPROF_CHUNK_HEAD_LEN)
		return w->error;
	raw = (uint32_t)(w->len - TSPROF_CHUNK_HEAD_LEN);
	if (compress_pending(w, raw, &stored))
		err = write_chunk(w, w->zbuf, TSPROF_CHUNK_RECORDS,
				  TSPROF_CHUNK_ZLIB, stored, raw);
	else
		err = write_chunk(w, w->buf, TSPROF_CHUNK_RECORDS, 0, raw, raw);
	w->len = TSPROF_CHUNK_HEAD_LEN;
	w->stamped = false;
	if (err)
		w->error = err;
	return w->error;
}

int tsprof_writer_tick(struct tsprof_writer *w, uint64_t now_ns)
{
	if (!w)
		return -EINVAL;
	if (w->error || w->len <= TSPROF_CHUNK_HEAD_LEN)
		return w->error;
	/* The pending records' age is counted from the first tick that sees
	 * them, so the writer needs no clock of its own. */
	if (!w->stamped) {
		w->stamped = true;
		w->stamp_ns = now_ns;
		return 0;
	}
	if (now_ns >= w->stamp_ns && now_ns - w->stamp_ns >= NS_PER_SEC)
		return tsprof_writer_flush(w);
	return 0;
}

/* Room for a record of at most `len` bytes (and the chunk tail after it);
 * NULL once the writer has failed. */
static uint8_t *record_start(struct tsprof_writer *w, size_t len)
{
	int err;

	if (w->error)
		return NULL;
	err = ARRAY_RESERVE(w->buf, w->cap, w->len + len + TSPROF_CHUNK_TAIL_LEN, 4096);
	if (err) {
		w->error = err;
		return NULL;
	}
	return w->buf + w->len;
}

static void record_end(struct tsprof_writer *w, uint8_t *end)
{
	w->len = (size_t)(end - w->buf);
	if (w->len - TSPROF_CHUNK_HEAD_LEN >= TSPROF_FLUSH_BYTES)
		tsprof_writer_flush(w);
}

static uint8_t *put_text(uint8_t *q, const char *s, size_t len)
{
	q = tsprof_put_varint(q, len);
	memcpy(q, s, len);
	return q + len;
}

static void on_string(void *ctx, uint32_t id, const char *s, size_t len)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, 1 + 2 * TSPROF_VARINT_MAX + len);

	if (!q)
		return;
	*q++ = TSPROF_REC_STRING;
	q = tsprof_put_varint(q, id);
	record_end(w, put_text(q, s, len));
}

static void on_frame(void *ctx, uint32_t id, const struct frame *f)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, TSPROF_RECORD_MAX);

	if (!q)
		return;
	*q++ = TSPROF_REC_FRAME;
	q = tsprof_put_varint(q, id);
	q = tsprof_put_varint(q, f->kind);
	q = tsprof_put_varint(q, f->name);
	q = tsprof_put_varint(q, f->module);
	record_end(w, tsprof_put_varint(q, f->line));
}

static void on_stack(void *ctx, uint32_t id, const struct stack_node *n)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, TSPROF_RECORD_MAX);

	if (!q)
		return;
	*q++ = TSPROF_REC_STACK;
	q = tsprof_put_varint(q, id);
	q = tsprof_put_varint(q, n->parent);
	record_end(w, tsprof_put_varint(q, n->frame));
}

static void on_thread(void *ctx, uint32_t pid, uint32_t tid, uint32_t name)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, TSPROF_RECORD_MAX);

	if (!q)
		return;
	*q++ = TSPROF_REC_THREAD;
	q = tsprof_put_varint(q, pid);
	q = tsprof_put_varint(q, tid);
	record_end(w, tsprof_put_varint(q, name));
}

static void on_meta(void *ctx, const char *key, const char *value)
{
	struct tsprof_writer *w = ctx;
	size_t klen = strlen(key), vlen = strlen(value);
	uint8_t *q = record_start(w, 1 + 2 * TSPROF_VARINT_MAX + klen + vlen);

	if (!q)
		return;
	*q++ = TSPROF_REC_META;
	q = put_text(q, key, klen);
	record_end(w, put_text(q, value, vlen));
}

static void on_sample(void *ctx, const struct sample *s)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, TSPROF_RECORD_MAX);

	if (!q)
		return;
	*q++ = TSPROF_REC_SAMPLE;
	/* Samples may come a little out of order (GPU records): signed. */
	q = tsprof_put_varint(q, tsprof_zigzag((int64_t)(s->time_ns -
							 w->prev_time_ns)));
	w->prev_time_ns = s->time_ns;
	q = tsprof_put_varint(q, s->pid);
	q = tsprof_put_varint(q, s->tid);
	q = tsprof_put_varint(q, s->stack);
	q = tsprof_put_varint(q, s->weight_ns);
	record_end(w, tsprof_put_varint(q, s->flags));
}

static void on_aggregate(void *ctx, const struct profile_aggregate *row)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, TSPROF_RECORD_MAX);

	if (!q)
		return;
	*q++ = TSPROF_REC_AGGREGATE;
	q = tsprof_put_varint(q, row->pid);
	q = tsprof_put_varint(q, row->tid);
	q = tsprof_put_varint(q, row->stack);
	q = tsprof_put_varint(q, row->flags);
	q = tsprof_put_varint(q, row->weight_ns);
	record_end(w, tsprof_put_varint(q, row->count));
}

static void on_gpu(void *ctx, const struct gpu_activity *a)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, 1 + TSPROF_GPU_FIELDS * TSPROF_VARINT_MAX);

	if (!q)
		return;
	*q++ = TSPROF_REC_GPU;
	q = tsprof_put_varint(q, a->kind);
	q = tsprof_put_varint(q, tsprof_zigzag((int64_t)(a->start_ns - w->prev_gpu_ns)));
	w->prev_gpu_ns = a->start_ns;
	q = tsprof_put_varint(q, a->end_ns - a->start_ns);
	q = tsprof_put_varint(q, a->device);
	q = tsprof_put_varint(q, a->stream);
	q = tsprof_put_varint(q, a->correlation);
	q = tsprof_put_varint(q, a->name);
	q = tsprof_put_varint(q, (a->copy_kind & 0xff) |
				 (uint32_t)a->src_kind << TSPROF_GPU_COPY_SRC_SHIFT |
				 (uint32_t)a->dst_kind << TSPROF_GPU_COPY_DST_SHIFT |
				 (a->async ? TSPROF_GPU_COPY_ASYNC : 0) |
				 (a->null_stream ? TSPROF_GPU_COPY_NULL_STREAM : 0));
	q = tsprof_put_varint(q, a->bytes);
	for (int i = 0; i < 3; i++)
		q = tsprof_put_varint(q, (uint32_t)a->grid[i]);
	for (int i = 0; i < 3; i++)
		q = tsprof_put_varint(q, (uint32_t)a->block[i]);
	q = tsprof_put_varint(q, a->pid);
	q = tsprof_put_varint(q, a->tid);
	q = tsprof_put_varint(q, a->stack);
	q = tsprof_put_varint(q, a->launch_start_ns ?
			      tsprof_zigzag((int64_t)(a->launch_start_ns - a->start_ns)) + 1 : 0);
	q = tsprof_put_varint(q, a->launch_end_ns - a->launch_start_ns);
	record_end(w, tsprof_put_varint(q, a->api));
}

static void on_counter(void *ctx, const struct counter_sample *c)
{
	struct tsprof_writer *w = ctx;
	uint8_t *q = record_start(w, TSPROF_RECORD_MAX);
	double milli = c->value * 1000.0;

	if (!q)
		return;
	*q++ = TSPROF_REC_COUNTER;
	q = tsprof_put_varint(q, c->track);
	q = tsprof_put_varint(q, tsprof_zigzag((int64_t)(c->time_ns - w->prev_counter_ns)));
	w->prev_counter_ns = c->time_ns;
	/* Thousandths, in the range an int64 holds. */
	if (milli > 9e18)
		milli = 9e18;
	if (milli < -9e18)
		milli = -9e18;
	record_end(w, tsprof_put_varint(q, tsprof_zigzag((int64_t)(milli >= 0 ? milli + 0.5
									   : milli - 0.5))));
}

static const struct profile_listener writer_listener = {
	.string = on_string,
	.frame = on_frame,
	.stack = on_stack,
	.thread = on_thread,
	.meta = on_meta,
	.sample = on_sample,
	.aggregate = on_aggregate,
	.gpu = on_gpu,
	.counter = on_counter,
};

static int emit_thread(uint32_t pid, uint32_t tid, uint32_t name, void *ctx)
{
	on_thread(ctx, pid, tid, name);
	return 0;
}

static int emit_meta(const char *key, const char *value, void *ctx)
{
	on_meta(ctx, key, value);
	return 0;
}

static int emit_aggregate(const struct profile_aggregate *row, void *ctx)
{
	on_aggregate(ctx, row);
	return 0;
}

/* What the profile held before the writer opened, in an order that
 * defines everything before its use: a stack's parent has a lower id. */
static int emit_existing(struct tsprof_writer *w)
{
	const struct profile *p = w->profile;

	for (uint32_t i = 1; i < profile_string_count(p); i++) {
		const char *s = profile_string(p, i);

		on_string(w, i, s, strlen(s));
	}
	for (uint32_t i = 0; i < profile_frame_count(p); i++)
		on_frame(w, i, profile_frame(p, i));
	for (uint32_t i = 1; i < profile_stack_count(p); i++)
		on_stack(w, i, profile_stack(p, i));
	profile_for_each_thread(p, emit_thread, w);
	profile_for_each_meta(p, emit_meta, w);
	profile_for_each_aggregate(p, emit_aggregate, w);
	return w->error;
}

static int write_file_header(int fd)
{
	uint8_t head[TSPROF_HEADER_LEN];

	memcpy(head, TSPROF_MAGIC, TSPROF_MAGIC_LEN);
	tsprof_put_u32(head + 8, TSPROF_VERSION);
	tsprof_put_u32(head + 12, 0);
	return write_all(fd, head, sizeof(head));
}

static void writer_free(struct tsprof_writer *w)
{
	file_stage_close(&w->stage);
	free(w->path);
	free(w->buf);
	free(w->zbuf);
	free(w);
}

static int writer_start(struct tsprof_writer *w, const char *path, char *err, size_t errlen)
{
	int ret;

	w->path = strdup(path);
	if (!w->path)
		return errbuf_set(err, errlen, -ENOMEM, "tsprof writer: out of memory");
	w->fd = file_stage_open(&w->stage, path, err, errlen);
	if (w->fd < 0)
		return w->fd;
	ret = write_file_header(w->fd);
	if (ret < 0)
		return errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	/* A journal, not a rendering: in place from its header on, so a run
	 * that is killed keeps all but its last second. */
	ret = file_stage_publish(&w->stage, path, err, errlen);
	if (ret < 0) {
		close(w->fd);
		w->fd = -1;
	}
	return ret;
}

int tsprof_writer_open(struct tsprof_writer **out, const char *path,
		       struct profile *p, char *err, size_t errlen)
{
	struct tsprof_writer *w;
	int ret;

	if (!out || !path || !p)
		return errbuf_set(err, errlen, -EINVAL,
				  "tsprof writer: bad arguments");
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return errbuf_set(err, errlen, -ENOMEM,
				  "tsprof writer: out of memory");
	w->profile = p;
	w->fd = -1;
	w->len = TSPROF_CHUNK_HEAD_LEN;
	/* Attach first: a profile that already has a writer must not cost
	 * the file at `path` its contents. */
	ret = profile_attach(p, &writer_listener, w);
	if (ret) {
		writer_free(w);
		return errbuf_set(err, errlen, ret,
				  "%s: the profile already has a writer", path);
	}
	ret = writer_start(w, path, err, errlen);
	if (!ret) {
		ret = emit_existing(w);
		if (ret)
			errbuf_set(err, errlen, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	if (ret) {
		profile_detach(p);
		if (w->fd >= 0)
			close(w->fd);
		file_stage_remove(&w->stage);
		writer_free(w);
		return ret;
	}
	*out = w;
	return 0;
}

void tsprof_writer_discard(struct tsprof_writer *w)
{
	if (!w)
		return;
	close(w->fd);
	file_stage_remove(&w->stage);
	profile_detach(w->profile);
	writer_free(w);
}

int tsprof_writer_close(struct tsprof_writer *w)
{
	uint8_t end[TSPROF_CHUNK_HEAD_LEN + TSPROF_CHUNK_TAIL_LEN];
	int ret;

	if (!w)
		return -EINVAL;
	ret = tsprof_writer_flush(w);
	/* After a failed write the file ends in a torn chunk; an end chunk
	 * after it would claim a complete recording. */
	if (!ret)
		ret = write_chunk(w, end, TSPROF_CHUNK_END, 0, 0, 0);
	if (close(w->fd) && !ret)
		ret = -errno;
	profile_detach(w->profile);
	writer_free(w);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * pprof: profile.proto, gzip-compressed, as go tool pprof, Pyroscope and
 * Parca read it. Sample types samples/count and wall/nanoseconds (a
 * sampled thread that is runnable is not necessarily on a CPU: this is not
 * CPU time); one location per distinct frame label, with its function and
 * line; functions by name and file; a mapping per native module; labels
 * pid, tid and thread. The protobuf is encoded here by hand: a handful of
 * varint, length-delimited and packed fields.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/common.h"
#include "formats/formats.h"
#include "formats/label_set.h"

struct buf {
	uint8_t *b;
	size_t len, cap;
	bool failed;
};

static void put(struct buf *o, const void *p, size_t n)
{
	if (o->failed || !n) /* memcpy from NULL, even of 0 bytes, is undefined */
		return;
	if (ARRAY_RESERVE(o->b, o->cap, o->len + n, 4096) < 0) {
		o->failed = true;
		return;
	}
	memcpy(o->b + o->len, p, n);
	o->len += n;
}

static void varint(struct buf *o, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(o, tmp, n);
}

static void field_varint(struct buf *o, uint32_t field, uint64_t v)
{
	varint(o, (uint64_t)field << 3);
	varint(o, v);
}

static void field_bytes(struct buf *o, uint32_t field, const void *p, size_t n)
{
	varint(o, (uint64_t)field << 3 | 2);
	varint(o, n);
	put(o, p, n);
}

/* A nested message, built in its own buffer. */
static void field_message(struct buf *o, uint32_t field, struct buf *m)
{
	if (m->failed)
		o->failed = true;
	field_bytes(o, field, m->b, m->len);
	m->len = 0;
}

struct pp {
	const struct profile *p;
	const struct render_options *o;
	const char *script_dir;
	struct buf out, msg, sub;
	struct label_set strings;    /* the string table; 0 is "" */
	struct label_set locations;  /* by frame label; location id = index + 1 */
	struct label_set functions;  /* by "name\nfile"; function id = index + 1 */
	struct label_set mappings;   /* native modules; mapping id = index + 1 */
	uint32_t *loc_of;            /* per frame id: location id, 0 not yet */
	uint64_t period;
};

static uint64_t str(struct pp *s, const char *text)
{
	uint32_t id;

	if (label_set_intern(&s->strings, text, &id, NULL) < 0)
		s->out.failed = true;
	return id;
}

static uint32_t id_in(struct pp *s, struct label_set *set, const char *key, bool *added)
{
	uint32_t id = 0;

	if (label_set_intern(set, key, &id, added) < 0)
		s->out.failed = true;
	return id + 1;
}

/* The location of a frame, its function and mapping written with it the
 * first time they are met (field order does not matter in protobuf). */
static uint64_t location(struct pp *s, uint32_t frame)
{
	const struct frame *f = profile_frame(s->p, frame);
	const char *name = profile_string(s->p, f->name);
	const char *file = f->module ? profile_string(s->p, f->module) : "";
	char label[LABEL_MAX], key[LABEL_MAX * 2];
	uint32_t loc, fn, map = 0;
	bool added;

	if (s->loc_of[frame])
		return s->loc_of[frame];
	frame_label(s->p, frame, s->o, s->script_dir, label, sizeof(label));
	/* One location per rendering within one file: two modules' _start
	 * are two functions, each with its own file and mapping. */
	snprintf(key, sizeof(key), "%s\x1f%s", label, file);
	loc = id_in(s, &s->locations, key, &added);
	s->loc_of[frame] = loc;
	if (!added)
		return loc;
	if (f->kind == FRAME_PYTHON && !s->o->full_filenames)
		file = python_file_short(file, s->script_dir);
	snprintf(key, sizeof(key), "%s\n%s", name, file);
	fn = id_in(s, &s->functions, key, &added);
	if (added) {
		field_varint(&s->msg, 1, fn);
		field_varint(&s->msg, 2, str(s, name));
		field_varint(&s->msg, 3, str(s, name));
		field_varint(&s->msg, 4, str(s, file));
		field_message(&s->out, 5, &s->msg);
	}
	/* A native frame without a source line names its module. */
	if (f->kind == FRAME_NATIVE && *file && !f->line) {
		map = id_in(s, &s->mappings, file, &added);
		if (added) {
			field_varint(&s->msg, 1, map);
			field_varint(&s->msg, 5, str(s, file));
			field_varint(&s->msg, 7, 1); /* has_functions */
			field_message(&s->out, 3, &s->msg);
		}
	}
	field_varint(&s->msg, 1, loc);
	if (map)
		field_varint(&s->msg, 2, map);
	field_varint(&s->sub, 1, fn);
	if (f->line && !(s->o->by_function && f->kind == FRAME_PYTHON))
		field_varint(&s->sub, 2, f->line);
	field_message(&s->msg, 4, &s->sub);
	field_message(&s->out, 4, &s->msg);
	return loc;
}

static void label_str(struct pp *s, struct buf *m, const char *k, const char *v)
{
	field_varint(&s->sub, 1, str(s, k));
	field_varint(&s->sub, 2, str(s, v));
	field_message(m, 3, &s->sub);
}

static void label_num(struct pp *s, struct buf *m, const char *k, uint64_t v)
{
	field_varint(&s->sub, 1, str(s, k));
	field_varint(&s->sub, 3, v);
	field_message(m, 3, &s->sub);
}

/* The process's role: its label, and the rank and DataLoader worker
 * it was found to be (metadata "rank.PID", "worker.PID"). */
static void process_labels(struct pp *s, struct buf *m, uint32_t pid)
{
	static const char *const keys[] = { "rank", "worker" };
	const char *label = process_label_of(s->p, pid), *v;
	char key[32];

	if (label && *label)
		label_str(s, m, "process", label);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(key, sizeof(key), "%s.%" PRIu32, keys[i], pid);
		v = profile_meta(s->p, key);
		if (v && *v)
			label_num(s, m, keys[i], strtoull(v, NULL, 10));
	}
}

static int add_sample(const struct profile_aggregate *row, void *ctx)
{
	struct pp *s = ctx;
	const struct stack_node *n = profile_stack(s->p, row->stack);
	const char *thread = profile_thread_name(s->p, row->pid, row->tid);
	struct buf ids = { 0 }, sample = { 0 };

	if (!render_keeps(s->p, s->o, row))
		return 0;
	/* Leaf first, as profile.proto wants. */
	for (; n->depth; n = profile_stack(s->p, n->parent))
		varint(&ids, location(s, n->frame));
	field_bytes(&sample, 1, ids.b, ids.len);
	varint(&s->sub, row->count);
	varint(&s->sub, row->weight_ns);
	field_message(&sample, 2, &s->sub);
	label_num(s, &sample, "pid", row->pid);
	label_num(s, &sample, "tid", row->tid);
	if (thread && *thread)
		label_str(s, &sample, "thread", thread);
	process_labels(s, &sample, row->pid);
	if (ids.failed)
		sample.failed = true;
	field_message(&s->out, 2, &sample);
	free(ids.b);
	free(sample.b);
	return s->out.failed ? -ENOMEM : 0;
}

static void value_type(struct pp *s, uint32_t field, const char *type, const char *unit)
{
	field_varint(&s->msg, 1, str(s, type));
	field_varint(&s->msg, 2, str(s, unit));
	field_message(&s->out, field, &s->msg);
}

static int write_gzip(FILE *out, const uint8_t *data, size_t len)
{
	z_stream z = { 0 };
	uint8_t chunk[65536];
	int ret;

	/* windowBits 15 + 16: a gzip wrapper. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out);
	} while (ret == Z_OK);
	deflateEnd(&z);
	return ret == Z_STREAM_END && !ferror(out) ? 0 : -EIO;
}

int pprof_write(const struct profile *p, FILE *out, const struct render_options *o,
		char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct pp s = { .p = p, .o = o ? o : &defaults };
	const char *period = profile_meta(p, "period_ns");
	const char *duration = profile_meta(p, "duration_ns");
	int ret;

	s.script_dir = profile_meta(p, "python_script_dir");
	s.period = period ? strtoull(period, NULL, 10) : 0;
	s.loc_of = calloc((size_t)profile_frame_count(p) + 1, sizeof(*s.loc_of));
	if (!s.loc_of) {
		ret = -ENOMEM;
		goto out;
	}
	str(&s, "");
	value_type(&s, 1, "samples", "count");
	value_type(&s, 1, "wall", "nanoseconds");
	ret = profile_for_each_aggregate(p, add_sample, &s);
	if (ret < 0)
		goto out;
	if (duration)
		field_varint(&s.out, 10, strtoull(duration, NULL, 10));
	value_type(&s, 11, "wall", "nanoseconds");
	if (s.period)
		field_varint(&s.out, 12, s.period);
	/* The string table last: every id above is in it by now. */
	for (uint32_t i = 0; i < s.strings.count; i++)
		field_bytes(&s.out, 6, s.strings.text[i], strlen(s.strings.text[i]));
	ret = s.out.failed || s.msg.failed || s.sub.failed ? -ENOMEM : 0;
	if (!ret)
		ret = write_gzip(out, s.out.b, s.out.len);
out:
	free(s.out.b);
	free(s.msg.b);
	free(s.sub.b);
	free(s.loc_of);
	label_set_free(&s.strings);
	label_set_free(&s.locations);
	label_set_free(&s.functions);
	label_set_free(&s.mappings);
	if (ret < 0)
		return errbuf_set(err, errlen, ret, "pprof: %s", strerror(-ret));
	return 0;
}

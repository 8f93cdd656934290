// SPDX-License-Identifier: MIT
/*
 * Decodes the records of a .tsprof chunk and replays them into a profile
 * through its public interning functions. The payload passed its CRC, but
 * a file is still untrusted input: every varint, length, tag and id is
 * checked before anything is applied.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/profile_hooks.h"
#include "formats/tsprof_layout.h"
#include "formats/tsprof_replay.h"

#define MAX_NUMBERS TSPROF_GPU_FIELDS

/* A record's fields: `numbers` varints, then `texts` length-prefixed texts. */
struct record_shape {
	const char *name;
	unsigned numbers;
	unsigned texts;
	unsigned wide; /* bit i: number i may use 64 bits, not just 32 */
};

static const struct record_shape shapes[TSPROF_REC_LAST + 1] = {
	[TSPROF_REC_STRING] = { "string", 1, 1, 0 },
	[TSPROF_REC_FRAME] = { "frame", 5, 0, 0 },
	[TSPROF_REC_STACK] = { "stack", 3, 0, 0 },
	[TSPROF_REC_THREAD] = { "thread", 3, 0, 0 },
	[TSPROF_REC_META] = { "meta", 0, 2, 0 },
	[TSPROF_REC_SAMPLE] = { "sample", 6, 0, 1u << 0 | 1u << 4 },
	[TSPROF_REC_AGGREGATE] = { "aggregate", 6, 0, 1u << 4 | 1u << 5 },
	[TSPROF_REC_COUNTER] = { "counter", 3, 0, 1u << 1 | 1u << 2 },
	[TSPROF_REC_GPU] = { "gpu", TSPROF_GPU_FIELDS, 0, 1u << 1 | 1u << 2 | 1u << 8 | 1u << 18 |
								1u << 19 },
};

struct record {
	unsigned tag;
	uint64_t n[MAX_NUMBERS];
	const char *text[2];
	size_t text_len[2];
};

/* How many of each definition exist, as the check pass goes. */
struct defined {
	uint32_t strings, frames, stacks;
};

static int get_number(const uint8_t **p, const uint8_t *end, uint64_t *v,
		      char *why, size_t len)
{
	int err = tsprof_get_varint(p, end, v);

	if (err == -EOVERFLOW)
		return errbuf_set(why, len, -EBADMSG,
				  "a varint overflows 64 bits");
	if (err)
		return errbuf_set(why, len, -EBADMSG, "the record ends early");
	return 0;
}

static int get_text(const uint8_t **p, const uint8_t *end, const char **text,
		    size_t *text_len, char *why, size_t len)
{
	uint64_t n;
	int err = get_number(p, end, &n, why, len);

	if (err)
		return err;
	if (n > PROFILE_MAX_STRING)
		return errbuf_set(why, len, -EBADMSG,
				  "a text of %" PRIu64
				  " bytes is over the %u limit", n,
				  PROFILE_MAX_STRING);
	if (n > (uint64_t)(end - *p))
		return errbuf_set(why, len, -EBADMSG, "the record ends early");
	if (memchr(*p, '\0', n))
		return errbuf_set(why, len, -EBADMSG,
				  "a text contains a NUL byte");
	*text = (const char *)*p;
	*text_len = n;
	*p += n;
	return 0;
}

static int decode(const uint8_t **p, const uint8_t *end, struct record *r,
		  char *why, size_t len)
{
	const struct record_shape *shape;
	uint64_t tag;
	int err;

	err = get_number(p, end, &tag, why, len);
	if (err)
		return err;
	if (tag == 0 || tag > TSPROF_REC_LAST)
		return errbuf_set(why, len, -EBADMSG,
				  "unknown record tag %" PRIu64, tag);
	r->tag = (unsigned)tag;
	shape = &shapes[tag];
	for (unsigned i = 0; i < shape->numbers; i++) {
		err = get_number(p, end, &r->n[i], why, len);
		if (err)
			return err;
		if (!(shape->wide & 1u << i) && r->n[i] > UINT32_MAX)
			return errbuf_set(why, len, -EBADMSG,
					  "%s field %u (%" PRIu64
					  ") is over 32 bits", shape->name, i,
					  r->n[i]);
	}
	for (unsigned i = 0; i < shape->texts; i++) {
		err = get_text(p, end, &r->text[i], &r->text_len[i], why, len);
		if (err)
			return err;
	}
	return 0;
}

static int check_definition(const char *what, uint64_t id, uint32_t *count,
			    char *why, size_t len)
{
	if (id != *count)
		return errbuf_set(why, len, -EBADMSG,
				  "%s %" PRIu64
				  " is defined out of order (expected %u)",
				  what, id, *count);
	(*count)++;
	return 0;
}

static int check_ref(const char *what, uint64_t id, uint32_t count, char *why,
		     size_t len)
{
	if (id >= count)
		return errbuf_set(why, len, -EBADMSG,
				  "%s %" PRIu64
				  " is used before its definition", what, id);
	return 0;
}

static int check_frame(const uint64_t *n, struct defined *d, char *why,
		       size_t len)
{
	if (n[1] > FRAME_KIND_MAX)
		return errbuf_set(why, len, -EBADMSG,
				  "frame %" PRIu64 " has unknown kind %" PRIu64,
				  n[0], n[1]);
	if (check_ref("string", n[2], d->strings, why, len) ||
	    check_ref("string", n[3], d->strings, why, len))
		return -EBADMSG;
	return check_definition("frame", n[0], &d->frames, why, len);
}

static int check_stack(const uint64_t *n, struct defined *d, char *why,
		       size_t len)
{
	if (check_ref("stack", n[1], d->stacks, why, len) ||
	    check_ref("frame", n[2], d->frames, why, len))
		return -EBADMSG;
	return check_definition("stack", n[0], &d->stacks, why, len);
}

static int check(const struct record *r, struct defined *d, char *why,
		 size_t len)
{
	const uint64_t *n = r->n;

	switch (r->tag) {
	case TSPROF_REC_STRING:
		return check_definition("string", n[0], &d->strings, why, len);
	case TSPROF_REC_FRAME:
		return check_frame(n, d, why, len);
	case TSPROF_REC_STACK:
		return check_stack(n, d, why, len);
	case TSPROF_REC_THREAD:
		return check_ref("string", n[2], d->strings, why, len);
	case TSPROF_REC_META:
		if (!r->text_len[0])
			return errbuf_set(why, len, -EBADMSG,
					  "a meta record has an empty key");
		return 0;
	case TSPROF_REC_SAMPLE:
		return check_ref("stack", n[3], d->stacks, why, len);
	case TSPROF_REC_AGGREGATE:
		if (!n[5])
			return errbuf_set(why, len, -EBADMSG,
					  "an aggregate row counts no samples");
		return check_ref("stack", n[2], d->stacks, why, len);
	case TSPROF_REC_COUNTER:
		if (!n[0])
			return errbuf_set(why, len, -EBADMSG, "a counter has no track");
		return check_ref("string", n[0], d->strings, why, len);
	case TSPROF_REC_GPU:
		if (!n[0] || n[0] > GPU_ACTIVITY_KIND_MAX)
			return errbuf_set(why, len, -EBADMSG, "unknown GPU activity kind %" PRIu64,
					  n[0]);
		if (check_ref("string", n[6], d->strings, why, len) ||
		    check_ref("stack", n[17], d->stacks, why, len) ||
		    check_ref("string", n[20], d->strings, why, len))
			return -EBADMSG;
		return 0;
	}
	return errbuf_set(why, len, -EBADMSG, "unknown record tag %u", r->tag);
}

/* NUL-terminated copies of a record's texts, one after the other. */
static int copy_texts(struct tsprof_replay *rp, const struct record *r,
		      char **texts)
{
	size_t need = r->text_len[0] + r->text_len[1] + 2;
	char *q;

	if (ARRAY_RESERVE(rp->scratch, rp->scratch_cap, need, 0) < 0)
		return -ENOMEM;
	q = rp->scratch;
	for (unsigned i = 0; i < 2; i++) {
		texts[i] = q;
		memcpy(q, r->text[i] ? r->text[i] : "", r->text_len[i]);
		q[r->text_len[i]] = '\0';
		q += r->text_len[i] + 1;
	}
	return 0;
}

static int apply_definition(struct tsprof_replay *rp, const struct record *r,
			    char *why, size_t len)
{
	struct profile *p = rp->profile;
	const uint64_t *n = r->n;
	bool m = rp->merging;
	const char *what;
	char *texts[2];
	uint32_t id;
	int err;

	switch (r->tag) {
	case TSPROF_REC_STRING:
		what = "string";
		err = copy_texts(rp, r, texts);
		if (!err)
			err = profile_intern_string(p, texts[0], &id);
		if (!err)
			err = tsprof_merge_remember(&rp->string_ids, &rp->string_cap, &rp->file_strings, id, m);
		break;
	case TSPROF_REC_FRAME: {
		struct frame f = {
			.kind = (uint32_t)n[1], .name = tsprof_merge_id(rp->string_ids, n[2], m),
			.module = tsprof_merge_id(rp->string_ids, n[3], m), .line = (uint32_t)n[4],
		};

		what = "frame";
		err = profile_intern_frame(p, &f, &id);
		if (!err)
			err = tsprof_merge_remember(&rp->frame_ids, &rp->frame_cap, &rp->file_frames, id, m);
		break;
	}
	case TSPROF_REC_STACK:
		what = "stack";
		err = profile_intern_stack(p, tsprof_merge_id(rp->stack_ids, n[1], m),
					   tsprof_merge_id(rp->frame_ids, n[2], m), &id);
		if (!err)
			err = tsprof_merge_remember(&rp->stack_ids, &rp->stack_cap, &rp->file_stacks, id, m);
		break;
	default:
		return errbuf_set(why, len, -EBADMSG, "unknown record tag %u",
				  r->tag);
	}
	if (err)
		return err;
	/* Interning must hand back the id the file gave; a repeated
	 * definition gets the earlier id instead. (Merged, ids differ.) */
	if (!m && n[0] != id)
		return errbuf_set(why, len, -EBADMSG,
				  "%s %" PRIu64 " repeats %s %u", what, n[0],
				  what, id);
	return 0;
}

static int apply_gpu(struct tsprof_replay *rp, const uint64_t *n)
{
	bool m = rp->merging;
	struct gpu_activity a = {
		.kind = (uint32_t)n[0], .device = (uint32_t)n[3], .stream = (uint32_t)n[4],
		.correlation = (uint32_t)n[5], .name = tsprof_merge_id(rp->string_ids, n[6], m),
		.copy_kind = (uint32_t)n[7] & 0xff,
		.src_kind = (uint8_t)(n[7] >> TSPROF_GPU_COPY_SRC_SHIFT),
		.dst_kind = (uint8_t)(n[7] >> TSPROF_GPU_COPY_DST_SHIFT),
		.async = (n[7] & TSPROF_GPU_COPY_ASYNC) != 0,
		.null_stream = (n[7] & TSPROF_GPU_COPY_NULL_STREAM) != 0, .bytes = n[8], .pid = (uint32_t)n[15] + rp->pid_add,
		.tid = (uint32_t)n[16], .stack = tsprof_merge_id(rp->stack_ids, n[17], m),
		.api = tsprof_merge_id(rp->string_ids, n[20], m),
	};

	a.start_ns = rp->prev_gpu_ns + (uint64_t)tsprof_unzigzag(n[1]);
	rp->prev_gpu_ns = a.start_ns;
	a.end_ns = a.start_ns + n[2];
	for (int i = 0; i < 3; i++) {
		a.grid[i] = (int32_t)(uint32_t)n[9 + i];
		a.block[i] = (int32_t)(uint32_t)n[12 + i];
	}
	if (n[18]) {
		a.launch_start_ns = a.start_ns + (uint64_t)tsprof_unzigzag(n[18] - 1);
		a.launch_end_ns = a.launch_start_ns + n[19];
	}
	if (a.end_ns < a.start_ns)
		return 0; /* a duration past 2^64: not applied, nothing else lost */
	/* A window keeps what started in it, by the samples' clock. */
	if (rp->windowed && (!rp->first_ns || a.start_ns < rp->first_ns + rp->from_ns ||
			     a.start_ns - rp->first_ns > rp->to_ns))
		return 0;
	a.start_ns = tsprof_merge_time(rp, a.start_ns);
	a.end_ns = tsprof_merge_time(rp, a.end_ns);
	a.launch_start_ns = tsprof_merge_time(rp, a.launch_start_ns);
	a.launch_end_ns = tsprof_merge_time(rp, a.launch_end_ns);
	return profile_add_gpu_activity(rp->profile, &a);
}

static int apply(struct tsprof_replay *rp, const struct record *r, char *why,
		 size_t len)
{
	struct profile *p = rp->profile;
	const uint64_t *n = r->n;
	char *texts[2];
	int err;

	switch (r->tag) {
	case TSPROF_REC_THREAD:
		return profile_set_thread(p, (uint32_t)n[0] + rp->pid_add, (uint32_t)n[1],
					  profile_string(p, tsprof_merge_id(rp->string_ids, n[2], rp->merging)));
	case TSPROF_REC_META:
		err = copy_texts(rp, r, texts);
		if (err)
			return err;
		tsprof_merge_note(rp, texts[0], texts[1]);
		if (rp->merging)
			return tsprof_merge_meta(rp, texts[0], texts[1]);
		return profile_set_meta(p, texts[0], texts[1]);
	case TSPROF_REC_SAMPLE: {
		uint64_t delta = (uint64_t)tsprof_unzigzag(n[0]);
		struct sample s = {
			.time_ns = rp->prev_time_ns + delta,
			.pid = (uint32_t)n[1], .tid = (uint32_t)n[2],
			.stack = (uint32_t)n[3], .weight_ns = n[4],
			.flags = (uint32_t)n[5],
		};

		if (!rp->first_ns)
			rp->first_ns = s.time_ns ? s.time_ns : 1;
		rp->prev_time_ns = s.time_ns;
		if (rp->windowed && (s.time_ns < rp->first_ns + rp->from_ns ||
				     s.time_ns - rp->first_ns > rp->to_ns))
			return 0;
		s.time_ns = tsprof_merge_time(rp, s.time_ns);
		s.pid += rp->pid_add;
		s.stack = tsprof_merge_id(rp->stack_ids, s.stack, rp->merging);
		err = profile_add_sample(p, &s);
		if (!err)
			rp->samples++;
		return err;
	}
	case TSPROF_REC_GPU:
		return apply_gpu(rp, n);
	case TSPROF_REC_COUNTER: {
		struct counter_sample c = { .track = tsprof_merge_id(rp->string_ids, n[0], rp->merging) };

		c.time_ns = rp->prev_counter_ns + (uint64_t)tsprof_unzigzag(n[1]);
		rp->prev_counter_ns = c.time_ns;
		c.value = (double)tsprof_unzigzag(n[2]) / 1000.0;
		if (rp->windowed && (!rp->first_ns || c.time_ns < rp->first_ns + rp->from_ns ||
				     c.time_ns - rp->first_ns > rp->to_ns))
			return 0;
		c.time_ns = tsprof_merge_time(rp, c.time_ns);
		return profile_add_counter(p, &c);
	}
	case TSPROF_REC_AGGREGATE: {
		struct profile_aggregate row = {
			.pid = (uint32_t)n[0] + rp->pid_add, .tid = (uint32_t)n[1],
			.stack = tsprof_merge_id(rp->stack_ids, n[2], rp->merging), .flags = (uint32_t)n[3],
			.weight_ns = n[4], .count = n[5],
		};

		if (rp->windowed)
			return 0; /* no time to place it in the window */
		err = profile_merge_aggregate(p, &row);
		if (!err)
			rp->samples += row.count;
		return err;
	}
	}
	return apply_definition(rp, r, why, len);
}

static int where(char *why, size_t len, uint64_t index, size_t offset,
		 const char *reason)
{
	return errbuf_set(why, len, -EBADMSG,
			  "record %" PRIu64 " at payload byte %zu: %s", index,
			  offset, reason);
}

void tsprof_replay_limits(struct tsprof_replay *rp, uint64_t size)
{
	uint64_t bytes = size > UINT64_MAX / TSPROF_LIMIT_STRING_BYTES_PER_BYTE ? UINT64_MAX :
			 size * TSPROF_LIMIT_STRING_BYTES_PER_BYTE;
	uint64_t defs = size > UINT64_MAX / TSPROF_LIMIT_DEFINITIONS_PER_BYTE ? UINT64_MAX :
			size * TSPROF_LIMIT_DEFINITIONS_PER_BYTE;

	rp->limit_string_bytes = bytes > TSPROF_LIMIT_STRING_BYTES_LEAST ? bytes :
				 TSPROF_LIMIT_STRING_BYTES_LEAST;
	rp->limit_definitions = defs > TSPROF_LIMIT_DEFINITIONS_LEAST ? defs :
				TSPROF_LIMIT_DEFINITIONS_LEAST;
}

static double mib(uint64_t n)
{
	return (double)n / (1 << 20);
}

/* -EFBIG, saying which limit, once the file's strings or definitions
 * (so far, the chunk's checked records included) pass its limits. */
static int over_limits(const struct tsprof_replay *rp, const struct defined *d, uint64_t bytes,
		       char *why, size_t len)
{
	uint64_t max_bytes = rp->limit_string_bytes ? rp->limit_string_bytes :
			     TSPROF_LIMIT_STRING_BYTES_LEAST;
	uint64_t max_defs = rp->limit_definitions ? rp->limit_definitions :
			    TSPROF_LIMIT_DEFINITIONS_LEAST;
	uint64_t defs = (uint64_t)d->strings + d->frames + d->stacks;

	if (bytes > max_bytes)
		return errbuf_set(why, len, -EFBIG,
				  "its strings pass %.0f MiB, the most a recording of its size "
				  "may hold (%d times its size, at least %.0f MiB)",
				  mib(max_bytes), TSPROF_LIMIT_STRING_BYTES_PER_BYTE,
				  mib(TSPROF_LIMIT_STRING_BYTES_LEAST));
	if (defs > max_defs)
		return errbuf_set(why, len, -EFBIG,
				  "its strings, frames and stacks pass %" PRIu64 ", the most a "
				  "recording of its size may define (%d for each byte, at least %llu)",
				  max_defs, TSPROF_LIMIT_DEFINITIONS_PER_BYTE,
				  TSPROF_LIMIT_DEFINITIONS_LEAST);
	return 0;
}

static int check_all(struct tsprof_replay *rp, const uint8_t *payload,
		     size_t size, char *why, size_t len)
{
	struct defined d = {
		.strings = rp->file_strings,
		.frames = rp->file_frames,
		.stacks = rp->file_stacks,
	};
	const uint8_t *q = payload, *end = payload + size;
	uint64_t bytes = rp->string_bytes;
	char reason[160];
	int err;

	for (uint64_t i = 0; q < end; i++) {
		const uint8_t *at = q;
		struct record r = { 0 };

		if (decode(&q, end, &r, reason, sizeof(reason)) ||
		    check(&r, &d, reason, sizeof(reason)))
			return where(why, len, i, (size_t)(at - payload),
				     reason);
		if (r.tag == TSPROF_REC_STRING)
			bytes += r.text_len[0] + 1;
		err = over_limits(rp, &d, bytes, why, len);
		if (err)
			return err;
	}
	rp->string_bytes = bytes;
	return 0;
}

int tsprof_replay_chunk(struct tsprof_replay *rp, const uint8_t *payload,
			size_t size, char *why, size_t len)
{
	const uint8_t *q = payload, *end = payload + size;
	char reason[160];
	int err;

	err = check_all(rp, payload, size, why, len);
	if (err)
		return err;
	for (uint64_t i = 0; q < end; i++) {
		const uint8_t *at = q;
		struct record r = { 0 };

		err = decode(&q, end, &r, reason, sizeof(reason));
		if (!err)
			err = apply(rp, &r, reason, sizeof(reason));
		if (err == -ENOMEM || err == -ENOSPC)
			return err;
		if (err == -EBADMSG)
			return where(why, len, i, (size_t)(at - payload),
				     reason);
		if (err)
			return where(why, len, i, (size_t)(at - payload),
				     strerror(-err));
	}
	return 0;
}

void tsprof_replay_release(struct tsprof_replay *rp)
{
	free(rp->scratch);
	free(rp->string_ids);
	free(rp->frame_ids);
	free(rp->stack_ids);
	rp->scratch = NULL;
	rp->scratch_cap = 0;
	rp->string_ids = rp->frame_ids = rp->stack_ids = NULL;
	rp->string_cap = rp->frame_cap = rp->stack_cap = 0;
}

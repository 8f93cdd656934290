/* SPDX-License-Identifier: MIT */
/* Decoding a .tsprof chunk's records into a profile (tsprof_replay.c). */
#ifndef TRAINSAMPLE_FORMATS_TSPROF_REPLAY_H
#define TRAINSAMPLE_FORMATS_TSPROF_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "formats/formats.h"

struct tsprof_replay {
	struct profile *profile;
	uint64_t prev_time_ns; /* the last sample's time: samples are deltas */
	uint64_t prev_gpu_ns;  /* the last GPU activity's start: so are they */
	uint64_t prev_counter_ns;
	bool windowed;         /* keep only samples in [from_ns, to_ns] */
	uint64_t from_ns, to_ns; /* after the first sample */
	uint64_t first_ns;     /* the first sample's time; 0 none yet */
	uint64_t samples;      /* replayed so far, aggregates by their count */
	/*
	 * What this file may make us hold (tsprof_read_merge sets them from
	 * its size; 0: the least, TSPROF_LIMIT_*_LEAST): its strings' bytes
	 * and its definitions (strings, frames, stacks), counted as checked.
	 */
	uint64_t limit_string_bytes, limit_definitions;
	uint64_t string_bytes;
	char *scratch;         /* NUL-terminated copies of record text */
	size_t scratch_cap;
	/*
	 * Merging a recording into a profile that holds others: the file's
	 * ids (its own, from those of a fresh profile on) are mapped to the
	 * profile's, its PIDs moved by pid_add (another machine's), its
	 * times by time_add (its clock onto the first recording's), and its
	 * metadata kept only where the first had none.
	 */
	bool merging;
	uint32_t pid_add;
	int64_t time_add;
	uint32_t file_strings, file_frames, file_stacks; /* defined so far */
	uint32_t *string_ids, *frame_ids, *stack_ids;    /* file id -> ours */
	size_t string_cap, frame_cap, stack_cap;
	const char *first_host; /* the first recording's host; NULL unknown */
	uint32_t file_index;    /* 0 for the first recording */
	/* This recording's, for its process's label (tsprof_replay_end). */
	char command[128], rank[16], host[64];
	uint32_t pid;
};

/*
 * A recording is refused (-EFBIG) past these, so that a small file cannot
 * make the reader allocate without bound (zlib inflates up to a thousand
 * times): its strings' bytes past 32 times its size, and its strings,
 * frames and stacks past 8 for every byte of it, but never under the
 * least. A recorder's file takes several bytes per definition, and its
 * names compress a few times, not tens.
 */
#define TSPROF_LIMIT_STRING_BYTES_LEAST (64ull << 20)
#define TSPROF_LIMIT_STRING_BYTES_PER_BYTE 32
#define TSPROF_LIMIT_DEFINITIONS_LEAST (1ull << 20)
#define TSPROF_LIMIT_DEFINITIONS_PER_BYTE 8

/* Sets r's limits for a file of `size` bytes. */
void tsprof_replay_limits(struct tsprof_replay *r, uint64_t size);

/*
 * Checks every record of one chunk's payload, then applies them all, so a
 * bad record leaves the profile as it was before the chunk. -EBADMSG with
 * the reason in `why` for a bad record; -EFBIG with the reason in `why`
 * past a limit; another negative errno (-ENOMEM) when the profile cannot
 * take it.
 */
int tsprof_replay_chunk(struct tsprof_replay *r, const uint8_t *payload,
			size_t len, char *why, size_t whylen);
void tsprof_replay_release(struct tsprof_replay *r);
/* Before a file's first chunk: recording file_index of a merge (0: the
 * first, read as it is). -ENOMEM. */
int tsprof_replay_begin(struct tsprof_replay *r, uint32_t file_index);
/* After a file's last chunk: its process labelled ("process.PID"). */
int tsprof_replay_end(struct tsprof_replay *r);

/* tsprof_merge.c, for the replay: our id for a file's (defined) id; a
 * definition's id kept; a merged file's metadata applied, and noted for
 * its label; a time moved onto the first recording's clock. */
uint32_t tsprof_merge_id(const uint32_t *ids, uint64_t id, bool merging);
int tsprof_merge_remember(uint32_t **ids, size_t *cap, uint32_t *count, uint32_t id,
			  bool merging);
int tsprof_merge_meta(struct tsprof_replay *rp, const char *key, const char *value);
void tsprof_merge_note(struct tsprof_replay *rp, const char *key, const char *value);
uint64_t tsprof_merge_time(const struct tsprof_replay *rp, uint64_t t);

#endif

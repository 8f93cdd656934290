// SPDX-License-Identifier: MIT
/*
 * Merging recordings into one profile (report A.tsprof B.tsprof): each
 * file numbers its strings, frames and stacks from those of a fresh
 * profile on, so a second file's ids are mapped to the profile's as its
 * definitions are interned; another host's PIDs are moved past 2^22 and
 * its times onto the first recording's clock. The first file is read as
 * it is, its ids checked to be the profile's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/tsprof_replay.h"

/* Our id for the file's id (checked to be defined): the same unless
 * merging. */
uint32_t tsprof_merge_id(const uint32_t *ids, uint64_t id, bool merging)
{
	return merging ? ids[id] : (uint32_t)id;
}

int tsprof_merge_remember(uint32_t **ids, size_t *cap, uint32_t *count, uint32_t id, bool merging)
{
	if (merging) {
		if (ARRAY_RESERVE(*ids, *cap, (size_t)*count + 1, 256) < 0)
			return -ENOMEM;
		(*ids)[*count] = id;
	}
	(*count)++;
	return 0;
}

/*
 * A merged recording's metadata: its host tells whether its PIDs are
 * another machine's (then moved past 2^22, Linux's largest PID, times the
 * recording's index), its clock offset how far its monotonic clock is
 * from the first's. The first recording's values stay the profile's.
 */
/* A process's own metadata ("process.PID" and the like) under its PID
 * as moved, its label saying which host where that is another's. */
static int merge_process_meta(struct tsprof_replay *rp, const char *key, const char *value)
{
	const char *dot = strchr(key, '.');
	bool elsewhere = rp->first_host && rp->host[0] && strcmp(rp->host, rp->first_host);
	char moved[64], label[320];
	uint32_t pid;

	if (!dot)
		return 0;
	pid = (uint32_t)strtoul(dot + 1, NULL, 10);
	snprintf(moved, sizeof(moved), "%.*s.%" PRIu32, (int)(dot - key), key, pid + rp->pid_add);
	if (!strncmp(key, "process.", 8) && elsewhere)
		snprintf(label, sizeof(label), "%.200s on %.100s", value, rp->host);
	else
		snprintf(label, sizeof(label), "%s", value);
	return profile_set_meta(rp->profile, moved, label);
}

int tsprof_merge_meta(struct tsprof_replay *rp, const char *key, const char *value)
{
	struct profile *p = rp->profile;
	const char *first;

	if (!strcmp(key, "hostname") && rp->first_host && strcmp(value, rp->first_host))
		rp->pid_add = rp->file_index << 22;
	if (!strcmp(key, "clock_offset_ns") && (first = profile_meta(p, "clock_offset_ns")))
		rp->time_add = strtoll(value, NULL, 10) - strtoll(first, NULL, 10);
	if (!strncmp(key, "exit_ns.", 8)) {
		char moved[32];

		snprintf(moved, sizeof(moved), "%" PRIu64,
			 tsprof_merge_time(rp, strtoull(value, NULL, 10)));
		return merge_process_meta(rp, key, moved);
	}
	if (!strncmp(key, "process.", 8) || !strncmp(key, "rank.", 5) ||
	    !strncmp(key, "worker.", 7) || !strncmp(key, "fork_of.", 8) ||
	    !strncmp(key, "exit.", 5))
		return merge_process_meta(rp, key, value);
	return profile_meta(p, key) ? 0 : profile_set_meta(p, key, value);
}

/* What names this recording's process; its own "process.PID" label is
 * made again at the end, where its PID may have moved. */
void tsprof_merge_note(struct tsprof_replay *rp, const char *key, const char *value)
{
	if (!strcmp(key, "command"))
		snprintf(rp->command, sizeof(rp->command), "%s", value);
	else if (!strcmp(key, "rank"))
		snprintf(rp->rank, sizeof(rp->rank), "%s", value);
	else if (!strcmp(key, "hostname"))
		snprintf(rp->host, sizeof(rp->host), "%s", value);
	else if (!strcmp(key, "pid"))
		rp->pid = (uint32_t)strtoul(value, NULL, 10);
}

int tsprof_replay_end(struct tsprof_replay *rp)
{
	char key[32], label[256];
	bool elsewhere = rp->merging && rp->first_host && strcmp(rp->host, rp->first_host);

	if (!rp->pid)
		return 0;
	snprintf(key, sizeof(key), "process.%" PRIu32, rp->pid + rp->pid_add);
	process_label(rp->command, rp->rank, elsewhere ? rp->host : NULL, label, sizeof(label));
	if (profile_set_meta(rp->profile, key, label) < 0)
		return -ENOMEM;
	if (!rp->rank[0])
		return 0;
	/* The rank of a recording's own process, as a followed rank's
	 * (recordings made before it was kept so). */
	snprintf(key, sizeof(key), "rank.%" PRIu32, rp->pid + rp->pid_add);
	return profile_set_meta(rp->profile, key, rp->rank);
}

uint64_t tsprof_merge_time(const struct tsprof_replay *rp, uint64_t t)
{
	return t ? t + (uint64_t)rp->time_add : 0;
}

int tsprof_replay_begin(struct tsprof_replay *rp, uint32_t file_index)
{
	rp->file_index = file_index;
	rp->merging = file_index > 0;
	/* A fresh profile's own: the empty string and the root stack. */
	rp->file_strings = rp->file_stacks = rp->file_frames = 0;
	if (tsprof_merge_remember(&rp->string_ids, &rp->string_cap, &rp->file_strings, 0, rp->merging) ||
	    tsprof_merge_remember(&rp->stack_ids, &rp->stack_cap, &rp->file_stacks, 0, rp->merging))
		return -ENOMEM;
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * --native's merge, over plain arrays (merge.h): no sampler, no profile,
 * so every case of it is a unit test (tests/unit/test_native_merge.c).
 */
#include "sampler/python/merge.h"

#define MAX_GROUPS 1024

static void add(struct merge_output *out, uint32_t frame, enum merged_kind kind)
{
	out->frames[out->n] = frame;
	out->kinds[out->n++] = (uint8_t)kind;
}

/* Python frames [from, to), outermost first. */
static void add_python(const struct merge_input *in, struct merge_output *out, int from, int to)
{
	for (int j = to - 1; j >= from; j--) {
		if (in->python[j] == MERGE_NO_FRAME)
			continue;
		add(out, in->python[j], MERGED_PYTHON);
		out->python = true;
	}
}

/* Group k is python[start[k] .. start[k + 1]): a new one begins above
 * each frame its evaluator call entered first. */
static int split_groups(const struct merge_input *in, int *start)
{
	int ngroups = 0;

	for (int j = 0; j < in->npy && ngroups < MAX_GROUPS; j++)
		if (j == 0 || in->raw[j - 1].entry)
			start[ngroups++] = j;
	start[ngroups] = in->npy;
	return ngroups;
}

void merge_frames(const struct merge_input *in, struct merge_output *out)
{
	int start[MAX_GROUPS + 1];
	int ngroups = split_groups(in, start);
	bool short_unwind = in->end_marker != MERGE_NO_FRAME;
	int nev = 0, k;

	out->n = 0;
	out->python = out->unmerged = false;
	for (int i = 0; i < in->n; i++)
		nev += in->roles[i] == MERGE_ROLE_EVAL;
	if (short_unwind)
		add(out, in->end_marker, MERGED_NATIVE);
	if (nev != ngroups && !(short_unwind && nev < ngroups)) {
		/* Both halves as they are: native, then Python. */
		out->unmerged = true;
		for (int i = in->n - 1; i >= 0; i--)
			add(out, in->native[i], MERGED_NATIVE);
		add(out, MERGE_UNMERGED, MERGED_NATIVE);
		add_python(in, out, 0, in->npy);
		return;
	}
	/* The groups beyond a short native unwind's reach go first. */
	for (k = ngroups - 1; k >= nev; k--)
		add_python(in, out, start[k], start[k + 1]);
	for (int i = in->n - 1; i >= 0; i--) {
		if (in->roles[i] == MERGE_ROLE_EVAL) {
			add_python(in, out, start[k], start[k + 1]);
			k--;
		} else if (in->roles[i] == MERGE_ROLE_NATIVE) {
			add(out, in->native[i], MERGED_NATIVE);
		} else if (in->roles[i] == MERGE_ROLE_INTERPRETER) {
			add(out, in->native[i], MERGED_INTERPRETER);
		}
	}
	if (!in->native_all)
		out->n = native_hide_interpreter(out->frames, out->kinds, out->n);
}

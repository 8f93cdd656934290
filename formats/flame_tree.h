/* SPDX-License-Identifier: MIT */
/*
 * The flamegraph's tree (flame_tree.c): a profile's stacks merged by
 * label, each node weighted by its samples and what it calls. formats/
 * only: the flamegraph and the differential flamegraph draw it.
 */
#ifndef TRAINSAMPLE_FORMATS_FLAME_TREE_H
#define TRAINSAMPLE_FORMATS_FLAME_TREE_H

#include "formats/formats.h"
#include "common/common.h"
#include "formats/label_set.h"

/* Markers and thread roots: a kind of their own for colouring. */
#define FLAME_KIND_GREY (FRAME_KIND_MAX + 1)

struct flame_node {
	uint32_t label;
	uint32_t kind;
	uint32_t parent;
	uint32_t depth;
	uint64_t weight;   /* this frame and what it calls */
	uint32_t *kids;    /* in label order once built */
	uint32_t nkids, capkids;
};

struct flame_tree {
	const struct profile *p;
	const struct render_options *o;
	const char *script_dir;
	struct label_set labels;
	struct flame_node *nodes; /* 0 is the root, "all"; parents before children */
	uint32_t nnodes, capnodes;
	struct hash_table node_index; /* (parent, label) -> node */
	uint32_t *frame_label;          /* per frame id; UINT32_MAX: not yet */
	uint32_t *path;
	uint32_t cappath;
};

/* The tree of p's samples that o keeps, outermost frames at the root
 * (a thread's node first with o->threads). Frees what it built on
 * failure. */
int flame_tree_build(struct flame_tree *t, const struct profile *p,
		     const struct render_options *o);
/* The child of `parent` labelled `label`; UINT32_MAX when there is none. */
uint32_t flame_tree_child(const struct flame_tree *t, uint32_t parent, const char *label);
void flame_tree_free(struct flame_tree *t);

#endif

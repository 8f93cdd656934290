// SPDX-License-Identifier: MIT
/*
 * The flamegraph's tree: stacks merged by label, a node per distinct call
 * path, children sorted by label so the picture does not depend on the
 * order samples came in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/flame_tree.h"

struct node_key {
	const struct flame_tree *g;
	uint32_t parent, label;
};

static bool same_node(const void *key, uint32_t id)
{
	const struct node_key *k = key;

	return k->g->nodes[id].parent == k->parent && k->g->nodes[id].label == k->label;
}

static int intern_label(struct flame_tree *g, const char *s, uint32_t *id)
{
	return label_set_intern(&g->labels, s, id, NULL);
}

static int child(struct flame_tree *g, uint32_t parent, uint32_t label, uint32_t kind, uint32_t *out)
{
	struct node_key key = { g, parent, label };
	uint32_t words[2] = { parent, label };
	uint32_t h = hash_of_words(words, 2);
	struct hash_slot *slot;
	struct flame_node *pn;

	if (hash_table_reserve(&g->node_index) < 0)
		return -ENOMEM;
	slot = hash_table_find(&g->node_index, h, same_node, &key);
	if (slot->ref) {
		*out = slot->ref - 1;
		return 0;
	}
	if (ARRAY_RESERVE(g->nodes, g->capnodes, (size_t)g->nnodes + 1, 16) < 0)
		return -ENOMEM;
	pn = &g->nodes[parent];
	if (ARRAY_RESERVE(pn->kids, pn->capkids, (size_t)pn->nkids + 1, 16) < 0)
		return -ENOMEM;
	pn->kids[pn->nkids++] = g->nnodes;
	g->nodes[g->nnodes] = (struct flame_node){
		.label = label, .kind = kind, .parent = parent, .depth = pn->depth + 1,
	};
	hash_table_fill(&g->node_index, slot, h, g->nnodes);
	*out = g->nnodes++;
	return 0;
}

/* Markers ("[truncated: ...]", "[error]", "[unmerged]") are native frames
 * without a module: grey, like threads. */
static uint32_t colour_kind(const struct profile *p, const struct frame *f)
{
	if (f->kind == FRAME_NATIVE && !f->module && profile_string(p, f->name)[0] == '[')
		return FLAME_KIND_GREY;
	return f->kind;
}

static int frame_node(struct flame_tree *g, uint32_t parent, uint32_t frame, uint32_t *out)
{
	char buf[LABEL_MAX];
	int ret;

	if (g->frame_label[frame] == UINT32_MAX) {
		frame_label(g->p, frame, g->o, g->script_dir, buf, sizeof(buf));
		ret = intern_label(g, buf, &g->frame_label[frame]);
		if (ret < 0)
			return ret;
	}
	return child(g, parent, g->frame_label[frame], colour_kind(g->p, profile_frame(g->p, frame)),
		     out);
}

/* A process or thread root under *node, weighed; *node becomes it. */
static int grey_root(struct flame_tree *g, const char *text, uint64_t weight, uint32_t *node)
{
	uint32_t label;
	int ret = intern_label(g, text, &label);

	if (!ret)
		ret = child(g, *node, label, FLAME_KIND_GREY, node);
	if (ret < 0)
		return ret;
	g->nodes[*node].weight += weight;
	return 0;
}

static int add_row(const struct profile_aggregate *row, void *ctx)
{
	struct flame_tree *g = ctx;
	uint32_t node = 0;
	char buf[LABEL_MAX];
	int ret, depth;

	if (!render_keeps(g->p, g->o, row))
		return 0;
	depth = profile_stack_frames(g->p, row->stack, &g->path, &g->cappath);
	if (depth < 0)
		return depth;
	g->nodes[0].weight += row->weight_ns;
	if (g->o->processes) {
		process_root_label(g->p, row->pid, buf, sizeof(buf));
		ret = grey_root(g, buf, row->weight_ns, &node);
		if (ret < 0)
			return ret;
	}
	if (g->o->threads) {
		size_t n = thread_label(g->p, row->pid, row->tid, buf, sizeof(buf));
		const struct thread_share *t = g->o->busy_roots ?
			thread_shares_get(g->o->thread_busy, row->pid, row->tid) : NULL;

		if (t && t->all_ns && n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, " busy %.0f%%",
				 100.0 * (double)t->busy_ns / (double)t->all_ns);
		ret = grey_root(g, buf, row->weight_ns, &node);
		if (ret < 0)
			return ret;
	}
	if (class_root_label(g->o, row, buf, sizeof(buf))) {
		ret = grey_root(g, buf, row->weight_ns, &node);
		if (ret < 0)
			return ret;
	}
	for (int i = 0; i < depth; i++) {
		ret = frame_node(g, node, g->path[i], &node);
		if (ret < 0)
			return ret;
		g->nodes[node].weight += row->weight_ns;
	}
	return 0;
}

static int by_label(const void *a, const void *b, void *ctx)
{
	const struct flame_tree *g = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return strcmp(g->labels.text[g->nodes[x].label], g->labels.text[g->nodes[y].label]);
}

void flame_tree_free(struct flame_tree *g)
{
	for (uint32_t i = 0; i < g->nnodes; i++)
		free(g->nodes[i].kids);
	label_set_free(&g->labels);
	free(g->nodes);
	free(g->frame_label);
	free(g->path);
	hash_table_free(&g->node_index);
	memset(g, 0, sizeof(*g));
}


uint32_t flame_tree_child(const struct flame_tree *g, uint32_t parent, const char *label)
{
	const struct flame_node *n = &g->nodes[parent];
	uint32_t lo = 0, hi = n->nkids;

	/* Children are in label order: a binary search. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(g->labels.text[g->nodes[n->kids[mid]].label], label);

		if (!c)
			return n->kids[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

int flame_tree_build(struct flame_tree *g, const struct profile *p,
		     const struct render_options *o)
{
	uint32_t nframes = profile_frame_count(p);
	int ret = -ENOMEM;

	*g = (struct flame_tree){ .p = p, .o = o };
	g->script_dir = profile_meta(p, "python_script_dir");
	g->frame_label = malloc(((size_t)nframes + 1) * sizeof(*g->frame_label));
	g->nodes = calloc(1, sizeof(*g->nodes));
	if (!g->frame_label || !g->nodes)
		goto fail;
	memset(g->frame_label, 0xff, ((size_t)nframes + 1) * sizeof(*g->frame_label));
	g->nnodes = g->capnodes = 1;
	if (intern_label(g, "all", &g->nodes[0].label) < 0)
		goto fail;
	ret = render_for_each_row(p, o, add_row, g);
	if (ret < 0)
		goto fail;
	for (uint32_t i = 0; i < g->nnodes; i++)
		if (g->nodes[i].nkids > 1)
			qsort_r(g->nodes[i].kids, g->nodes[i].nkids, sizeof(uint32_t), by_label, g);
	return 0;
fail:
	flame_tree_free(g);
	return ret;
}

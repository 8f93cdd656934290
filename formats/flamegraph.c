// SPDX-License-Identifier: MIT
/*
 * The flamegraph: an SVG page that works offline in any browser. Stacks
 * are merged by label into a tree (callers below, or above with
 * --inverted), children in alphabetical order, each frame as wide as its
 * share of the samples. Frames narrower than a tenth of a pixel are not
 * written, nor is anything they call: the file stays small however many
 * distinct stacks there are. Colours tell frame kinds apart: Python green,
 * native orange, idle (blocked) blue, GPU purple, markers and threads grey.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/errbuf.h"
#include "formats/flamegraph_script.h"
#include "formats/formats.h"
#include "formats/intern_table.h"
#include "formats/label_set.h"

#define IMAGE_WIDTH 1200.0
#define PAD 10.0
#define FRAME_HEIGHT 16.0
#define FONT_SIZE 12.0
#define CHAR_WIDTH (FONT_SIZE * 0.59)
#define MIN_WIDTH 0.1
#define HEAD 60.0 /* title, subtitle, buttons */
#define FOOT 30.0 /* details line */
#define KIND_GREY (FRAME_KIND_MAX + 1)

struct fg_node {
	uint32_t label;
	uint32_t kind;
	uint32_t parent;
	uint32_t depth;
	uint64_t weight;   /* this frame and what it calls */
	uint32_t *kids;    /* sorted before writing */
	uint32_t nkids, capkids;
};

struct fg {
	const struct profile *p;
	const struct render_options *o;
	const char *script_dir;
	struct label_set labels;
	struct fg_node *nodes;
	uint32_t nnodes, capnodes;
	struct intern_table node_index; /* (parent, label) -> node */
	uint32_t *frame_label;          /* per frame id; UINT32_MAX: not yet */
	uint32_t *path;
	uint32_t cappath;
	uint64_t period;
};

struct node_key {
	const struct fg *g;
	uint32_t parent, label;
};

static bool same_node(const void *key, uint32_t id)
{
	const struct node_key *k = key;

	return k->g->nodes[id].parent == k->parent && k->g->nodes[id].label == k->label;
}

static int intern_label(struct fg *g, const char *s, uint32_t *id)
{
	return label_set_intern(&g->labels, s, id, NULL);
}

static int child(struct fg *g, uint32_t parent, uint32_t label, uint32_t kind, uint32_t *out)
{
	struct node_key key = { g, parent, label };
	uint32_t words[2] = { parent, label };
	uint32_t h = intern_hash_words(words, 2);
	struct intern_slot *slot;
	struct fg_node *grown, *pn;
	uint32_t *kids;

	if (intern_table_reserve(&g->node_index) < 0)
		return -ENOMEM;
	slot = intern_table_find(&g->node_index, h, same_node, &key);
	if (slot->ref) {
		*out = slot->ref - 1;
		return 0;
	}
	grown = intern_array_grow(g->nodes, &g->capnodes, g->nnodes, sizeof(*g->nodes));
	if (!grown)
		return -ENOMEM;
	g->nodes = grown;
	pn = &g->nodes[parent];
	kids = intern_array_grow(pn->kids, &pn->capkids, pn->nkids, sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	pn->kids = kids;
	pn->kids[pn->nkids++] = g->nnodes;
	g->nodes[g->nnodes] = (struct fg_node){
		.label = label, .kind = kind, .parent = parent, .depth = pn->depth + 1,
	};
	intern_table_fill(&g->node_index, slot, h, g->nnodes);
	*out = g->nnodes++;
	return 0;
}

/* Markers ("[truncated: ...]", "[error]", "[unmerged]") are native frames
 * without a module: grey, like threads. */
static uint32_t colour_kind(const struct profile *p, const struct frame *f)
{
	if (f->kind == FRAME_NATIVE && !f->module && profile_string(p, f->name)[0] == '[')
		return KIND_GREY;
	return f->kind;
}

static int frame_node(struct fg *g, uint32_t parent, uint32_t frame, uint32_t *out)
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

static int add_row(const struct profile_aggregate *row, void *ctx)
{
	struct fg *g = ctx;
	uint32_t node = 0, label;
	char buf[LABEL_MAX];
	int ret, depth;

	if (!render_keeps(g->p, g->o, row))
		return 0;
	depth = profile_stack_frames(g->p, row->stack, &g->path, &g->cappath);
	if (depth < 0)
		return depth;
	g->nodes[0].weight += row->weight_ns;
	if (g->o->threads) {
		thread_label(g->p, row->pid, row->tid, buf, sizeof(buf));
		ret = intern_label(g, buf, &label);
		if (!ret)
			ret = child(g, 0, label, KIND_GREY, &node);
		if (ret < 0)
			return ret;
		g->nodes[node].weight += row->weight_ns;
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
	const struct fg *g = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return strcmp(g->labels.text[g->nodes[x].label], g->labels.text[g->nodes[y].label]);
}

/* A stable hue per label, varied within its kind's colour. */
static void colour(const struct fg *g, const struct fg_node *n, char *out, size_t len)
{
	uint32_t h = intern_hash_bytes(g->labels.text[n->label], strlen(g->labels.text[n->label]));
	double v = (double)(h % 1000) / 1000.0;
	int r, gr, b;

	switch (n->kind) {
	case FRAME_PYTHON:
		r = 90 + (int)(70 * v), gr = 190 + (int)(45 * v), b = 80 + (int)(40 * v);
		break;
	case FRAME_IDLE:
		r = 120 + (int)(50 * v), gr = 160 + (int)(40 * v), b = 220 + (int)(30 * v);
		break;
	case FRAME_GPU:
		r = 170 + (int)(40 * v), gr = 110 + (int)(40 * v), b = 220 + (int)(30 * v);
		break;
	case KIND_GREY:
		r = gr = b = 185 + (int)(30 * v);
		break;
	default:
		r = 230, gr = 110 + (int)(110 * v), b = 40 + (int)(40 * v);
		break;
	}
	snprintf(out, len, "rgb(%d,%d,%d)", r, gr, b);
}

/* The label cut to what fits `pixels`, as the script's fit() does. */
static void put_fitted(FILE *out, const char *label, double pixels)
{
	long n = (long)((pixels - 6) / CHAR_WIDTH);
	size_t len = strlen(label);

	if (n < 3)
		return;
	if ((size_t)n >= len) {
		xml_put_escaped(out, label, len);
		return;
	}
	/* Whole UTF-8 characters only. */
	len = (size_t)n - 2;
	while (len && ((unsigned char)label[len] & 0xc0) == 0x80)
		len--;
	xml_put_escaped(out, label, len);
	fputs("..", out);
}

static uint64_t count_of(const struct fg *g, uint64_t weight)
{
	return g->period ? (weight + g->period / 2) / g->period : weight;
}

struct pos {
	uint32_t node;
	uint64_t x;
};

static uint32_t max_depth(const struct fg *g, double scale)
{
	uint32_t m = 0;

	for (uint32_t i = 1; i < g->nnodes; i++)
		if ((double)g->nodes[i].weight * scale >= MIN_WIDTH && g->nodes[i].depth > m)
			m = g->nodes[i].depth;
	return m;
}

static int write_frames(const struct fg *g, FILE *out, double scale, double height)
{
	struct pos *stack = malloc(((size_t)g->nnodes + 1) * sizeof(*stack));
	uint64_t total = g->nodes[0].weight;
	size_t sp = 0;

	if (!stack)
		return -ENOMEM;
	stack[sp++] = (struct pos){ 0, 0 };
	while (sp) {
		struct pos at = stack[--sp];
		const struct fg_node *n = &g->nodes[at.node];
		uint64_t x = at.x;

		if (at.node) {
			double px = PAD + (double)at.x * scale, pw = (double)n->weight * scale;
			double y = g->o->inverted ? HEAD + (n->depth - 1) * FRAME_HEIGHT
						  : height - FOOT - n->depth * FRAME_HEIGHT;
			char fill[48];

			colour(g, n, fill, sizeof(fill));
			fprintf(out, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64
				"\" data-d=\"%u\"><title>", at.x, n->weight, n->depth - 1);
			xml_put_escaped(out, g->labels.text[n->label], SIZE_MAX);
			fprintf(out, "\n%" PRIu64 " samples, %.2f%%</title><rect x=\"%.2f\" y=\"%.1f\" "
				"width=\"%.2f\" height=\"%.1f\" fill=\"%s\" rx=\"2\" ry=\"2\"/>"
				"<text x=\"%.2f\" y=\"%.1f\">", count_of(g, n->weight),
				100.0 * (double)n->weight / (double)total, px, y, pw, FRAME_HEIGHT - 1,
				fill, px + 3, y + FRAME_HEIGHT - 4.5);
			put_fitted(out, g->labels.text[n->label], pw);
			fputs("</text></g>\n", out);
		}
		/* Children pushed in reverse, so they come out left to right. */
		for (uint32_t k = 0; k < n->nkids; k++)
			x += g->nodes[n->kids[k]].weight;
		for (uint32_t k = n->nkids; k > 0; k--) {
			const struct fg_node *c = &g->nodes[n->kids[k - 1]];

			x -= c->weight;
			if ((double)c->weight * scale >= MIN_WIDTH)
				stack[sp++] = (struct pos){ n->kids[k - 1], x };
		}
	}
	free(stack);
	return 0;
}

static void write_head(const struct fg *g, FILE *out, double height, double scale)
{
	const char *title = profile_meta(g->p, "command");
	const char *rate = profile_meta(g->p, "rate_hz");
	const char *dur = profile_meta(g->p, "duration_ns");

	(void)scale;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" data-total=\"%" PRIu64 "\" data-pad=\"%.0f\" "
		"data-charwidth=\"%.2f\">\n<style type=\"text/css\">\n%s</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,245)\"/>\n",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height, g->nodes[0].weight, PAD, CHAR_WIDTH,
		flamegraph_style, flamegraph_script);
	fprintf(out, "<text class=\"title\" x=\"%.0f\" y=\"24\">", IMAGE_WIDTH / 2);
	xml_put_escaped(out, title ? title : "trainsample", SIZE_MAX);
	fprintf(out, "</text>\n<text class=\"subtitle\" x=\"%.0f\" y=\"44\">", IMAGE_WIDTH / 2);
	if (dur)
		fprintf(out, "%.1f s, ", strtod(dur, NULL) / 1e9);
	if (rate)
		fprintf(out, "%s Hz, ", rate);
	fprintf(out, "%" PRIu64 " samples%s%s%s</text>\n", count_of(g, g->nodes[0].weight),
		g->o->gil_only ? ", GIL holder only" : "",
		g->o->include_idle ? "" : ", running threads only",
		g->o->inverted ? ", inverted" : "");
	fprintf(out, "<text id=\"unzoom\" class=\"button hide\" x=\"%.0f\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" class=\"hide\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n",
		PAD, IMAGE_WIDTH - PAD, IMAGE_WIDTH - PAD, height - 10, PAD, height - 10);
}

static void fg_free(struct fg *g)
{
	for (uint32_t i = 0; i < g->nnodes; i++)
		free(g->nodes[i].kids);
	label_set_free(&g->labels);
	free(g->nodes);
	free(g->frame_label);
	free(g->path);
	intern_table_free(&g->node_index);
}

int flamegraph_write(const struct profile *p, FILE *out, const struct render_options *o,
		     char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct fg g = { .p = p, .o = o ? o : &defaults };
	uint32_t nframes = profile_frame_count(p), depth;
	const char *period = profile_meta(p, "period_ns");
	double scale, height;
	int ret = -ENOMEM;

	g.script_dir = profile_meta(p, "python_script_dir");
	g.period = period ? strtoull(period, NULL, 10) : 0;
	g.frame_label = malloc(((size_t)nframes + 1) * sizeof(*g.frame_label));
	g.nodes = calloc(1, sizeof(*g.nodes));
	if (!g.frame_label || !g.nodes)
		goto out;
	memset(g.frame_label, 0xff, ((size_t)nframes + 1) * sizeof(*g.frame_label));
	g.nnodes = g.capnodes = 1;
	if (intern_label(&g, "all", &g.nodes[0].label) < 0)
		goto out;
	ret = profile_for_each_aggregate(p, add_row, &g);
	if (ret < 0)
		goto out;
	for (uint32_t i = 0; i < g.nnodes; i++)
		if (g.nodes[i].nkids > 1)
			qsort_r(g.nodes[i].kids, g.nodes[i].nkids, sizeof(uint32_t), by_label, &g);
	scale = g.nodes[0].weight ? (IMAGE_WIDTH - 2 * PAD) / (double)g.nodes[0].weight : 0;
	depth = max_depth(&g, scale);
	height = HEAD + FOOT + (depth + 1) * FRAME_HEIGHT;
	write_head(&g, out, height, scale);
	ret = write_frames(&g, out, scale, height);
	if (!ret)
		fputs("</svg>\n", out);
	if (!ret && ferror(out))
		ret = -EIO;
out:
	fg_free(&g);
	if (ret < 0)
		return errbuf_set(err, errlen, ret, "flamegraph: %s", strerror(-ret));
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The flamegraph: an SVG page that works offline in any browser, drawn
 * from the tree of flame_tree.c (callers below, or above with --inverted),
 * each frame as wide as its share of the samples. Frames narrower than a
 * tenth of a pixel are not written, nor is anything they call: the file
 * stays small however many distinct stacks there are. Colours tell frame
 * kinds apart: Python green, native orange, idle (blocked) blue, GPU
 * purple, markers and threads grey. The differential flamegraph draws the
 * newer profile and colours each frame by how its share changed: red grew,
 * blue shrank, white the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/flame_tree.h"
#include "formats/flamegraph_script.h"

#define IMAGE_WIDTH 1200.0
#define PAD 10.0
#define FRAME_HEIGHT 16.0
#define FONT_SIZE 12.0
#define CHAR_WIDTH (FONT_SIZE * 0.59)
#define MIN_WIDTH 0.1
#define HEAD 60.0 /* title, subtitle, buttons */
#define FOOT 30.0 /* details line */

struct fg {
	const struct flame_tree *t;
	const struct render_options *o;
	uint64_t period;
	/* Differential only: each node's share in the older profile (NAN:
	 * not there) and the largest change in share, for the colour scale. */
	const struct profile *before;
	double *before_share;
	double max_change;
};

/* A stable hue per label, varied within its kind's colour. */
static void kind_colour(const struct fg *g, const struct flame_node *n, char *out, size_t len)
{
	const char *label = g->t->labels.text[n->label];
	uint32_t h = hash_of_bytes(label, strlen(label));
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
	case FLAME_KIND_GREY:
		r = gr = b = 185 + (int)(30 * v);
		break;
	default:
		r = 230, gr = 110 + (int)(110 * v), b = 40 + (int)(40 * v);
		break;
	}
	snprintf(out, len, "rgb(%d,%d,%d)", r, gr, b);
}

static double share(const struct flame_tree *t, uint32_t node)
{
	return t->nodes[0].weight ? (double)t->nodes[node].weight / (double)t->nodes[0].weight : 0;
}

/* Red as the share grew, blue as it shrank, on a scale where the largest
 * change is full colour; a frame the older profile lacks grew from 0. */
static void change_colour(const struct fg *g, uint32_t node, char *out, size_t len)
{
	double before = isnan(g->before_share[node]) ? 0 : g->before_share[node];
	double d = share(g->t, node) - before;
	int fade = g->max_change > 0 ? (int)(160 * fabs(d) / g->max_change) : 0;

	if (fabs(d) < 1e-9)
		snprintf(out, len, "rgb(245,245,240)");
	else if (d > 0)
		snprintf(out, len, "rgb(250,%d,%d)", 245 - fade, 240 - fade);
	else
		snprintf(out, len, "rgb(%d,%d,250)", 245 - fade, 240 - fade);
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

	for (uint32_t i = 1; i < g->t->nnodes; i++)
		if ((double)g->t->nodes[i].weight * scale >= MIN_WIDTH && g->t->nodes[i].depth > m)
			m = g->t->nodes[i].depth;
	return m;
}

static void write_frame(const struct fg *g, FILE *out, uint32_t node, uint64_t x, double scale,
			double height)
{
	const struct flame_node *n = &g->t->nodes[node];
	const char *label = g->t->labels.text[n->label];
	double px = PAD + (double)x * scale, pw = (double)n->weight * scale;
	double y = g->o->inverted ? HEAD + (n->depth - 1) * FRAME_HEIGHT
				  : height - FOOT - n->depth * FRAME_HEIGHT;
	char fill[48];

	if (g->before_share)
		change_colour(g, node, fill, sizeof(fill));
	else
		kind_colour(g, n, fill, sizeof(fill));
	fprintf(out, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\">"
		"<title>", x, n->weight, n->depth - 1);
	xml_put_escaped(out, label, SIZE_MAX);
	fprintf(out, "\n%" PRIu64 " samples, %.2f%%", count_of(g, n->weight), 100.0 * share(g->t, node));
	if (g->before_share && isnan(g->before_share[node]))
		fputs(" (new: not in the older profile)", out);
	else if (g->before_share)
		fprintf(out, " (was %.2f%%: %+.2f points)", 100.0 * g->before_share[node],
			100.0 * (share(g->t, node) - g->before_share[node]));
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
		"fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">", px, y, pw,
		FRAME_HEIGHT - 1, fill, px + 3, y + FRAME_HEIGHT - 4.5);
	put_fitted(out, label, pw);
	fputs("</text></g>\n", out);
}

static int write_frames(const struct fg *g, FILE *out, double scale, double height)
{
	struct pos *stack = malloc(((size_t)g->t->nnodes + 1) * sizeof(*stack));
	size_t sp = 0;

	if (!stack)
		return -ENOMEM;
	stack[sp++] = (struct pos){ 0, 0 };
	while (sp) {
		struct pos at = stack[--sp];
		const struct flame_node *n = &g->t->nodes[at.node];
		uint64_t x = at.x;

		if (at.node)
			write_frame(g, out, at.node, at.x, scale, height);
		/* Children pushed in reverse, so they come out left to right. */
		for (uint32_t k = 0; k < n->nkids; k++)
			x += g->t->nodes[n->kids[k]].weight;
		for (uint32_t k = n->nkids; k > 0; k--) {
			const struct flame_node *c = &g->t->nodes[n->kids[k - 1]];

			x -= c->weight;
			if ((double)c->weight * scale >= MIN_WIDTH)
				stack[sp++] = (struct pos){ n->kids[k - 1], x };
		}
	}
	free(stack);
	return 0;
}

static void write_head(const struct fg *g, FILE *out, double height)
{
	const struct profile *p = g->t->p;
	const char *title = profile_meta(p, "command");
	const char *rate = profile_meta(p, "rate_hz");
	const char *dur = profile_meta(p, "duration_ns");

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" data-total=\"%" PRIu64 "\" data-pad=\"%.0f\" "
		"data-charwidth=\"%.2f\">\n<style type=\"text/css\">\n%s</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,245)\"/>\n",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height, g->t->nodes[0].weight, PAD, CHAR_WIDTH,
		flamegraph_style, flamegraph_script);
	fprintf(out, "<text class=\"title\" x=\"%.0f\" y=\"24\">", IMAGE_WIDTH / 2);
	if (g->before) {
		const char *was = profile_meta(g->before, "command");

		fputs("Differential: ", out);
		xml_put_escaped(out, title ? title : "newer profile", SIZE_MAX);
		fputs(" against ", out);
		xml_put_escaped(out, was ? was : "older profile", SIZE_MAX);
	} else {
		xml_put_escaped(out, title ? title : "trainsample", SIZE_MAX);
	}
	fprintf(out, "</text>\n<text class=\"subtitle\" x=\"%.0f\" y=\"44\">", IMAGE_WIDTH / 2);
	if (g->before)
		fputs("widths: the newer profile; red: its share grew, blue: shrank; ", out);
	if (dur)
		fprintf(out, "%.1f s, ", strtod(dur, NULL) / 1e9);
	if (rate)
		fprintf(out, "%s Hz, ", rate);
	fprintf(out, "%" PRIu64 " samples%s%s%s%s</text>\n", count_of(g, g->t->nodes[0].weight),
		g->o->gil_only ? ", GIL holder only" : "",
		g->o->include_idle ? "" : ", running threads only",
		g->o->include_idle && g->o->idle_kept_only ?
			", idle threads' waits left out (--idle keeps them)" : "",
		g->o->inverted ? ", inverted" : "");
	fprintf(out, "<text id=\"unzoom\" class=\"button hide\" x=\"%.0f\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" class=\"hide\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n",
		PAD, IMAGE_WIDTH - PAD, IMAGE_WIDTH - PAD, height - 10, PAD, height - 10);
}

static int draw(struct fg *g, FILE *out)
{
	const char *period = profile_meta(g->t->p, "period_ns");
	double scale, height;
	int ret;

	g->period = period ? strtoull(period, NULL, 10) : 0;
	scale = g->t->nodes[0].weight ? (IMAGE_WIDTH - 2 * PAD) / (double)g->t->nodes[0].weight : 0;
	height = HEAD + FOOT + (max_depth(g, scale) + 1) * FRAME_HEIGHT;
	write_head(g, out, height);
	ret = write_frames(g, out, scale, height);
	if (!ret)
		fputs("</svg>\n", out);
	if (!ret && ferror(out))
		ret = -EIO;
	return ret;
}

int flamegraph_write(const struct profile *p, FILE *out, const struct render_options *o,
		     char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct flame_tree t;
	struct fg g = { .t = &t, .o = o ? o : &defaults };
	int ret = flame_tree_build(&t, p, g.o);

	if (!ret) {
		ret = draw(&g, out);
		flame_tree_free(&t);
	}
	if (ret < 0)
		return errbuf_set(err, errlen, ret, "flamegraph: %s", strerror(-ret));
	return 0;
}

/* Each node's share in the older tree, found by the same path of labels
 * (parents come before their children in the newer tree). */
static int match_before(struct fg *g, const struct flame_tree *old)
{
	uint32_t *in_old = malloc((size_t)g->t->nnodes * sizeof(*in_old));

	g->before_share = malloc((size_t)g->t->nnodes * sizeof(*g->before_share));
	if (!in_old || !g->before_share) {
		free(in_old);
		return -ENOMEM;
	}
	in_old[0] = 0;
	g->before_share[0] = old->nodes[0].weight ? 1 : NAN;
	g->max_change = 0;
	for (uint32_t i = 1; i < g->t->nnodes; i++) {
		const struct flame_node *n = &g->t->nodes[i];
		uint32_t parent = in_old[n->parent];

		in_old[i] = parent == UINT32_MAX ? UINT32_MAX
			  : flame_tree_child(old, parent, g->t->labels.text[n->label]);
		g->before_share[i] = in_old[i] == UINT32_MAX ? NAN : share(old, in_old[i]);
		double d = share(g->t, i) - (isnan(g->before_share[i]) ? 0 : g->before_share[i]);

		if (fabs(d) > g->max_change)
			g->max_change = fabs(d);
	}
	free(in_old);
	return 0;
}

int flamegraph_diff_write(const struct profile *before, const struct profile *after, FILE *out,
			  const struct render_options *o, char *err, size_t errlen)
{
	static const struct render_options defaults = { 0 };
	struct flame_tree old, t;
	struct fg g = { .t = &t, .o = o ? o : &defaults, .before = before };
	int ret = flame_tree_build(&old, before, g.o->baseline ? g.o->baseline : g.o);

	if (!ret) {
		ret = flame_tree_build(&t, after, g.o);
		if (!ret) {
			ret = match_before(&g, &old);
			if (!ret)
				ret = draw(&g, out);
			flame_tree_free(&t);
		}
		flame_tree_free(&old);
	}
	free(g.before_share);
	if (ret < 0)
		return errbuf_set(err, errlen, ret, "differential flamegraph: %s", strerror(-ret));
	return 0;
}

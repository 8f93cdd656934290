// SPDX-License-Identifier: MIT
/*
 * GPU records into the profile: every agent (one per process that
 * initialized CUDA) appends to <dir>/<pid>.gpu; each poll reads what was
 * added, turns the agent's strings and Python launch stacks into the
 * model's, pairs each activity with its launch by correlation id and adds
 * it. It also keeps the figures of the end-of-run summary.
 */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "cuda/gpu_record.h"
#include "formats/formats.h"
#include "cuda/gpu_merge_impl.h"
#include "symbolize/symbolize.h"

/* ---- correlation id -> launch ---- */

struct corr_key {
	const struct gpu_source *source;
	uint32_t id;
};

/* Whether launch slot `launch` is in use and has the correlation id. */
static bool launch_has(const void *key, uint32_t launch)
{
	const struct corr_key *k = key;
	const struct gpu_launch *l = &k->source->launches[launch];

	for (uint32_t i = 0; i < l->nids; i++)
		if (l->ids[i] == k->id)
			return true;
	return false;
}

static uint32_t corr_hash(uint32_t id)
{
	return hash_of_words(&id, 1);
}

/* The slot of correlation id `id`, or the empty one where it belongs;
 * NULL while the table has never held one. */
static struct hash_slot *corr_slot(struct gpu_source *s, uint32_t id)
{
	const struct corr_key key = { s, id };

	if (!s->launch_of_corr.slots)
		return NULL;
	return hash_table_find(&s->launch_of_corr, corr_hash(id), launch_has, &key);
}

/* An id met again (wrapped while its launch is still kept) goes to the
 * newer launch. */
static int corr_put(struct gpu_source *s, uint32_t id, uint32_t launch)
{
	int ret = hash_table_reserve(&s->launch_of_corr);
	struct hash_slot *slot;

	if (ret < 0)
		return ret;
	slot = corr_slot(s, id);
	if (slot->ref)
		slot->ref = launch + 1;
	else
		hash_table_fill(&s->launch_of_corr, slot, corr_hash(id), launch);
	return 0;
}

static struct gpu_launch *corr_get(struct gpu_source *s, uint32_t id)
{
	const struct hash_slot *slot = corr_slot(s, id);

	return slot && slot->ref ? &s->launches[slot->ref - 1] : NULL;
}

/* A launch's work has arrived: its ids and its slot are free again. */
static void launch_done(struct gpu_source *s, struct gpu_launch *l)
{
	uint32_t launch = (uint32_t)(l - s->launches);

	for (uint32_t i = 0; i < l->nids; i++) {
		struct hash_slot *slot = corr_slot(s, l->ids[i]);

		/* Its own only: a newer launch may hold the id now. */
		if (slot && slot->ref == launch + 1)
			hash_table_remove(&s->launch_of_corr, slot);
	}
	l->nids = 0; /* not in use */
	l->next_free = s->free_launch;
	s->free_launch = launch + 1;
}

#define LAUNCH_KEPT_NS 10000000000ull

/* Launches whose work never came (or a graph's, which may have several)
 * are let go once the GPU is ten seconds past them: the table stays the
 * size of what is in flight, and a wrapped correlation id finds no stale
 * launch. */
static void age_launches(struct gpu_source *s)
{
	if (s->newest_ns < LAUNCH_KEPT_NS)
		return;
	for (uint32_t i = 0; i < s->nlaunches; i++) {
		struct gpu_launch *l = &s->launches[i];

		if (l->nids && l->start_ns + LAUNCH_KEPT_NS < s->newest_ns)
			launch_done(s, l);
	}
}

/* ---- records ---- */

static uint32_t model_string(struct gpu_source *s, uint32_t id)
{
	return id < s->nstrings ? s->strings[id] : 0;
}

static void on_string(void *ctx, uint32_t id, const char *text)
{
	struct gpu_source *s = ((struct gpu_poll *)ctx)->source;
	struct gpu_merge *g = ((struct gpu_poll *)ctx)->merge;

	if (id > (1u << 26) || ARRAY_RESERVE_ZEROED(s->strings, s->nstrings, (size_t)id + 1, 256) < 0)
		return;
	profile_intern_string(g->profile, text, &s->strings[id]);
}

static void on_stack(struct gpu_merge *g, struct gpu_source *s, const struct gpu_rec_stack *r)
{
	struct frame f = { .kind = FRAME_PYTHON, .name = model_string(s, r->name),
			   .module = model_string(s, r->file), .line = r->line };
	uint32_t frame, parent = r->parent < s->nstacks ? s->stacks[r->parent] : 0;

	if (!r->id || r->id > (1u << 26) || ARRAY_RESERVE_ZEROED(s->stacks, s->nstacks, (size_t)r->id + 1, 256) < 0 ||
	    profile_intern_frame(g->profile, &f, &frame) < 0)
		return;
	profile_intern_stack(g->profile, parent, frame, &s->stacks[r->id]);
}

/* A thread without Python frames stands under a frame naming it. */
static uint32_t thread_stack(struct gpu_merge *g, struct gpu_source *s, uint32_t name)
{
	struct frame f = { .kind = FRAME_NATIVE };
	char label[160];
	uint32_t frame, stack = 0;

	snprintf(label, sizeof(label), "[thread: %s]", profile_string(g->profile, model_string(s, name)));
	if (!profile_intern_string(g->profile, label, &f.name) &&
	    !profile_intern_frame(g->profile, &f, &frame))
		profile_intern_stack(g->profile, 0, frame, &stack);
	return stack;
}

static void on_launch(struct gpu_merge *g, struct gpu_source *s, const struct gpu_rec_launch *r)
{
	struct gpu_launch *l;
	uint32_t slot;

	g->launches++;
	if (s->free_launch) {
		slot = s->free_launch - 1;
		s->free_launch = s->launches[slot].next_free;
	} else {
		if (ARRAY_RESERVE(s->launches, s->caplaunches, s->nlaunches + 1, 256) < 0)
			return;
		slot = s->nlaunches++;
	}
	l = &s->launches[slot];
	*l = (struct gpu_launch){
		.start_ns = r->start_ns, .end_ns = r->end_ns, .tid = r->tid,
		.api = model_string(s, r->api), .graph = r->graph != 0,
		.nids = r->nids < GPU_LAUNCH_IDS ? r->nids : GPU_LAUNCH_IDS,
	};
	l->stack = r->stack ? (r->stack < s->nstacks ? s->stacks[r->stack] : 0)
			    : thread_stack(g, s, r->thread_name);
	memcpy(l->ids, r->ids, sizeof(l->ids));
	for (uint32_t i = 0; i < l->nids; i++)
		corr_put(s, l->ids[i], slot);
}

static char *demangled(const char *name)
{
	char *out = NULL;

	return sym_demangle(name, strlen(name), &out) == 0 ? out : NULL;
}

static void on_stream(struct gpu_source *s, const struct gpu_rec_stream *r)
{
	if (r->flag == GPU_STREAM_FLAG_NULL && s->nnull_streams < GPU_NULL_STREAMS)
		s->null_streams[s->nnull_streams++] = (struct gpu_stream_id){ r->context, r->stream };
}

static bool on_null_stream(const struct gpu_source *s, uint32_t context, uint32_t stream)
{
	for (uint32_t i = 0; i < s->nnull_streams; i++)
		if (s->null_streams[i].context == context && s->null_streams[i].stream == stream)
			return true;
	return false;
}

static void on_activity(struct gpu_merge *g, struct gpu_source *s, const struct gpu_record *r)
{
	const struct gpu_rec_activity *ra = &r->u.activity;
	struct gpu_launch *l = corr_get(s, ra->correlation);
	struct gpu_activity a = {
		.kind = r->type == GPU_REC_KERNEL ? GPU_ACTIVITY_KERNEL :
			r->type == GPU_REC_MEMCPY ? GPU_ACTIVITY_MEMCPY :
			r->type == GPU_REC_MEMSET ? GPU_ACTIVITY_MEMSET : GPU_ACTIVITY_SYNC,
		.device = ra->device, .stream = ra->stream, .correlation = ra->correlation,
		.start_ns = ra->start_ns, .end_ns = ra->end_ns, .copy_kind = ra->copy_kind,
		.src_kind = ra->src_kind, .dst_kind = ra->dst_kind,
		.async = (ra->copy_flags & GPU_COPY_FLAG_ASYNC) != 0,
		.null_stream = on_null_stream(s, ra->context, ra->stream),
		.bytes = ra->bytes, .pid = s->pid,
		.grid = { ra->grid[0], ra->grid[1], ra->grid[2] },
		.block = { ra->block[0], ra->block[1], ra->block[2] },
	};

	if (a.end_ns < a.start_ns)
		return;
	if (a.start_ns > s->newest_ns)
		s->newest_ns = a.start_ns;
	if (l) {
		a.tid = l->tid, a.stack = l->stack, a.api = l->api;
		a.launch_start_ns = l->start_ns, a.launch_end_ns = l->end_ns;
	}
	if (a.kind == GPU_ACTIVITY_KERNEL) {
		const char *raw = profile_string(g->profile, model_string(s, ra->name));
		char *nice = demangled(raw);

		profile_intern_string(g->profile, nice ? nice : raw, &a.name);
		free(nice);
	}
	if (profile_add_gpu_activity(g->profile, &a) == 0)
		gpu_stats_add(g, &a);
	if (l && !l->graph)
		launch_done(s, l);
}

static void on_device(struct gpu_merge *g, struct gpu_source *s, const struct gpu_rec_device *d)
{
	char key[48], value[256];

	const uint8_t *u = d->uuid;

	snprintf(key, sizeof(key), "gpu.%u.name", d->id);
	snprintf(value, sizeof(value), "%s (compute %u.%u, %u SMs, %.0f GiB)",
		 profile_string(g->profile, model_string(s, d->name)), d->cc_major, d->cc_minor,
		 d->multiprocessors, (double)d->global_memory / (1u << 30));
	profile_set_meta(g->profile, key, value);
	/* As NVML writes it, to match its devices with CUDA's. */
	snprintf(key, sizeof(key), "gpu.%u.uuid", d->id);
	snprintf(value, sizeof(value), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8],
		 u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	profile_set_meta(g->profile, key, value);
}

static void on_status(struct gpu_merge *g, struct gpu_source *s, const struct gpu_rec_status *st)
{
	const char *text = profile_string(g->profile, model_string(s, st->text));
	char line[512];

	switch (st->status) {
	case GPU_STATUS_STARTED:
		g->started++;
		return;
	case GPU_STATUS_NO_CUPTI:
		snprintf(line, sizeof(line), "process %u initialized CUDA, but the GPU agent found "
			 "no CUPTI (%s): no GPU data for it", s->pid, text);
		break;
	case GPU_STATUS_TAKEN:
		snprintf(line, sizeof(line), "process %u: %s", s->pid, text);
		break;
	case GPU_STATUS_FAILED:
		snprintf(line, sizeof(line), "process %u: the GPU agent could not start CUPTI (%s): "
			 "no GPU data for it", s->pid, text);
		break;
	default:
		return;
	}
	if (g->notice)
		g->notice(g->notice_ctx, line);
}

static void on_record(void *ctx, const struct gpu_record *r)
{
	struct gpu_poll *pl = ctx;

	switch (r->type) {
	case GPU_REC_STACK:
		on_stack(pl->merge, pl->source, &r->u.stack);
		break;
	case GPU_REC_LAUNCH:
		on_launch(pl->merge, pl->source, &r->u.launch);
		break;
	case GPU_REC_KERNEL:
	case GPU_REC_MEMCPY:
	case GPU_REC_MEMSET:
	case GPU_REC_SYNC:
		on_activity(pl->merge, pl->source, r);
		break;
	case GPU_REC_DEVICE:
		on_device(pl->merge, pl->source, &r->u.device);
		break;
	case GPU_REC_STATUS:
		on_status(pl->merge, pl->source, &r->u.status);
		break;
	case GPU_REC_DROPPED:
		pl->merge->dropped += r->u.dropped.records;
		break;
	case GPU_REC_STREAM:
		on_stream(pl->source, &r->u.stream);
		break;
	}
}

static const struct gpu_reader_ops ops = { .string = on_string, .record = on_record };

/* ---- the folder ---- */

static void source_free(struct gpu_source *s)
{
	gpu_reader_close(s->reader);
	free(s->strings);
	free(s->stacks);
	free(s->launches);
	hash_table_free(&s->launch_of_corr);
	free(s->path);
	free(s);
}

static bool known(const struct gpu_merge *g, const char *path)
{
	for (const struct gpu_source *s = g->sources; s; s = s->next)
		if (!strcmp(s->path, path))
			return true;
	return false;
}

/* Files that appeared since the last look. */
static void discover(struct gpu_merge *g)
{
	DIR *d = opendir(g->dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct gpu_source *s;
		size_t n = strlen(e->d_name);

		if (n < 5 || strcmp(e->d_name + n - 4, ".gpu"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", g->dir, e->d_name);
		if (known(g, path) || !(s = calloc(1, sizeof(*s))))
			continue;
		s->path = strdup(path);
		if (!s->path || gpu_reader_open(&s->reader, path) < 0) {
			source_free(s);
			continue;
		}
		s->pid = (uint32_t)strtoul(e->d_name, NULL, 10);
		s->next = g->sources;
		g->sources = s;
	}
	closedir(d);
}

int gpu_merge_new(struct gpu_merge **out, const char *dir, struct profile *p,
		  void (*notice)(void *ctx, const char *line), void *ctx)
{
	struct gpu_merge *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->dir = strdup(dir);
	if (!g->dir) {
		free(g);
		return -ENOMEM;
	}
	g->profile = p;
	g->notice = notice;
	g->notice_ctx = ctx;
	*out = g;
	return 0;
}

int gpu_merge_poll(struct gpu_merge *g)
{
	int total = 0;

	discover(g);
	for (struct gpu_source *s = g->sources; s; s = s->next) {
		struct gpu_poll pl = { g, s };
		int n = gpu_reader_poll(s->reader, &ops, &pl);

		if (n > 0) {
			total += n;
			age_launches(s);
			if (!s->pid)
				s->pid = gpu_reader_pid(s->reader);
		} else if (n == -EPROTO && !s->refused) {
			char line[PATH_MAX + 64];

			s->refused = true;
			snprintf(line, sizeof(line), "%s is not a GPU record file this build reads",
				 s->path);
			if (g->notice)
				g->notice(g->notice_ctx, line);
		}
	}
	gpu_stats_settle(g, false);
	return total;
}

bool gpu_merge_any(const struct gpu_merge *g)
{
	return g && (g->started || g->launches || g->activities);
}

void gpu_merge_free(struct gpu_merge *g)
{
	if (!g)
		return;
	while (g->sources) {
		struct gpu_source *s = g->sources;

		g->sources = s->next;
		unlink(s->path);
		source_free(s);
	}
	gpu_stats_free(g);
	rmdir(g->dir);
	free(g->dir);
	free(g);
}

// SPDX-License-Identifier: MIT
/*
 * The run's figures for the end-of-run summary and summary.json: per
 * process and thread their busy, idle and GIL time and phases; the
 * training loop's thread (the one that computes most), its steps and the
 * time before them; the top functions by self and total time; the share of
 * busy time in compute libraries; GPU busy time. Computed once from the
 * profile's rows and timeline, written by summary_text.c and
 * summary_json.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"


static struct summary_process *process_of(struct summary *s, uint32_t pid)
{
	for (size_t i = s->nprocs; i-- > 0;)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (ARRAY_RESERVE(s->procs, s->cap_procs, s->nprocs + 1, 8) < 0)
		return NULL;
	s->procs[s->nprocs] = (struct summary_process){ .pid = pid };
	return &s->procs[s->nprocs++];
}

struct tid_key {
	const struct summary_process *sp;
	uint32_t tid;
};

static bool same_tid(const void *key, uint32_t id)
{
	const struct tid_key *k = key;

	return k->sp->threads[id].tid == k->tid;
}

/* A process's thread by its id, through a hash table: a run of short
 * threads has thousands. */
static struct summary_thread *thread_of(struct summary_process *sp, uint32_t tid)
{
	struct tid_key key = { sp, tid };
	uint32_t hash = hash_of_words(&tid, 1);
	struct hash_slot *slot;

	if (sp->nthreads && sp->threads[sp->nthreads - 1].tid == tid)
		return &sp->threads[sp->nthreads - 1];
	if (hash_table_reserve(&sp->tids) < 0)
		return NULL;
	slot = hash_table_find(&sp->tids, hash, same_tid, &key);
	if (slot->ref)
		return &sp->threads[slot->ref - 1];
	if (sp->nthreads >= UINT32_MAX - 1 ||
	    ARRAY_RESERVE(sp->threads, sp->cap_threads, sp->nthreads + 1, 8) < 0)
		return NULL;
	sp->threads[sp->nthreads] = (struct summary_thread){ .tid = tid };
	hash_table_fill(&sp->tids, slot, hash, (uint32_t)sp->nthreads);
	return &sp->threads[sp->nthreads++];
}

static int tally_row(const struct profile_aggregate *row, void *ctx)
{
	struct summary *s = ctx;
	struct summary_process *sp;
	struct summary_thread *st;
	enum phase phase;

	if (row->flags & SAMPLE_GPU)
		return 0;
	sp = process_of(s, row->pid);
	st = sp ? thread_of(sp, row->tid) : NULL;
	if (!st)
		return -ENOMEM;
	s->samples += row->count;
	sp->samples += row->count;
	st->samples += row->count;
	if (row->flags & SAMPLE_IDLE) {
		sp->idle_ns += row->weight_ns;
		st->idle_ns += row->weight_ns;
	} else {
		sp->busy_ns += row->weight_ns;
		st->busy_ns += row->weight_ns;
		if (row->flags & SAMPLE_CPU_WAIT) {
			sp->cpu_wait_ns += row->weight_ns;
			st->cpu_wait_ns += row->weight_ns;
		}
	}
	if (row->flags & SAMPLE_GIL) {
		sp->gil_ns += row->weight_ns;
		st->gil_ns += row->weight_ns;
	}
	phase = phase_of_row(s->m, row);
	st->phase_ns[phase] += row->weight_ns;
	if (phase == PHASE_FORWARD || phase == PHASE_BACKWARD || phase == PHASE_OPTIMIZER)
		st->compute_samples += row->count;
	return 0;
}

static uint64_t classified(const struct summary_thread *t)
{
	uint64_t n = 0;

	for (int k = PHASE_OTHER + 1; k < PHASE_KINDS; k++)
		n += t->phase_ns[k];
	return n;
}

/* The loop's thread: the one that computes (forward, backward, the
 * optimizer), not a loader thread that only fetches; else the one with
 * the most time in any phase (a DataLoader worker). */
static bool loopier(const struct summary_thread *a, const struct summary_thread *b)
{
	uint64_t ca = a->phase_ns[PHASE_FORWARD] + a->phase_ns[PHASE_BACKWARD] +
		      a->phase_ns[PHASE_OPTIMIZER];
	uint64_t cb = b->phase_ns[PHASE_FORWARD] + b->phase_ns[PHASE_BACKWARD] +
		      b->phase_ns[PHASE_OPTIMIZER];

	if (ca != cb)
		return ca > cb;
	return classified(a) > classified(b);
}

static int by_samples(const void *a, const void *b)
{
	const struct summary_process *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* ---- top functions and compute time: one pass over a process's rows ---- */

struct func_pass {
	struct summary *s;
	struct summary_process *sp;
	uint32_t *func_of_frame;      /* frame id -> function + 1; 0 unknown yet */
	struct summary_func *funcs;
	size_t nfuncs, cap_funcs;
	struct hash_table index;      /* (name, module) -> function */
	uint32_t *seen;               /* function -> the row that last counted it */
	size_t cap_seen;
	uint32_t row;
	uint32_t *path;
	uint32_t cap_path;
	uint8_t *compute;             /* frame id: 0 unknown, 1 no, 2 yes */
	uint8_t *copy;                /* frame id: 0 unknown, 1 no, 2 an ATen copy */
	uint64_t *leaf_ns;            /* frame id: busy time as the leaf */
};

/* Modules whose frames are compute: ATen (libtorch*), BLAS and LAPACK,
 * oneDNN, and CUDA's runtime and driver (kernel launches). */
static bool compute_module(const char *module)
{
	static const char *const names[] = {
		"libtorch", "libc10", "libopenblas", "libblas", "liblapack", "libmkl",
		"libdnnl", "libmkldnn", "libcudart", "libcuda.", "libcublas", "libcudnn",
	};
	const char *base = strrchr(module, '/');

	base = base ? base + 1 : module;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

/* ATen's copies and dtype or device conversions: copy_, _to_copy (what
 * .to() and .float() run), clone, their kernels. */
static bool copy_function(const char *name)
{
	return (!strncmp(name, "at::", 4) || strstr(name, " at::")) &&
	       (strstr(name, "copy") || strstr(name, "::clone"));
}

/* OpenMP's runtimes: GCC's, Intel's, LLVM's. Their frames are mostly
 * unnamed (stripped); a leaf in them is the team waiting, not working. */
static bool omp_module(const char *module)
{
	const char *base = strrchr(module, '/');

	base = base ? base + 1 : module;
	return !strncmp(base, "libgomp", 7) || !strncmp(base, "libiomp", 7) ||
	       !strncmp(base, "libomp.", 7);
}

struct func_key {
	const struct func_pass *fp;
	uint32_t name, file;
};

static bool same_func(const void *key, uint32_t id)
{
	const struct func_key *k = key;

	return k->fp->funcs[id].name == k->name && k->fp->funcs[id].file == k->file;
}

/* A frame's function (its name and module, whatever its line), through
 * the frame's own cache, else the functions' hash table. */
static int func_index(struct func_pass *fp, uint32_t frame, uint32_t *out)
{
	const struct frame *f = profile_frame(fp->s->p, frame);
	struct func_key key = { fp, f->name, f->module };
	uint32_t words[2] = { f->name, f->module }, hash;
	struct hash_slot *slot;

	if (fp->func_of_frame[frame]) {
		*out = fp->func_of_frame[frame] - 1;
		return 0;
	}
	hash = hash_of_words(words, 2);
	if (hash_table_reserve(&fp->index) < 0)
		return -ENOMEM;
	slot = hash_table_find(&fp->index, hash, same_func, &key);
	if (slot->ref) {
		*out = slot->ref - 1;
		fp->func_of_frame[frame] = slot->ref;
		return 0;
	}
	if (fp->nfuncs >= UINT32_MAX - 1 ||
	    ARRAY_RESERVE(fp->funcs, fp->cap_funcs, fp->nfuncs + 1, 64) < 0 ||
	    ARRAY_RESERVE(fp->seen, fp->cap_seen, fp->nfuncs + 1, 64) < 0)
		return -ENOMEM;
	fp->seen[fp->nfuncs] = 0;
	fp->funcs[fp->nfuncs] = (struct summary_func){ .name = f->name, .file = f->module };
	hash_table_fill(&fp->index, slot, hash, (uint32_t)fp->nfuncs);
	*out = (uint32_t)fp->nfuncs;
	fp->func_of_frame[frame] = (uint32_t)++fp->nfuncs;
	return 0;
}

static int func_row(const struct profile_aggregate *row, void *ctx)
{
	struct func_pass *fp = ctx;
	const struct profile *p = fp->s->p;
	bool native = false, compute = false, copy = false;
	uint32_t fi, python = FRAME_NONE;
	int depth;

	if (row->pid != fp->sp->pid || row->flags & (SAMPLE_GPU | SAMPLE_IDLE) || !row->stack)
		return 0;
	depth = profile_stack_frames(p, row->stack, &fp->path, &fp->cap_path);
	if (depth < 0)
		return depth;
	fp->row++;
	for (int i = 0; i < depth; i++) {
		uint32_t id = fp->path[i];
		const struct frame *f = profile_frame(p, id);

		if (f->kind == FRAME_NATIVE && f->module) {
			native = true;
			if (!fp->compute[id])
				fp->compute[id] = compute_module(profile_string(p, f->module)) ? 2 : 1;
			compute |= fp->compute[id] == 2;
			if (!fp->copy[id])
				fp->copy[id] = copy_function(profile_string(p, f->name)) ? 2 : 1;
			copy |= fp->copy[id] == 2;
		} else if (f->kind == FRAME_PYTHON && !copy) {
			python = id;
		}
		if (func_index(fp, id, &fi) < 0)
			return -ENOMEM;
		if (fp->seen[fi] != fp->row) { /* recursion counts once */
			fp->seen[fi] = fp->row;
			fp->funcs[fi].total_ns += row->weight_ns;
		}
		if (i == depth - 1) {
			if (f->kind == FRAME_NATIVE && f->module &&
			    omp_module(profile_string(p, f->module)))
				fp->sp->omp_runtime_ns += row->weight_ns;
			fp->funcs[fi].self_ns += row->weight_ns;
			fp->leaf_ns[id] += row->weight_ns;
			if (fp->leaf_ns[id] > fp->sp->hottest_ns) {
				fp->sp->hottest = id;
				fp->sp->hottest_ns = fp->leaf_ns[id];
			}
		}
	}
	if (native)
		fp->sp->native_ns += row->weight_ns;
	if (compute)
		fp->sp->compute_ns += row->weight_ns;
	if (copy) {
		fp->sp->cpu_copy_ns += row->weight_ns;
		if (python != FRAME_NONE &&
		    summary_site_add(fp->sp, SITE_CPU_COPY, python, row->weight_ns) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void pick_top(const struct summary_func *all, size_t n, bool self,
		     struct summary_func *top, size_t *ntop)
{
	*ntop = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t w = self ? all[i].self_ns : all[i].total_ns;
		size_t at = *ntop;

		if (!w)
			continue;
		while (at > 0 && (self ? top[at - 1].self_ns : top[at - 1].total_ns) < w)
			at--;
		if (at >= SUMMARY_TOP)
			continue;
		memmove(&top[at + 1], &top[at],
			(MIN(*ntop, (size_t)SUMMARY_TOP - 1) - at) * sizeof(*top));
		top[at] = all[i];
		if (*ntop < SUMMARY_TOP)
			(*ntop)++;
	}
}

static int functions_find(struct summary *s, struct summary_process *sp)
{
	uint32_t nframes = profile_frame_count(s->p);
	struct func_pass fp = { .s = s, .sp = sp };
	int ret = -ENOMEM;

	fp.func_of_frame = calloc(nframes + 1, sizeof(*fp.func_of_frame));
	fp.compute = calloc(nframes + 1, 1);
	fp.copy = calloc(nframes + 1, 1);
	fp.leaf_ns = calloc(nframes + 1, sizeof(*fp.leaf_ns));
	if (fp.func_of_frame && fp.compute && fp.copy && fp.leaf_ns)
		ret = profile_for_each_aggregate(s->p, func_row, &fp);
	if (!ret) {
		pick_top(fp.funcs, fp.nfuncs, true, sp->top_self, &sp->ntop_self);
		pick_top(fp.funcs, fp.nfuncs, false, sp->top_total, &sp->ntop_total);
	}
	free(fp.func_of_frame);
	free(fp.compute);
	free(fp.copy);
	free(fp.leaf_ns);
	free(fp.funcs);
	hash_table_free(&fp.index);
	free(fp.seen);
	free(fp.path);
	return ret;
}

/* ---- the whole ---- */

/*
 * Steps are told apart only where the beat and the rest of a step each
 * last two sampling periods: a shorter one falls between ticks at some
 * steps, which then merge. A step much shorter than a period aliases:
 * samples land in its phases at random, and random runs of the beat,
 * 1/(1-b) samples long with the rest 1/b (b the beat's share), would pass
 * both checks near b = 1/2; a step of five samples or more rules that
 * out. Counted in samples: under load a late tick's weight stretches a
 * one-sample run past two periods of time.
 */
static bool steps_unresolved(const struct step_stats *st, uint64_t period_ns)
{
	double beat = (double)st->beat_samples / (double)st->steps;
	double step = (double)st->span_samples / (double)st->timed;

	return st->beat_ns < 2 * period_ns || beat < 2.0 || step < beat + 2.0 || step < 5.0;
}

static bool loader_worker(const struct summary *s, const struct summary_process *sp)
{
	const char *label = process_label_of(s->p, sp->pid);

	return label && !strncmp(label, "DataLoader worker", 17);
}

/* A multiprocessing forkserver or resource tracker starts or tends
 * processes and runs no loop, yet the forkserver imports the script (its
 * __main__ preloaded), whose frames may match the phase rules. Told by
 * its command line, which the label begins with; the forkserver's
 * children keep that line (they fork without exec), and record marks
 * them fork_of.PID: they may well be training (a rank started so). */
static bool launcher(const struct summary *s, const struct summary_process *sp)
{
	const char *label = process_label_of(s->p, sp->pid);
	char key[32];

	snprintf(key, sizeof(key), "fork_of.%" PRIu32, sp->pid);
	return label && !profile_meta(s->p, key) &&
	       (strstr(label, "multiprocessing.forkserver") ||
		strstr(label, "multiprocessing.resource_tracker"));
}

/* Fewer samples than this in forward, backward and optimizer: no steps to
 * count (two steps of five samples at the least, steps_unresolved), so no
 * "steps: not counted" either; a thread that only imported or built a
 * model looks like this. */
#define LOOP_MIN_SAMPLES 10

static bool too_few_to_loop(const struct summary_thread *t)
{
	/* samples, not time: under load one late sample weighs many periods */
	return t->compute_samples < LOOP_MIN_SAMPLES;
}

static int process_find(struct summary *s, struct summary_process *sp)
{
	int ret;

	if (launcher(s, sp))
		return functions_find(s, sp);
	for (size_t i = 0; i < sp->nthreads; i++)
		if (classified(&sp->threads[i]) && (!sp->loop || loopier(&sp->threads[i], sp->loop)))
			sp->loop = &sp->threads[i];
	if (sp->loop)
		memcpy(sp->loop_ns, sp->loop->phase_ns, sizeof(sp->loop->phase_ns));
	/* A DataLoader worker forked inside the loop's DataLoader.__iter__:
	 * its phases are the loop's data, its steps none. */
	if (sp->loop && profile_keeps_timeline(s->p) && !loader_worker(s, sp) &&
	    !too_few_to_loop(sp->loop)) {
		ret = steps_find(s->m, sp->pid, sp->loop->tid, &sp->steps);
		if (ret < 0)
			return ret;
		if (sp->steps.timed && s->period_ns && steps_unresolved(&sp->steps, s->period_ns))
			sp->steps_too_short = true;
		if (sp->steps.timed && !sp->steps_too_short) {
			/* A validation pass's data and forward are eval's. */
			for (int k = 0; k < PHASE_KINDS; k++) {
				uint64_t e = MIN(sp->steps.eval_taken_ns[k], sp->loop_ns[k]);

				sp->loop_ns[k] -= e;
				sp->loop_ns[PHASE_EVAL] += e;
			}
			sp->startup_ns = sp->steps.first_ns - sp->steps.thread_first_ns;
			/* Before the first step is startup, whatever its frames. */
			for (int k = 0; k < PHASE_KINDS; k++) {
				uint64_t b = MIN(sp->steps.before_ns[k], sp->loop_ns[k]);

				sp->loop_ns[k] -= b;
				sp->loop_ns[LOOP_STARTUP] += b;
			}
			ret = summary_loaders_find(s, sp);
			if (ret >= 0)
				ret = summary_comm_find(s, sp);
			if (ret < 0)
				return ret;
		}
	}
	return functions_find(s, sp);
}

static int span_bounds(const struct profile_span *span, void *ctx)
{
	struct summary *s = ctx;

	if (span->flags & SAMPLE_GPU)
		return 0;
	if (!s->start_ns || span->start_ns < s->start_ns)
		s->start_ns = span->start_ns;
	if (span->end_ns > s->end_ns)
		s->end_ns = span->end_ns;
	return 0;
}

int summary_build(struct phase_map *m, struct summary **out)
{
	struct summary *s = calloc(1, sizeof(*s));
	const char *period, *cpus;
	int ret;

	if (!s)
		return -ENOMEM;
	s->m = m;
	s->p = m->p;
	period = profile_meta(s->p, "period_ns");
	s->period_ns = period ? strtoull(period, NULL, 10) : 0;
	cpus = profile_meta(s->p, "cpus");
	s->cpus = cpus ? (unsigned int)strtoul(cpus, NULL, 10) : 0;
	cpus = profile_meta(s->p, "target_cpu_ns");
	s->target_cpu_ns = cpus ? strtoull(cpus, NULL, 10) : 0;
	cpus = profile_meta(s->p, "target_wait_ns");
	s->target_wait_ns = cpus ? strtoull(cpus, NULL, 10) : 0;
	cpus = profile_meta(s->p, "runnable_milli");
	s->runnable = cpus ? (double)strtoull(cpus, NULL, 10) / 1000.0 : 0;
	cpus = profile_meta(s->p, "machine_runnable_milli");
	s->machine_runnable = cpus ? (double)strtoull(cpus, NULL, 10) / 1000.0 : -1;
	cpus = profile_meta(s->p, "machine_cpus");
	s->machine_cpus = cpus ? (unsigned int)strtoul(cpus, NULL, 10) : 0;
	ret = profile_for_each_aggregate(s->p, tally_row, s);
	if (!ret && profile_keeps_timeline(s->p))
		ret = profile_for_each_span(s->p, span_bounds, s);
	if (!ret)
		array_sort(s->procs, s->nprocs, sizeof(*s->procs), by_samples);
	for (size_t i = 0; !ret && i < s->nprocs; i++)
		ret = process_find(s, &s->procs[i]);
	/* After every process's figures: a worker's are its own. */
	for (size_t i = 0; !ret && i < s->nprocs; i++)
		if (s->procs[i].loop)
			ret = summary_workers_find(s, &s->procs[i]);
	if (!ret)
		ret = summary_gpus_find(s);
	if (ret < 0) {
		summary_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

size_t summary_process_count(const struct summary *s)
{
	return s->nprocs;
}

bool summary_loop_of(const struct summary *s, size_t i, uint32_t *pid, uint32_t *tid)
{
	const struct summary_process *sp = &s->procs[i];

	if (!sp->loop || !sp->steps.timed || sp->steps_too_short)
		return false;
	*pid = sp->pid;
	*tid = sp->loop->tid;
	return true;
}

bool summary_loop_thread_of(const struct summary *s, size_t i, uint32_t *pid, uint32_t *tid)
{
	const struct summary_process *sp = &s->procs[i];
	const struct summary_thread *t = sp->loop;

	if (summary_loop_of(s, i, pid, tid))
		return true;
	/* A DataLoader worker's fetching thread is no loop of its own. */
	if (!t || loader_worker(s, sp) ||
	    !(t->phase_ns[PHASE_FORWARD] + t->phase_ns[PHASE_BACKWARD] + t->phase_ns[PHASE_OPTIMIZER]))
		return false;
	*pid = sp->pid;
	*tid = t->tid;
	return true;
}

void summary_free(struct summary *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nprocs; i++) {
		free(s->procs[i].threads);
		hash_table_free(&s->procs[i].tids);
		free(s->procs[i].loaders);
		free(s->procs[i].iter_starts);
		free(s->procs[i].workers);
		free(s->procs[i].sites);
	}
	free(s->procs);
	free(s->gpus);
	free(s->kernel_sites.v);
	free(s->copy_sites.v);
	free(s);
}

// SPDX-License-Identifier: MIT
/*
 * A tick of a Python target, Python stacks only. Under the GIL only the
 * thread that holds it can change Python frames: when that thread is
 * running it is stopped for the length of its walk (one stop per tick, the
 * engine's usual interrupt), so its stack is one that happened; every
 * other thread is read as it runs on. A thread that takes the GIL after
 * the thread list was read (or every running one, with --nonblocking) has
 * its chain read, its head read again, and the walk redone when it called
 * or returned meanwhile; a walk still moving after a few tries is given up
 * and counted: its sample is "[error: the stack moved while read]", never
 * a torn stack. Blocked threads with Python frames give
 * idle samples ending in the syscall they wait in; threads without Python
 * frames are left out (blocked ones are kept, natively and unstopped, with
 * --idle).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "sampler/builder.h"
#include "sampler/python/pysample.h"
#include "sampler/quiet.h"
#include "sampler/service.h"
#include "sampler/stacks.h"
#include "sampler/tick.h"

#define HOLDER_TRIES 3
/* How far into glibc's struct pthread its tid is looked for. */
#define PTHREAD_SCAN 2048

bool pysample_ready(const struct sampler *s)
{
	return s->py && s->py->state == PY_READY;
}

/*
 * Before 3.11 a thread state knows its pthread_t, the address of glibc's
 * struct pthread, which holds the kernel tid at a fixed offset. That
 * offset is found once: the first one at which every thread's struct holds
 * a distinct tid of this process (as the process itself numbers its
 * threads: in a container, in its own PID namespace).
 */
static uint32_t find_tid_offset(struct sampler *s, int n)
{
	static const int most = 8;
	uint32_t words[8][PTHREAD_SCAN / 4];
	int have = 0;

	for (int i = 0; i < n && have < most; i++)
		if (remote_read(s->pid, s->py->threads[i].thread_id, words[have],
				sizeof(words[0])) == sizeof(words[0]))
			have++;
	if (!have)
		return 0;
	for (uint32_t w = 4; w < PTHREAD_SCAN / 4; w++) {
		bool ok = true;

		for (int i = 0; i < have && ok; i++) {
			ok = words[i][w] > 0 && thread_find_ns(s, (pid_t)words[i][w]);
			for (int j = 0; j < i && ok; j++)
				ok = words[j][w] != words[i][w];
		}
		if (ok)
			return w * 4;
	}
	return 0;
}

void pysample_map_tids(struct sampler *s, int n)
{
	struct pysample *py = s->py;

	for (int i = 0; i < n; i++) {
		const struct py_thread *pt = &py->threads[i];
		struct thread *t;
		uint32_t tid = 0;

		if (py->target.l.version >= 0x030b) {
			tid = (uint32_t)pt->native_thread_id;
		} else {
			if (!py->tid_offset)
				py->tid_offset = find_tid_offset(s, n);
			if (py->tid_offset)
				remote_read(s->pid, pt->thread_id + py->tid_offset, &tid, sizeof(tid));
		}
		/* The target's own id for the thread; ours differs in a
		 * container. */
		if (s->other_pidns && tid)
			tid = (t = thread_find_ns(s, (pid_t)tid)) ? (uint32_t)t->tid : 0;
		py->tids[i] = (pid_t)tid;
	}
}

/*
 * The folder of the script: the file of the main thread's outermost frame
 * once that is a module body outside the interpreter's own library (at
 * start-up it is site.py, or frozen importlib).
 */
static void note_script_dir(struct sampler *s, const struct py_code *outer)
{
	char dir[1024];
	const char *slash;

	if (s->py->script_dir_set || !outer->file || outer->file[0] == '<' ||
	    strcmp(outer->name, "<module>") || strstr(outer->file, "/lib/python3"))
		return;
	s->py->script_dir_set = true;
	slash = strrchr(outer->file, '/');
	if (!slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - outer->file), outer->file);
	profile_set_meta(s->profile, "python_script_dir", dir);
}

static int intern_python(struct sampler *s, struct py_code *c, uint32_t line, uint32_t *frame)
{
	struct frame f = { .kind = FRAME_PYTHON, .line = line };
	int ret = 0;

	if (c->id == UINT32_MAX) {
		ret = profile_intern_string(s->profile, c->name, &c->id);
		if (!ret)
			ret = profile_intern_string(s->profile, c->file, &c->id2);
		if (ret < 0) {
			c->id = UINT32_MAX;
			return ret;
		}
	}
	f.name = c->id;
	f.module = c->id2;
	return profile_intern_frame(s->profile, &f, frame);
}

static const char *walk_marker(enum py_walk_end end)
{
	switch (end) {
	case PY_WALK_COMPLETE:
		return NULL;
	case PY_WALK_CYCLE:
		return "[error: frame cycle]";
	case PY_WALK_DEPTH:
		return "[truncated: depth limit]";
	case PY_WALK_ERROR:
		break;
	}
	return "[error]";
}

/*
 * A DataLoader worker is a process whose stack holds torch's _worker_loop,
 * for its whole life; its worker_id argument says which (the same number
 * torch.utils.data.get_worker_info().id gives). A rank started by
 * torch.multiprocessing.spawn, which sets no RANK, holds spawn's _wrap
 * (fn, i, ...) as long: i is its process index, its rank on one machine
 * (what mp.spawn passes the function as its rank). A DataLoader worker
 * forked by such a rank holds both, the rank's outer. Each read once per
 * image, from frames that outlive every batch.
 */
#define TORCH_WORKER_FILE "torch/utils/data/_utils/worker.py"
#define TORCH_SPAWN_FILE "torch/multiprocessing/spawn.py"
#define ROLE_LOCALS_MAX 24 /* worker_id is its 11th argument */

static bool code_is(const struct py_code *c, const char *name, const char *file_end)
{
	size_t flen = c->file ? strlen(c->file) : 0, elen = strlen(file_end);

	return c->name && !strcmp(c->name, name) && flen >= elen &&
	       !strcmp(c->file + flen - elen, file_end);
}

/* The frame's small non-negative integer variable name; -1 none. */
static int int_local(struct sampler *s, const struct py_raw_frame *raw, const char *name)
{
	struct py_local *vars = malloc(ROLE_LOCALS_MAX * sizeof(*vars));
	int n, found = -1;

	if (!vars)
		return -1;
	n = py_frame_locals(&s->py->target, raw->addr, raw->code, vars, ROLE_LOCALS_MAX);
	for (int i = 0; i < n; i++) {
		char *end;
		long v;

		if (strcmp(vars[i].name, name))
			continue;
		v = strtol(vars[i].value, &end, 10);
		if (end != vars[i].value && !*end && v >= 0 && v < 1000000)
			found = (int)v;
		break;
	}
	free(vars);
	return found;
}

static void note_role(struct sampler *s, const struct py_code *c, const struct py_raw_frame *raw)
{
	struct pysample *py = s->py;
	int id;

	if (!py->rank_read && code_is(c, "_wrap", TORCH_SPAWN_FILE)) {
		py->rank_read = true;
		py->spawn_rank = int_local(s, raw, "i");
		if (py->spawn_rank >= 0)
			process_seen_report(sampler_root(s), s->pid, -1, py->spawn_rank);
		return;
	}
	if (!code_is(c, "_worker_loop", TORCH_WORKER_FILE))
		return;
	py->role_read = true;
	id = int_local(s, raw, "worker_id");
	if (id >= 0)
		process_seen_report(sampler_root(s), s->pid, id, py->spawn_rank);
}

int pysample_frame(struct sampler *s, pid_t tid, const struct py_raw_frame *raw, bool outermost,
		 uint32_t *frame)
{
	struct pysample *py = s->py;
	enum loader_frame lf;
	struct py_code *c;
	int ret = py_code_get(&py->target, py->codes, raw->code, &c);

	if (ret == -ENOENT)
		return ret; /* a 3.13 frame without code: not a Python function */
	if (ret < 0) {
		stats_error(s, SAMPLER_ERR_PYTHON);
		return builder_marker_frame(&s->build, "[error: unreadable code object]", frame);
	}
	if (tid == s->pid && outermost)
		note_script_dir(s, c);
	if (!py->role_read && tid == s->pid && c->name && c->name[0] == '_')
		note_role(s, c, raw);
	/* Frames come outermost first: the innermost one stays. Asked once
	 * per code object. */
	if (c->id3 == UINT32_MAX)
		c->id3 = (uint32_t)pysample_loader_frame(c);
	lf = (enum loader_frame)c->id3;
	if (lf != LOADER_NONE) {
		py->loader_at = raw;
		py->loader_kind = lf;
	}
	ret = intern_python(s, c, py_code_line(&py->target, c, raw->instr), frame);
	if (!ret && s->opt.locals)
		pysample_locals_use(s, tid, raw);
	return ret;
}

/* Frames innermost first to a stack id; *nframes the Python frames in it. */
static int python_stack(struct sampler *s, pid_t tid, const struct py_raw_frame *frames, int n,
			enum py_walk_end end, uint32_t *stack, int *nframes, uint32_t *flags)
{
	const char *marker = walk_marker(end);
	uint32_t id = 0, frame;
	int ret = 0;

	*nframes = 0;
	if (marker) {
		*flags |= SAMPLE_TRUNCATED;
		if (end != PY_WALK_DEPTH)
			stats_error(s, SAMPLER_ERR_PYTHON);
		ret = builder_marker(&s->build, marker, 0, &id);
		if (ret < 0)
			return ret;
	}
	py_code_prefetch(&s->py->target, s->py->codes, frames, n);
	for (int i = n - 1; i >= 0; i--) {
		ret = pysample_frame(s, tid, &frames[i], !*nframes, &frame);
		if (ret == -ENOENT)
			continue;
		if (!ret)
			ret = profile_intern_stack(s->profile, id, frame, &id);
		if (ret < 0)
			break;
		(*nframes)++;
	}
	py_code_prefetch_drop(s->py->codes);
	*stack = id;
	return ret < 0 && ret != -ENOENT ? ret : 0;
}

/*
 * The thread's frames into *frames. The GIL holder's were walked while it
 * was stopped. Another running thread may have taken the GIL since the
 * thread list was read: its walk is repeated while its head moved
 * meanwhile or the walk met memory being rewritten (a C-stack frame of a
 * call just returning). -EAGAIN: it never held still (counted).
 */
static int read_frames(struct sampler *s, struct thread *t, const struct py_thread *pt,
		       bool *running, const struct py_raw_frame **frames, enum py_walk_end *end)
{
	struct pysample *py = s->py;
	int n = 0, ret;

	if (t->tid == py->held_tid) {
		*frames = py->held;
		*end = py->held_end;
		return py->nheld;
	}
	for (int k = 0; k < py->npre; k++)
		if (py->pre[k].tid == t->tid) {
			*frames = py->pre_frames + py->pre[k].at;
			*end = py->pre[k].end;
			return py->pre[k].n;
		}
	*frames = py->frames;
	for (int i = 0; i < HOLDER_TRIES; i++) {
		uint64_t before, after = 0;

		if (i)
			s->st.py_walks_retried++;
		n = py_frames_read(&py->target, pt->tstate, &py->scratch, py->frames,
				   PY_MAX_DEPTH, end);
		before = py->scratch.head; /* read as the walk began */
		ret = pysample_walk_new_holder(s, t, pt);
		if (ret < 0)
			return ret;
		if (ret) {
			*running = true;
			*frames = py->held;
			*end = py->held_end;
			return py->nheld;
		}
		/* Inside the walk: a thread that moved meanwhile is read again. */
		if (s->opt.locals)
			pysample_locals_read(s, py->frames, n);
		if (!*running)
			return n;
		py_frame_head(&py->target, pt->tstate, &after);
		/* Still, but unreadable every time: an [error] sample. */
		if (before == after && (*end != PY_WALK_ERROR || i == HOLDER_TRIES - 1))
			return n;
	}
	s->st.py_walks_torn++;
	return -EAGAIN;
}

static void sample_thread(struct sampler *s, struct thread *t, const struct py_thread *pt,
			  char state)
{
	bool running = state == 'R', was_running = running;
	const struct py_raw_frame *frames;
	uint32_t stack, flags = 0;
	enum py_walk_end end;
	struct blocked_state b;
	int n, nframes;

	if (s->opt.gil_only && !pt->gil)
		return;
	if (!running && !s->opt.idle && !s->opt.idle_python)
		return;
	t->py_idle_valid = t->py_idle_valid && !running;
	if (running)
		t->py_active_ns = s->tick_now;
	if (!running) {
		/* A thread that has not run since cannot have changed its
		 * frames or syscall: its last sample stands, nothing is read. */
		uint64_t runtime = thread_runtime(s, t);

		if (!runtime || runtime != t->py_idle_runtime)
			t->py_active_ns = s->tick_now;
		if (t->py_idle_valid && runtime && runtime == t->py_idle_runtime) {
			stacks_add_sample(s, t->tid, t->py_idle_stack, t->py_idle_flags, s->tick_now,
					  s->tick_weight);
			return;
		}
		t->py_idle_runtime = runtime;
	}
	n = read_frames(s, t, pt, &running, &frames, &end);
	if (n == -ESTALE)
		return;
	if (running && !was_running) {
		/* Woke and took the GIL as it was read: walked stopped. */
		t->py_idle_valid = false;
		t->py_active_ns = s->tick_now;
	}
	if (n == -EAGAIN) {
		/* A torn stack is never kept: the sample says what happened, so
		 * the thread's time stays its own and dump still lists it. */
		if (builder_marker(&s->build, "[error: the stack moved while read]", 0, &stack) == 0) {
			stacks_name_thread(s, t);
			stacks_add_sample(s, t->tid, stack, SAMPLE_TRUNCATED | (pt->gil ? SAMPLE_GIL : 0),
					  s->tick_now, s->tick_weight);
		}
		return;
	}
	s->py->loader_at = NULL;
	if (python_stack(s, t->tid, frames, n, end, &stack, &nframes, &flags) < 0) {
		stats_error(s, SAMPLER_ERR_PYTHON);
		return;
	}
	if (s->py->loader_at)
		pysample_loader_note(s, t, frames, n, s->tick_now);
	/* The thread walked stopped held it then (the listing may be older). */
	if (pt->gil || t->tid == s->py->held_tid)
		flags |= SAMPLE_GIL;
	if (!running) {
		/* Idle threads with no Python code on them are not the user's. */
		if (!nframes && !s->opt.idle)
			return;
		if (thread_blocked_state(s, t, &b) < 0)
			b.nr = -1;
		flags |= SAMPLE_IDLE;
		if (builder_idle_leaf(&s->build, b.nr, stack, &stack) < 0) {
			stats_error(s, SAMPLER_ERR_MEMORY);
			return;
		}
		t->py_idle_valid = true;
		t->py_idle_stack = stack;
		t->py_idle_flags = flags;
	} else if (!nframes && !n) {
		return; /* runs, but not Python: not in a Python-only profile */
	}
	stacks_name_thread(s, t);
	stacks_add_sample(s, t->tid, stack, flags, s->tick_now, s->tick_weight);
}

const struct py_thread *pysample_thread_of(struct pysample *py, int n, pid_t tid)
{
	for (int i = 0; i < n; i++)
		if (py->tids[i] == tid)
			return &py->threads[i];
	return NULL;
}

static void name_one(void *ctx, uint64_t ident, const char *name)
{
	struct sampler *s = ctx;
	struct pysample *py = s->py;

	for (int i = 0; i < py->nthreads; i++) {
		struct thread *t;

		if (py->threads[i].thread_id != ident || !py->tids[i])
			continue;
		t = thread_find(s, py->tids[i]);
		if (!t)
			return;
		t->py_named = true;
		profile_set_thread(s->profile, (uint32_t)s->pid, (uint32_t)t->tid, name);
		return;
	}
}

/* Whether every Python thread is known to the sampler and named by
 * threading; one not yet mapped to a thread counts as unnamed. */
static bool python_names_complete(struct sampler *s, int n)
{
	struct pysample *py = s->py;

	for (int i = 0; i < n; i++) {
		struct thread *t = py->tids[i] ? thread_find(s, py->tids[i]) : NULL;

		if (!t || !t->py_named)
			return false;
	}
	return true;
}

/* Once a second (a thread renamed); every 100 ms while some Python thread
 * has no name yet (threading not imported, a thread just started). Judged
 * on each tick, so a thread that starts after the rest were named is
 * named within 100 ms, not a second later. */
void pysample_names_refresh(struct sampler *s, int n)
{
	struct pysample *py = s->py;
	uint64_t every;

	if (n <= 0)
		return;
	every = (uint64_t)(s->opt.rate_hz / (python_names_complete(s, n) ? 1 : 10));
	if (py->names_read && s->tick - py->names_tick < (every ? every : 1))
		return;
	py->names_read = true;
	py->names_tick = s->tick;
	py_thread_names(&py->target, py->threads[0].interp, &py->names_cache, name_one, s);
}

void pysample_tick(struct sampler *s)
{
	struct pysample *py = s->py;
	int n = py_threads_read(&py->target, py->threads, PY_MAX_THREADS);
	uint64_t runnable = 0;

	if (n < 0) {
		stats_error(s, SAMPLER_ERR_PYTHON);
		return;
	}
	pysample_map_tids(s, n);
	py->nthreads = n;
	py->held_tid = 0;
	py->stop_tried = false;
	py->npre_idx = py->npre = 0;
	if (!s->opt.nonblocking)
		pysample_walk_holder(s, n);
	/* The stops handled there may have left this process for a
	 * launcher's child (follow.c), whose reader is a new one. */
	if (s->py != py)
		return;
	pysample_names_refresh(s, n);
	quiet_tick_begin(s);
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = s->threads[i];
		const struct py_thread *pt;
		char c;

		if (!t->gone && !t->listening && !t->detaching && t->interrupt_sent)
			runnable++; /* runnable, not yet in our stop */

		if (t->gone || t->listening || t->interrupt_sent || t->detaching)
			continue;
		/* The holder is sampled as it was at its stop: running, or
		 * waiting for a CPU (its schedstat says which). */
		if (t->tid == py->held_tid)
			thread_note_cpu_wait(s, t);
		c = t->tid == py->held_tid ? 'R' : thread_poll_state(s, t);
		/* Memory-only, a thread in another tracer's stop is running
		 * but for a moment: read as such, not passed by. */
		if (c == 't' && s->memory_only)
			c = 'R';
		pt = pysample_thread_of(py, n, t->tid);
		/* In a ptrace stop of its own (a fork's event being handled):
		 * in the kernel, its frames held still; sampled as waiting. A
		 * thread not yet running Python (a new one's first stop) is
		 * passed by, its time carried to its next sample. */
		if (c == 't' && !t->interrupt_sent) {
			if (!pt) {
				thread_passed_by(s, t);
				continue;
			}
			c = 'S';
		}
		runnable += c == 'R';
		if (c != 'R' && c != 'S' && c != 'D')
			continue;
		if (pt) {
			sample_thread(s, t, pt, c);
			if (s->py != py)
				break;
		} else if (c != 'R' && s->opt.idle && !s->opt.gil_only)
			tick_sample_blocked(s, t);
	}
	quiet_tick_end(s);
	s->st.runnable_sum += runnable;
	s->st.runnable_ticks++;
}

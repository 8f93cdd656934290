/* SPDX-License-Identifier: MIT */
/*
 * Shared between the files of sampler/ only: the reader of the target's
 * CPython (sampler/python/pysample_*.c, sampler/native_filter.c), its
 * state and its calls. The rest of the sampler holds it as a struct
 * pysample pointer.
 */
#ifndef TRAINSAMPLE_SAMPLER_PYTHON_PYSAMPLE_H
#define TRAINSAMPLE_SAMPLER_PYTHON_PYSAMPLE_H

#include "sampler/internal.h"
#include "sampler/python/merge.h"

/* pysample_find.c, pysample_tick.c: the target's CPython, once found */
enum python_state {
	PY_SEARCHING,  /* no runtime found in this image yet */
	PY_FOUND,      /* runtime and layout known; no thread state yet */
	PY_READY,
	PY_REFUSED,    /* unsupported: native stacks only (said once) */
};

#define PY_MAX_THREADS 4096

/* A frame variable found holding a DataLoader (pysample_loaders.c). */
struct loader_site {
	uint64_t frame, code, obj;
	uint32_t slot;
	int id;
};
#define LOADER_SITES 16

/* Threads walked during the GIL holder's stop besides it, and the frames
 * they may use in all: each costs the holder's pause two reads or so. */
#define PY_PREWALK_THREADS 8
#define PY_PREWALK_FRAMES 4096
/* ... those that ran this recently: threads that take turns with the GIL
 * (every 5 ms by default) are, a sleeping daemon thread is not. */
#define PY_PREWALK_ACTIVE_NS 50000000ull

struct pysample {
	enum python_state state;
	bool ever_ready;
	struct py_target target;
	char version[16];     /* "3.11" */
	char what[96];        /* "Python 3.11 (libpython3.11.so.1.0)" */
	uint64_t exec_seq;
	uint64_t last_search_ns;
	uint64_t image_ns;    /* when this process image was first seen */
	uint64_t tried[32];   /* inodes without a runtime, this image */
	uint8_t tried_times[32]; /* ... and how often: given up on at two */
	int ntried;
	bool candidate_open;  /* the last search met a file not settled yet */
	int misfits;          /* layout checks that failed so far */
	uint64_t first_misfit_ns;
	char refused[192];    /* why the interpreter was refused; "" if not */
	uint32_t tid_offset;  /* <= 3.10: of the tid in glibc's struct pthread */
	struct py_code_cache *codes;
	struct py_walk_scratch scratch;
	struct py_thread *threads;
	struct py_raw_frame *frames;
	/* The GIL holder's frames, walked while it was stopped this tick. */
	struct py_raw_frame *held;
	int nheld;
	enum py_walk_end held_end;
	pid_t held_tid;       /* 0: none this tick */
	bool stop_tried;      /* a thread was interrupted for a walk this tick */
	/* Other threads that ran at their last look, walked during the
	 * holder's stop too (none can take the GIL meanwhile): their entries
	 * in threads[] chosen before it, then each one's frames in
	 * pre_frames. Emptied each tick. */
	int pre_idx[PY_PREWALK_THREADS];
	int npre_idx;
	struct {
		pid_t tid;
		int n, at;
		enum py_walk_end end;
	} pre[PY_PREWALK_THREADS];
	int npre;
	struct py_raw_frame *pre_frames; /* PY_PREWALK_FRAMES */
	pid_t *tids;          /* per entry of threads: its OS tid, 0 unknown */
	int nthreads;         /* entries of the last read */
	bool script_dir_set;
	bool role_read;       /* this image's DataLoader worker id looked for */
	bool rank_read;       /* ... and torch.multiprocessing.spawn's rank */
	int spawn_rank;       /* that rank; -1 none found */
	uint64_t names_tick;  /* when thread names were last read */
	bool names_read;      /* names_tick is set */
	struct py_names_cache names_cache;
	struct locals_record *locals; /* from 1: a raw frame's 0 is none */
	uint32_t nlocals, locals_cap;
	struct locals_use *locals_uses;
	size_t nlocals_uses, locals_uses_cap;
	/* DataLoaders (pysample_loaders.c): the raw frame of the stack being
	 * built that runs an iterator's __next__ or a loader's __iter__ (the
	 * innermost); each loader object by its number; where they were found */
	const struct py_raw_frame *loader_at;
	int loader_kind;      /* enum loader_frame of loader_at */
	uint64_t *loaders;
	int nloaders;
	size_t loaders_cap;
	struct loader_site loader_sites[LOADER_SITES];
	int nloader_sites, next_loader_site;
	/* Iterators seen being made (their __init__ sampled) and their
	 * loader's number: `it = iter(train_loader)`, then `next(it)` in a
	 * frame that holds two loaders, is told by the iterator. */
	struct { uint64_t iter; int id; } loader_iters[LOADER_SITES];
	int nloader_iters, next_loader_iter;
};

/* dump --locals (pysample_locals.c): a frame's variables, and which
 * thread's stack each record went into, in the stack's order */
struct locals_record {
	struct py_local *vars;
	int n;                /* how many, or the negative errno of the read */
};

struct locals_use {
	pid_t tid;
	uint32_t record;
};

/* pysample_find.c: finding the target's CPython */
int pysample_new(struct sampler *s);
/* The same for process pid (which the sampler is about to target). */
int pysample_new_for(struct sampler *s, pid_t pid);
void pysample_free(struct pysample *py);
void pysample_search(struct sampler *s, uint64_t now);
/* Says, once, when no Python was ever found: the profile is native. */
void pysample_finish(struct sampler *s);

/* pysample_tick.c: a tick that reads Python stacks, stopping at most the
 * GIL holder */
bool pysample_ready(const struct sampler *s);
void pysample_tick(struct sampler *s);

/* pysample_holder.c: the tick's one stop, at most the GIL holder's */
/* At the stop tick_interrupt asked for: the thread's Python frames. */
void pysample_walk_stopped(struct sampler *s, struct thread *t);
/* Stops the running holder of the n threads listed, if it still holds the
 * GIL, and walks it (and the threads that ran lately) at that stop. */
void pysample_walk_holder(struct sampler *s, int n);
/* After t was read as it runs at a tick that stopped no holder: if it
 * holds the GIL now, walked again stopped. 1 so, 0 not, -ESTALE when the
 * process was left for another meanwhile (s->py is not the one read). */
int pysample_walk_new_holder(struct sampler *s, struct thread *t, const struct py_thread *pt);
/* The profile frame of one Python frame; -ENOENT: none (not code). */
int pysample_frame(struct sampler *s, pid_t tid, const struct py_raw_frame *raw, bool outermost,
		 uint32_t *frame);

void pysample_map_tids(struct sampler *s, int n);
/* Names from Python's threading, about once a second. */
void pysample_names_refresh(struct sampler *s, int n);
const struct py_thread *pysample_thread_of(struct pysample *py, int n, pid_t tid);

/* pysample_locals.c: with --locals, the variables of frames just read,
 * and a frame's record joining its thread's stack */
void pysample_locals_read(struct sampler *s, struct py_raw_frame *frames, int n);
void pysample_locals_use(struct sampler *s, pid_t tid, const struct py_raw_frame *raw);
void pysample_locals_free(struct pysample *py);
/* DataLoaders (pysample_loaders.c): whether code is a DataLoader
 * iterator's __next__; the loader of the stack f[0..n) just built, put on
 * t's track at now when it changed. */
enum loader_frame { LOADER_NONE, LOADER_NEXT, LOADER_ITER, LOADER_ITER_INIT };
enum loader_frame pysample_loader_frame(const struct py_code *c);
void pysample_loader_note(struct sampler *s, struct thread *t, const struct py_raw_frame *f,
			  int n, uint64_t now);

/* pysample_native.c: --native, Python frames merged into native stacks */
/* At a tick's start: the Python threads and their OS tids. */
void pysample_threads_refresh(struct sampler *s);
/* Reads tid's Python frames into its copy (while it is stopped, or blocked). */
void pysample_copy_frames(struct sampler *s, pid_t tid, struct stack_sample *c);
/* The Python frames of the copies queued this tick, named now. */
void pysample_name_copies(struct sampler *s);
/* The builder's (builder.h): the stack of unwound pcs (leaf first) with
 * each evaluator frame replaced by the Python frames it ran; and its
 * name_python, ctx the sampler. */
int pysample_merge(struct sample_builder *b, const struct stack_sample *c, const uint64_t *pcs,
		   int n, const char *marker, uint32_t *stack, bool *python);
int pysample_name_frames(void *ctx, const struct stack_sample *c, uint32_t *frames);

#endif

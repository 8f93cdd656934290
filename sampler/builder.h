/* SPDX-License-Identifier: MIT */
/*
 * The after-resume path's core (builder.c): a copied stack (struct
 * stack_sample) in, a sample out. It unwinds the copy, symbolizes each
 * pc (cached by address), merges the Python frames read with it
 * (sampler/python/pysample_native.c, merge.c) and interns the stack in the
 * profile; adding the sample to the profile and keeping per-thread state
 * is the caller's (stacks.c). It knows nothing of ptrace nor of struct
 * sampler, so it runs alone in a unit test (tests/unit/test_builder.c).
 */
#ifndef TRAINSAMPLE_SAMPLER_BUILDER_H
#define TRAINSAMPLE_SAMPLER_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "sampler/sampler.h"
#include "symbolize/python/python.h"

struct addr_cache;
struct duration_histogram;
struct profile;
struct sym_process;

/* A blocked thread as /proc/PID/task/TID/syscall shows it. */
struct blocked_state {
	int64_t nr;           /* syscall number, -1 when not in a syscall */
	uint64_t sp, pc;
	uint64_t runtime;     /* CPU time it has run, ns; 0 when unknown */
	bool untimed_wait;    /* in a wait that EINTR ends, without a timeout
			       * (sampler/syscall_watch.h) */
};

/* A thread's registers and stack, copied at a tick, waiting to be unwound
 * (the copy queue, queue.h). */
/*
 * The x86-64 ABI's red zone: the 128 bytes under sp that a function may
 * use without moving sp, and that nothing asynchronous overwrites. A
 * thread stopped in an epilogue, just after its pops, still has there the
 * registers it popped, where the CFI says they were saved: copied with the
 * stack, they unwind its caller (they were read past the copy before).
 */
#define STACK_RED_ZONE 128

struct stack_sample {
	pid_t tid;
	uint64_t time_ns;     /* the tick's time and weight */
	uint64_t weight_ns;
	uint64_t exec_seq;    /* the process image it was taken from */
	bool blocked;         /* read without stopping: only state.pc/sp known */
	struct blocked_state state;
	struct user_regs_struct regs;
	uint8_t *data;        /* from sp - below upwards */
	size_t len;           /* below included */
	size_t below;         /* of the red zone under sp (STACK_RED_ZONE at most) */
	bool capped;          /* the stack goes on beyond len */
	/* --native: the thread's Python frames, read at the same moment */
	bool has_py;
	bool gil;
	uint8_t py_end;       /* enum py_walk_end */
	int npy;
	struct py_raw_frame *py; /* PY_NATIVE_DEPTH, allocated on first use */
	/* ... each one's frame id, interned in the tick it was read (a code
	 * object freed later may be another's by the time the copy is
	 * unwound); UINT32_MAX none (not a Python function's frame) */
	bool py_named;
	uint32_t *py_frames;     /* PY_NATIVE_DEPTH, allocated on first use */
};

#define PY_NATIVE_DEPTH 1024

/* The mapping a thread's sp was last seen in: learned once, so a copy is
 * trimmed to the stack without a lookup of the maps per sample. */
struct stack_span {
	uint64_t lo, hi;
};

struct sample_builder {
	struct profile *profile;
	struct sym_process *sym;   /* the process's symbols, kept in step by
				    * the sampler (opened late, replaced when
				    * it follows a launcher's child) */
	struct addr_cache *addrs;  /* pc -> profile frame, per process */
	bool idle;                 /* --idle: every blocked thread's stack */
	bool native_lines;         /* --native-lines */
	bool native_all;           /* --native-all: the interpreter's frames stay */
	/* Names the Python frames of a copy that were not named at their
	 * tick (dump --locals), innermost first (MERGE_NO_FRAME: not a
	 * function's); NULL: none to name. */
	int (*name_python)(void *ctx, const struct stack_sample *c, uint32_t *frames);
	void *name_ctx;
	uint64_t tick;             /* the sampler's tick now */
	uint64_t maps_reread_tick; /* the last tick a leaf made us re-read maps */
	/* The figures it adds to: errors, unwinds and their time. */
	struct sampler_stats *st;
	struct duration_histogram *unwind_hist;
};

/* A copy turned into a sample. */
struct built_sample {
	pid_t tid;
	uint32_t stack;
	uint32_t flags;            /* SAMPLE_IDLE, _TRUNCATED, _GIL */
	uint64_t time_ns, weight_ns;
	bool python;               /* Python frames are in it */
	bool keep;                 /* false: a blocked thread without Python
				    * frames, which only --idle keeps */
};

int addr_cache_new(struct addr_cache **out);
void addr_cache_free(struct addr_cache *c);

/*
 * Builds the sample of copy c. span is its thread's stack mapping,
 * learned here where it is not known yet (NULL: the thread is gone). A
 * running thread's copy unwinds from all its registers, a blocked one's
 * (c->blocked) from pc and sp alone, with the idle leaf of its syscall on
 * top. 0, or -errno (counted in the figures).
 */
int builder_stack(struct sample_builder *b, const struct stack_sample *c,
		  struct stack_span *span, struct built_sample *out);
/* The profile frame of a pc to look up (cached by address). */
int builder_frame_for_addr(struct sample_builder *b, uint64_t addr, uint32_t *frame);
/* A marker frame ("[error]"), and the stack of parent with it on top. */
int builder_marker_frame(struct sample_builder *b, const char *name, uint32_t *frame);
int builder_marker(struct sample_builder *b, const char *name, uint32_t parent, uint32_t *stack);
/* The stack of parent with the idle leaf of syscall nr on top. */
int builder_idle_leaf(struct sample_builder *b, int64_t nr, uint32_t parent, uint32_t *stack);
/* One more error of that kind in the figures. */
void builder_error(struct sample_builder *b, enum sampler_error_kind kind);

#endif

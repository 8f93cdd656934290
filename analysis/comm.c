// SPDX-License-Identifier: MIT
/*
 * Communication that no frame names, with Python frames alone. DDP waits
 * for its gradients' allreduce at the end of backward in C++ (the
 * Reducer's finalize_backward: a condition wait, no Python frame), and an
 * async handle's `work.wait()` is a C++ method: both show as a thread
 * blocked under a Python line. So in a process that uses torch.distributed
 * (a frame of torch/distributed/ or of DDP seen in any of its stacks, or a
 * launcher's RANK in its environment), a
 * blocked sample under backward, or under a line that calls `.wait(`, is
 * communication. Not on a GPU (CUDA's native frames, an autograd device
 * thread, GPU records): there the loop's thread also blocks in backward waiting for
 * autograd's device thread, which is no collective. Stacks with native
 * frames are left to the rules (c10d's, gloo's, NCCL's frames decide).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phase_impl.h"
#include "common/common.h"
#include "formats/formats.h"

/* Per process: what its stacks showed. */
#define PROC_DISTRIBUTED 1u
#define PROC_GPU 2u

struct comm_proc {
	uint32_t pid;
	uint8_t seen;
};

struct comm_procs {
	struct comm_proc *v;
	size_t n, cap;
	/* Per frame and per stack, what they show (bits + 1; 0 not looked
	 * at): frames' PROC_* bits, stacks' the same over their frames. */
	uint8_t *frames, *stacks;
	uint32_t nframes, nstacks;
};

void comm_procs_free(struct comm_procs *c)
{
	if (!c)
		return;
	free(c->v);
	free(c->frames);
	free(c->stacks);
	free(c);
}

static uint8_t frame_shows(const struct profile *p, uint32_t id)
{
	const struct frame *f = profile_frame(p, id);
	const char *name = profile_string(p, f->name);
	const char *file = f->module ? profile_string(p, f->module) : "";

	if (f->kind == FRAME_PYTHON) {
		if (!fnmatch("*/torch/distributed/*", file, 0) ||
		    !fnmatch("*/torch/nn/parallel/distributed.py", file, 0))
			return PROC_DISTRIBUTED;
		/* Not torch/cuda's Python frames: they run on machines without
		 * a GPU too (torch.cuda's module code at `import torch`,
		 * is_available() in DataLoader and DDP set-ups). */
		return 0;
	}
	if (f->kind == FRAME_GPU)
		return PROC_GPU;
	if (!strncmp(name, "c10d::", 6))
		return PROC_DISTRIBUTED;
	/* CUDA's runtime (cudaStreamSynchronize) and driver (cuCtxSynchronize). */
	return !strncmp(name, "cuda", 4) || (!strncmp(name, "cu", 2) && name[2] >= 'A' &&
					      name[2] <= 'Z') ? PROC_GPU : 0;
}

static uint8_t stack_shows(struct comm_procs *c, const struct profile *p, uint32_t stack)
{
	uint8_t bits;

	if (!stack)
		return 0;
	if (byte_cache_fit(&c->stacks, &c->nstacks, stack) && c->stacks[stack])
		return c->stacks[stack] - 1;
	const struct stack_node *n = profile_stack(p, stack);
	if (byte_cache_fit(&c->frames, &c->nframes, n->frame) && c->frames[n->frame])
		bits = c->frames[n->frame] - 1;
	else {
		bits = frame_shows(p, n->frame);
		if (n->frame < c->nframes)
			c->frames[n->frame] = bits + 1;
	}
	/* A deep stack's parents first, once each: the cache stops it. */
	bits |= stack_shows(c, p, n->parent);
	if (stack < c->nstacks)
		c->stacks[stack] = bits + 1;
	return bits;
}

struct scan {
	struct comm_procs *c;
	const struct profile *p;
};

static struct comm_proc *proc_of(struct comm_procs *c, uint32_t pid)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].pid == pid)
			return &c->v[i];
	if (ARRAY_RESERVE(c->v, c->cap, c->n + 1, 8) < 0)
		return NULL;
	c->v[c->n] = (struct comm_proc){ .pid = pid };
	return &c->v[c->n++];
}

static int scan_row(const struct profile_aggregate *row, void *ctx)
{
	struct scan *sc = ctx;
	struct comm_proc *cp = proc_of(sc->c, row->pid);
	const char *thread = profile_thread_name(sc->p, row->pid, row->tid);

	if (!cp)
		return -ENOMEM;
	cp->seen |= stack_shows(sc->c, sc->p, row->stack);
	if (row->flags & SAMPLE_GPU || (thread && !fnmatch("pt_autograd_*", thread, 0)))
		cp->seen |= PROC_GPU;
	return 0;
}

/* The processes' flags, found from every row at the first question. */
static int comm_procs_find(struct phase_map *m)
{
	struct scan sc = { .p = m->p };
	int ret;

	if (m->comm)
		return 0;
	sc.c = calloc(1, sizeof(*sc.c));
	if (!sc.c)
		return -ENOMEM;
	ret = profile_for_each_aggregate(m->p, scan_row, &sc);
	if (ret < 0) {
		comm_procs_free(sc.c);
		return ret;
	}
	/* A launcher's rank (RANK in its environment) is one, whatever its
	 * stacks: attached to a job hung in DDP's backward, no frame of
	 * torch.distributed may be seen at all. */
	for (size_t i = 0; i < sc.c->n; i++) {
		char key[32];

		snprintf(key, sizeof(key), "rank.%u", (unsigned)sc.c->v[i].pid);
		if (profile_meta(m->p, key))
			sc.c->v[i].seen |= PROC_DISTRIBUTED;
	}
	m->comm = sc.c;
	return 0;
}

enum phase comm_hidden_wait(struct phase_map *m, const struct profile_aggregate *row,
			    enum phase ph)
{
	enum stack_wait w;

	if (!(row->flags & SAMPLE_IDLE) || (ph != PHASE_BACKWARD && ph != PHASE_OTHER &&
					    ph != PHASE_FORWARD && ph != PHASE_OPTIMIZER))
		return ph;
	w = stack_wait_of(m, row->stack);
	if (w == STACK_WAIT_NONE || (w == STACK_WAIT_BLOCKED && ph != PHASE_BACKWARD))
		return ph;
	if (comm_procs_find(m) < 0)
		return ph;
	for (size_t i = 0; i < m->comm->n; i++)
		if (m->comm->v[i].pid == row->pid)
			return m->comm->v[i].seen == PROC_DISTRIBUTED ? PHASE_COMM : ph;
	return ph;
}

// SPDX-License-Identifier: MIT
/*
 * Work that can block on I/O (an output opened on a slow file system or a
 * FIFO nobody reads yet, a recording's chunk written, a large old file
 * evicted as the new one is renamed over it) while the target is traced:
 * it runs on a thread of its own, and this thread, the tracer, keeps
 * answering the target's stops meanwhile (a signal passed on, a new thread
 * let run). Without that, a signal that came during a 3 s rename left its
 * thread stopped 3 s. Ticks wait; they are counted as missed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/service.h"
#include "sampler/waits.h"

#define SERVICE_WAIT_MS 2

struct service_job {
	int (*fn)(void *ctx);
	void *ctx;
	int ret;
	atomic_bool done;
};

static void *service_thread(void *arg)
{
	struct service_job *j = arg;

	j->ret = j->fn(j->ctx);
	atomic_store(&j->done, true);
	return NULL;
}

static void seen_later(struct sampler *root, const struct seen_process *p)
{
	if (ARRAY_RESERVE(root->service.seen_later, root->service.cap_seen_later, root->service.nseen_later + 1, 8) < 0) {
		stats_error(root, SAMPLER_ERR_MEMORY);
		return;
	}
	root->service.seen_later[root->service.nseen_later++] = *p;
}

void process_seen_report(struct sampler *root, pid_t pid, int worker, int rank)
{
	if (!root->opt.process_seen)
		return;
	if (!root->service.answering_only)
		root->opt.process_seen(root->opt.process_seen_ctx, pid, worker, rank);
	else
		seen_later(root, &(struct seen_process){ .pid = pid, .worker = worker, .rank = rank });
}

void process_exit_report(struct sampler *root, pid_t pid, int status, uint64_t ns)
{
	if (!root->opt.process_exited)
		return;
	if (!root->service.answering_only)
		root->opt.process_exited(root->opt.process_seen_ctx, pid, status, ns);
	else
		seen_later(root, &(struct seen_process){ .pid = pid, .exited = true, .status = status,
							 .ns = ns });
}

int sampler_service_while(struct sampler *s, int (*fn)(void *ctx), void *ctx)
{
	struct service_job j = { .fn = fn, .ctx = ctx };
	pthread_t th;

	/* Nothing traced (memory only, or all let go): no one to answer. */
	if (!s || s->memory_only || (!s->nthreads && !s->tree.nprocs) || s->service.answering_only)
		return fn(ctx);
	s->service.answering_only = true;
	if (pthread_create(&th, NULL, service_thread, &j) != 0) {
		s->service.answering_only = false;
		return fn(ctx);
	}
	while (!atomic_load(&j.done)) {
		/* Nothing left to answer (it exited): wait without spinning. */
		if (s->exited || (!s->nthreads && !s->tree.nprocs)) {
			struct timespec nap = { 0, SERVICE_WAIT_MS * 1000000L };

			nanosleep(&nap, NULL);
			continue;
		}
		stops_wait(s, SERVICE_WAIT_MS);
		threads_sweep(s);
	}
	pthread_join(th, NULL);
	s->service.answering_only = false;
	for (size_t i = 0; i < s->service.nseen_later; i++) {
		const struct seen_process *p = &s->service.seen_later[i];

		if (p->exited)
			process_exit_report(s, p->pid, p->status, p->ns);
		else
			process_seen_report(s, p->pid, p->worker, p->rank);
	}
	s->service.nseen_later = 0;
	return j.ret;
}

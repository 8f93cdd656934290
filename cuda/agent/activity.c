// SPDX-License-Identifier: MIT
/*
 * CUPTI activity records: kernels (CONCURRENT_KERNEL, never the KERNEL
 * kind, which serializes them), copies, memsets, synchronization and
 * devices, in buffers of a few MB that CUPTI fills and hands back. Only the
 * fields every record version shares are read. Times are CLOCK_MONOTONIC
 * through the timestamp callback, registered before any kind is enabled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/agent/agent.h"

#define BUFFER_BYTES (4u << 20)

static uint64_t CUPTIAPI monotonic_timestamp(void)
{
	return monotonic_ns();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void kernel_record(const CUpti_ActivityKernel10 *k, struct gpu_record *r)
{
	struct gpu_rec_activity *a = &r->u.activity;

	r->type = GPU_REC_KERNEL;
	*a = (struct gpu_rec_activity){
		.start_ns = k->start, .end_ns = k->end, .device = k->deviceId,
		.context = k->contextId, .stream = k->streamId, .correlation = k->correlationId,
		.grid = { k->gridX, k->gridY, k->gridZ }, .block = { k->blockX, k->blockY, k->blockZ },
		.shared_bytes = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory),
	};
	a->name = agent_string(k->name ? k->name : "[unnamed kernel]");
}

/* One CUPTI record as an agent record (lock held); false to skip it. */
static bool convert_any(const CUpti_Activity *rec, struct gpu_record *r)
{
	memset(r, 0, sizeof(*r));
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		kernel_record((const CUpti_ActivityKernel10 *)rec, r);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)rec;

		r->type = GPU_REC_MEMCPY;
		r->u.activity = (struct gpu_rec_activity){
			.start_ns = m->start, .end_ns = m->end, .device = m->deviceId,
			.context = m->contextId, .stream = m->streamId,
			.correlation = m->correlationId, .copy_kind = m->copyKind, .bytes = m->bytes,
			.src_kind = m->srcKind, .dst_kind = m->dstKind, .copy_flags = m->flags,
		};
		return true;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = (const void *)rec;

		r->type = GPU_REC_MEMCPY;
		r->u.activity = (struct gpu_rec_activity){
			.start_ns = m->start, .end_ns = m->end, .device = m->deviceId,
			.context = m->contextId, .stream = m->streamId,
			.correlation = m->correlationId, .copy_kind = GPU_COPY_PTOP, .bytes = m->bytes,
			.src_kind = m->srcKind, .dst_kind = m->dstKind, .copy_flags = m->flags,
		};
		return true;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)rec;

		r->type = GPU_REC_MEMSET;
		r->u.activity = (struct gpu_rec_activity){
			.start_ns = m->start, .end_ns = m->end, .device = m->deviceId,
			.context = m->contextId, .stream = m->streamId,
			.correlation = m->correlationId, .bytes = m->bytes,
		};
		return true;
	}
	case CUPTI_ACTIVITY_KIND_STREAM: {
		const CUpti_ActivityStream *st = (const void *)rec;

		r->type = GPU_REC_STREAM;
		r->u.stream = (struct gpu_rec_stream){
			.context = st->contextId, .stream = st->streamId, .flag = st->flag,
		};
		return true;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)rec;

		r->type = GPU_REC_SYNC;
		r->u.activity = (struct gpu_rec_activity){
			.start_ns = s->start, .end_ns = s->end, .context = s->contextId,
			.stream = s->streamId, .correlation = s->correlationId,
			.copy_kind = (uint32_t)s->type,
		};
		return true;
	}
	case CUPTI_ACTIVITY_KIND_DEVICE: {
		const CUpti_ActivityDevice5 *d = (const void *)rec;

		r->type = GPU_REC_DEVICE;
		r->u.device = (struct gpu_rec_device){
			.id = d->id, .cc_major = d->computeCapabilityMajor,
			.cc_minor = d->computeCapabilityMinor, .multiprocessors = d->numMultiprocessors,
			.global_memory = d->globalMemorySize,
		};
		memcpy(r->u.device.uuid, d->uuid.bytes, sizeof(r->u.device.uuid));
		r->u.device.name = agent_string(d->name ? d->name : "GPU");
		return true;
	}
	default:
		return false;
	}
}

/* A forced flush (a stop, an exit) hands over work the GPU had not
 * finished as records without timestamps: lost, and counted as such. */
static bool timed(const struct gpu_record *r)
{
	if (r->u.activity.start_ns && r->u.activity.end_ns >= r->u.activity.start_ns)
		return true;
	agent.dropped++;
	return false;
}

/* The same, with the incomplete ones skipped and counted. */
static bool convert(const CUpti_Activity *rec, struct gpu_record *r)
{
	if (!convert_any(rec, r))
		return false;
	return r->type == GPU_REC_DEVICE || r->type == GPU_REC_STREAM || timed(r);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	struct gpu_record r;
	size_t dropped = 0;

	(void)size;
	/* CUPTI is not called with the lock held, and the lock is taken per
	 * record: launching threads never wait for a whole buffer. This is
	 * CUPTI's thread or a flushing one, never a launching one: it may
	 * write the stage itself rather than drop (a final flush hands over
	 * the whole run's tail at once). */
	while (valid && agent.cupti.activity_get_next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
		bool full;

		pthread_mutex_lock(&agent.lock);
		if (convert(rec, &r))
			agent_stage(&r);
		full = agent.nstaged >= agent.capstaged / 4 * 3;
		pthread_mutex_unlock(&agent.lock);
		if (full)
			agent_flush();
	}
	if (agent.cupti.activity_get_num_dropped(ctx, stream, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	pthread_mutex_lock(&agent.lock);
	agent.dropped += dropped;
	pthread_mutex_unlock(&agent.lock);
	free(buffer);
}

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_STREAM,
};

/* Not on every device or CUPTI: the rest still count without them. */
static bool kind_optional(CUpti_ActivityKind kind)
{
	return kind == CUPTI_ACTIVITY_KIND_MEMCPY2 || kind == CUPTI_ACTIVITY_KIND_DEVICE ||
	       kind == CUPTI_ACTIVITY_KIND_STREAM;
}

static void result_text(CUptiResult res, char *why, size_t len, const char *what)
{
	const char *s = NULL;

	if (agent.cupti.get_result_string(res, &s) != CUPTI_SUCCESS || !s)
		s = "unknown error";
	snprintf(why, len, "%s: %s (%d)", what, s, (int)res);
}

int agent_activity_start(char *why, size_t len)
{
	CUptiResult res;

	if (!agent.timestamp_registered) {
		res = agent.cupti.activity_register_timestamp(monotonic_timestamp);
		if (res != CUPTI_SUCCESS) {
			result_text(res, why, len, "cuptiActivityRegisterTimestampCallback");
			return -EIO;
		}
		res = agent.cupti.activity_register_callbacks(buffer_requested, buffer_completed);
		if (res != CUPTI_SUCCESS) {
			result_text(res, why, len, "cuptiActivityRegisterCallbacks");
			return -EIO;
		}
		agent.timestamp_registered = true;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		res = agent.cupti.activity_enable(kinds[i]);
		if (res != CUPTI_SUCCESS && !kind_optional(kinds[i])) {
			result_text(res, why, len, "cuptiActivityEnable");
			return -EIO;
		}
	}
	return 0;
}

void agent_activity_stop(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		agent.cupti.activity_disable(kinds[i]);
}

void agent_activity_flush(void)
{
	/* 0: only completed buffers; forcing would cost the application. */
	agent.cupti.activity_flush_all(0);
}

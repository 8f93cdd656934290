/* SPDX-License-Identifier: MIT */
/* The GPU merge's state, shared by gpu_merge.c and gpu_stats.c only. */
#ifndef TRAINSAMPLE_CUDA_GPU_MERGE_IMPL_H
#define TRAINSAMPLE_CUDA_GPU_MERGE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"
#include "cuda/gpu_record.h"
#include "formats/formats.h"
#include "cuda/gpu.h"

struct gpu_launch {
	uint64_t start_ns, end_ns;
	uint32_t tid, stack, api;
	bool graph;
	uint32_t nids, ids[GPU_LAUNCH_IDS]; /* nids 0: the slot is free */
	uint32_t next_free; /* free list, slot + 1 */
};

/* One agent's file: its ids mapped to the model's. */
#define GPU_NULL_STREAMS 16 /* contexts a process has: one or a few per GPU */

struct gpu_source {
	struct gpu_source *next;
	char *path;
	struct gpu_reader *reader;
	uint32_t pid;
	bool refused;
	uint32_t *strings, nstrings; /* agent string id -> model string id */
	uint32_t *stacks, nstacks;   /* agent stack id -> model stack id */
	struct gpu_launch *launches;
	uint32_t nlaunches, caplaunches, free_launch;
	struct hash_table launch_of_corr; /* correlation id -> launch slot */
	uint64_t newest_ns; /* the latest activity's start */
	struct gpu_stream_id {
		uint32_t context, stream;
	} null_streams[GPU_NULL_STREAMS]; /* each context's legacy default stream */
	uint32_t nnull_streams;
};

struct gpu_poll {
	struct gpu_merge *merge;
	struct gpu_source *source;
};

struct gpu_interval {
	uint64_t start, end;
};

struct gpu_device_stats {
	uint32_t device;
	struct gpu_interval *pending; /* not yet folded into busy_ns */
	uint32_t npending, cappending;
	uint64_t busy_ns, covered_to; /* the union so far, and where it ends */
	uint64_t first_ns, last_ns;
};

struct gpu_kernel_stats {
	uint32_t name;
	uint64_t count, total_ns;
};

struct gpu_merge {
	char *dir;
	struct profile *profile;
	void (*notice)(void *ctx, const char *line);
	void *notice_ctx;
	struct gpu_source *sources;
	uint64_t started, launches, activities, dropped;
	uint64_t copy_bytes[16], copies[16]; /* by CUPTI copy kind */
	uint64_t copies_pageable[16], copies_sync[16];
	uint64_t memset_bytes;
	struct gpu_device_stats *devices;
	uint32_t ndevices;
	struct gpu_kernel_stats *kernels;
	uint32_t nkernels, capkernels;
	uint32_t *kernel_of;                 /* model string id -> kernels index + 1 */
	uint32_t capkernel_of;
};

/* gpu_stats.c */
void gpu_stats_add(struct gpu_merge *g, const struct gpu_activity *a);
/* Folds settled intervals into each device's busy time (all with final). */
void gpu_stats_settle(struct gpu_merge *g, bool final);
void gpu_stats_free(struct gpu_merge *g);

#endif

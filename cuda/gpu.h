/* SPDX-License-Identifier: MIT */
/*
 * cuda/ — the host side of the GPU path, for the CLI: the records the
 * in-process agent (cuda/agent/, libtrainsample_cuda.so) writes, merged
 * into a profile, and NVML's device counters. The record layout both sides
 * share is cuda/gpu_record.h.
 */
#ifndef TRAINSAMPLE_CUDA_GPU_H
#define TRAINSAMPLE_CUDA_GPU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct profile;

/* ---- GPU records (gpu_merge.c) ---- */

/*
 * The records the GPU agents write into `dir` (one <pid>.gpu per process
 * that initialized CUDA), merged into p as they come: activities paired
 * with the thread and Python stack that launched them. `notice` gets the
 * lines a user should read (CUPTI held by another tool, no CUPTI found).
 */
struct gpu_merge;

int gpu_merge_new(struct gpu_merge **out, const char *dir, struct profile *p,
		  void (*notice)(void *ctx, const char *line), void *ctx);
/* Reads what was appended since the last call; the records read. */
int gpu_merge_poll(struct gpu_merge *g);
/* Whether any agent started or anything GPU was seen. */
bool gpu_merge_any(const struct gpu_merge *g);
/* The end-of-run summary: busy share per device over wall_ns, the top
 * kernels by total time, copy volume by direction, launches per second,
 * records dropped. Nothing when there was no GPU. */
void gpu_merge_summary(struct gpu_merge *g, FILE *out, uint64_t wall_ns);
/* Removes the agents' files and the folder. */
void gpu_merge_free(struct gpu_merge *g);

/* ---- NVML (nvml.c) ---- */

/*
 * Each GPU's utilization, memory in use and power, sampled at most ten
 * times a second into p as counters ("gpu.N.utilization %", ...), N being
 * CUDA's number for it where the agent reported its UUID. -ENOENT, quietly,
 * without NVML (TRAINSAMPLE_NVML names another libnvidia-ml.so.1).
 */
struct nvml_sampler;

int nvml_open(struct nvml_sampler **out, struct profile *p);
void nvml_sample(struct nvml_sampler *n, uint64_t now_ns);
/* A line per device: mean utilization, peak memory, energy used. */
void nvml_summary(const struct nvml_sampler *n, FILE *out);
void nvml_close(struct nvml_sampler *n);

#endif

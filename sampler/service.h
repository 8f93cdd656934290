/* SPDX-License-Identifier: MIT */
/*
 * Answering stops while another thread does I/O that may read the profile
 * (service.c): no sample is taken, and processes seen are told
 * (opt.process_seen, which writes the profile) afterwards.
 */
#ifndef TRAINSAMPLE_SAMPLER_SERVICE_H
#define TRAINSAMPLE_SAMPLER_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sampler;

struct service_state {
	bool answering_only;
	struct seen_process { pid_t pid; int worker, rank; } *seen_later;
	size_t nseen_later, cap_seen_later;
};

/* opt.process_seen now, or once answering only ends. */
void process_seen_report(struct sampler *root, pid_t pid, int worker, int rank);

#endif

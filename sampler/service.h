/* SPDX-License-Identifier: MIT */
/*
 * Answering stops while another thread does I/O that may read the profile
 * (service.c): no sample is taken, and processes seen or ended are told
 * (opt.process_seen and process_exited, which write the profile)
 * afterwards.
 */
#ifndef TRAINSAMPLE_SAMPLER_SERVICE_H
#define TRAINSAMPLE_SAMPLER_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sampler;

struct service_state {
	bool answering_only;
	struct seen_process {
		pid_t pid;
		int worker, rank;
		bool exited;     /* an end: status at ns */
		int status;
		uint64_t ns;
	} *seen_later;
	size_t nseen_later, cap_seen_later;
};

/* opt.process_seen now, or once answering only ends. */
void process_seen_report(struct sampler *root, pid_t pid, int worker, int rank);
/* opt.process_exited likewise. */
void process_exit_report(struct sampler *root, pid_t pid, int status, uint64_t ns);

#endif

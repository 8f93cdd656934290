// SPDX-License-Identifier: MIT
/*
 * libtrainsample_cuda.so: the GPU agent. The CUDA driver loads it from
 * CUDA_INJECTION64_PATH at cuInit and calls InitializeInjection. Under
 * trainsample record (TRAINSAMPLE_GPU_DIR names a private folder) it
 * subscribes to CUPTI at once and writes its records there; without that
 * folder it does nothing. Whatever fails, the process goes on as if the
 * agent were not there: the reason is written for trainsample to print.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda/agent.h"

struct agent_state agent = {
	.fd = -1,
	.control_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

#define FLUSH_PERIOD_MS 250
#define ACTIVITY_FLUSH_EVERY 2 /* CUPTI's buffers every other period */

static void *flusher_main(void *arg)
{
	struct timespec ts = { 0, FLUSH_PERIOD_MS * 1000000L };
	unsigned n = 0;

	(void)arg;
	while (!agent.stop_flusher) {
		nanosleep(&ts, NULL);
		if (agent.collecting && ++n % ACTIVITY_FLUSH_EVERY == 0)
			agent_activity_flush();
		agent_flush();
	}
	return NULL;
}

void agent_collect_stop(void)
{
	if (!agent.collecting)
		return;
	agent.collecting = false;
	/* Forced: nothing may stay in CUPTI's buffers once the file closes. */
	agent.cupti.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	agent_activity_stop();
	agent_launch_stop();
	agent_status(GPU_STATUS_STOPPED, NULL);
	agent_out_close();
}

static void at_exit(void)
{
	agent_collect_stop();
	agent_control_stop();
}

/* A forked child has none of the parent's CUDA state: it stays inert. Its
 * own cuInit would load the agent anew only in an exec'd program. */
static void in_child(void)
{
	agent.collecting = false;
	agent.flusher_started = false;
	agent.control_fd = -1;
	if (agent.fd >= 0)
		close(agent.fd);
	agent.fd = -1;
	pthread_mutex_init(&agent.lock, NULL);
}

int agent_collect_start(const char *dir, char *why, size_t len)
{
	int ret;

	if (agent.collecting) {
		snprintf(why, len, "the GPU agent is collecting already");
		return -EBUSY;
	}
	ret = agent_out_open(dir);
	if (ret < 0) {
		snprintf(why, len, "cannot write GPU records in %s: %s", dir, strerror(-ret));
		return ret;
	}
	agent.dropped = 0;
	ret = agent.cupti_lib ? 0 : agent_cupti_load(why, len);
	if (ret < 0) {
		agent_status(GPU_STATUS_NO_CUPTI, why);
		agent_out_close();
		return ret;
	}
	ret = agent_launch_start(why, len);
	if (!ret) {
		ret = agent_activity_start(why, len);
		if (ret < 0)
			agent_launch_stop();
	}
	if (ret < 0) {
		agent_status(ret == -EBUSY ? GPU_STATUS_TAKEN : GPU_STATUS_FAILED, why);
		agent_out_close();
		return ret;
	}
	pthread_mutex_lock(&agent.lock);
	if (!agent.py_tried)
		agent_python_init();
	agent.py_tried = true;
	pthread_mutex_unlock(&agent.lock);
	if (!agent.flusher_started) {
		agent.flusher_started = !pthread_create(&agent.flusher, NULL, flusher_main, NULL);
		if (agent.flusher_started) {
			pthread_setname_np(agent.flusher, "trainsample-gpu");
			pthread_detach(agent.flusher);
		}
	}
	agent.collecting = true;
	agent_status(GPU_STATUS_STARTED, agent.py.ready ? "Python stacks" : "no Python stacks");
	return 0;
}

/*
 * Under record (TRAINSAMPLE_GPU_DIR set) the agent collects at once;
 * otherwise it waits, dormant, for attach to switch it on through its
 * control socket (agent_control.c).
 */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	const char *dir = getenv("TRAINSAMPLE_GPU_DIR");
	char why[256];

	if (agent.initialized)
		return 1;
	agent.initialized = true;
	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
	if (dir && dir[0])
		agent_collect_start(dir, why, sizeof(why));
	else
		agent_control_start();
	return 1;
}

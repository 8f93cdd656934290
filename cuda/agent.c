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

static void at_exit(void)
{
	if (!agent.collecting)
		return;
	agent.collecting = false;
	/* Forced: the process is going, nothing may wait in CUPTI's buffers. */
	agent.cupti.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	agent_status(GPU_STATUS_STOPPED, NULL);
	agent_out_close();
}

/* A forked child has none of the parent's CUDA state: it stays inert. Its
 * own cuInit would load the agent anew only in an exec'd program. */
static void in_child(void)
{
	agent.collecting = false;
	agent.flusher_started = false;
	if (agent.fd >= 0)
		close(agent.fd);
	agent.fd = -1;
	pthread_mutex_init(&agent.lock, NULL);
}

static int start(void)
{
	char why[256] = "";
	int ret;

	ret = agent_cupti_load(why, sizeof(why));
	if (ret < 0) {
		agent_status(GPU_STATUS_NO_CUPTI, why);
		return ret;
	}
	ret = agent_launch_start(why, sizeof(why));
	if (ret == -EBUSY) {
		agent_status(GPU_STATUS_TAKEN, why);
		return ret;
	}
	if (!ret)
		ret = agent_activity_start(why, sizeof(why));
	if (ret < 0) {
		if (agent.subscriber)
			agent.cupti.unsubscribe(agent.subscriber);
		agent.subscriber = NULL;
		agent_status(GPU_STATUS_FAILED, why);
		return ret;
	}
	pthread_mutex_lock(&agent.lock);
	agent_python_init();
	pthread_mutex_unlock(&agent.lock);
	agent.collecting = true;
	agent_status(GPU_STATUS_STARTED, agent.py.ready ? "Python stacks" : "no Python stacks");
	return 0;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	const char *dir = getenv("TRAINSAMPLE_GPU_DIR");

	if (agent.initialized)
		return 1;
	agent.initialized = true;
	if (!dir || !dir[0] || agent_out_open(dir) < 0)
		return 1; /* dormant: nothing asked for records */
	snprintf(agent.dir, sizeof(agent.dir), "%s", dir);
	if (start() < 0) {
		agent_out_close();
		return 1;
	}
	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
	agent.flusher_started = !pthread_create(&agent.flusher, NULL, flusher_main, NULL);
	if (agent.flusher_started) {
		pthread_setname_np(agent.flusher, "trainsample-gpu");
		pthread_detach(agent.flusher);
	}
	return 1;
}

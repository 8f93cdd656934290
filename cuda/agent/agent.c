// SPDX-License-Identifier: MIT
/*
 * libtrainsample_cuda.so: the GPU agent. The CUDA driver loads it from
 * CUDA_INJECTION64_PATH at cuInit and calls InitializeInjection. Under
 * trainsample record (TRAINSAMPLE_GPU_DIR names a private folder) it
 * subscribes to CUPTI at once and writes its records there; otherwise it
 * waits, dormant, for attach (control.c). Whatever fails, the
 * process goes on as if the agent were not there: the reason is written
 * for trainsample to print. If trainsample goes away without stopping it,
 * the agent notices and stops by itself.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cuda/agent/agent.h"

struct agent_state agent = {
	.fd = -1,
	.control_fd = -1,
	.sampler_pidfd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.write_lock = PTHREAD_MUTEX_INITIALIZER,
	.control_lock = PTHREAD_MUTEX_INITIALIZER,
	.flush_now = PTHREAD_COND_INITIALIZER,
};

#define FLUSH_PERIOD_MS 250
#define ACTIVITY_FLUSH_EVERY 2 /* CUPTI's buffers every other period */

/* Threads the agent starts take no signal meant for the process: its
 * handlers, sigwait loops and EINTRs stay the application's. */
int agent_thread_start(pthread_t *t, void *(*fn)(void *), const char *name)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(t, NULL, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	pthread_setname_np(*t, name);
	return 0;
}

/* Under record: whether trainsample is still there to read the records. */
static bool sampler_gone(void)
{
	struct pollfd p = { .fd = agent.sampler_pidfd, .events = POLLIN };

	return agent.sampler_pidfd >= 0 && poll(&p, 1, 0) == 1;
}

/* A period, or less: a half-full stage or a stop wakes the flusher early,
 * so a burst of launches is written rather than dropped. */
static void flusher_wait(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += FLUSH_PERIOD_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&agent.lock);
	while (!agent.stop_flusher && agent.nstaged < agent.capstaged / 2 &&
	       pthread_cond_timedwait(&agent.flush_now, &agent.lock, &until) == 0)
		;
	pthread_mutex_unlock(&agent.lock);
}

static void *flusher_main(void *arg)
{
	uint64_t activity_ns = monotonic_ns();

	(void)arg;
	while (!agent.stop_flusher) {
		flusher_wait();
		if (agent.stop_flusher)
			break;
		if (agent.collecting && sampler_gone()) {
			/* Nobody will read them: stop, and leave no file behind. */
			agent_collect_stop();
			agent_out_unlink();
			continue;
		}
		if (agent.collecting &&
		    monotonic_ns() - activity_ns >= ACTIVITY_FLUSH_EVERY * FLUSH_PERIOD_MS * 1000000ull) {
			agent_activity_flush();
			activity_ns = monotonic_ns();
		}
		agent_flush();
	}
	agent.flusher_done = true;
	return NULL;
}

static void collect_stop_locked(void)
{
	if (!agent.collecting)
		return;
	agent.collecting = false;
	/* Forced: nothing may stay in CUPTI's buffers once the file closes.
	 * An unforced flush first lets CUPTI complete what it can: a forced
	 * one hands unfinished records over without their times. */
	agent.cupti.activity_flush_all(0);
	agent.cupti.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	agent_activity_stop();
	agent_launch_stop();
	agent_status(GPU_STATUS_STOPPED, NULL);
	agent_out_close();
	if (agent.sampler_pidfd >= 0)
		close(agent.sampler_pidfd);
	agent.sampler_pidfd = -1;
}

void agent_collect_stop(void)
{
	pthread_mutex_lock(&agent.control_lock);
	collect_stop_locked();
	pthread_mutex_unlock(&agent.control_lock);
}

/*
 * Registered at InitializeInjection and again at the first launch seen
 * (agent_exit_hook); whichever runs first does the work. A program with
 * the CUDA runtime linked in statically registers its teardown at its
 * first call, after cuInit loaded the agent: exit handlers run last
 * registered first, so the first registration alone would call CUPTI
 * after the teardown, which crashes the process on a real GPU and loses
 * its last records. Reached with no launch seen (no second registration,
 * nothing in CUPTI's buffers), it calls no CUPTI: it only closes the file.
 */
static void at_exit(void)
{
	struct timespec tick = { 0, 10000000 };

	if (atomic_exchange(&agent.exit_done, true))
		return;
	agent.exiting = true;
	if (agent.exit_hooked) {
		agent_collect_stop();
	} else if (agent.collecting) {
		pthread_mutex_lock(&agent.control_lock);
		agent.collecting = false;
		agent_status(GPU_STATUS_STOPPED, NULL);
		agent_out_close();
		pthread_mutex_unlock(&agent.control_lock);
	}
	agent_control_stop();
	/* The flusher must be out of CUPTI before the process tears it down:
	 * a bounded wait, the process's exit is not held up for long. */
	pthread_mutex_lock(&agent.lock);
	agent.stop_flusher = true;
	pthread_cond_broadcast(&agent.flush_now);
	pthread_mutex_unlock(&agent.lock);
	for (int i = 0; agent.flusher_started && !agent.flusher_done && i < 50; i++)
		nanosleep(&tick, NULL);
}

void agent_exit_hook(void)
{
	if (!agent.exit_hooked && !atomic_exchange(&agent.exit_hooked, true))
		atexit(at_exit);
}

/* A forked child has none of the parent's CUDA state: it stays inert. Its
 * own cuInit would load the agent anew only in an exec'd program. */
static void in_child(void)
{
	agent.collecting = false;
	agent.flusher_started = false;
	agent.forks++;
	if (agent.control_fd >= 0)
		close(agent.control_fd); /* the parent's; its path stays the parent's */
	agent.control_fd = -1;
	if (agent.fd >= 0)
		close(agent.fd);
	agent.fd = -1;
	if (agent.sampler_pidfd >= 0)
		close(agent.sampler_pidfd);
	agent.sampler_pidfd = -1;
	pthread_mutex_init(&agent.lock, NULL);
	pthread_mutex_init(&agent.write_lock, NULL);
	pthread_mutex_init(&agent.control_lock, NULL);
	pthread_cond_init(&agent.flush_now, NULL);
}

static int collect_start_locked(const char *dir, pid_t sampler, char *why, size_t len)
{
	int ret;

	if (agent.collecting) {
		snprintf(why, len, "the GPU agent is collecting already");
		return -EBUSY;
	}
	if (agent.exiting) {
		snprintf(why, len, "the process is exiting");
		return -ESRCH;
	}
	ret = agent_out_open(dir);
	if (ret < 0) {
		snprintf(why, len, "cannot write GPU records in %s: %s", dir, strerror(-ret));
		return ret;
	}
	ret = agent.cupti_lib ? 0 : agent_cupti_load(why, len);
	if (ret < 0) {
		agent_status(GPU_STATUS_NO_CUPTI, why);
		agent_out_close();
		return ret;
	}
	/* Launches in flight across a stop and this start are dropped. */
	agent.generation++;
	ret = agent_launch_start(why, len);
	if (!ret) {
		ret = agent_activity_start(why, len);
		if (ret < 0) {
			agent_activity_stop();
			agent_launch_stop();
		}
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
	agent.sampler_pidfd = sampler > 0 ? (int)syscall(SYS_pidfd_open, sampler, 0) : -1;
	if (!agent.flusher_started)
		agent.flusher_started = !agent_thread_start(&agent.flusher, flusher_main, "trainsample-gpu");
	if (agent.flusher_started)
		pthread_detach(agent.flusher);
	agent.collecting = true;
	agent_status(GPU_STATUS_STARTED, agent.py.ready ? "Python stacks" : "no Python stacks");
	return 0;
}

int agent_collect_start(const char *dir, pid_t sampler, char *why, size_t len)
{
	int ret;

	pthread_mutex_lock(&agent.control_lock);
	ret = collect_start_locked(dir, sampler, why, len);
	pthread_mutex_unlock(&agent.control_lock);
	return ret;
}

/*
 * Under record (TRAINSAMPLE_GPU_DIR set) the agent collects at once, for
 * as long as trainsample (TRAINSAMPLE_SAMPLER_PID) lives; otherwise it
 * waits, dormant, for attach to switch it on through its control socket.
 */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	const char *dir = getenv("TRAINSAMPLE_GPU_DIR"), *sampler = getenv("TRAINSAMPLE_SAMPLER_PID");
	char why[256];

	if (agent.initialized)
		return 1;
	agent.initialized = true;
	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
	if (dir && dir[0])
		agent_collect_start(dir, sampler ? (pid_t)atoi(sampler) : 0, why, sizeof(why));
	else
		agent_control_start();
	return 1;
}

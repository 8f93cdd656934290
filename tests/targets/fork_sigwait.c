// SPDX-License-Identifier: MIT
/*
 * A supervisor as people write them: the main thread handles the
 * process's signals in a sigwaitinfo loop (SIGUSR1 from a POSIX timer
 * every 10 ms, SIGTERM to end), while a worker thread starts a short
 * child every 5 ms and waits for it. Each child's exit sends SIGCHLD,
 * which the program ignores (the default) and does not block: untraced
 * it is discarded as sent, so sigwaitinfo never fails with EINTR. Traced,
 * the kernel queues it and may wake the main thread for it (issue 30,
 * item 5). Runs SECONDS (argv[1], default 4) and prints
 * "eintr N waits N children N". With "quiet" (argv[2]) there is no timer:
 * the main thread waits the whole run for the SIGTERM the worker sends at
 * its end, as a supervisor waits for its shutdown. With "thread" it is
 * the same wait in a signal thread of its own, while the main thread
 * blocks every signal and joins the two (the leader's mask, read from
 * /proc/PID/status, then blocks SIGCHLD; the waiting thread's does not).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long children;

static double seconds = 4;

static double since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void *start_children(void *arg)
{
	struct timespec gap = { 0, 5000000 }, start;
	bool quiet = arg != NULL;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!atomic_load(&stop)) {
		if (quiet && since(&start) >= seconds) {
			kill(getpid(), SIGTERM);
			break;
		}
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0 && waitpid(pid, NULL, 0) == pid)
			atomic_fetch_add(&children, 1);
		nanosleep(&gap, NULL);
	}
	return NULL;
}

static long wait_signals(const sigset_t *set, const struct timespec *start, long *waits)
{
	struct timespec now;
	long eintr = 0;

	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);

		if (sig < 0) {
			if (errno != EINTR)
				return -1;
			eintr++;
			clock_gettime(CLOCK_MONOTONIC, &now);
			fprintf(stderr, "EINTR at [%ld.%06ld]\n", (long)now.tv_sec, now.tv_nsec / 1000);
			continue;
		}
		(*waits)++;
		if (sig == SIGTERM || since(start) >= seconds)
			return eintr;
	}
}

struct signal_thread {
	sigset_t set;
	struct timespec start;
	long eintr, waits;
};

static void *signal_thread(void *arg)
{
	struct signal_thread *st = arg;

	st->eintr = wait_signals(&st->set, &st->start, &st->waits);
	return NULL;
}

int main(int argc, char **argv)
{
	bool in_thread = argc > 2 && strcmp(argv[2], "thread") == 0;
	bool quiet = in_thread || (argc > 2 && strcmp(argv[2], "quiet") == 0);
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	struct itimerspec every = { { 0, 10000000 }, { 0, 10000000 } };
	struct timespec start;
	long eintr = 0, waits = 0;
	sigset_t set;

	if (argc > 1)
		seconds = atof(argv[1]);
	timer_t timer;
	pthread_t worker;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	/* Blocked before the worker starts, so only the main thread takes them. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (!quiet && (timer_create(CLOCK_MONOTONIC, &ev, &timer) || timer_settime(timer, 0, &every, NULL)))
		return 2;
	if (pthread_create(&worker, NULL, start_children, quiet ? &worker : NULL))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (in_thread) {
		struct signal_thread st = { .set = set, .start = start };
		pthread_t waiter;
		sigset_t all;

		if (pthread_create(&waiter, NULL, signal_thread, &st))
			return 2;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
		pthread_join(waiter, NULL);
		eintr = st.eintr;
		waits = st.waits;
	} else {
		eintr = wait_signals(&set, &start, &waits);
	}
	if (eintr < 0)
		return 2;
	atomic_store(&stop, 1);
	pthread_join(worker, NULL);
	printf("eintr %ld waits %ld children %ld\n", eintr, waits, atomic_load(&children));
	return 0;
}

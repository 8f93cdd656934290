// SPDX-License-Identifier: MIT
/*
 * SIGWINCH (ignored by default) is sent to the process every 20 ms for a
 * second. Untraced it is discarded; traced it wakes the thread it goes to,
 * the main thread, which waits in epoll_wait with no timeout (an asyncio
 * loop, say) and must see its event, not EINTR. Another thread waits with
 * 200 ms timeouts, which must still end. Prints
 * "forever: event|EINTR timed: ends|stuck".
 *
 * The signals start once the main thread sleeps in epoll_wait, and still
 * does 50 ms later: one sent while it sits in a ptrace stop (its clone
 * event, say) goes to another thread but can leave it a spurious EINTR that
 * no stop lets a tracer see (a limit docs/how-it-works.md states).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static atomic_int stop, timed_returns;
static const char *forever = "none";

static void wait_forever(void)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };

	epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev);
	forever = epoll_wait(ep, &ev, 1, -1) == 1 ? "event" : errno == EINTR ? "EINTR" : "error";
}

/* Until /proc shows the main thread blocked in epoll_wait. */
static void wait_for_main_to_block(void)
{
	char path[64], buf[64];
	struct timespec ts = { 0, 1000000 };

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)getpid());
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		long nr = -1;

		if (f) {
			if (fgets(buf, sizeof(buf), f))
				nr = strtol(buf, NULL, 10);
			fclose(f);
		}
		if (nr == SYS_epoll_wait || nr == SYS_epoll_pwait)
			return;
		nanosleep(&ts, NULL);
	}
}

static void *send_signals(void *arg)
{
	struct timespec ts = { 0, 20000000 }, settle = { 0, 50000000 };

	/* Blocked, and still so a moment later: the tracer's work around the
	 * threads' creation (their clone events) is over by then. */
	wait_for_main_to_block();
	nanosleep(&settle, NULL);
	wait_for_main_to_block();
	for (int i = 0; i < 50; i++) {
		kill(getpid(), SIGWINCH);
		nanosleep(&ts, NULL);
	}
	if (write(pipefd[1], "x", 1) != 1)
		return NULL;
	return arg;
}

static void *wait_timed(void *arg)
{
	int ep = epoll_create1(0);
	struct epoll_event ev;

	while (!atomic_load(&stop))
		if (epoll_wait(ep, &ev, 1, 200) >= 0 || errno == EINTR)
			atomic_fetch_add(&timed_returns, 1);
	return arg;
}

int main(void)
{
	pthread_t a, b;

	if (pipe(pipefd))
		return 1;
	pthread_create(&b, NULL, wait_timed, NULL);
	pthread_create(&a, NULL, send_signals, NULL);
	wait_forever();
	pthread_join(a, NULL);
	atomic_store(&stop, 1);
	pthread_join(b, NULL);
	printf("forever: %s timed: %s\n", forever, atomic_load(&timed_returns) >= 3 ? "ends" : "stuck");
	return 0;
}

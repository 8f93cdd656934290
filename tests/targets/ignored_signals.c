// SPDX-License-Identifier: MIT
/*
 * SIGWINCH (ignored by default) is sent to the process every 20 ms for a
 * second. Untraced it is discarded; traced it wakes the thread it goes to,
 * the main thread, which waits in epoll_wait with no timeout (an asyncio
 * loop, say) and must see its event, not EINTR. Another thread waits with
 * 200 ms timeouts, which must still end. Prints
 * "forever: event|EINTR timed: ends|stuck".
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
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

static void *send_signals(void *arg)
{
	struct timespec ts = { 0, 20000000 };

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

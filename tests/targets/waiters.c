// SPDX-License-Identifier: MIT
/*
 * No-disturbance target: threads loop on epoll_wait, sigtimedwait and
 * semtimedop with 1 ms timeouts (with a little work between calls, so a
 * profiler sometimes finds them running just before they block) while
 * another thread burns CPU. Prints how often each call failed with EINTR,
 * which must be never: "eintr epoll N sigtimedwait N semtimedop N loops N".
 * With "pending" a blocked SIGUSR2 stays queued all along, as harmless as
 * it is untraced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long eintr_epoll, eintr_sigwait, eintr_sem, loops;

__attribute__((noinline)) static void little_work(void)
{
	volatile uint64_t x = 0;

	for (int i = 0; i < 20000; i++)
		x += (uint64_t)i * 7;
}

static void *epoll_loop(void *arg)
{
	int ep = epoll_create1(0);

	(void)arg;
	while (!atomic_load(&stop)) {
		struct epoll_event ev;

		if (epoll_wait(ep, &ev, 1, 1) < 0 && errno == EINTR)
			atomic_fetch_add(&eintr_epoll, 1);
		little_work();
		atomic_fetch_add(&loops, 1);
	}
	close(ep);
	return NULL;
}

static void *sigwait_loop(void *arg)
{
	struct timespec ts = { 0, 1000000 };
	sigset_t set;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (!atomic_load(&stop)) {
		if (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR)
			atomic_fetch_add(&eintr_sigwait, 1);
		little_work();
		atomic_fetch_add(&loops, 1);
	}
	return NULL;
}

static void *sem_loop(void *arg)
{
	int id = *(int *)arg;
	struct timespec ts = { 0, 1000000 };
	struct sembuf op = { .sem_num = 0, .sem_op = -1, .sem_flg = 0 };

	while (!atomic_load(&stop)) {
		if (semtimedop(id, &op, 1, &ts) < 0 && errno == EINTR)
			atomic_fetch_add(&eintr_sem, 1);
		little_work();
		atomic_fetch_add(&loops, 1);
	}
	return NULL;
}

static void *burn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		little_work();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	int sem = semget(IPC_PRIVATE, 1, 0600);
	pthread_t th[4];
	sigset_t set;

	if (sem < 0) {
		perror("semget");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (argc > 2 && !strcmp(argv[2], "pending"))
		kill(getpid(), SIGUSR2);
	pthread_create(&th[0], NULL, epoll_loop, NULL);
	pthread_create(&th[1], NULL, sigwait_loop, NULL);
	pthread_create(&th[2], NULL, sem_loop, &sem);
	pthread_create(&th[3], NULL, burn, NULL);
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	semctl(sem, 0, IPC_RMID);
	printf("eintr epoll %ld sigtimedwait %ld semtimedop %ld loops %ld\n",
	       atomic_load(&eintr_epoll), atomic_load(&eintr_sigwait), atomic_load(&eintr_sem),
	       atomic_load(&loops));
	return 0;
}

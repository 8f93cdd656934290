// SPDX-License-Identifier: MIT
/*
 * A thread that vforks and whose child takes 3 s to exit: the parent waits
 * in the kernel and cannot stop for ptrace until then, so a profiler that
 * ends sampling meanwhile cannot let it go at once, and must not leave it
 * frozen later. Prints "done" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void spin(double seconds)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

static void *worker(void *arg)
{
	pid_t pid;

	spin(0.5);
	pid = vfork();
	if (pid == 0) {
		struct timespec ts = { 3, 0 };

		nanosleep(&ts, NULL); /* a child slow to exec, say on a slow disk */
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	spin(0.3);
	return arg;
}

int main(void)
{
	pthread_t th;

	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	printf("done\n");
	return 0;
}

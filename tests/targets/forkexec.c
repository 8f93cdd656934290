// SPDX-License-Identifier: MIT
/*
 * Forks, execs and spawns children (none of which the profiler follows, and
 * none of which may be left traced or stopped), checks their statuses, then
 * execs itself from the main thread into stage 2 (spins in stage2_spin),
 * which execs from a second thread (the exec'ing thread takes over the
 * process id) into stage 3 (spins in after_exec_spin): a profile shows
 * whether both execs were followed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t spin_for(double seconds)
{
	uint64_t end = wall_ns() + (uint64_t)(seconds * 1e9), x = 1;

	while (wall_ns() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	return x;
}

__attribute__((noinline)) static uint64_t after_exec_spin(void)
{
	return spin_for(1.0);
}

__attribute__((noinline)) static uint64_t stage2_spin(void)
{
	return spin_for(0.5);
}

static void *exec_from_thread(void *arg)
{
	const char *self = arg;

	execl("/proc/self/exe", self, "stage3", (char *)NULL);
	perror("exec from thread");
	exit(1);
}

static int status_of(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, __WALL) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A process made by clone() without CLONE_THREAD and no exit signal:
 * TRACECLONE seizes it, and the profiler must let it go at once. */
static int cloned_child(void *arg)
{
	(void)arg;
	spin_for(0.1);
	return 9;
}

int main(int argc, char **argv)
{
	char *true_argv[] = { "true", NULL };
	char *sh_argv[] = { "sh", "-c", "exit 7", NULL };
	pid_t pid;
	int st;

	if (argc > 1 && !strcmp(argv[1], "stage3")) {
		printf("stage3 %llu\n", (unsigned long long)(after_exec_spin() & 0));
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "stage2")) {
		pthread_t th;

		printf("stage2 %llu\n", (unsigned long long)(stage2_spin() & 0));
		fflush(stdout);
		pthread_create(&th, NULL, exec_from_thread, argv[0]);
		pthread_join(th, NULL); /* never returns: the exec replaces us */
		return 1;
	}
	spin_for(0.3);
	pid = fork();
	if (pid == 0) {
		spin_for(0.2);
		_exit(5);
	}
	st = status_of(pid);
	if (st != 5) {
		fprintf(stderr, "forked child status %d, want 5\n", st);
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp("sh", sh_argv);
		_exit(127);
	}
	st = status_of(pid);
	if (st != 7) {
		fprintf(stderr, "exec'd child status %d, want 7\n", st);
		return 1;
	}
	if (posix_spawnp(&pid, "true", NULL, NULL, true_argv, environ) != 0 || status_of(pid) != 0) {
		fprintf(stderr, "posix_spawn failed\n");
		return 1;
	}
	{
		size_t size = 256 * 1024;
		char *stack = malloc(size);

		pid = clone(cloned_child, stack + size, 0, NULL);
		st = pid > 0 ? status_of(pid) : -1;
		free(stack);
		if (st != 9) {
			fprintf(stderr, "cloned child status %d, want 9\n", st);
			return 1;
		}
	}
	printf("children ok\n");
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "stage2", (char *)NULL);
	perror("exec");
	return 1;
}

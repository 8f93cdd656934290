// SPDX-License-Identifier: MIT
/*
 *   plugins [-w SECONDS] LIB SECONDS [LIB SECONDS ...]
 *
 * dlopens each LIB in turn, runs its entry() for SECONDS, and dlcloses it:
 * libraries of one size land at the same address one after the other. With
 * -w it first opens every LIB and waits, so the files can be replaced or
 * cut on disk before their code runs; it then never closes them and leaves
 * with _exit (closing reads the library's file again, which a cut file
 * would answer with SIGBUS).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double wait = 0, end;
	uint64_t sink = 0;
	int first = 1;

	if (argc > 2 && !strcmp(argv[1], "-w")) {
		wait = atof(argv[2]);
		first = 3;
	}
	for (int i = first; i + 1 < argc; i += 2) {
		void *h = dlopen(argv[i], RTLD_NOW);
		uint64_t (*entry)(uint64_t);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		entry = (uint64_t (*)(uint64_t))dlsym(h, "entry");
		if (first == 1 || wait > 0) {
			if (wait > 0)
				usleep((useconds_t)(wait * 1e6));
			wait = 0;
		}
		end = now() + atof(argv[i + 1]);
		while (now() < end)
			sink += entry(100000);
		if (first == 1)
			dlclose(h);
	}
	if (first != 1)
		_exit((int)(sink & 0));
	return (int)(sink & 0);
}

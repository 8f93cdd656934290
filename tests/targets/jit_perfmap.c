// SPDX-License-Identifier: MIT
/*
 * A tiny JIT: copies a counting loop into anonymous executable memory,
 * names it in /tmp/perf-PID.map as a JIT would (jitted_spin_loop), and
 * runs it from run_jit for SECONDS. The code keeps a frame record so the
 * frame-pointer fallback can unwind out of it (it has no CFI).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static const unsigned char code[] = {
	0x55,                   /* push %rbp */
	0x48, 0x89, 0xe5,       /* mov %rsp,%rbp */
	0x48, 0x89, 0xf9,       /* mov %rdi,%rcx */
	0x48, 0xff, 0xc9,       /* 1: dec %rcx */
	0x75, 0xfb,             /* jnz 1b */
	0x5d,                   /* pop %rbp */
	0xc3,                   /* ret */
};

__attribute__((noinline)) static void run_jit(void (*fn)(uint64_t), double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fn(1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *f;

	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jitted_spin_loop\n", (unsigned long)(uintptr_t)mem, sizeof(code));
	fclose(f);
	run_jit((void (*)(uint64_t))mem, seconds);
	unlink(path);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * A leaf whose CFA rule is a DWARF expression that branches to itself
 * forever (the CPU never reads CFI, so the program runs fine). Unwinding
 * it must give up, not hang the profiler and with it the target, which
 * then starts a thread (a ptrace stop a hung tracer would never end).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

void bad_spin(uint64_t n);
__asm__(".text\n.globl bad_spin\n.type bad_spin,@function\nbad_spin:\n.cfi_startproc\n"
	".cfi_escape 0x0f,0x03,0x2f,0xfd,0xff\n"
	"1:	dec %rdi\n	jnz 1b\n	ret\n.cfi_endproc\n.size bad_spin, .-bad_spin\n");

static void *thread_main(void *arg)
{
	return arg;
}

int main(void)
{
	struct timespec t0, t;
	pthread_t th;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		bad_spin(1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < 1.0);
	pthread_create(&th, NULL, thread_main, NULL);
	pthread_join(th, NULL);
	printf("thread joined\n");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Hand-written code without CFI (as BLAS kernels often are) that uses rbp
 * for something else: its caller cannot be found, and the stack must end
 * in a marker there, not in frames guessed from rbp or the word at sp.
 * RBP_VALUE (default 0) is what it leaves in rbp.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) uint64_t spin_leaf(uint64_t n)
{
	volatile uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

uint64_t nocfi_tramp(uint64_t n, uint64_t rbp_value);
__asm__(".text\n.globl nocfi_tramp\n.type nocfi_tramp,@function\nnocfi_tramp:\n"
	"	push %rbp\n	push %rbx\n	sub $8, %rsp\n	mov %rsi, %rbp\n	call spin_leaf\n"
	"	add $8, %rsp\n	pop %rbx\n	pop %rbp\n	ret\n.size nocfi_tramp, .-nocfi_tramp\n");

__attribute__((noinline)) uint64_t caller_one(uint64_t v)
{
	return nocfi_tramp(1000000, v) + 1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t v = argc > 2 ? strtoull(argv[2], NULL, 0) : 0, sink = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += caller_one(v);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return (int)(sink & 0);
}

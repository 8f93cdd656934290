// SPDX-License-Identifier: MIT
/*
 * A leaf caught in its epilogue, after it popped the frame pointer. Its
 * CFI (as gcc writes it) still says rbp is saved at cfa-16, a word now
 * under sp; its caller's CFA is rbp-based. The leaf spins after the pop,
 * so most samples land there: the caller is found only if that word,
 * in the red zone, was copied with the stack.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

void popped_leaf(uint64_t n);
__asm__(".text\n.globl popped_leaf\n.type popped_leaf,@function\npopped_leaf:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	xor %ebp, %ebp\n" /* rbp used for something else */
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size popped_leaf, .-popped_leaf\n");

/* Its CFA is rbp+16 in its body: an rbp lost under the leaf loses it. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) uint64_t framed_caller(uint64_t n)
{
	volatile uint64_t pad[4] = { n, 0, 0, 0 };

	popped_leaf(n);
	return pad[0] + 1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t sink = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += framed_caller(1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return (int)(sink & 0);
}

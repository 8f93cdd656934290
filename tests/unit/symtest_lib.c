// SPDX-License-Identifier: MIT
/*
 * A shared library for tests/unit/test_symbols.c, built twice: by GNU ld
 * (build/tests/libsymtest.so) and by lld (build/tests/libsymtest_lld.so,
 * whose segments share file pages at unaligned offsets).
 */
#include <stdint.h>

/* Data in every writable segment, so each has a mapping to resolve in. */
int symtest_data[512] = { 1 };
int symtest_bss[4096];
const char *const symtest_relro = "relro";

/* Only in .symtab: reached through symtest_static_address(). */
static __attribute__((noinline)) int symtest_static(int x)
{
	symtest_bss[x & 4095] += x;
	return symtest_bss[x & 4095] * 7 + symtest_data[0];
}

__attribute__((noinline)) int symtest_alpha(int x)
{
	int sum = 0;

	for (int i = 0; i < x; i++)
		sum += symtest_static(i) ^ i;
	return sum + symtest_relro[0];
}

__attribute__((noinline)) int symtest_beta(int x)
{
	return symtest_alpha(x) * 3 + symtest_static(x);
}

void *symtest_static_address(void)
{
	return (void *)(uintptr_t)symtest_static;
}

/*
 * One byte of function with .size 1, then padding bytes that belong to no
 * symbol, then another function: an address in the padding is in .text
 * and between symbols, yet in no function.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl symtest_asm_short\n"
	".type symtest_asm_short, @function\n"
	"symtest_asm_short:\n"
	"	ret\n"
	".size symtest_asm_short, 1\n"
	".skip 31, 0xcc\n"
	".globl symtest_asm_after\n"
	".type symtest_asm_after, @function\n"
	"symtest_asm_after:\n"
	"	ret\n"
	".size symtest_asm_after, 1\n");

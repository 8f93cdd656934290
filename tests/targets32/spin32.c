// SPDX-License-Identifier: MIT
/*
 * A 32-bit (i386) program for the "not supported" tests: no libc (no
 * multilib needed), spins for about two seconds, exits through int 0x80.
 */
static void spin(void)
{
	for (volatile unsigned i = 0; i < 2000000000u; i++)
		;
}

void _start(void)
{
	spin();
	__asm__ volatile("movl $1, %eax; xorl %ebx, %ebx; int $0x80");
}

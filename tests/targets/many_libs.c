// SPDX-License-Identifier: MIT
/*
 * A program linked against a score of shared libraries (criterion's and
 * libstdc++'s, all needed or not): its start-up is mostly ld.so mapping
 * and relocating them, which LD_BIND_NOW and LD_DEBUG stretch. Does
 * nothing itself.
 */
int main(void)
{
	return 0;
}

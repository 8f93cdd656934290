// SPDX-License-Identifier: MIT
/* Installed set-user-ID root by test_suid.sh: prints the ids it runs with
 * and exits 51, so a test sees both whether it kept its privilege and
 * that its exit status came through. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("uid=%d euid=%d gid=%d egid=%d\n", (int)getuid(), (int)geteuid(), (int)getgid(),
	       (int)getegid());
	return 51;
}

// SPDX-License-Identifier: MIT
/*
 * Module files are read through mmap. If one shrinks while mapped (a
 * library rewritten in place), touching the lost part raises SIGBUS, which
 * would kill trainsample and lose every output. The handler maps a page of
 * zeros over the lost page and notes which page it was; readers check after
 * reading and treat the bytes as unreadable. This page address is the one
 * piece of global state here: it is written by the signal handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/internal.h"

#define PAGE 4096u

static volatile uintptr_t sym_lost_page;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t page = (uintptr_t)si->si_addr & ~(uintptr_t)(PAGE - 1);

	(void)uc;
	/* Only a read past the end of a mapped file (BUS_ADRERR); anything
	 * else is a real fault and ends the process as it would have. */
	if (si->si_code == BUS_ADRERR && page &&
	    mmap((void *)page, PAGE, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
		    MAP_FAILED) {
		sym_lost_page = page;
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void sym_sigbus_guard(void)
{
	struct sigaction sa, old;

	if (sigaction(SIGBUS, NULL, &old) == 0 && (old.sa_flags & SA_SIGINFO) &&
	    old.sa_sigaction == on_sigbus)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

bool sym_sigbus_lost(const void *base, size_t len)
{
	uintptr_t page = sym_lost_page, b = (uintptr_t)base;

	if (!page || page + PAGE <= b || page >= b + len)
		return false;
	sym_lost_page = 0;
	return true;
}

/*
 * Opens a module-like file to read: a regular file only, never blocking on
 * a FIFO or opening a device planted at a library's path.
 */
int sym_open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

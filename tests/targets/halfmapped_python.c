// SPDX-License-Identifier: MIT
/*
 * Holds a libpython the way the dynamic loader first maps it, and then
 * runs Python from it: argv: LIBPYTHON MS SCRIPT [ARGS...]. The whole file
 * is mapped read-only at offset 0 (ld.so's reservation, before it maps
 * each segment over it) for MS milliseconds, so a profiler sees
 * libpython's _PyRuntime at an address whose bytes are not yet the data
 * segment's; then the library is loaded for real and Py_BytesMain runs
 * SCRIPT. A loader preempted between those two steps looks like this.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int (*bytes_main)(int, char **);
	struct timespec hold;
	struct stat st;
	void *lib, *reserved;
	long ms;
	int fd;

	if (argc < 4) {
		fprintf(stderr, "usage: %s LIBPYTHON MS SCRIPT [ARGS...]\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	reserved = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (reserved == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	ms = strtol(argv[2], NULL, 10);
	hold.tv_sec = ms / 1000;
	hold.tv_nsec = ms % 1000 * 1000000L;
	while (nanosleep(&hold, &hold) < 0)
		;
	munmap(reserved, (size_t)st.st_size);
	close(fd);
	lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	bytes_main = lib ? (int (*)(int, char **))dlsym(lib, "Py_BytesMain") : NULL;
	if (!bytes_main) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	/* Python's argv[0] is this program; the script follows. */
	argv[2] = argv[0];
	return bytes_main(argc - 2, argv + 2);
}

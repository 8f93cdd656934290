// SPDX-License-Identifier: MIT
/*
 * Files that shrink under trainsample: a mapped one must not kill it
 * (SIGBUS guard), and the unwinder's images are not mapped at all.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/internal.h"

static char *make_file(size_t size)
{
	static char path[64];
	int fd;
	char *buf = calloc(1, size);

	strcpy(path, "/tmp/trainsample-sigbus-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	memset(buf, 0x5a, size);
	cr_assert_eq(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
	return path;
}

Test(sigbus, a_mapped_file_cut_short_reads_as_lost_not_fatal)
{
	char *path = make_file(64 * 1024);
	int fd = open(path, O_RDONLY);
	volatile uint8_t *p;
	uint8_t v;

	cr_assert_geq(fd, 0);
	p = mmap(NULL, 64 * 1024, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert_neq((void *)p, MAP_FAILED);
	sym_sigbus_guard();
	cr_assert_eq(p[40000], 0x5a);
	cr_assert_not(sym_sigbus_lost((void *)p, 64 * 1024));
	cr_assert_eq(truncate(path, 4096), 0);
	v = p[40000]; /* past the new end: SIGBUS without the guard */
	cr_assert_eq(v, 0);
	cr_assert(sym_sigbus_lost((void *)p, 64 * 1024));
	cr_assert_not(sym_sigbus_lost((void *)p, 64 * 1024), "the loss is reported once");
	cr_assert_eq(p[100], 0x5a, "what is left still reads");
	munmap((void *)p, 64 * 1024);
	close(fd);
	unlink(path);
}

Test(sigbus, an_image_of_a_file_cut_short_reads_fail)
{
	struct sym_image *img = NULL, *other = NULL;
	const char *self = "build/tests/libsymtest.so";
	char path[] = "/tmp/trainsample-image-XXXXXX";
	const struct sym_eh_table *eh;
	char cmd[256];
	uint8_t word[8];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s", self, path);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(sym_image_open(path, &img), 0);
	cr_assert_eq(sym_image_open(path, &other), 0);
	eh = sym_image_eh_table(img);
	cr_assert_not_null(eh, "a gcc library has an .eh_frame_hdr table");
	cr_assert_eq(sym_image_read(img, eh->text_start, word, sizeof(word)), 0);
	cr_assert_eq(truncate(path, 512), 0);
	/* The same bytes, not read before by this image, now lie past the
	 * end: an error, not a signal. */
	cr_assert_neq(sym_image_read(other, eh->text_start, word, sizeof(word)), 0);
	sym_image_free(img);
	sym_image_free(other);
	unlink(path);
}

// SPDX-License-Identifier: MIT
/* Parsing /proc/PID/maps text: tests/unit/test_maps.c */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/internal.h"
#include "symbolize/symbolize.h"

/* Out of order on purpose, with every odd line the kernel (or a person)
 * writes; the last line has no newline. */
static const char odd_maps[] =
	"7f0000002000-7f0000003000 rw-p 00002000 08:01 1234                       /usr/lib/libfoo.so\n"
	"555555554000-555555556000 r--p 00000000 fd:01 99                         /opt/my app/bin/with spaces\n"
	"not a mapping at all\n"
	"7f0000000000-7f0000001000 r-xp 00001000 08:01 1234                       /usr/lib/libfoo.so\n"
	"\n"
	"7f0000005000-7f0000004000 r-xp 00000000 00:00 0\n"
	"7f0000006000-7f0000007000 rwxs 00000000 00:05 777                        /memfd:jit (deleted)\n"
	"7f0000008000-7f0000009000 rw-p 00000000 00:00 0 \n"
	"7f000000a000-7f000000b000 rw-p 00000000 00:00 0\n"
	"7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0                          [vvar]\n"
	"7ffff7fc5000-7ffff7fc7000 r-xp 00000000 00:00 0                          [vdso]\n"
	"555555560000-555555581000 rw-p 00000000 00:00 0                          [heap]\n"
	"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n"
	"7f000000c000-7f000000d000 rZ-p 00000000 00:00 0\n"
	"7f000000e000-7f000000f000 r--p 00000000 0g:00 0\n"
	"7f0000010000-7f0000011000 r--p 00000000 00:00 12x\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

/* The text as a maps file, read by path as a task's is. */
static int maps_of_text(const char *text, size_t len, struct sym_maps **m)
{
	char path[] = "/tmp/maps.XXXXXX";
	int fd = mkstemp(path), ret;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	ret = sym_maps_read_path(path, m, NULL, 0);
	unlink(path);
	return ret;
}

static struct sym_maps *parse_odd(void)
{
	struct sym_maps *m = NULL;

	cr_assert_eq(maps_of_text(odd_maps, strlen(odd_maps), &m), 0);
	cr_assert_not_null(m);
	return m;
}

Test(maps, skips_malformed_and_sorts)
{
	struct sym_maps *m = parse_odd();
	size_t n = sym_maps_count(m);

	/* 17 lines: garbage, empty, end < start, bad perms, bad dev and
	 * junk after the inode are skipped. */
	cr_assert_eq(n, 11);
	for (size_t i = 1; i < n; i++)
		cr_assert_lt(sym_maps_at(m, i - 1)->start,
			     sym_maps_at(m, i)->start);
	cr_assert_null(sym_maps_at(m, n));
	sym_maps_free(m);
}

Test(maps, fields)
{
	struct sym_maps *m = parse_odd();
	const struct sym_mapping *x = sym_maps_find(m, 0x7f0000000000);

	cr_assert_not_null(x);
	cr_assert_eq(x->start, 0x7f0000000000);
	cr_assert_eq(x->end, 0x7f0000001000);
	cr_assert_eq(x->pgoff, 0x1000);
	cr_assert_eq(x->dev_major, 8);
	cr_assert_eq(x->dev_minor, 1);
	cr_assert_eq(x->inode, 1234);
	cr_assert(x->read && !x->write && x->exec && !x->shared);
	cr_assert(!x->deleted);
	cr_assert_str_eq(x->path, "/usr/lib/libfoo.so");

	x = sym_maps_find(m, 0x555555554000);
	cr_assert_eq(x->dev_major, 0xfd);
	cr_assert_str_eq(x->path, "/opt/my app/bin/with spaces");
	sym_maps_free(m);
}

Test(maps, deleted_anonymous_special)
{
	struct sym_maps *m = parse_odd();
	const struct sym_mapping *x = sym_maps_find(m, 0x7f0000006800);

	cr_assert_str_eq(x->path, "/memfd:jit");
	cr_assert(x->deleted && x->shared && x->exec && x->write);
	cr_assert_eq(x->inode, 777);

	/* With and without the padding after the inode. */
	x = sym_maps_find(m, 0x7f0000008000);
	cr_assert_str_eq(x->path, "");
	cr_assert(!x->deleted);
	cr_assert_str_eq(sym_maps_find(m, 0x7f000000a000)->path, "");

	cr_assert_str_eq(sym_maps_find(m, 0x7ffff7fc5000)->path, "[vdso]");
	cr_assert_str_eq(sym_maps_find(m, 0x555555570000)->path, "[heap]");
	cr_assert_str_eq(sym_maps_find(m, 0x7fffffffe000)->path, "[stack]");
	/* The line without a trailing newline. */
	x = sym_maps_find(m, 0xffffffffff600000);
	cr_assert_str_eq(x->path, "[vsyscall]");
	cr_assert(!x->read && x->exec);
	sym_maps_free(m);
}

Test(maps, find_bounds_and_gaps)
{
	struct sym_maps *m = parse_odd();
	const struct sym_mapping *x;

	x = sym_maps_find(m, 0x7f0000002000);
	cr_assert_not_null(x);
	cr_assert_eq(x->start, 0x7f0000002000);
	cr_assert_eq(sym_maps_find(m, 0x7f0000002fff), x);
	cr_assert_null(sym_maps_find(m, 0x7f0000003000)); /* end */
	cr_assert_null(sym_maps_find(m, 0x7f0000001000)); /* gap */
	cr_assert_null(sym_maps_find(m, 0x7f0000001fff)); /* gap */
	cr_assert_null(sym_maps_find(m, 0));               /* below all */
	cr_assert_null(sym_maps_find(m, 0x555555553fff));
	cr_assert_not_null(sym_maps_find(m, 0xffffffffff600fff));
	cr_assert_null(sym_maps_find(m, 0xffffffffff601000)); /* above all */
	cr_assert_null(sym_maps_find(NULL, 0x7f0000002000));
	sym_maps_free(m);
}

Test(maps, empty_and_long_lines)
{
	struct sym_maps *m = NULL;
	size_t pathlen = 100000;
	char *text = malloc(pathlen + 200);
	int n;

	cr_assert_eq(maps_of_text("", 0, &m), 0);
	cr_assert_eq(sym_maps_count(m), 0);
	cr_assert_null(sym_maps_find(m, 0x1000));
	sym_maps_free(m);

	n = sprintf(text, "1000-2000 r-xp 00000000 08:01 5 /");
	memset(text + n, 'a', pathlen);
	strcpy(text + n + pathlen, " (deleted)\n3000-4000 r--p 0 0:0 0");
	cr_assert_eq(maps_of_text(text, strlen(text), &m), 0);
	cr_assert_eq(sym_maps_count(m), 2);
	cr_assert_eq(strlen(sym_maps_at(m, 0)->path), pathlen + 1);
	cr_assert(sym_maps_at(m, 0)->deleted);
	cr_assert_eq(sym_maps_at(m, 1)->start, 0x3000);
	sym_maps_free(m);
	free(text);
}

Test(maps, file_ending_inside_a_line)
{
	static const char text[] = "1000-2000 r-xp 00000000 08:01 5 /bin/x\n"
				   "3000-4000 r-xp 00000000 08:01 5 /bin/yyy";
	struct sym_maps *m = NULL;

	/* Cut inside the second path, no newline after it: the last line
	 * is what the file holds. */
	cr_assert_eq(maps_of_text(text, sizeof(text) - 3, &m), 0);
	cr_assert_eq(sym_maps_count(m), 2);
	cr_assert_str_eq(sym_maps_at(m, 1)->path, "/bin/y");
	sym_maps_free(m);
}

Test(maps, read_own)
{
	struct sym_maps *m = NULL;
	char err[256] = "";
	uint64_t here = (uint64_t)(uintptr_t)&parse_odd;
	const struct sym_mapping *x;

	cr_assert_eq(sym_maps_read_path("/proc/self/maps", &m, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_gt(sym_maps_count(m), 5);
	x = sym_maps_find(m, here);
	cr_assert_not_null(x);
	cr_assert(x->exec);
	cr_assert_eq(x->path[0], '/');
	sym_maps_free(m);

	cr_assert_lt(sym_maps_read_path("/proc/2147483632/maps", &m, err, sizeof(err)), 0);
	cr_assert_neq(err[0], '\0');
}

/* Thousands of mappings: the file is several times one read's buffer. */
Test(maps, read_large)
{
	size_t pages = 6000, page = 4096;
	uint8_t *area = mmap(NULL, pages * page, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sym_maps *m = NULL;
	const struct sym_mapping *last;
	uint64_t last_page;

	cr_assert_neq(area, MAP_FAILED);
	last_page = (uint64_t)(uintptr_t)(area + (pages - 1) * page);
	/* Alternate protections so that no two pages merge. */
	for (size_t i = 0; i < pages; i += 2)
		cr_assert_eq(mprotect(area + i * page, page, PROT_READ), 0);
	cr_assert_eq(sym_maps_read_path("/proc/self/maps", &m, NULL, 0), 0);
	cr_assert_geq(sym_maps_count(m), pages);
	last = sym_maps_find(m, last_page);
	cr_assert_not_null(last);
	cr_assert_eq(last->start, last_page);
	cr_assert(!last->read);
	cr_assert(sym_maps_find(m, (uint64_t)(uintptr_t)area)->read);
	sym_maps_free(m);
	munmap(area, pages * page);
}

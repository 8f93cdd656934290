// SPDX-License-Identifier: MIT
/*
 * Source lines of native code (sym_process_line): this test binary's own
 * functions (built with -g), compared with __LINE__; a stripped library
 * whose DWARF is in a debug file found by .gnu_debuglink, without
 * .debug_aranges (build/tests/libsymtest_dbglink.so); and places without
 * line information. Runs from the repository root.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "tests/unit/self_helpers.h"

#define LIB_DBGLINK "build/tests/libsymtest_dbglink.so"
#define LIB_MINI "build/tests/libsymtest_mini.so"
#define LIB_SOURCE "tests/unit/symtest_lib.c"

/* ---- this binary's own functions ---- */

static __attribute__((noipa)) uint64_t return_address(void)
{
	return addr_of(__builtin_return_address(0));
}

static const int target_first_line = __LINE__;
static __attribute__((noipa)) int line_target(int x)
{
	int sum = 0;

	for (int i = 0; i < x; i++)
		sum += i * x;
	return sum;
}
static const int target_last_line = __LINE__;

Test(lines, own_function_by_its_range)
{
	struct sym_process *p = open_self();
	const char *file = NULL;
	uint32_t line = 0;

	cr_assert_eq(sym_process_line(p, addr_of(line_target), &file, &line), 0);
	cr_expect(ends_with(file, "tests/unit/test_lines.c"), "%s", file);
	cr_expect(line > (uint32_t)target_first_line &&
		  line < (uint32_t)target_last_line, "line %u, not in %d-%d",
		  line, target_first_line, target_last_line);
	cr_expect_eq(line_target(4), 24);
	sym_process_free(p);
}

Test(lines, call_site_exactly)
{
	struct sym_process *p = open_self();
	const char *file = NULL, *again = NULL;
	uint32_t line = 0, line_again = 0;
	uint64_t ra = return_address(); const int call_line = __LINE__;

	/* A caller at its return address - 1: inside the call. */
	cr_assert_eq(sym_process_line(p, ra - 1, &file, &line), 0);
	cr_expect(ends_with(file, "tests/unit/test_lines.c"), "%s", file);
	cr_expect_eq(line, (uint32_t)call_line);
	/* From the cache: the same answer, the same string. */
	cr_assert_eq(sym_process_line(p, ra - 1, &again, &line_again), 0);
	cr_expect_eq(again, file);
	cr_expect_eq(line_again, line);
	sym_process_free(p);
}

/* ---- a library whose DWARF is in its debug file ---- */

/* The lines of LIB_SOURCE from "name(" to the function's closing brace. */
static void source_range(const char *name, int *first, int *last)
{
	FILE *f = fopen(LIB_SOURCE, "r");
	char text[512];
	int n = 0;

	cr_assert_not_null(f, "%s", LIB_SOURCE);
	*first = *last = 0;
	while (fgets(text, sizeof(text), f)) {
		n++;
		if (!*first && strstr(text, name) && strchr(text, '('))
			*first = n;
		else if (*first && text[0] == '}') {
			*last = n;
			break;
		}
	}
	fclose(f);
	cr_assert(*first && *last, "%s not found in %s", name, LIB_SOURCE);
}

Test(lines, from_a_debug_file)
{
	void *h = dlopen(LIB_DBGLINK, RTLD_NOW | RTLD_LOCAL);
	struct sym_process *p;
	const char *file = NULL;
	const char *names[] = { "symtest_alpha", "symtest_beta" };
	uint32_t line = 0;

	cr_assert_not_null(h, "dlopen %s: %s (build the symtest libraries)",
			   LIB_DBGLINK, dlerror());
	p = open_self();
	for (int i = 0; i < 2; i++) {
		uint64_t fn = addr_of(dlsym(h, names[i]));
		int first, last;

		cr_assert_neq(fn, 0);
		source_range(names[i], &first, &last);
		cr_assert_eq(sym_process_line(p, fn + 4, &file, &line), 0,
			     "%s", names[i]);
		cr_expect(ends_with(file, "symtest_lib.c"), "%s", file);
		cr_expect(line >= (uint32_t)first && line <= (uint32_t)last,
			  "%s: line %u, not in %d-%d", names[i], line, first,
			  last);
	}
	sym_process_free(p);
	dlclose(h);
}

/* ---- no line information ---- */

Test(lines, none_where_there_is_no_dwarf)
{
	void *h = dlopen(LIB_MINI, RTLD_NOW | RTLD_LOCAL);
	uint8_t *anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sym_process *p;
	const char *file = "unchanged";
	uint32_t line = 7;
	uint64_t fn;

	cr_assert_not_null(h, "dlopen %s: %s", LIB_MINI, dlerror());
	cr_assert_neq(anon, MAP_FAILED);
	fn = addr_of(dlsym(h, "symtest_alpha"));
	p = open_self();
	cr_expect_eq(sym_process_line(p, fn, &file, &line), -ENOENT);
	cr_expect_eq(sym_process_line(p, fn, &file, &line), -ENOENT);
	cr_expect_eq(sym_process_line(p, addr_of(anon), &file, &line), -ENOENT);
	cr_expect_eq(sym_process_line(p, 0x10, &file, &line), -ENOENT);
	cr_expect_str_eq(file, "unchanged");
	cr_expect_eq(line, 7);
	cr_expect_eq(sym_process_line(NULL, 0x10, &file, &line), -EINVAL);
	sym_process_free(p);
	munmap(anon, 4096);
	dlclose(h);
}

/* Many addresses: more than the cache holds, answered the same. */
Test(lines, many_addresses)
{
	struct sym_process *p = open_self();
	uint64_t start = addr_of(line_target);
	int found = 0;

	for (int round = 0; round < 2; round++) {
		for (uint64_t a = start; a < start + 8192; a++) {
			const char *file;
			uint32_t line;

			if (sym_process_line(p, a, &file, &line) == 0 &&
			    ends_with(file, "test_lines.c"))
				found++;
		}
	}
	cr_expect_gt(found, 100);
	sym_process_free(p);
}

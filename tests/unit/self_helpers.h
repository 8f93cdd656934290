/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the unit tests that symbolize their own process.
 * static: each test binary takes what it uses.
 */
#ifndef TRAINSAMPLE_TESTS_SELF_HELPERS_H
#define TRAINSAMPLE_TESTS_SELF_HELPERS_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

static inline uint64_t addr_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* The test binary itself, as trainsample would see a target. */
static inline struct sym_process *open_self(void)
{
	struct sym_process *p = NULL;
	char err[256] = "";

	cr_assert_eq(sym_process_open(getpid(), &p, err, sizeof(err)), 0,
		     "%s", err);
	return p;
}

static inline bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Overwrites an existing file (made by mkstemp) with another's bytes. */
static inline void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_TRUNC);
	ssize_t n;

	cr_assert(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

#endif

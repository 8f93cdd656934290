// SPDX-License-Identifier: MIT
/*
 * Demangling of C++ and Rust symbol names: sym_demangle itself, and the
 * names a module's symbols come out with. The module is this test binary,
 * whose functions below carry mangled names given with asm labels (as a
 * C++ or Rust compiler would have named them).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"

static void expect_demangled(const char *mangled, const char *want)
{
	char *got = NULL;
	int ret = sym_demangle(mangled, strlen(mangled), &got);

	cr_assert_eq(ret, 0, "%s: %d", mangled, ret);
	cr_expect_str_eq(got, want, "%s", mangled);
	free(got);
}

static void expect_kept(const char *name)
{
	char *got = NULL;

	cr_expect_eq(sym_demangle(name, strlen(name), &got), -ENOENT, "%s",
		     name);
	cr_expect_null(got);
}

Test(demangle, cxx_with_parameters)
{
	expect_demangled("_ZN2ns1fEi", "ns::f(int)");
	expect_demangled("_ZNSt6vectorIiSaIiEE9push_backERKi",
			 "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect_demangled("_ZNK3foo3BarclEv", "foo::Bar::operator()() const");
	expect_demangled("_Z3foov.cold", "foo() [clone .cold]");
	expect_demangled("_ZN2ns1fEi.isra.0", "ns::f(int) [clone .isra.0]");
}

Test(demangle, rust_legacy)
{
	/* The hash goes, as in perf and rustfilt; $LT$ and such are decoded. */
	expect_demangled("_ZN7mycrate4main17h0123456789abcdefE", "mycrate::main");
	expect_demangled("_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$11allocate_in17h0123456789abcdefE",
			 "alloc::raw_vec::RawVec<T,A>::allocate_in");
}

Test(demangle, rust_v0)
{
	expect_demangled("_RNvCs15kBYyAo9fc_7mycrate4main", "mycrate::main");
	expect_demangled("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
	expect_demangled("_RINvCs1234_7mycrate4funcjE", "mycrate::func::<usize>");
	expect_demangled("_RNvMNtCs1234_7mycrate3fooNtB2_3Bar3new",
			 "<mycrate::foo::Bar>::new");
}

Test(demangle, not_mangled_or_broken)
{
	expect_kept("main");
	expect_kept("_start");
	expect_kept("_Z");
	expect_kept("_Znot_really_mangled");
	expect_kept("_RNvC");
	expect_kept("_Rb_tree_rebalance");
	expect_kept("");
}

Test(demangle, length_is_respected)
{
	const char *versioned = "_ZN2ns1fEi@@LIB_1.0";
	char *got = NULL;
	char *longer;
	size_t n = 20000;

	cr_assert_eq(sym_demangle(versioned, strlen("_ZN2ns1fEi"), &got), 0);
	cr_expect_str_eq(got, "ns::f(int)");
	free(got);
	got = NULL;

	/* Too long to demangle safely: kept as it is. */
	longer = malloc(n + 1);
	cr_assert_not_null(longer);
	memcpy(longer, "_ZN", 3);
	for (size_t i = 3; i < n - 1; i += 2)
		memcpy(longer + i, "1a", 2);
	longer[n - 1] = 'E';
	longer[n] = '\0';
	cr_expect_eq(sym_demangle(longer, n, &got), -ENOENT);
	cr_expect_null(got);
	free(longer);
	cr_expect_eq(sym_demangle(NULL, 0, &got), -EINVAL);
}

/* ---- names of a module's symbols ---- */

int demangle_cxx_target(int x) __asm__("_ZN7symtest6squareEi");
int demangle_rust_legacy_target(int x) __asm__("_ZN7mycrate4work17h0123456789abcdefE");
int demangle_rust_v0_target(int x) __asm__("_RNvNtCs1234_7mycrate3foo4idle");
int demangle_broken_target(int x) __asm__("_Znot_really_mangled");

__attribute__((noipa)) int demangle_cxx_target(int x)
{
	return x * x;
}

__attribute__((noipa)) int demangle_rust_legacy_target(int x)
{
	return x + 11;
}

__attribute__((noipa)) int demangle_rust_v0_target(int x)
{
	return x - 13;
}

__attribute__((noipa)) int demangle_broken_target(int x)
{
	return x ^ 17;
}

static __attribute__((noipa)) int plain_c_target(int x)
{
	return x | 19;
}

static uint64_t addr_of(int (*fn)(int))
{
	return (uint64_t)(uintptr_t)fn;
}

static void expect_function(struct sym_process *p, int (*fn)(int),
			    const char *want)
{
	struct sym_location loc;

	cr_assert_eq(sym_process_resolve(p, addr_of(fn) + 1, &loc), 0);
	cr_assert_not_null(loc.function, "no symbol for %s", want);
	cr_expect_str_eq(loc.function, want);
	cr_expect_eq(loc.offset, 1);
}

Test(demangle, module_symbols_come_demangled)
{
	struct sym_process *p = NULL;
	char err[256] = "";

	cr_assert_eq(sym_process_open(getpid(), &p, err, sizeof(err)), 0,
		     "%s", err);
	expect_function(p, demangle_cxx_target, "symtest::square(int)");
	expect_function(p, demangle_rust_legacy_target, "mycrate::work");
	expect_function(p, demangle_rust_v0_target, "mycrate::foo::idle");
	expect_function(p, demangle_broken_target, "_Znot_really_mangled");
	expect_function(p, plain_c_target, "plain_c_target");
	sym_process_free(p);
	cr_expect_eq(demangle_cxx_target(3) + demangle_rust_legacy_target(0) +
		     demangle_rust_v0_target(0) + demangle_broken_target(0) +
		     plain_c_target(0), 9 + 11 - 13 + 17 + 19);
}

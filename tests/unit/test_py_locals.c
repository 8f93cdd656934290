// SPDX-License-Identifier: MIT
/*
 * dump --locals' renderings: ints from their digits, doubles as repr()
 * prints them, strings quoted and escaped; values laid out here with each
 * version's offsets (the int layout changed in 3.12); a frame's variables
 * with a cell; and garbage that must render as <unreadable>, never crash.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/python/python.h"

#define ARENA (64 * 1024)

#include "tests/unit/py_arena.h"

static void put64(uint64_t at, uint32_t off, uint64_t v)
{
	memcpy((void *)(uintptr_t)(at + off), &v, sizeof(v));
}

static void put32(uint64_t at, uint32_t off, uint32_t v)
{
	memcpy((void *)(uintptr_t)(at + off), &v, sizeof(v));
}

Test(py_locals, ints_from_digits)
{
	/* 2**100 = digit 3 (bit 90 = 30 * 3) holding 1 << 10 */
	uint32_t p100[4] = { 0, 0, 0, 1u << 10 };
	uint32_t small[1] = { 42 };
	uint32_t max64[3] = { 0x3fffffff, 0x3fffffff, 0xf }; /* 2**64 - 1 */
	uint32_t big[PY_INT_DIGITS_MAX + 1] = { 1 };
	char buf[128];

	cr_assert_eq(py_int_render(p100, 4, false, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "1267650600228229401496703205376");
	cr_assert_eq(py_int_render(small, 1, true, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "-42");
	cr_assert_eq(py_int_render(small, 0, true, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "0");
	cr_assert_eq(py_int_render(max64, 3, false, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "18446744073709551615");
	cr_assert_eq(py_int_render(big, PY_INT_DIGITS_MAX + 1, false, buf, sizeof(buf)), -E2BIG);
	cr_assert_eq(py_int_render(p100, 4, false, buf, 8), -ENOSPC);
}

Test(py_locals, floats_as_repr)
{
	static const struct { double v; const char *s; } cases[] = {
		{ 3.14, "3.14" }, { 100.0, "100.0" }, { 2.0, "2.0" }, { -2.5, "-2.5" },
		{ 0.1, "0.1" }, { 0.0001, "0.0001" }, { 1e-05, "1e-05" }, { 1e16, "1e+16" },
		{ 1234567890123456.0, "1234567890123456.0" }, { 1.5e300, "1.5e+300" },
		{ -0.0, "-0.0" }, { 0.0, "0.0" }, { 1.0 / 3, "0.3333333333333333" },
		{ 123456789012345678.0, "1.2345678901234568e+17" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		py_float_render(cases[i].v, buf, sizeof(buf));
		cr_assert_str_eq(buf, cases[i].s);
	}
	py_float_render(INFINITY, buf, sizeof(buf));
	cr_assert_str_eq(buf, "inf");
	py_float_render(-INFINITY, buf, sizeof(buf));
	cr_assert_str_eq(buf, "-inf");
	py_float_render(NAN, buf, sizeof(buf));
	cr_assert_str_eq(buf, "nan");
}

Test(py_locals, strings_quoted_and_escaped)
{
	const uint32_t s[] = { 'a', '\'', '\\', '\n', 1, 0x7f, 0x85, 0xe9, 0x20ac, 0x1f600, 0xd800 };
	char buf[256];

	cr_assert_eq(py_str_render(s, 11, 11, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "'a\\'\\\\\\n\\x01\\x7f\\x85\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\ud800'");
	cr_assert_eq(py_str_render(s, 1, 10485760, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "'a'... (10485760 characters)");
	cr_assert_eq(py_str_render(s, 0, 0, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "''");
	cr_assert_eq(py_str_render(s, 11, 11, buf, 10), -ENOSPC);
}

struct fake {
	struct arena a;
	struct py_target t;
};

static void fake_init(struct fake *f, unsigned minor)
{
	f->a.mem = calloc(1, ARENA);
	f->a.used = 16;
	cr_assert(f->a.mem);
	memset(&f->t, 0, sizeof(f->t));
	f->t.l = *py_layout_find(3, minor);
	f->t.mem.read = arena_read;
	f->t.mem.ctx = &f->a;
}

static uint64_t type_obj(struct fake *f, const char *name, uint64_t flags)
{
	const struct py_layout *l = &f->t.l;
	uint64_t s = alloc(&f->a, strlen(name) + 1), t = alloc(&f->a, 512);

	memcpy((void *)(uintptr_t)s, name, strlen(name) + 1);
	put64(t, l->type_name, s);
	put64(t, l->type_flags, flags);
	return t;
}

static uint64_t object(struct fake *f, uint64_t type, size_t size)
{
	uint64_t o = alloc(&f->a, size);

	put64(o, f->t.l.object_type, type);
	return o;
}

/* An int of n digits laid out as the version does. */
static uint64_t int_obj(struct fake *f, uint64_t type, const uint32_t *d, size_t n, bool neg)
{
	const struct py_layout *l = &f->t.l;
	uint64_t o = object(f, type, l->long_digits + 4 * n + 8);

	if (l->version >= 0x030c)
		put64(o, l->long_tag, n << 3 | (n ? (neg ? 2 : 0) : 1));
	else
		put64(o, l->long_tag, neg ? -(uint64_t)n : n);
	for (size_t i = 0; i < n; i++)
		put32(o, l->long_digits + 4 * (uint32_t)i, d[i]);
	return o;
}

static uint64_t ascii_str(struct fake *f, uint64_t type, const char *s)
{
	const struct py_layout *l = &f->t.l;
	uint64_t o = object(f, type, l->unicode_ascii_data + strlen(s) + 1);

	put64(o, l->unicode_length, strlen(s));
	put32(o, l->unicode_state, 1u << 2 | 1u << 5 | 1u << 6);
	memcpy((void *)(uintptr_t)(o + l->unicode_ascii_data), s, strlen(s) + 1);
	return o;
}

static uint64_t tuple_obj(struct fake *f, uint64_t type, const uint64_t *items, size_t n)
{
	const struct py_layout *l = &f->t.l;
	uint64_t o = object(f, type, l->tuple_items + 8 * n);

	put64(o, l->var_size, n);
	for (size_t i = 0; i < n; i++)
		put64(o, l->tuple_items + 8 * (uint32_t)i, items[i]);
	return o;
}

#define LONG_BIT_ (1ul << 24)
#define HEAP_BIT (1ul << 9)

Test(py_locals, values_and_a_frame_of_every_version)
{
	for (unsigned minor = 8; minor <= 13; minor++) {
		struct fake f;
		const struct py_layout *l;
		uint32_t d100[4] = { 0, 0, 0, 1u << 10 }, seven = 7;
		uint64_t int_t, str_t, tuple_t, cell_t, list_t, user_int_t, bytes_t;
		uint64_t vals[4], names[4], code, frame, cell, kinds = 0;
		struct py_local v, out[8];
		int n;

		fake_init(&f, minor);
		l = &f.t.l;
		int_t = type_obj(&f, "int", LONG_BIT_);
		str_t = type_obj(&f, "str", 1ul << 28);
		tuple_t = type_obj(&f, "tuple", 1ul << 26);
		list_t = type_obj(&f, "list", 1ul << 25);
		bytes_t = type_obj(&f, "bytes", 1ul << 27);
		cell_t = type_obj(&f, "cell", 0);
		/* A user class named int is not read as one. */
		user_int_t = type_obj(&f, "int", HEAP_BIT);

		cr_assert_eq(py_value_render(&f.t, int_obj(&f, int_t, d100, 4, true), &v), 0);
		cr_assert_str_eq(v.value, "-1267650600228229401496703205376", "3.%u", minor);
		cr_assert_str_eq(v.type, "int");
		cr_assert_eq(py_value_render(&f.t, int_obj(&f, int_t, d100, 0, false), &v), 0);
		cr_assert_str_eq(v.value, "0", "3.%u", minor);
		cr_assert_eq(py_value_render(&f.t, int_obj(&f, user_int_t, d100, 4, false), &v), 0);
		cr_assert_str_eq(v.value, "<int object>");
		vals[0] = object(&f, list_t, 64);
		put64(vals[0], l->var_size, 1);
		put64(vals[0], l->var_size + 8, vals[0]); /* holds itself */
		cr_assert_eq(py_value_render(&f.t, vals[0], &v), 0);
		cr_assert_str_eq(v.value, "<list of length 1>");
		cr_assert_eq(py_value_render(&f.t, vals[0] + 3, &v), -EFAULT);
		cr_assert_str_eq(v.value, "<unreadable>");
		cr_assert_eq(py_value_render(&f.t, 0x10, &v), -EFAULT);

		/* A frame: x = 7, an unbound slot, a cell holding 'hi'. */
		names[0] = ascii_str(&f, str_t, "x");
		names[1] = ascii_str(&f, str_t, "unbound");
		names[2] = ascii_str(&f, str_t, "c");
		vals[0] = int_obj(&f, int_t, &seven, 1, false);
		vals[1] = 0;
		cell = object(&f, cell_t, 32);
		put64(cell, l->cell_ref, ascii_str(&f, str_t, "hi"));
		vals[2] = cell;
		code = alloc(&f.a, 512);
		if (minor >= 11) {
			kinds = object(&f, bytes_t, l->bytes_data + 8);
			put64(kinds, l->bytes_size, 3);
			memcpy((void *)(uintptr_t)(kinds + l->bytes_data), "\x20\x20\x40", 3);
			put64(code, l->code_localsplusnames, tuple_obj(&f, tuple_t, names, 3));
			put64(code, l->code_localspluskinds, kinds);
		} else {
			put64(code, l->code_varnames, tuple_obj(&f, tuple_t, names, 2));
			put64(code, l->code_cellvars, tuple_obj(&f, tuple_t, names + 2, 1));
			put64(code, l->code_freevars, tuple_obj(&f, tuple_t, names, 0));
		}
		frame = alloc(&f.a, l->frame_localsplus + 64);
		for (int i = 0; i < 3; i++)
			put64(frame, l->frame_localsplus + 8 * (uint32_t)i, vals[i]);
		n = py_frame_locals(&f.t, frame, code, out, 8);
		cr_assert_eq(n, 2, "3.%u: %d", minor, n);
		cr_assert_str_eq(out[0].name, "x");
		cr_assert_str_eq(out[0].value, "7");
		cr_assert_str_eq(out[1].name, "c");
		cr_assert_str_eq(out[1].value, "'hi'");
		cr_assert_str_eq(out[1].type, "str");
		/* A frame whose code cannot be read is an error, not a guess. */
		cr_assert_lt(py_frame_locals(&f.t, frame, 0x20, out, 8), 0);
		free(f.a.mem);
	}
}

/* Random words, mostly pointers back into the arena, read as objects and
 * frames: every rendering ends, within its buffers. */
Test(py_locals, garbage_renders_safely)
{
	static struct py_local out[PY_LOCALS_MAX];
	uint64_t rng = 0x9e3779b9;
	long rendered = 0;

	for (int round = 0; round < 120; round++) {
		struct fake f;
		uint64_t base;

		fake_init(&f, 8 + round % 6);
		base = (uint64_t)(uintptr_t)f.a.mem;
		for (size_t i = 0; i < ARENA / 8; i++) {
			uint64_t v;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			v = rng >> 16;
			if (v & 7)
				v = base + ((v >> 1) % ARENA & ~7ull);
			memcpy(f.a.mem + i * 8, &v, 8);
		}
		for (int j = 0; j < 64; j++) {
			struct py_local v;
			uint64_t at = base + ((rng >> (j % 32)) % ARENA & ~7ull);
			int n;

			if (py_value_render(&f.t, at, &v) == 0)
				rendered++;
			cr_assert_lt(strlen(v.value), sizeof(v.value));
			n = py_frame_locals(&f.t, at, base + (at * 7 % ARENA & ~7ull), out, PY_LOCALS_MAX);
			cr_assert_leq(n, PY_LOCALS_MAX);
		}
		free(f.a.mem);
	}
	cr_log_info("%ld garbage values rendered", rendered);
}

/* A TensorImpl's shape, dtype and device found in its words as torch 1.13
 * and torch 2.14 laid them out (read from real tensors: float64 of shape
 * (4, 7) at storage offset 28), a CUDA device in either optional's
 * layout, sizes out of line past five dimensions, and words that are no
 * tensor. */
Test(py_locals, tensor_impl_words)
{
	static const uint64_t torch113[] = {
		0x7f849a3f7ab8, 1, 1, 0x3c46c250, 0x3897d6b0, 0, 0x3890e080, 0x3b48dc60,
		0x7f849b5421c0, 2, 4, 7, 0, 0, 0, 7, 1, 0, 0, 0, 0x1c, 0x1c,
		0x141ff00010007, 0x12800004001, 0x7f847b5cb0b0, 0x41,
	};
	static const uint64_t torch214[] = {
		0x7faf30df5c00, 0x8000000100000001, 0x2ae9dc30, 0x2b6f9b40, 0, 0x2b6f7030,
		0x7faf3458a570, 2, 4, 7, 0, 0, 0, 7, 1, 0, 0, 0, 0x1c, 0x1c,
		0x14101ff000007, 0x9400010001, 0xc0, 0x441,
	};
	uint64_t w[32];
	struct py_tensor_meta m;

	cr_assert_eq(py_tensor_meta_find(torch113, 26, 0, &m), 9);
	cr_assert(m.ndim == 2 && m.sizes[0] == 4 && m.sizes[1] == 7 && m.dtype == 7);
	cr_assert(m.device_type == 0 && m.device_index == -1 && !m.sizes_at);
	cr_assert_eq(py_tensor_meta_find(torch214, 24, 0, &m), 7);
	cr_assert(m.ndim == 2 && m.sizes[0] == 4 && m.sizes[1] == 7 && m.dtype == 7);
	cr_assert(m.device_type == 0 && m.device_index == -1);

	/* cuda:0, bfloat16: c10::optional (flag, type, index) and std's
	 * (type, index, flag) */
	memcpy(w, torch113, sizeof(torch113));
	w[22] = 0x141000101000f;
	cr_assert_eq(py_tensor_meta_find(w, 26, 0, &m), 9);
	cr_assert(m.dtype == 15 && m.device_type == 1 && m.device_index == 0);
	memcpy(w, torch214, sizeof(torch214));
	w[20] = 0x141010001000f;
	cr_assert_eq(py_tensor_meta_find(w, 24, 0, &m), 7);
	cr_assert(m.dtype == 15 && m.device_type == 1 && m.device_index == 0);

	/* seven dimensions: the sizes behind a pointer, for the caller */
	memcpy(w, torch214, sizeof(torch214));
	w[7] = 7;
	w[8] = 0x55aa00;
	cr_assert_eq(py_tensor_meta_find(w, 24, 0, &m), 7);
	cr_assert(m.ndim == 7 && m.sizes_at == 0x55aa00);

	/* numel not the product of the sizes; no set device; too few words */
	memcpy(w, torch214, sizeof(torch214));
	w[19] = 29;
	cr_assert_eq(py_tensor_meta_find(w, 24, 0, &m), -ENOENT);
	memcpy(w, torch214, sizeof(torch214));
	w[20] = 0x14101ff000007 & ~0xff00000000ull;
	cr_assert_eq(py_tensor_meta_find(w, 24, 0, &m), -ENOENT);
	cr_assert_eq(py_tensor_meta_find(torch214, 20, 0, &m), -ENOENT);
	memset(w, 0, sizeof(w));
	cr_assert_eq(py_tensor_meta_find(w, 32, 0, &m), -ENOENT);
}

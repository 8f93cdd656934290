// SPDX-License-Identifier: MIT
/*
 * The Python layout module on memory built here: a fake interpreter laid
 * out with each version's offsets, line tables of each format, the 3.13 to
 * 3.15 debug offsets, and garbage that must never crash or hang a walk.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/python/python.h"

#define ARENA (256 * 1024)

#include "tests/unit/py_arena.h"

static void put64(uint64_t at, uint32_t off, uint64_t v)
{
	memcpy((void *)(uintptr_t)(at + off), &v, sizeof(v));
}

static void put32(uint64_t at, uint32_t off, uint32_t v)
{
	memcpy((void *)(uintptr_t)(at + off), &v, sizeof(v));
}

static uint64_t ascii_str(struct arena *a, const struct py_layout *l, const char *s)
{
	uint64_t o = alloc(a, l->unicode_ascii_data + strlen(s) + 1);

	put64(o, l->unicode_length, strlen(s));
	/* kind 1, compact, ascii */
	put32(o, l->unicode_state, 1u << 2 | 1u << 5 | 1u << 6);
	memcpy((void *)(uintptr_t)(o + l->unicode_ascii_data), s, strlen(s) + 1);
	return o;
}

static uint64_t bytes_obj(struct arena *a, const struct py_layout *l, const uint8_t *b, size_t n)
{
	uint64_t o = alloc(a, l->bytes_data + n + 1);

	put64(o, l->bytes_size, n);
	memcpy((void *)(uintptr_t)(o + l->bytes_data), b, n);
	return o;
}

#define CODE_TYPE 0x7777000ull

static uint64_t code_obj(struct arena *a, const struct py_layout *l, const char *name,
			 int first, const uint8_t *table, size_t n)
{
	uint64_t c = alloc(a, 1024);

	put64(c, l->object_type, CODE_TYPE);
	put64(c, l->code_name, ascii_str(a, l, name));
	if (l->version >= 0x030b)
		put64(c, l->code_qualname, ascii_str(a, l, name));
	put64(c, l->code_filename, ascii_str(a, l, "/src/train.py"));
	put32(c, l->code_firstlineno, (uint32_t)first);
	put64(c, l->code_linetable, bytes_obj(a, l, table, n));
	return c;
}

/*
 * 3.13+: the layout as a process gives it, through the runtime's debug
 * offsets laid out at each version's own positions (base->debug_*). The
 * values are stand-ins laid out like 3.12's, the current frame hanging
 * from the thread state itself.
 */
static void fake_debug_layout(const struct py_layout *base, struct py_layout *l)
{
	const struct py_layout *v = py_layout_find(3, 12);
	const struct { uint32_t pos; uint64_t value; } fields[] = {
		{ base->debug_runtime_interp_head, v->runtime_interp_head },
		{ base->debug_interp_next, v->interp_next },
		{ base->debug_interp_tstate_head, v->interp_tstate_head },
		{ base->debug_interp_gil, v->interp_gil },
		{ base->debug_gil_state, 2000 },
		{ base->debug_gil_locked, 2000 + v->gil_locked },
		{ base->debug_gil_holder, 2000 + v->gil_holder },
		{ base->debug_tstate_next, v->tstate_next },
		{ base->debug_tstate_interp, v->tstate_interp },
		{ base->debug_tstate_frame, v->tstate_frame },
		{ base->debug_tstate_thread_id, v->tstate_thread_id },
		{ base->debug_tstate_native_thread_id, v->tstate_native_thread_id },
		{ base->debug_tstate_datastack_chunk, v->tstate_datastack_chunk },
		{ base->debug_frame_back, v->frame_back },
		{ base->debug_frame_code, v->frame_code },
		{ base->debug_frame_instr, v->frame_instr },
		{ base->debug_frame_owner, v->frame_owner },
		{ base->debug_code_filename, v->code_filename },
		{ base->debug_code_name, v->code_name },
		{ base->debug_code_qualname, v->code_qualname },
		{ base->debug_code_linetable, v->code_linetable },
		{ base->debug_code_firstlineno, v->code_firstlineno },
		{ base->debug_code_adaptive, v->code_adaptive },
		{ base->debug_interp_modules, v->interp_modules },
		{ base->debug_frame_localsplus, v->frame_localsplus },
		{ base->debug_code_localsplusnames, v->code_localsplusnames },
		{ base->debug_code_localspluskinds, v->code_localspluskinds },
	};
	uint8_t b[PY_DEBUG_OFFSETS_MAX] = { 0 };
	char err[128];

	cr_assert_leq(base->debug_size, sizeof(b), "3.%u: %u bytes of debug offsets",
		      base->version & 0xff, base->debug_size);
	memcpy(b, "xdebugpy", 8);
	put64((uint64_t)(uintptr_t)b, base->debug_version, (uint64_t)base->version << 16 | 0xf0);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		put64((uint64_t)(uintptr_t)b, fields[i].pos, fields[i].value);
	cr_assert_eq(py_layout_from_debug_offsets(base, b, sizeof(b), l, err, sizeof(err)), 0,
		     "3.%u: %s", base->version & 0xff, err);
	cr_assert_eq(l->frame_code, v->frame_code);
	cr_assert_eq(l->tstate_native_thread_id, v->tstate_native_thread_id);
	cr_assert_eq(l->gil_holder, v->gil_holder);
}

struct fake {
	struct arena a;
	struct py_target t;
	uint64_t tstate;
	uint64_t frames[8];
	uint64_t codes[8];
};

/* A runtime with one interpreter and one thread whose chain is
 * main <- step <- [shim] <- loss (innermost): two evaluator calls. */
static void fake_build(struct fake *f, unsigned minor)
{
	const struct py_layout *base = py_layout_find(3, minor);
	struct py_layout *l = &f->t.l;
	/* One entry per code unit: line first+1 for 8 units (3.11+ codes). */
	static const uint8_t loc[] = { 0x80 | 13 << 3 | 7, 0x02 };
	static const uint8_t lnotab[] = { 0, 1 };
	const char *names[] = { "loss", "step", "main" };
	uint64_t interp, rt, cframe = 0;
	bool shim = minor >= 12;
	int n = shim ? 4 : 3;

	cr_assert(base, "no layout for 3.%u", minor);
	memset(f, 0, sizeof(*f));
	f->a.mem = calloc(1, ARENA);
	cr_assert(f->a.mem);
	f->a.used = 16;
	*l = *base;
	if (minor >= 13)
		fake_debug_layout(base, l);
	f->t.mem.read = arena_read;
	f->t.mem.ctx = &f->a;
	f->t.code_type = CODE_TYPE;
	rt = alloc(&f->a, 4096);
	interp = alloc(&f->a, 4096);
	f->tstate = alloc(&f->a, 4096);
	f->t.runtime = rt;
	put64(rt, l->runtime_interp_head, interp);
	put64(interp, l->interp_tstate_head, f->tstate);
	put64(f->tstate, l->tstate_interp, interp);
	put64(f->tstate, l->tstate_thread_id, 0x1234);
	if (minor >= 11)
		put64(f->tstate, l->tstate_native_thread_id, 4242);
	for (int i = 0; i < 3; i++)
		f->codes[i] = minor >= 11 ? code_obj(&f->a, l, names[i], 10 * (i + 1), loc, sizeof(loc))
					  : code_obj(&f->a, l, names[i], 10 * (i + 1), lnotab, sizeof(lnotab));
	for (int i = 0; i < n; i++)
		f->frames[i] = alloc(&f->a, 256);
	/* frames[]: loss, step, (shim), main */
	for (int i = 0, c = 0; i < n; i++) {
		uint64_t fr = f->frames[i];

		if (i + 1 < n)
			put64(fr, l->frame_back, f->frames[i + 1]);
		if (shim && i == 2) {
			((uint8_t *)(uintptr_t)fr)[l->frame_owner] = (uint8_t)l->frame_owner_shim;
			continue;
		}
		/* 3.14+: a stack reference, tagged as a deferred one is. */
		put64(fr, l->frame_code, f->codes[c] | (l->stackref_tag ? 1 : 0));
		if (minor >= 11)
			put64(fr, l->frame_instr, f->codes[c] + l->code_adaptive + 2);
		else
			put32(fr, l->frame_instr, 4);
		if (minor == 11 && c == 1)
			((uint8_t *)(uintptr_t)fr)[l->frame_is_entry] = 1;
		c++;
	}
	if (minor == 11 || minor == 12) {
		cframe = alloc(&f->a, 64);
		put64(f->tstate, l->tstate_frame, cframe);
		put64(cframe, l->cframe_current_frame, f->frames[0]);
	} else {
		put64(f->tstate, l->tstate_frame, f->frames[0]);
	}
}

static void check_version(unsigned minor)
{
	struct fake f;
	struct py_thread th[4];
	struct py_raw_frame out[16];
	struct py_walk_scratch s;
	struct py_code_cache *cache;
	enum py_walk_end end;
	const char *want[] = { "loss", "step", "main" };
	char err[128];
	int n;

	fake_build(&f, minor);
	cr_assert_eq(py_layout_validate(&f.t, err, sizeof(err)), 0, "%s", err);
	n = py_threads_read(&f.t, th, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(th[0].tstate, f.tstate);
	cr_assert_eq(th[0].thread_id, 0x1234);
	cr_assert_eq(th[0].native_thread_id, minor >= 11 ? 4242u : 0u);
	cr_assert_eq(py_walk_scratch_init(&s), 0);
	cr_assert_eq(py_code_cache_new(&cache), 0);
	n = py_frames_read(&f.t, f.tstate, &s, out, 16, &end);
	cr_assert_eq(end, PY_WALK_COMPLETE);
	cr_assert_eq(n, 3, "3.%u: %d frames (the shim is skipped)", minor, n);
	for (int i = 0; i < 3; i++) {
		struct py_code *c;

		cr_assert_eq(out[i].code, f.codes[i]);
		cr_assert_eq(py_code_get(&f.t, cache, out[i].code, &c), 0);
		cr_assert_str_eq(c->name, want[i]);
		cr_assert_str_eq(c->file, "/src/train.py");
		/* Every format here puts the instruction on the first line + 1. */
		cr_assert_eq(py_code_line(&f.t, c, out[i].instr), 10u * (i + 1) + 1,
			     "3.%u %s: line %u", minor, want[i], py_code_line(&f.t, c, out[i].instr));
	}
	/* Where each evaluator call began: every frame up to 3.10; "step"
	 * (is_entry in 3.11, above the shim from 3.12) and nothing else. */
	if (minor >= 11) {
		cr_assert(!out[0].entry);
		cr_assert(out[1].entry, "3.%u: step starts an evaluator call", minor);
	} else {
		cr_assert(out[0].entry && out[1].entry && out[2].entry);
	}
	py_code_cache_free(cache);
	py_walk_scratch_free(&s);
	free(f.a.mem);
}

Test(py_layout, walks_a_fake_interpreter_of_each_version)
{
	for (unsigned minor = 8; minor <= 15; minor++)
		check_version(minor);
}

Test(py_layout, a_code_object_reused_for_another_is_read_again)
{
	struct fake f;
	struct py_code_cache *cache;
	struct py_code *c;

	fake_build(&f, 12);
	cr_assert_eq(py_code_cache_new(&cache), 0);
	cr_assert_eq(py_code_get(&f.t, cache, f.codes[0], &c), 0);
	cr_assert_str_eq(c->name, "loss");
	/* Freed and its memory reused: another name at the same address. */
	put64(f.codes[0], f.t.l.code_qualname, ascii_str(&f.a, &f.t.l, "other"));
	cr_assert_eq(py_code_get(&f.t, cache, f.codes[0], &c), 0);
	cr_assert_str_eq(c->name, "other");
	/* Not a code object any more. */
	put64(f.codes[0], f.t.l.object_type, 0x5555);
	cr_assert_lt(py_code_get(&f.t, cache, f.codes[0], &c), 0);
	py_code_cache_free(cache);
	free(f.a.mem);
}

/* A walk's known code objects are checked in one read: none of their own
 * after it, until the check is dropped; one whose header changed (its
 * memory reused) is read again, never trusted. */
Test(py_layout, code_headers_checked_in_one_read)
{
	struct fake f;
	struct py_code_cache *cache;
	struct py_raw_frame out[16];
	struct py_walk_scratch s;
	enum py_walk_end end;
	struct py_code *c;
	int n, reads;

	fake_build(&f, 12);
	f.t.mem.readv = arena_readv;
	cr_assert_eq(py_walk_scratch_init(&s), 0);
	cr_assert_eq(py_code_cache_new(&cache), 0);
	n = py_frames_read(&f.t, f.tstate, &s, out, 16, &end);
	cr_assert_eq(n, 3);
	/* Not cached yet: nothing to check, each read as it is met. */
	py_code_prefetch(&f.t, cache, out, n);
	cr_assert_eq(f.a.readvs, 0);
	for (int i = 0; i < n; i++)
		cr_assert_eq(py_code_get(&f.t, cache, out[i].code, &c), 0);
	py_code_prefetch_drop(cache);
	/* Cached: one read for the three, then none. */
	py_code_prefetch(&f.t, cache, out, n);
	cr_assert_eq(f.a.readvs, 1);
	reads = f.a.reads;
	for (int i = 0; i < n; i++) {
		cr_assert_eq(py_code_get(&f.t, cache, out[i].code, &c), 0);
		cr_assert_str_eq(c->name, i == 0 ? "loss" : i == 1 ? "step" : "main");
	}
	cr_assert_eq(f.a.reads, reads, "%d reads after the check", f.a.reads - reads);
	py_code_prefetch_drop(cache);
	/* Dropped: read again. */
	cr_assert_eq(py_code_get(&f.t, cache, out[0].code, &c), 0);
	cr_assert_gt(f.a.reads, reads);
	/* Reused for another function: the check fails, the header is read. */
	put64(f.codes[0], f.t.l.code_qualname, ascii_str(&f.a, &f.t.l, "other"));
	py_code_prefetch(&f.t, cache, out, n);
	cr_assert_eq(f.a.readvs, 2);
	cr_assert_eq(py_code_get(&f.t, cache, out[0].code, &c), 0);
	cr_assert_str_eq(c->name, "other");
	cr_assert_eq(py_code_get(&f.t, cache, out[1].code, &c), 0);
	cr_assert_str_eq(c->name, "step");
	py_code_prefetch_drop(cache);
	/* Not a code object any more: refused, checked or not. */
	put64(f.codes[1], f.t.l.object_type, 0x5555);
	py_code_prefetch(&f.t, cache, out, n);
	cr_assert_lt(py_code_get(&f.t, cache, out[1].code, &c), 0);
	py_code_prefetch_drop(cache);
	py_code_cache_free(cache);
	py_walk_scratch_free(&s);
	free(f.a.mem);
}

/* From 3.11 the frames come from one copy of the data-stack chunk, the
 * thread state's fields from one read; on 3.11 and 3.12, where the head
 * hangs on a cframe, the head comes with the chunk where the memory takes
 * several ranges at once. The same frames every way. */
Test(py_layout, the_head_and_the_data_stack_in_two_reads)
{
	for (unsigned minor = 11; minor <= 15; minor++) {
		struct fake f;
		struct py_raw_frame out[16];
		struct py_walk_scratch s;
		enum py_walk_end end;
		int nframes = minor >= 12 ? 4 : 3; /* with the shim */

		fake_build(&f, minor);
		cr_assert_eq(py_walk_scratch_init(&s), 0);
		/* The fake's frames lie one after another: a chunk of them. */
		put64(f.tstate, f.t.l.tstate_datastack_chunk, f.frames[0] - f.t.l.chunk_data);
		put64(f.tstate, f.t.l.tstate_datastack_top, f.frames[nframes - 1] + 256);
		for (int vectored = 0; vectored < 2; vectored++) {
			int n, calls, want = 2 + (minor <= 12 && !vectored);

			f.t.mem.readv = vectored ? arena_readv : NULL;
			f.a.reads = f.a.readvs = 0;
			n = py_frames_read(&f.t, f.tstate, &s, out, 16, &end);
			cr_assert_eq(end, PY_WALK_COMPLETE);
			cr_assert_eq(n, 3, "3.%u: %d frames", minor, n);
			for (int i = 0; i < 3; i++)
				cr_assert_eq(out[i].code, f.codes[i]);
			cr_assert_eq(s.head, f.frames[0]);
			calls = f.a.reads + f.a.readvs;
			cr_assert_eq(calls, want, "3.%u%s: %d reads, not %d", minor,
				     vectored ? " vectored" : "", calls, want);
		}
		py_walk_scratch_free(&s);
		free(f.a.mem);
	}
}

Test(py_layout, a_cycle_ends_the_walk)
{
	struct fake f;
	struct py_raw_frame out[64];
	struct py_walk_scratch s;
	enum py_walk_end end;
	int n;

	fake_build(&f, 10);
	put64(f.frames[2], f.t.l.frame_back, f.frames[0]);
	cr_assert_eq(py_walk_scratch_init(&s), 0);
	n = py_frames_read(&f.t, f.tstate, &s, out, 64, &end);
	cr_assert_eq(end, PY_WALK_CYCLE);
	cr_assert_eq(n, 3);
	py_walk_scratch_free(&s);
	free(f.a.mem);
}

Test(py_layout, line_tables_of_each_format)
{
	struct py_target t = { 0 };
	struct py_code c = { .firstlineno = 100 };
	/* 3.8/3.9 co_lnotab: bytes 0-5 line 100, 6-9 line 101, 10- line 103 */
	static const uint8_t lnotab[] = { 6, 1, 4, 2 };
	/* 3.10: bytes 0-3 line 101, 4-9 no line, 10-13 line 103 */
	static const uint8_t t310[] = { 4, 1, 6, (uint8_t)-128, 4, 2 };
	/* 3.11+: 2 units +1 line, 3 units +2 (no column), 1 unit long form
	 * -1, 1 unit one-line form +1 */
	static const uint8_t loc[] = { 0x80 | 13 << 3 | 1, 0x02, 0x80 | 13 << 3 | 2, 0x04,
				       0x80 | 14 << 3 | 0, 0x03, 0x00, 0x01, 0x02,
				       0x80 | 11 << 3 | 0, 0x05, 0x06 };

	t.l.version = 0x0308;
	c.linetable = (uint8_t *)lnotab;
	c.linetable_len = sizeof(lnotab);
	cr_assert_eq(py_code_line(&t, &c, UINT64_MAX), 100);
	cr_assert_eq(py_code_line(&t, &c, 4), 100);
	cr_assert_eq(py_code_line(&t, &c, 6), 101);
	cr_assert_eq(py_code_line(&t, &c, 12), 103);

	t.l.version = 0x030a;
	c.linetable = (uint8_t *)t310;
	c.linetable_len = sizeof(t310);
	cr_assert_eq(py_code_line(&t, &c, 2), 101);
	cr_assert_eq(py_code_line(&t, &c, 11), 103);

	t.l.version = 0x030c;
	c.linetable = (uint8_t *)loc;
	c.linetable_len = sizeof(loc);
	c.code_start = 0x1000;
	cr_assert_eq(py_code_line(&t, &c, 0x1000), 101);
	cr_assert_eq(py_code_line(&t, &c, 0x1002), 101);
	cr_assert_eq(py_code_line(&t, &c, 0x1004), 103);
	cr_assert_eq(py_code_line(&t, &c, 0x1008), 103);
	cr_assert_eq(py_code_line(&t, &c, 0x100a), 102);
	cr_assert_eq(py_code_line(&t, &c, 0x100c), 103);
}

static void debug_offsets(uint8_t *b, const struct py_layout *base)
{
	memset(b, 0, PY_DEBUG_OFFSETS_MAX);
	memcpy(b, "xdebugpy", 8);
	put64((uint64_t)(uintptr_t)b, base->debug_version, (uint64_t)base->version << 16 | 0xf0);
	put64((uint64_t)(uintptr_t)b, base->debug_tstate_frame, 72);
	put64((uint64_t)(uintptr_t)b, base->debug_gil_state, 1000);
	put64((uint64_t)(uintptr_t)b, base->debug_gil_locked, 1016);
	put64((uint64_t)(uintptr_t)b, base->debug_gil_holder, 1008);
}

/* Each version's debug offsets where that version's struct has them; a
 * bad cookie, another version's, a free-threaded build and an implausible
 * offset are refused. */
Test(py_layout, debug_offsets_of_313_to_315)
{
	for (unsigned minor = 13; minor <= 15; minor++) {
		const struct py_layout *base = py_layout_find(3, minor);
		uint8_t b[PY_DEBUG_OFFSETS_MAX];
		struct py_layout l;
		char err[128];

		cr_assert(base, "3.%u", minor);
		debug_offsets(b, base);
		cr_assert_eq(py_layout_from_debug_offsets(base, b, sizeof(b), &l, err, sizeof(err)), 0,
			     "3.%u: %s", minor, err);
		cr_assert_eq(l.tstate_frame, 72);
		cr_assert_eq(l.gil_locked, 16);
		cr_assert_eq(l.gil_holder, 8);

		b[0] = 'y';
		cr_assert_eq(py_layout_from_debug_offsets(base, b, sizeof(b), &l, err, sizeof(err)),
			     -EPROTO);
		debug_offsets(b, base);
		put64((uint64_t)(uintptr_t)b, base->debug_version, 0x030c00f0);
		cr_assert_eq(py_layout_from_debug_offsets(base, b, sizeof(b), &l, err, sizeof(err)),
			     -EPROTO);
		/* The neighbour version's struct read at these positions. */
		debug_offsets(b, py_layout_find(3, minor == 15 ? 14 : minor + 1));
		cr_assert_eq(py_layout_from_debug_offsets(base, b, sizeof(b), &l, err, sizeof(err)),
			     -EPROTO, "3.%u took another version's debug offsets", minor);
		debug_offsets(b, base);
		put64((uint64_t)(uintptr_t)b, base->debug_free_threaded, 1);
		cr_assert_eq(py_layout_from_debug_offsets(base, b, sizeof(b), &l, err, sizeof(err)),
			     -ENOTSUP);
		cr_assert(strstr(err, "free-threaded"), "%s", err);
		debug_offsets(b, base);
		put64((uint64_t)(uintptr_t)b, base->debug_tstate_frame, 1ull << 40);
		cr_assert_eq(py_layout_from_debug_offsets(base, b, sizeof(b), &l, err, sizeof(err)),
			     -EPROTO);
	}
}

/* 3.14 and 3.15 differ from 3.13 where the headers say: the struct of
 * debug offsets grew, frames hold tagged references, and the entry frame
 * is the interpreter's (3.14 keeps FRAME_OWNED_BY_CSTACK above it). */
Test(py_layout, what_changed_in_314_and_315)
{
	const struct py_layout *l13 = py_layout_find(3, 13), *l14 = py_layout_find(3, 14),
			       *l15 = py_layout_find(3, 15);

	cr_assert(l13 && l14 && l15);
	cr_assert_eq(l13->stackref_tag, 0);
	cr_assert_eq(l14->stackref_tag, 3);
	cr_assert_eq(l15->stackref_tag, 3);
	cr_assert_eq(l13->frame_owner_shim, 3);
	cr_assert_eq(l14->frame_owner_shim, 3);
	cr_assert_eq(l15->frame_owner_shim, 3);
	cr_assert_gt(l14->debug_size, l13->debug_size);
	cr_assert_gt(l15->debug_size, l14->debug_size);
	cr_assert_neq(l14->debug_tstate_frame, l13->debug_tstate_frame);
	cr_assert_neq(l15->debug_tstate_native_thread_id, l14->debug_tstate_native_thread_id);
}

/* A 3.14 shim owned by the C stack (4, above the interpreter's 3) is
 * skipped as the interpreter's own is. */
Test(py_layout, a_314_cstack_frame_is_a_shim)
{
	struct fake f;
	struct py_raw_frame out[16];
	struct py_walk_scratch s;
	enum py_walk_end end;
	int n;

	fake_build(&f, 14);
	((uint8_t *)(uintptr_t)f.frames[2])[f.t.l.frame_owner] = 4;
	cr_assert_eq(py_walk_scratch_init(&s), 0);
	n = py_frames_read(&f.t, f.tstate, &s, out, 16, &end);
	cr_assert_eq(end, PY_WALK_COMPLETE);
	cr_assert_eq(n, 3);
	cr_assert(out[1].entry);
	cr_assert_eq(out[0].code, f.codes[0], "the tag is not part of the address");
	py_walk_scratch_free(&s);
	free(f.a.mem);
}

static void count_name(void *ctx, uint64_t ident, const char *name)
{
	(void)ident;
	cr_assert_lt(strlen(name), 256);
	(*(long *)ctx)++;
}

/* Random memory where pointers mostly point back into it: every walk ends,
 * nothing reads outside what the callback gives. */
Test(py_layout, garbage_never_crashes_or_hangs)
{
	struct py_walk_scratch s;
	struct py_code_cache *cache;
	static struct py_raw_frame out[PY_MAX_DEPTH];
	struct py_thread th[64];
	struct arena a = { .mem = malloc(ARENA) };
	uint64_t base = (uint64_t)(uintptr_t)a.mem, rng = 0x12345678;
	long frames = 0, codes = 0, names = 0;

	cr_assert(a.mem);
	cr_assert_eq(py_walk_scratch_init(&s), 0);
	cr_assert_eq(py_code_cache_new(&cache), 0);
	for (int round = 0; round < 300; round++) {
		unsigned minor = 8 + round % 8;
		struct py_target t = { .l = *py_layout_find(3, minor) };
		enum py_walk_end end;
		int n;

		for (size_t i = 0; i < ARENA / 8; i++) {
			uint64_t v;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			v = rng >> 16;
			/* Most words are aligned pointers into the arena. */
			if (v & 7)
				v = base + ((v >> 1) % ARENA & ~7ull);
			memcpy(a.mem + i * 8, &v, 8);
		}
		t.mem.read = arena_read;
		t.mem.ctx = &a;
		t.runtime = base + (rng % (ARENA / 2) & ~7ull);
		t.code_type = round % 2 ? 0 : CODE_TYPE;
		n = py_threads_read(&t, th, 64);
		cr_assert_leq(n, 64);
		/* The thread-name lookup through dicts of garbage, too. */
		{
			struct py_names_cache cache = { 0 };

			py_thread_names(&t, n > 0 ? th[0].interp : base + 128, &cache, count_name,
					&names);
		}
		for (int i = 0; i < (n > 0 ? n : 1); i++) {
			uint64_t ts = n > 0 ? th[i].tstate : base + 64;

			n = py_frames_read(&t, ts, &s, out, PY_MAX_DEPTH, &end);
			cr_assert_leq(n, PY_MAX_DEPTH);
			frames += n;
			for (int j = 0; j < n && j < 32; j++) {
				struct py_code *c;

				if (py_code_get(&t, cache, out[j].code, &c) == 0) {
					(void)py_code_line(&t, c, out[j].instr);
					codes++;
				}
			}
		}
	}
	/* The garbage was walked, not refused at the door. */
	cr_assert_gt(frames, 1000, "%ld frames walked", frames);
	cr_log_info("%ld frames walked, %ld code objects read, %ld names", frames, codes, names);
	py_code_cache_free(cache);
	py_walk_scratch_free(&s);
	free(a.mem);
}

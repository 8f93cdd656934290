// SPDX-License-Identifier: MIT
/*
 * CPython layouts and the walks over them: interpreters, thread states and
 * frame chains. Versions differ in where the current frame hangs (tstate
 * ->frame up to 3.10, ->cframe->current_frame in 3.11-3.12,
 * ->current_frame from 3.13) and in how an evaluator call's first frame is
 * marked (is_entry in 3.11, a shim frame below it from 3.12, owned by the
 * C stack up to 3.13 and by the interpreter from 3.14).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "symbolize/python/python.h"

#include "symbolize/python/layouts_gen.h"

#define MAX_INTERPRETERS 64
#define MAX_THREADS 65536
/* The part of the data-stack chunk read in one call. */
#define CHUNK_MAX (256 * 1024)
/* A thread state's fields are read in one call up to this offset. */
#define TSTATE_READ_MAX 1024

const struct py_layout *py_layout_find(unsigned major, unsigned minor)
{
	unsigned v = major << 8 | minor;

	for (size_t i = 0; i < sizeof(py_layouts_gen) / sizeof(py_layouts_gen[0]); i++)
		if (py_layouts_gen[i].version == v)
			return &py_layouts_gen[i];
	return NULL;
}

void py_layout_range(unsigned *lo, unsigned *hi)
{
	*lo = 0xffff;
	*hi = 0;
	for (size_t i = 0; i < sizeof(py_layouts_gen) / sizeof(py_layouts_gen[0]); i++) {
		if (py_layouts_gen[i].version < *lo)
			*lo = py_layouts_gen[i].version;
		if (py_layouts_gen[i].version > *hi)
			*hi = py_layouts_gen[i].version;
	}
}

static uint64_t u64_at(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* An offset from the debug struct, bounded: no field lies beyond 64 KiB. */
static int debug_field(const uint8_t *b, size_t len, uint32_t pos, uint32_t *out)
{
	uint64_t v;

	if ((size_t)pos + 8 > len)
		return -EPROTO;
	v = u64_at(b, pos);
	if (v > 65536)
		return -EPROTO;
	*out = (uint32_t)v;
	return 0;
}

int py_layout_from_debug_offsets(const struct py_layout *base,
				 const uint8_t *b, size_t len,
				 struct py_layout *out, char *err, size_t errlen)
{
	const struct { uint32_t pos; uint32_t *field; } map[] = {
		{ base->debug_runtime_interp_head, &out->runtime_interp_head },
		{ base->debug_interp_next, &out->interp_next },
		{ base->debug_interp_tstate_head, &out->interp_tstate_head },
		{ base->debug_interp_gil, &out->interp_gil },
		{ base->debug_gil_locked, &out->gil_locked },
		{ base->debug_gil_holder, &out->gil_holder },
		{ base->debug_tstate_next, &out->tstate_next },
		{ base->debug_tstate_interp, &out->tstate_interp },
		{ base->debug_tstate_frame, &out->tstate_frame },
		{ base->debug_tstate_thread_id, &out->tstate_thread_id },
		{ base->debug_tstate_native_thread_id, &out->tstate_native_thread_id },
		{ base->debug_tstate_datastack_chunk, &out->tstate_datastack_chunk },
		{ base->debug_frame_back, &out->frame_back },
		{ base->debug_frame_code, &out->frame_code },
		{ base->debug_frame_instr, &out->frame_instr },
		{ base->debug_frame_owner, &out->frame_owner },
		{ base->debug_code_filename, &out->code_filename },
		{ base->debug_code_name, &out->code_name },
		{ base->debug_code_qualname, &out->code_qualname },
		{ base->debug_code_linetable, &out->code_linetable },
		{ base->debug_code_firstlineno, &out->code_firstlineno },
		{ base->debug_code_adaptive, &out->code_adaptive },
		{ base->debug_interp_modules, &out->interp_modules },
		{ base->debug_frame_localsplus, &out->frame_localsplus },
		{ base->debug_code_localsplusnames, &out->code_localsplusnames },
		{ base->debug_code_localspluskinds, &out->code_localspluskinds },
	};
	uint32_t gil_state;
	uint64_t version;

	*out = *base;
	if (len < 16 || memcmp(b, "xdebugpy", 8)) {
		errbuf_set(err, errlen, 0, "_PyRuntime does not start with the debug offsets cookie");
		return -EPROTO;
	}
	if ((size_t)base->debug_version + 8 > len || (size_t)base->debug_size > len) {
		errbuf_set(err, errlen, 0, "the debug offsets are cut short");
		return -EPROTO;
	}
	version = u64_at(b, base->debug_version);
	/* PY_VERSION_HEX: 0x030d00f0; the minor version must be ours (the
	 * positions above are that version's). */
	if ((version >> 16) != base->version) {
		errbuf_set(err, errlen, 0, "the debug offsets are of version %#llx, not 3.%u",
		       (unsigned long long)version, base->version & 0xff);
		return -EPROTO;
	}
	if (u64_at(b, base->debug_free_threaded)) {
		errbuf_set(err, errlen, 0, "a free-threaded build (its layouts are not supported)");
		return -ENOTSUP;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (debug_field(b, len, map[i].pos, map[i].field) < 0) {
			errbuf_set(err, errlen, 0, "implausible debug offsets");
			return -EPROTO;
		}
	/* The GIL's fields are given within the interpreter's own _gil; the
	 * interpreter's ceval.gil points at the GIL it uses (maybe another's). */
	if (debug_field(b, len, base->debug_gil_state, &gil_state) < 0 ||
	    out->gil_locked < gil_state || out->gil_holder < gil_state) {
		errbuf_set(err, errlen, 0, "implausible debug offsets");
		return -EPROTO;
	}
	out->gil_locked -= gil_state;
	out->gil_holder -= gil_state;
	return 0;
}

int py_read(const struct py_target *t, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = t->mem.read(t->mem.ctx, addr, buf, len);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int read_ptr(const struct py_target *t, uint64_t addr, uint64_t *out)
{
	return py_read(t, addr, out, sizeof(*out));
}

/* 3.8-3.11 name the holder in the runtime; 3.12+ in each interpreter's GIL,
 * which is held only while `locked`. */
int py_gil_holder(const struct py_target *t, uint64_t interp, uint64_t *tstate)
{
	const struct py_layout *l = &t->l;
	uint64_t gil;
	uint8_t b[64];
	uint32_t lo, hi;
	int32_t locked = 0;
	int ret;

	*tstate = 0;
	if (l->version <= 0x030b) {
		ret = read_ptr(t, t->runtime + l->runtime_gil_tstate, tstate);
		if (ret < 0)
			*tstate = 0;
		return ret;
	}
	ret = read_ptr(t, interp + l->interp_gil, &gil);
	if (ret < 0)
		return ret;
	/* Both fields in one read where they lie together (they do: a few
	 * bytes apart at the GIL's start). locked is -1 before the GIL is
	 * made and after it is gone, its last holder left as it was. */
	lo = l->gil_locked < l->gil_holder ? l->gil_locked : l->gil_holder;
	hi = l->gil_locked + sizeof(locked) > l->gil_holder + sizeof(*tstate) ?
	     l->gil_locked + sizeof(locked) : l->gil_holder + sizeof(*tstate);
	if (hi - lo <= sizeof(b)) {
		ret = py_read(t, gil + lo, b, hi - lo);
		if (ret < 0)
			return ret;
		memcpy(&locked, b + (l->gil_locked - lo), sizeof(locked));
		if (locked > 0)
			memcpy(tstate, b + (l->gil_holder - lo), sizeof(*tstate));
		return 0;
	}
	ret = py_read(t, gil + l->gil_locked, &locked, sizeof(locked));
	if (ret < 0 || locked <= 0)
		return ret;
	ret = read_ptr(t, gil + l->gil_holder, tstate);
	if (ret < 0)
		*tstate = 0;
	return ret;
}

/* The fields of a thread state that a listing and a walk use. */
struct tstate_view {
	uint64_t next, thread_id, native_thread_id, frame, chunk, top;
};

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* From one read of the state's first bytes: the fields lie within a few
 * hundred bytes of its start, and a read each was most of a listing's
 * cost. */
static int tstate_view_read(const struct py_target *t, uint64_t ts, struct tstate_view *v)
{
	const struct py_layout *l = &t->l;
	bool v311 = l->version >= 0x030b;
	uint32_t end = max_u32(max_u32(l->tstate_next, l->tstate_thread_id), l->tstate_frame);
	uint8_t b[TSTATE_READ_MAX];
	int ret;

	memset(v, 0, sizeof(*v));
	if (v311)
		end = max_u32(end, max_u32(l->tstate_native_thread_id,
					    max_u32(l->tstate_datastack_chunk, l->tstate_datastack_top)));
	end += 8;
	if (end > sizeof(b))
		return -EPROTO;
	ret = py_read(t, ts, b, end);
	if (ret < 0)
		return ret;
	v->next = u64_at(b, l->tstate_next);
	v->thread_id = u64_at(b, l->tstate_thread_id);
	v->frame = u64_at(b, l->tstate_frame);
	if (v311) {
		v->native_thread_id = u64_at(b, l->tstate_native_thread_id);
		v->chunk = u64_at(b, l->tstate_datastack_chunk);
		v->top = u64_at(b, l->tstate_datastack_top);
	}
	return 0;
}

int py_threads_read(const struct py_target *t, struct py_thread *out, int max)
{
	const struct py_layout *l = &t->l;
	uint64_t interp, ts;
	int n = 0, ret;

	ret = read_ptr(t, t->runtime + l->runtime_interp_head, &interp);
	if (ret < 0)
		return ret;
	for (int i = 0; interp && i < MAX_INTERPRETERS; i++) {
		uint64_t holder;

		py_gil_holder(t, interp, &holder); /* 0: no thread is said to hold it */

		if (read_ptr(t, interp + l->interp_tstate_head, &ts) < 0)
			break;
		for (int j = 0; ts && j < MAX_THREADS && n < max; j++) {
			struct py_thread *th = &out[n];
			struct tstate_view v;

			memset(th, 0, sizeof(*th));
			th->tstate = ts;
			th->interp = interp;
			th->gil = holder && holder == ts;
			if (tstate_view_read(t, ts, &v) < 0)
				break;
			th->thread_id = v.thread_id;
			th->native_thread_id = v.native_thread_id;
			n++;
			if (v.next == th->tstate)
				break;
			ts = v.next;
		}
		if (read_ptr(t, interp + l->interp_next, &interp) < 0)
			break;
	}
	return n;
}

int py_layout_validate(const struct py_target *t, char *err, size_t errlen)
{
	const struct py_layout *l = &t->l;
	uint64_t interp, ts, back;

	if (read_ptr(t, t->runtime + l->runtime_interp_head, &interp) < 0 || !interp) {
		errbuf_set(err, errlen, 0, "no interpreter yet");
		return -EAGAIN;
	}
	if (read_ptr(t, interp + l->interp_tstate_head, &ts) < 0 || !ts) {
		errbuf_set(err, errlen, 0, "no thread state yet");
		return -EAGAIN;
	}
	if (read_ptr(t, ts + l->tstate_interp, &back) < 0 || back != interp) {
		errbuf_set(err, errlen, 0, "the layout of Python 3.%u does not fit this build "
		       "(a debug build?)", l->version & 0xff);
		return -EPROTO;
	}
	return 0;
}

int py_walk_scratch_init(struct py_walk_scratch *s)
{
	memset(s, 0, sizeof(*s));
	s->seen_cap = 16384;
	s->seen = calloc(s->seen_cap, sizeof(*s->seen));
	s->seen_epoch = calloc(s->seen_cap, sizeof(*s->seen_epoch));
	s->chunk_cap = CHUNK_MAX;
	s->chunk = malloc(s->chunk_cap + 8); /* + a head read with it */
	if (!s->seen || !s->seen_epoch || !s->chunk) {
		py_walk_scratch_free(s);
		return -ENOMEM;
	}
	return 0;
}

void py_walk_scratch_free(struct py_walk_scratch *s)
{
	free(s->seen);
	free(s->seen_epoch);
	free(s->chunk);
	memset(s, 0, sizeof(*s));
}

/* Adds addr to the visited set; false if it was there: a cycle. */
static bool seen_add(struct py_walk_scratch *s, uint64_t addr)
{
	size_t mask = s->seen_cap - 1;
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 40) & mask;

	while (s->seen_epoch[i] == s->epoch) {
		if (s->seen[i] == addr)
			return false;
		i = (i + 1) & mask;
	}
	s->seen[i] = addr;
	s->seen_epoch[i] = s->epoch;
	return true;
}

/* The part of the current data-stack chunk in use, copied in one read. */
struct chunk_window {
	uint64_t lo, hi;
	const uint8_t *data;
};

/* The range of the chunk to copy; false if none. */
static bool chunk_range(const struct py_target *t, const struct tstate_view *v,
			const struct py_walk_scratch *s, struct chunk_window *w)
{
	memset(w, 0, sizeof(*w));
	if (t->l.version < 0x030b || !v->chunk)
		return false;
	w->lo = v->chunk + t->l.chunk_data;
	if (v->top <= w->lo)
		return false;
	/* The innermost frames are at the top: keep those when it is large. */
	if (v->top - w->lo > s->chunk_cap)
		w->lo = v->top - s->chunk_cap;
	return true;
}

static void chunk_read(const struct py_target *t, const struct tstate_view *v,
		       struct py_walk_scratch *s, struct chunk_window *w)
{
	ssize_t n;

	if (!chunk_range(t, v, s, w))
		return;
	n = t->mem.read(t->mem.ctx, w->lo, s->chunk, (size_t)(v->top - w->lo));
	if (n <= 0)
		return;
	w->hi = w->lo + (uint64_t)n;
	w->data = s->chunk;
}

static int head_of(const struct py_target *t, uint64_t field, uint64_t *frame);

/*
 * The head and the chunk's copy. 3.11 and 3.12 hang the head on a cframe:
 * with the chunk, that is two reads after the thread state's, and for the
 * GIL holder all three are made while it is stopped. Where the memory
 * takes several ranges at once, the head and the chunk come in one.
 */
static int head_and_chunk(const struct py_target *t, const struct tstate_view *v,
			  struct py_walk_scratch *s, struct chunk_window *w, uint64_t *frame)
{
	const struct py_layout *l = &t->l;
	struct iovec local, remote[2];
	ssize_t n;

	if ((l->version == 0x030b || l->version == 0x030c) && v->frame && t->mem.readv &&
	    chunk_range(t, v, s, w)) {
		remote[0] = (struct iovec){ (void *)(uintptr_t)(v->frame + l->cframe_current_frame), 8 };
		remote[1] = (struct iovec){ (void *)(uintptr_t)w->lo, (size_t)(v->top - w->lo) };
		local = (struct iovec){ s->chunk, 8 + remote[1].iov_len };
		n = t->mem.readv(t->mem.ctx, &local, remote, 2);
		if (n >= 8) {
			memcpy(frame, s->chunk, 8);
			if (n > 8) {
				w->hi = w->lo + (uint64_t)(n - 8);
				w->data = s->chunk + 8;
			}
			return 0;
		}
	}
	if (head_of(t, v->frame, frame) < 0)
		return -EFAULT;
	chunk_read(t, v, s, w);
	return 0;
}

/* The first len bytes of a frame: from the chunk copy, else read. */
static int frame_bytes(const struct py_target *t, const struct chunk_window *w,
		       uint64_t addr, uint8_t *buf, size_t len)
{
	if (w->data && addr >= w->lo && addr + len <= w->hi && addr + len > addr) {
		memcpy(buf, w->data + (addr - w->lo), len);
		return 0;
	}
	return py_read(t, addr, buf, len);
}

static size_t frame_span(const struct py_layout *l)
{
	uint32_t m = l->frame_back;

	if (l->frame_code > m)
		m = l->frame_code;
	if (l->frame_instr > m)
		m = l->frame_instr;
	if (l->frame_owner > m)
		m = l->frame_owner;
	if (l->frame_is_entry > m)
		m = l->frame_is_entry;
	return m + 8;
}

/* The innermost frame, from the state's frame field: 3.11 and 3.12 hang
 * it on a C-stack cframe. */
static int head_of(const struct py_target *t, uint64_t field, uint64_t *frame)
{
	const struct py_layout *l = &t->l;

	if (l->version != 0x030b && l->version != 0x030c) {
		*frame = field;
		return 0;
	}
	if (!field) {
		*frame = 0;
		return 0;
	}
	return read_ptr(t, field + l->cframe_current_frame, frame);
}

int py_frame_head(const struct py_target *t, uint64_t tstate, uint64_t *frame)
{
	uint64_t field;
	int ret = read_ptr(t, tstate + t->l.tstate_frame, &field);

	return ret < 0 ? ret : head_of(t, field, frame);
}

int py_frames_read(const struct py_target *t, uint64_t tstate,
		   struct py_walk_scratch *s, struct py_raw_frame *out,
		   int max, enum py_walk_end *end)
{
	const struct py_layout *l = &t->l;
	size_t span = frame_span(l);
	struct tstate_view v;
	struct chunk_window w;
	uint8_t buf[512];
	uint64_t frame;
	int n = 0, visited = 0;

	*end = PY_WALK_COMPLETE;
	s->head = 0;
	if (max > PY_MAX_DEPTH)
		max = PY_MAX_DEPTH;
	if (span > sizeof(buf) || tstate_view_read(t, tstate, &v) < 0 ||
	    head_and_chunk(t, &v, s, &w, &frame) < 0) {
		*end = PY_WALK_ERROR;
		return 0;
	}
	s->head = frame;
	/* A new epoch empties the visited set without touching it (clearing
	 * 128 KiB per walk was most of a walk's cost); at the wrap, for real. */
	if (++s->epoch == 0) {
		memset(s->seen_epoch, 0, s->seen_cap * sizeof(*s->seen_epoch));
		s->epoch = 1;
	}
	while (frame) {
		struct py_raw_frame *f = &out[n];

		if (n >= max || visited >= 2 * PY_MAX_DEPTH) {
			*end = PY_WALK_DEPTH;
			break;
		}
		if (!seen_add(s, frame)) {
			*end = PY_WALK_CYCLE;
			break;
		}
		visited++;
		if ((frame & 7) || frame_bytes(t, &w, frame, buf, span) < 0) {
			*end = PY_WALK_ERROR;
			break;
		}
		if (l->version >= 0x030c && buf[l->frame_owner] >= l->frame_owner_shim) {
			/* The shim below an evaluator call's first frame (3.15:
			 * also the thread's base frame, at the bottom). */
			if (n)
				out[n - 1].entry = true;
		} else {
			f->addr = frame;
			f->locals = 0;
			/* 3.14+: a tagged stack reference; its low bits say
			 * how it is counted, not where it points. */
			f->code = u64_at(buf, l->frame_code) & ~(uint64_t)l->stackref_tag;
			if (l->version <= 0x030a) {
				int32_t lasti;

				memcpy(&lasti, buf + l->frame_instr, sizeof(lasti));
				/* 3.10 counts 2-byte code units; in 64 bits, so a
				 * garbage count cannot overflow. */
				f->instr = lasti < 0 ? UINT64_MAX :
					   (uint64_t)lasti * (l->version == 0x030a ? 2 : 1);
				f->entry = true;
			} else {
				f->instr = u64_at(buf, l->frame_instr);
				f->entry = l->version == 0x030b && buf[l->frame_is_entry];
			}
			n++;
		}
		frame = u64_at(buf, l->frame_back);
	}
	return n;
}

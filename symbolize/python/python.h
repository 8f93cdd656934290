/* SPDX-License-Identifier: MIT */
/*
 * symbolize/python/ — the Python side of symbolization: CPython's memory
 * layouts, 3.8-3.15, and everything that reads a Python thread's frames
 * through them: the thread-state list, the GIL holder, the frame chain,
 * code objects, strings, line tables and threading's thread names.
 *
 * Free of ptrace and libelf on purpose (it uses common/ only): memory is
 * read through a callback, so the sampler reads another process with it
 * and the GPU agent (cuda/agent/) its own.
 * Nothing here trusts what it reads: every length, count and pointer is
 * bounded, chains are depth-limited and cycle-checked, and a bad read ends
 * a walk with an error instead of a crash or a hang.
 */
#ifndef TRAINSAMPLE_SYMBOLIZE_PYTHON_H
#define TRAINSAMPLE_SYMBOLIZE_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/*
 * Offsets of one CPython minor version (bytes). 0 is "absent" for fields
 * some versions lack (offsets that are really 0 are the first members of
 * their structs: interp_next, cframe_current_frame, frame_code in 3.11+,
 * which every version that has them lists).
 */
struct py_layout {
	uint32_t version;              /* 0x0308 .. 0x030f */
	uint32_t object_type;
	uint32_t bytes_size, bytes_data;
	uint32_t unicode_length, unicode_state;
	uint32_t unicode_ascii_data, unicode_compact_data;
	uint32_t runtime_interp_head;
	uint32_t runtime_gil_tstate;   /* <= 3.11: gilstate.tstate_current */
	uint32_t interp_next, interp_tstate_head;
	uint32_t interp_gil;           /* >= 3.12: ceval.gil (a pointer) */
	uint32_t gil_locked, gil_holder;
	uint32_t tstate_next, tstate_interp;
	uint32_t tstate_frame;         /* frame, cframe (3.11-12), current_frame */
	uint32_t cframe_current_frame;
	uint32_t tstate_thread_id, tstate_native_thread_id;
	uint32_t tstate_datastack_chunk, tstate_datastack_top, chunk_data;
	uint32_t frame_back, frame_code;
	uint32_t frame_instr;          /* f_lasti (int), prev_instr, instr_ptr */
	/* frame_owner_shim: the lowest owner of a frame that is not a Python
	 * function's (3.12-3.13: FRAME_OWNED_BY_CSTACK, 3.14+:
	 * FRAME_OWNED_BY_INTERPRETER; 3.14 keeps a CSTACK value above it) */
	uint32_t frame_owner, frame_owner_shim, frame_is_entry;
	/* 3.14+: f_executable and localsplus hold _PyStackRefs, pointers with
	 * these low bits used as tags (Py_TAG_BITS); 0 before */
	uint32_t stackref_tag;
	uint32_t code_filename, code_name, code_qualname, code_firstlineno;
	uint32_t code_linetable, code_adaptive;
	/* thread names: sys.modules -> threading._active -> Thread._name */
	uint32_t interp_modules, module_dict, dict_keys, dict_values;
	uint32_t keys_size, keys_index_bytes, keys_kind, keys_nentries, keys_indices;
	uint32_t values_array, type_basicsize, type_dictoffset, type_cached_keys;
	uint32_t long_digits;
	/* dump --locals: fast locals, cells and free variables, and values */
	uint32_t frame_localsplus;     /* f_localsplus (<= 3.10), localsplus */
	uint32_t code_varnames, code_cellvars, code_freevars;  /* <= 3.10 */
	uint32_t code_localsplusnames, code_localspluskinds;   /* 3.11+ */
	uint32_t type_name, type_flags, type_base, var_size, tuple_items;
	uint32_t dict_used, set_used, float_value, cell_ref;
	uint32_t long_tag;             /* ob_size (<= 3.11), lv_tag (3.12+) */
	/* 3.13+: where in the runtime's _Py_DebugOffsets each offset is (that
	 * struct's own layout differs in each version) */
	uint32_t debug_version, debug_free_threaded, debug_size;
	uint32_t debug_runtime_interp_head, debug_interp_next;
	uint32_t debug_interp_tstate_head, debug_interp_gil;
	uint32_t debug_gil_state, debug_gil_locked, debug_gil_holder;
	uint32_t debug_tstate_next, debug_tstate_interp, debug_tstate_frame;
	uint32_t debug_tstate_thread_id, debug_tstate_native_thread_id;
	uint32_t debug_tstate_datastack_chunk;
	uint32_t debug_frame_back, debug_frame_code, debug_frame_instr;
	uint32_t debug_frame_owner;
	uint32_t debug_code_filename, debug_code_name, debug_code_qualname;
	uint32_t debug_code_linetable, debug_code_firstlineno;
	uint32_t debug_code_adaptive, debug_interp_modules;
	uint32_t debug_frame_localsplus;
	uint32_t debug_code_localsplusnames, debug_code_localspluskinds;
};

/* The known layout of a minor version, NULL if none. */
const struct py_layout *py_layout_find(unsigned major, unsigned minor);
/* The lowest and highest supported version, as 0x0308. */
void py_layout_range(unsigned *lo, unsigned *hi);

/* The 3.13+ layout from the bytes at the start of its _PyRuntime. -EPROTO
 * when the cookie or the version does not match, -ENOTSUP for a
 * free-threaded build. */
int py_layout_from_debug_offsets(const struct py_layout *base,
				 const uint8_t *bytes, size_t len,
				 struct py_layout *out, char *err, size_t errlen);
#define PY_DEBUG_OFFSETS_MAX 1024

/* Reads len bytes at addr; the number read or a negative errno. */
struct py_memory {
	ssize_t (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Optional: n ranges into one buffer, in order, as process_vm_readv
	 * (the bytes read; it stops at the first range that faults). */
	ssize_t (*readv)(void *ctx, const struct iovec *local, const struct iovec *remote, int n);
	void *ctx;
};

/* A process's interpreter, as found by its reader. */
struct py_target {
	struct py_layout l;
	uint64_t runtime;    /* &_PyRuntime */
	uint64_t code_type;  /* &PyCode_Type: frames' code objects are checked */
	uint64_t none;       /* &_Py_NoneStruct: a 3.13 frame without code */
	struct py_memory mem;
};

struct py_thread {
	uint64_t tstate;
	uint64_t interp;
	uint64_t thread_id;        /* pthread_t */
	uint64_t native_thread_id; /* OS tid, 3.11+; 0 before */
	bool gil;                  /* holds the GIL */
};

/* Exactly len bytes at addr (0 is never read): 0 or a negative errno. */
int py_read(const struct py_target *t, uint64_t addr, void *buf, size_t len);

/* Every thread state of every interpreter (at most max). The count, or a
 * negative errno when not even the first interpreter could be read. */
int py_threads_read(const struct py_target *t, struct py_thread *out, int max);
/* The thread state holding interp's GIL now into *tstate: 0 when none
 * does (released, or handed from one thread to another). */
int py_gil_holder(const struct py_target *t, uint64_t interp, uint64_t *tstate);
/* Whether the first thread state points back at its interpreter: the
 * layout fits this build. */
int py_layout_validate(const struct py_target *t, char *err, size_t errlen);

#define PY_MAX_DEPTH 4096

struct py_raw_frame {
	uint64_t addr;   /* the frame (PyFrameObject, or _PyInterpreterFrame) */
	uint64_t code;   /* code object (3.13: may be None, or not code) */
	uint64_t instr;  /* <= 3.10: byte offset (-1: not started); else the
			  * instruction's address */
	bool entry;      /* the first frame its evaluator call ran (3.11+) */
	uint32_t locals; /* the caller's (dump --locals: its record); 0 none */
};

enum py_walk_end {
	PY_WALK_COMPLETE,
	PY_WALK_ERROR,   /* a read failed or a pointer was implausible */
	PY_WALK_CYCLE,
	PY_WALK_DEPTH,
};

/* Scratch a walk reuses: the data-stack chunk copy and the visited set. */
struct py_walk_scratch {
	uint8_t *chunk;
	size_t chunk_cap;
	uint64_t *seen;
	uint32_t *seen_epoch; /* a slot is used only if its epoch is this walk's */
	uint32_t epoch;
	size_t seen_cap;   /* a power of two, > 2 * PY_MAX_DEPTH */
	uint64_t head;     /* the innermost frame the last walk began at */
};
int py_walk_scratch_init(struct py_walk_scratch *s);
void py_walk_scratch_free(struct py_walk_scratch *s);

/* The thread's innermost frame (0: none): read again after a walk, it
 * tells whether the thread called or returned meanwhile. */
int py_frame_head(const struct py_target *t, uint64_t tstate, uint64_t *frame);

/*
 * The frame chain of a thread, innermost first (at most max, <=
 * PY_MAX_DEPTH). From 3.11 the thread's current data-stack chunk is read
 * in one call and frames in it come from that copy. Shim frames are
 * skipped. Returns the number of frames; *end says how it stopped.
 */
int py_frames_read(const struct py_target *t, uint64_t tstate,
		   struct py_walk_scratch *s, struct py_raw_frame *out,
		   int max, enum py_walk_end *end);

/*
 * The names Python's threading gives its threads (Thread.name), from
 * sys.modules["threading"]._active: fn gets each thread's ident (its
 * pthread_t, struct py_thread's thread_id) and name. Returns how many, or
 * a negative errno (-ENOENT: threading is not imported).
 */
struct py_names_cache {
	uint64_t active;      /* threading._active, once found */
	uint64_t active_type; /* its type then: a reused address is noticed */
};
int py_thread_names(const struct py_target *t, uint64_t interp, struct py_names_cache *cache,
		    void (*fn)(void *ctx, uint64_t ident, const char *name), void *ctx);

/* ---- code objects (code.c) ---- */

struct py_code {
	uint64_t addr;
	uint64_t sig[3];       /* header words it was read with */
	char *name;            /* qualname from 3.11 */
	char *file;
	uint32_t firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
	uint64_t code_start;   /* 3.11+: address of the first instruction */
	uint32_t id;           /* the caller's, e.g. an interned frame name */
	uint32_t id2;
	uint32_t id3;          /* the caller's too; UINT32_MAX until set */
	uint32_t checked, queued; /* the cache's prefetch epochs */
};

/* c as UTF-8 (U+FFFD for what has none): 1 to 4 bytes. */
size_t py_utf8_put(char *out, uint32_t c);
/* A UTF-8 copy of a str object, at most len - 1 bytes. */
int py_string_read(const struct py_target *t, uint64_t addr, char *buf,
		   size_t len);
/* The line of an instruction (struct py_raw_frame.instr); 0 unknown. */
uint32_t py_code_line(const struct py_target *t, const struct py_code *c,
		      uint64_t instr);

/*
 * Code objects by address. A hit is checked against the object's header
 * words, read again: a code object freed and its memory reused for another
 * is read anew, never mislabelled.
 */
struct py_code_cache;
int py_code_cache_new(struct py_code_cache **out);
void py_code_cache_free(struct py_code_cache *c);
/* -ENOENT: no code object there (3.13: the frame's executable is None or
 * another object), another negative errno when it cannot be read. */
int py_code_get(const struct py_target *t, struct py_code_cache *c,
		uint64_t addr, struct py_code **out);
/* The headers of a walk's known code objects checked in one read, for the
 * py_code_get calls of its frames; until py_code_prefetch_drop. */
void py_code_prefetch(const struct py_target *t, struct py_code_cache *c,
		      const struct py_raw_frame *f, int n);
void py_code_prefetch_drop(struct py_code_cache *c);

/* ---- local variables (locals.c) ---- */

#define PY_LOCALS_MAX 256     /* variables shown per frame */
#define PY_STR_CHARS 100      /* characters shown of a str */
#define PY_INT_DIGITS_MAX 10  /* 30-bit digits printed exactly (300 bits) */

/*
 * One variable: its name, its type's name ("" when unreadable) and a short
 * rendering: 42, -7, 3.14, True, None, 'text' (the first PY_STR_CHARS
 * characters, escaped, then "... (N characters)"), <int of N bits> beyond
 * PY_INT_DIGITS_MAX digits, <bytes of length N> (list, tuple, dict and set
 * too), <Type object> for anything else, <unreadable> where a read failed.
 */
struct py_local {
	char name[128];
	char type[64];
	char value[768];
	uint64_t obj; /* the object's address; 0 for an int kept in the reference */
	uint32_t slot; /* its index in the frame's variables; UINT32_MAX for
			* a cell's content (the slot holds the cell) */
};

/*
 * The bound local, cell and free variables of a frame (struct
 * py_raw_frame's addr and code), in the code object's order, at most max
 * (<= PY_LOCALS_MAX); a cell's content for cell and free variables. The
 * count, or a negative errno when the names or the frame's slots cannot
 * be read. Reads memory only: nothing in the target runs.
 */
int py_frame_locals(const struct py_target *t, uint64_t frame, uint64_t code,
		    struct py_local *out, int max);
/* Whether obj's type, or a type it derives from (tp_base, not the other
 * bases of multiple inheritance), is named name: how a DataLoader or its
 * iterator is known, whatever its subclass. */
bool py_type_derives(const struct py_target *t, uint64_t obj, const char *name);
/* One object into v's type and value; a negative errno (and "<unreadable>")
 * when it cannot be read. */
int py_value_render(const struct py_target *t, uint64_t obj, struct py_local *v);
/* A numpy array or a torch.Tensor (a subclass too) into v's value, its
 * dtype, shape and (a tensor's) device; -ENOENT when obj is neither. */
int py_array_render(const struct py_target *t, uint64_t obj, struct py_local *v);
/* What a c10::TensorImpl's words w[0..n) say, found from word from on:
 * the word index of its ndim, or -ENOENT. Past five dimensions the sizes
 * are at sizes_at in the target, to be read and checked against numel
 * (w[at + 12]) by the caller. */
struct py_tensor_meta {
	int ndim, dtype, device_type, device_index;
	int64_t sizes[8];
	uint64_t sizes_at;
	size_t at;
};
int py_tensor_meta_find(const uint64_t *w, size_t n, size_t from, struct py_tensor_meta *m);
/* The renderings themselves, from values already read. An int of n 30-bit
 * digits in decimal (-E2BIG beyond PY_INT_DIGITS_MAX); a double as repr()
 * shows it; n characters of a str of length characters, quoted and
 * escaped (-ENOSPC when buf is too small). */
int py_int_render(const uint32_t *digits, size_t n, bool negative, char *buf, size_t len);
void py_float_render(double v, char *buf, size_t len);
int py_str_render(const uint32_t *chars, size_t n, uint64_t length, char *buf, size_t len);

#endif

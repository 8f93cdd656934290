// SPDX-License-Identifier: MIT
/*
 * Prints one CPython build's struct offsets as a C initializer of
 * struct py_layout (symbolize/python/python.h). Compiled by
 * gen-python-layouts.sh against each interpreter's own internal headers.
 *   py_layout_probe               print the initializer
 *   py_layout_probe RUNTIME.bin   3.14+: check that the _Py_DebugOffsets at
 *                                 the start of a binary's .PyRuntime section
 *                                 are what these headers say (exit 1 if not)
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif
#if PY_VERSION_HEX < 0x03090000
#include "internal/pycore_pystate.h"
#else
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#endif
#if PY_VERSION_HEX >= 0x030C0000
#include "internal/pycore_gil.h"
#endif
#if PY_VERSION_HEX >= 0x030E0000
#include "internal/pycore_stackref.h"
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_dict.h"
#include "internal/pycore_moduleobject.h"
#else
#include <longintrepr.h>
/* Objects/dict-common.h (3.6-3.10), which is not installed: mirrored here
 * so the compiler, not a person, lays it out. */
struct dict_keys_310 {
	Py_ssize_t dk_refcnt;
	Py_ssize_t dk_size;
	void *dk_lookup;
	Py_ssize_t dk_usable;
	Py_ssize_t dk_nentries;
	char dk_indices[];
};
#endif

#define F(name, value) field(name, (unsigned long)(value))

/* With RUNTIME.bin: its bytes, compared with the headers' debug offsets
 * word by word where trainsample reads one (the debug_ positions below);
 * nothing is printed. */
static const unsigned char *binary;
static const unsigned char *expected;
static int mismatches;

static void field(const char *name, unsigned long value)
{
	if (!binary) {
		printf("\t\t.%s = %lu,\n", name, value);
		return;
	}
	if (strncmp(name, "debug_", 6) || !strcmp(name, "debug_size"))
		return;
	if (memcmp(binary + value, expected + value, 8)) {
		fprintf(stderr, "the binary's %s differs from the headers'\n", name + 6);
		mismatches++;
	}
}

int main(int argc, char **argv)
{
#ifdef _Py_DebugOffsets_INIT
	/* 3.14+ (the initializer is a macro from 3.14): the headers and the
	 * interpreter that is run must agree, or the offsets generated here
	 * (those not in the debug offsets) may not be that interpreter's. */
	static const _Py_DebugOffsets want = _Py_DebugOffsets_INIT(_Py_Debug_Cookie);
	static unsigned char got[sizeof(want)];

	if (argc > 1) {
		FILE *f = fopen(argv[1], "rb");
		size_t n = f ? fread(got, 1, sizeof(got), f) : 0;

		if (f)
			fclose(f);
		if (n != sizeof(got) || memcmp(got, _Py_Debug_Cookie, 8)) {
			fprintf(stderr, "not %zu bytes of debug offsets\n", sizeof(got));
			return 1;
		}
		binary = got;
		expected = (const unsigned char *)&want;
	}
#else
	if (argc > 1)
		return 2; /* nothing to check against before 3.14 */
#endif
	if (!binary)
		printf("\t{ /* %s */\n", PY_VERSION);
	F("version", (PY_MAJOR_VERSION << 8) | PY_MINOR_VERSION);
	F("object_type", offsetof(PyObject, ob_type));
	F("bytes_size", offsetof(PyVarObject, ob_size));
	F("bytes_data", offsetof(PyBytesObject, ob_sval));
	F("unicode_length", offsetof(PyASCIIObject, length));
	F("unicode_state", offsetof(PyASCIIObject, state));
	F("unicode_ascii_data", sizeof(PyASCIIObject));
	F("unicode_compact_data", sizeof(PyCompactUnicodeObject));
	/* For thread names: sys.modules -> threading._active -> Thread._name */
	F("dict_keys", offsetof(PyDictObject, ma_keys));
	F("dict_values", offsetof(PyDictObject, ma_values));
	F("type_basicsize", offsetof(PyTypeObject, tp_basicsize));
	F("type_dictoffset", offsetof(PyTypeObject, tp_dictoffset));
	F("type_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
#if PY_VERSION_HEX >= 0x030C0000
	F("long_digits", offsetof(PyLongObject, long_value.ob_digit));
#else
	F("long_digits", offsetof(PyLongObject, ob_digit));
#endif
	/* dump --locals: rendering a value (symbolize/python/locals.c) */
	F("type_name", offsetof(PyTypeObject, tp_name));
	F("type_flags", offsetof(PyTypeObject, tp_flags));
	F("type_base", offsetof(PyTypeObject, tp_base));
	F("var_size", offsetof(PyVarObject, ob_size));
	F("tuple_items", offsetof(PyTupleObject, ob_item));
	F("dict_used", offsetof(PyDictObject, ma_used));
	F("set_used", offsetof(PySetObject, used));
	F("float_value", offsetof(PyFloatObject, ob_fval));
	F("cell_ref", offsetof(PyCellObject, ob_ref));
#if PY_VERSION_HEX >= 0x030C0000
	F("long_tag", offsetof(PyLongObject, long_value.lv_tag));
#else
	F("long_tag", offsetof(PyVarObject, ob_size));
#endif
#if PY_VERSION_HEX >= 0x030B0000
	F("code_localsplusnames", offsetof(PyCodeObject, co_localsplusnames));
	F("code_localspluskinds", offsetof(PyCodeObject, co_localspluskinds));
#else
	F("code_varnames", offsetof(PyCodeObject, co_varnames));
	F("code_cellvars", offsetof(PyCodeObject, co_cellvars));
	F("code_freevars", offsetof(PyCodeObject, co_freevars));
	F("frame_localsplus", offsetof(PyFrameObject, f_localsplus));
#endif
#if PY_VERSION_HEX >= 0x030B0000
	F("module_dict", offsetof(PyModuleObject, md_dict));
	F("keys_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
	F("keys_kind", offsetof(PyDictKeysObject, dk_kind));
	F("keys_nentries", offsetof(PyDictKeysObject, dk_nentries));
	F("keys_indices", offsetof(PyDictKeysObject, dk_indices));
	F("values_array", offsetof(PyDictValues, values));
#else
	F("module_dict", sizeof(PyObject)); /* PyModuleObject: the head, then md_dict */
	F("keys_size", offsetof(struct dict_keys_310, dk_size));
	F("keys_nentries", offsetof(struct dict_keys_310, dk_nentries));
	F("keys_indices", offsetof(struct dict_keys_310, dk_indices));
#endif
#if PY_VERSION_HEX >= 0x030D0000
	/* 3.13: the runtime's _Py_DebugOffsets say the rest; these are where
	 * in that struct each offset is. */
	F("debug_version", offsetof(_Py_DebugOffsets, version));
	F("debug_free_threaded", offsetof(_Py_DebugOffsets, free_threaded));
	F("debug_runtime_interp_head", offsetof(_Py_DebugOffsets, runtime_state.interpreters_head));
	F("debug_interp_next", offsetof(_Py_DebugOffsets, interpreter_state.next));
	F("debug_interp_tstate_head", offsetof(_Py_DebugOffsets, interpreter_state.threads_head));
	F("debug_interp_gil", offsetof(_Py_DebugOffsets, interpreter_state.ceval_gil));
	F("debug_gil_state", offsetof(_Py_DebugOffsets, interpreter_state.gil_runtime_state));
	F("debug_gil_locked", offsetof(_Py_DebugOffsets, interpreter_state.gil_runtime_state_locked));
	F("debug_gil_holder", offsetof(_Py_DebugOffsets, interpreter_state.gil_runtime_state_holder));
	F("debug_tstate_next", offsetof(_Py_DebugOffsets, thread_state.next));
	F("debug_tstate_interp", offsetof(_Py_DebugOffsets, thread_state.interp));
	F("debug_tstate_frame", offsetof(_Py_DebugOffsets, thread_state.current_frame));
	F("debug_tstate_thread_id", offsetof(_Py_DebugOffsets, thread_state.thread_id));
	F("debug_tstate_native_thread_id", offsetof(_Py_DebugOffsets, thread_state.native_thread_id));
	F("debug_tstate_datastack_chunk", offsetof(_Py_DebugOffsets, thread_state.datastack_chunk));
	F("debug_frame_back", offsetof(_Py_DebugOffsets, interpreter_frame.previous));
	F("debug_frame_code", offsetof(_Py_DebugOffsets, interpreter_frame.executable));
	F("debug_frame_instr", offsetof(_Py_DebugOffsets, interpreter_frame.instr_ptr));
	F("debug_frame_owner", offsetof(_Py_DebugOffsets, interpreter_frame.owner));
	F("debug_code_filename", offsetof(_Py_DebugOffsets, code_object.filename));
	F("debug_code_name", offsetof(_Py_DebugOffsets, code_object.name));
	F("debug_code_qualname", offsetof(_Py_DebugOffsets, code_object.qualname));
	F("debug_code_linetable", offsetof(_Py_DebugOffsets, code_object.linetable));
	F("debug_code_firstlineno", offsetof(_Py_DebugOffsets, code_object.firstlineno));
	F("debug_code_adaptive", offsetof(_Py_DebugOffsets, code_object.co_code_adaptive));
	F("debug_size", sizeof(_Py_DebugOffsets));
	F("debug_interp_modules", offsetof(_Py_DebugOffsets, interpreter_state.imports_modules));
	F("debug_frame_localsplus", offsetof(_Py_DebugOffsets, interpreter_frame.localsplus));
	F("debug_code_localsplusnames", offsetof(_Py_DebugOffsets, code_object.localsplusnames));
	F("debug_code_localspluskinds", offsetof(_Py_DebugOffsets, code_object.localspluskinds));
	/* Not in the debug offsets. */
	F("tstate_datastack_top", offsetof(PyThreadState, datastack_top));
	F("chunk_data", offsetof(_PyStackChunk, data));
#if PY_VERSION_HEX >= 0x030E0000
	/* The interpreter's own frames (the evaluator's entry frame, a
	 * thread's base frame) are owned by it; 3.14 still has a CSTACK
	 * value above it, 3.15 none. */
	F("frame_owner_shim", FRAME_OWNED_BY_INTERPRETER);
	/* f_executable and localsplus are _PyStackRefs: tagged pointers. */
	F("stackref_tag", Py_TAG_BITS);
#else
	F("frame_owner_shim", FRAME_OWNED_BY_CSTACK);
#endif
#else
	/* 3.8-3.12: every offset from the headers. */
	F("runtime_interp_head", offsetof(_PyRuntimeState, interpreters.head));
	F("interp_next", offsetof(PyInterpreterState, next));
#if PY_VERSION_HEX >= 0x030B0000
	F("interp_tstate_head", offsetof(PyInterpreterState, threads.head));
#else
	F("interp_tstate_head", offsetof(PyInterpreterState, tstate_head));
#endif
#if PY_VERSION_HEX >= 0x030C0000
	F("interp_modules", offsetof(PyInterpreterState, imports.modules));
#else
	F("interp_modules", offsetof(PyInterpreterState, modules));
#endif
#if PY_VERSION_HEX >= 0x030C0000
	F("interp_gil", offsetof(PyInterpreterState, ceval.gil));
	F("gil_locked", offsetof(struct _gil_runtime_state, locked));
	F("gil_holder", offsetof(struct _gil_runtime_state, last_holder));
#else
	F("runtime_gil_tstate", offsetof(_PyRuntimeState, gilstate.tstate_current));
#endif
	F("tstate_next", offsetof(PyThreadState, next));
	F("tstate_interp", offsetof(PyThreadState, interp));
	F("tstate_thread_id", offsetof(PyThreadState, thread_id));
	F("code_filename", offsetof(PyCodeObject, co_filename));
	F("code_name", offsetof(PyCodeObject, co_name));
	F("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
#if PY_VERSION_HEX >= 0x030B0000
	F("tstate_frame", offsetof(PyThreadState, cframe));
	F("cframe_current_frame", offsetof(_PyCFrame, current_frame));
	F("tstate_native_thread_id", offsetof(PyThreadState, native_thread_id));
	F("tstate_datastack_chunk", offsetof(PyThreadState, datastack_chunk));
	F("tstate_datastack_top", offsetof(PyThreadState, datastack_top));
	F("chunk_data", offsetof(_PyStackChunk, data));
	F("frame_back", offsetof(_PyInterpreterFrame, previous));
	F("frame_code", offsetof(_PyInterpreterFrame, f_code));
	F("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
	F("frame_owner", offsetof(_PyInterpreterFrame, owner));
	F("frame_localsplus", offsetof(_PyInterpreterFrame, localsplus));
	F("code_qualname", offsetof(PyCodeObject, co_qualname));
	F("code_linetable", offsetof(PyCodeObject, co_linetable));
	F("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
#if PY_VERSION_HEX >= 0x030C0000
	F("frame_owner_shim", FRAME_OWNED_BY_CSTACK);
#else
	F("frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
#else
	F("tstate_frame", offsetof(PyThreadState, frame));
	F("frame_back", offsetof(PyFrameObject, f_back));
	F("frame_code", offsetof(PyFrameObject, f_code));
	F("frame_instr", offsetof(PyFrameObject, f_lasti));
#if PY_VERSION_HEX >= 0x030A0000
	F("code_linetable", offsetof(PyCodeObject, co_linetable));
#else
	F("code_linetable", offsetof(PyCodeObject, co_lnotab));
#endif
#endif
#endif
	if (!binary)
		printf("\t},\n");
	return mismatches ? 1 : 0;
}

// SPDX-License-Identifier: MIT
/*
 * --native without --native-all shows the program, not the interpreter:
 * CPython's own frames outward of the innermost Python frame (call
 * dispatch, vectorcall, the nameless frames of a stripped python3, and
 * main, Py_RunMain, pymain_* above the first Python frame) are dropped.
 * Those below the innermost Python frame stay: they show what a builtin
 * is doing. Frames of every other module (numpy, ctypes, libffi, libc)
 * stay wherever they are.
 */
#include <string.h>

#include "sampler/python/merge.h"

bool native_is_python_executable(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i = 6;

	base = base ? base + 1 : path;
	if (strncmp(base, "python", 6))
		return false;
	while (base[i] && strchr("0123456789.", base[i]))
		i++;
	/* ABI flags: d (debug), m (pymalloc, up to 3.7), u (wide unicode, 2.x) */
	while (base[i] && strchr("dmu", base[i]))
		i++;
	return !base[i];
}

int native_hide_interpreter(uint32_t *frames, uint8_t *kinds, int n)
{
	int innermost = -1, kept = 0;

	for (int i = 0; i < n; i++)
		if (kinds[i] == MERGED_PYTHON)
			innermost = i;
	for (int i = 0; i < n; i++) {
		if (i < innermost && kinds[i] == MERGED_INTERPRETER)
			continue;
		frames[kept] = frames[i];
		kinds[kept++] = kinds[i];
	}
	return kept;
}

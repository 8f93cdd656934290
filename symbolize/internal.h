/* SPDX-License-Identifier: MIT */
/*
 * Shared between the files of symbolize/ only; not part of its interface.
 */
#ifndef TRAINSAMPLE_SYMBOLIZE_INTERNAL_H
#define TRAINSAMPLE_SYMBOLIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbolize.h"

/* Fills the caller's error buffer, if it has one. */
void sym_errorf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * sym_module_bias with a hint: among the PT_LOADs that could back the
 * mapping, prefer the one giving the bias already found for another mapping
 * of the same load. lld puts several non-executable segments on file page
 * 0, and only the neighbours tell which one an r-- or rw- mapping holds.
 */
int sym_module_bias_hint(const struct sym_module *m, uint64_t map_start,
			 uint64_t pgoff, bool exec, const uint64_t *hint,
			 uint64_t *bias);

/* sym_maps_read from a maps file by path (a task's, say). */
int sym_maps_read_path(const char *path, struct sym_maps **out, char *err,
		       size_t errlen);

struct Elf;

/*
 * The separate debug file of a module (by build-id, then .gnu_debuglink),
 * looked up under root (e.g. "/proc/PID/root"; "" for none) and then
 * as is. Returns its open fd with *out set, or a negative errno.
 */
int sym_debug_file_open(struct Elf *elf, const char *root,
			const char *module_path, struct Elf **out);

/* sym_module_open for a file of a process: path is the path inside the
 * process's root; open_path (if not NULL) is where to actually read it. */
int sym_module_open_in(const char *root, const char *path, const char *open_path,
		       struct sym_module **out, char *err, size_t errlen);

#endif

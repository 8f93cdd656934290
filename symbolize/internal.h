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

/*
 * The load bias of a mapping of a module: the PT_LOAD whose page-aligned
 * file offset equals pgoff (the executable one when several share that
 * page, as lld lays them out), bias = start - pgoff - (p_vaddr - p_offset).
 * runtime address = bias + file address. With a hint (or NULL): among the
 * PT_LOADs that could back the mapping, the one giving the bias already
 * found for another mapping of the same load. lld puts several
 * non-executable segments on file page 0, and only the neighbours tell
 * which one an r-- or rw- mapping holds.
 */
int sym_module_bias_hint(const struct sym_module *m, uint64_t map_start,
			 uint64_t pgoff, bool exec, const uint64_t *hint,
			 uint64_t *bias);

/* A maps file by path (a task's, say); mappings come out sorted by start. */
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

/* Reads the function symbols of .symtab, or where there is none, of a
 * separate debug file, or of .dynsym with the MiniDebugInfo .symtab of
 * .gnu_debugdata (Fedora), or of .dynsym alone. For a file of a process:
 * path is the path inside the process's root (root "" for none);
 * open_path (if not NULL) is where to actually read it. */
int sym_module_open_in(const char *root, const char *path, const char *open_path,
		       struct sym_module **out, char *err, size_t errlen);

/* ---- files that shrink while mapped (sigbus.c) ---- */

/* Installs the SIGBUS handler that survives reading a lost page. */
void sym_sigbus_guard(void);
/* Whether a page of [base, base + len) was lost since the last check. */
bool sym_sigbus_lost(const void *base, size_t len);
/* An fd of a regular file (no FIFO, device or tty), or -errno. */
int sym_open_regular(const char *path);

/* ---- a module's file, mapped for unwinding (image.c) ---- */

struct sym_image;

/* The .eh_frame_hdr binary-search table, in file addresses. */
struct sym_eh_table {
	bool valid;
	uint64_t hdr_vaddr;   /* .eh_frame_hdr: the table's data-relative base */
	uint64_t table_vaddr; /* the sorted (initial location, FDE) pairs */
	uint64_t fde_count;
	uint64_t text_start;  /* the executable segments it covers */
	uint64_t text_end;
};

int sym_image_open(const char *path, struct sym_image **out);
/* An image in memory that outlives it (a vdso). */
int sym_image_open_memory(const uint8_t *data, size_t len, struct sym_image **out);
void sym_image_free(struct sym_image *img);
/* len bytes at a file address inside a PT_LOAD's file contents. */
int sym_image_read(const struct sym_image *img, uint64_t vaddr, void *buf, size_t len);
/* NULL when the file has no .eh_frame_hdr table libunwind can search. */
const struct sym_eh_table *sym_image_eh_table(const struct sym_image *img);
/* vaddr (a file address) is in the first bytes of the file's entry point's
 * code (e_entry): the process's first frame; offset from the entry. */
bool sym_image_at_entry(const struct sym_image *img, uint64_t vaddr, uint64_t *offset);

/*
 * The image of the file mapped at addr and the bias of that mapping
 * (process.c), loading it on first use; -ENOENT where there is none
 * (anonymous memory, [vdso], a file that cannot be read).
 */
struct sym_process;
int sym_process_image(struct sym_process *p, uint64_t addr,
		      const struct sym_image **img, uint64_t *bias,
		      uint64_t *map_start, uint64_t *map_end);

/* ---- [vdso] (vdso.c) ---- */

/* trainsample's own vdso image, which is every 64-bit process's. */
int sym_vdso_bytes(const uint8_t **data, size_t *len);
/* A copy (malloc'd, the caller's) of the vdso image process pid maps at
 * [start, end); *len is the image's length within it. */
int sym_vdso_read(int pid, uint64_t start, uint64_t end, uint8_t **data,
		  size_t *len);
/* A module from an ELF image in memory (copied). */
int sym_module_open_memory(const uint8_t *data, size_t len, const char *name,
			   struct sym_module **out, char *err, size_t errlen);

/* ---- DWARF unwinding state of a process (unwind_dwarf.c) ---- */

struct sym_unwinder;
void sym_unwinder_free(struct sym_unwinder *u);
/* Where a process keeps its unwinder (created on first use). */
struct sym_unwinder **sym_process_unwinder(struct sym_process *p);

/* ---- JIT code named by /tmp/perf-PID.map (perf_map.c) ---- */

struct sym_perf_map;

/* The perf map of process pid, read through root ("/proc/PID/root"). */
int sym_perf_map_open(const char *root, int pid, struct sym_perf_map **out);
void sym_perf_map_free(struct sym_perf_map *pm);
/*
 * The name of the latest entry covering addr and addr's offset from its
 * start; -ENOENT where none does. The file is re-read (what was appended)
 * first when no entry covers addr, at most every 100 ms. *changed is set
 * when the entries changed, which may rename addresses resolved before.
 * Names live until a read sets *changed after the file was replaced, or
 * pm is freed.
 */
int sym_perf_map_find(struct sym_perf_map *pm, uint64_t addr,
		      const char **name, uint64_t *offset, bool *changed);
/* Reads what was appended (at most every 100 ms), covered or not. */
void sym_perf_map_refresh(struct sym_perf_map *pm, bool *changed);
/* Drops every entry read so far; only later ones will count. */
void sym_perf_map_forget(struct sym_perf_map *pm);

/* ---- a stripped function's nameless cold part (cold_parts.c) ---- */

/*
 * The range [*lo, *hi) of the cold part of the function at [addr, addr +
 * size) of elf: an FDE range that two of its rel32 jumps land in and
 * where named() says no symbol starts. -ENOENT where none is found.
 */
int sym_cold_part(struct Elf *elf, uint64_t addr, uint64_t size,
		  bool (*named)(void *ctx, uint64_t lo, uint64_t hi), void *ctx,
		  uint64_t *lo, uint64_t *hi);

/* ---- MiniDebugInfo (minidebuginfo.c) ---- */

/*
 * The ELF image xz-compressed in elf's .gnu_debugdata section, opened with
 * elf_memory: *image is its buffer, to free() after elf_end(*out).
 * -ENOENT where there is no such section.
 */
int sym_minidebuginfo_open(struct Elf *elf, struct Elf **out, void **image);

/* ---- source lines of a module (lines.c) ---- */

struct sym_lines;

/*
 * The DWARF line information of the file at open_path (path inside root,
 * as sym_module_open_in takes them): its separate debug file's if it has
 * one, else its own. -ENOENT where neither has any.
 */
int sym_lines_open(const char *root, const char *path, const char *open_path,
		   struct sym_lines **out);
void sym_lines_free(struct sym_lines *l);
/* The file and line of a file address, cached; -ENOENT where unknown. */
int sym_lines_find(struct sym_lines *l, uint64_t vaddr, const char **file,
		   uint32_t *line);

#endif

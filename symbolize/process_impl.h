/* SPDX-License-Identifier: MIT */
/*
 * The inside of a sym_process, shared by process.c (its maps) and
 * modules.c (the files they map). Not part of symbolize's interface.
 */
#ifndef TRAINSAMPLE_SYMBOLIZE_PROCESS_IMPL_H
#define TRAINSAMPLE_SYMBOLIZE_PROCESS_IMPL_H

#include <stdbool.h>
#include <string.h>

#include "symbolize/internal.h"

struct module_entry {
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	char *path; /* the key where inode is 0 */
	bool loaded;
	struct sym_module *module; /* NULL: no symbols */
	char *open_path;           /* where the file was read from */
	bool image_tried;
	struct sym_image *image;   /* for unwinding; NULL: none */
	bool lines_tried;
	struct sym_lines *lines;   /* source lines; NULL: none */
	uint8_t *vdso_copy;        /* [vdso]: its image, read from the target */
};

/* What was worked out for one mapping of the current maps. */
struct mapping_state {
	struct module_entry *entry; /* NULL unless a file is mapped */
	uint64_t bias;
	bool bias_known;
	bool bias_done;
};

struct sym_process {
	int pid;
	/* "/proc/PID", or "/proc/PID/task/TID" of a live thread once the main
	 * thread is a zombie (its maps read empty and its root is gone). */
	char view[96];
	struct sym_maps *maps;
	struct mapping_state *states; /* parallel to maps */
	struct module_entry **entries;
	size_t entry_count;
	size_t entry_cap;
	uint64_t generation;
	uint64_t read_ns;    /* last (attempted) read of the maps */
	struct sym_unwinder *unwinder;
	uint64_t changed_ns; /* last read that found them changed */
	struct sym_perf_map *perf_map; /* opened on the first JIT address */
};

static inline bool is_vdso(const struct sym_mapping *m)
{
	return !strcmp(m->path, "[vdso]");
}

/* What has an ELF image behind it: a file (its path starts with '/';
 * "anon_inode:..." does not) or the vdso. */
static inline bool maps_a_file(const struct sym_mapping *m)
{
	return m->path[0] == '/' || is_vdso(m);
}

/* modules.c */
struct module_entry *module_entry_find(struct sym_process *p,
				       const struct sym_mapping *m,
				       struct module_entry *last);
void module_entry_free(struct module_entry *e);
/* Frees entries no current mapping refers to. Never during an unwind. */
void module_entries_collect(struct sym_process *p);
/* The entry of a file mapping with its module loaded and bias worked out;
 * NULL where the bias is not known. */
struct module_entry *module_entry_at(struct sym_process *p,
				     const struct sym_mapping *m,
				     struct mapping_state **state);

#endif

// SPDX-License-Identifier: MIT
/*
 * The files a process maps, as module entries: cached by device and inode
 * so a re-read of the maps (after dlopen or exec) keeps them, loaded on the
 * first address that needs them, freed when nothing maps them any more. A
 * file that cannot be opened, is not ELF, or is not the file that was
 * mapped is remembered as having no symbols.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/common.h"
#include "symbolize/process_impl.h"

static bool entry_matches(const struct module_entry *e,
			  const struct sym_mapping *m)
{
	if (e->inode != m->inode || e->dev_major != m->dev_major ||
	    e->dev_minor != m->dev_minor)
		return false;
	return m->inode != 0 || !strcmp(e->path, m->path);
}

static struct module_entry *add_entry(struct sym_process *p,
				      const struct sym_mapping *m)
{
	struct module_entry *e;

	if (ARRAY_RESERVE(p->entries, p->entry_cap, p->entry_count + 1, 64) < 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->path = strdup(m->path);
	if (!e->path) {
		free(e);
		return NULL;
	}
	e->inode = m->inode;
	e->dev_major = m->dev_major;
	e->dev_minor = m->dev_minor;
	p->entries[p->entry_count++] = e;
	return e;
}

/* The mappings of one file come in a row: try the last entry first. */
struct module_entry *module_entry_find(struct sym_process *p,
				       const struct sym_mapping *m,
				       struct module_entry *last)
{
	if (last && entry_matches(last, m))
		return last;
	for (size_t i = 0; i < p->entry_count; i++)
		if (entry_matches(p->entries[i], m))
			return p->entries[i];
	return add_entry(p, m);
}

void module_entry_free(struct module_entry *e)
{
	sym_module_free(e->module);
	sym_image_free(e->image);
	sym_lines_free(e->lines);
	free(e->vdso_copy);
	free(e->open_path);
	free(e->path);
	free(e);
}

/* The target's own image; ours (the same kernel's) if it cannot be read.
 * The unwinder's image points into the copy, which the entry owns. */
static void load_vdso(struct sym_process *p, struct module_entry *e,
		      const struct sym_mapping *m)
{
	const uint8_t *data;
	size_t len;

	e->image_tried = true;
	if (!sym_vdso_read(p->pid, m->start, m->end, &e->vdso_copy, &len))
		data = e->vdso_copy;
	else if (sym_vdso_bytes(&data, &len) < 0 || len > m->end - m->start)
		return;
	if (sym_module_open_memory(data, len, "[vdso]", &e->module, NULL, 0))
		e->module = NULL;
	if (sym_image_open_memory(data, len, &e->image))
		e->image = NULL;
}

/* Overlay filesystems report another device than the maps but keep the
 * inode number: only that is compared. */
static bool same_inode(const char *path, uint64_t inode)
{
	struct stat st;

	return stat(path, &st) == 0 && (uint64_t)st.st_ino == inode;
}

/* Two paths of ours name one file: the device too is ours for both. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Through the process's own root (containers), or its map_files link
 * when the file was deleted or replaced. */
static void load_entry(struct sym_process *p, struct module_entry *e,
		       const struct sym_mapping *m)
{
	char path[PATH_MAX + 96], root[sizeof(p->view) + 8];
	int n;

	e->loaded = true;
	if (is_vdso(m)) {
		load_vdso(p, e, m);
		return;
	}
	snprintf(root, sizeof(root), "%s/root", p->view);
	n = snprintf(path, sizeof(path), "%s%s", root, m->path);
	/*
	 * The maps name a file as seen from our root where we can reach it:
	 * a process chroot'ed (unshare -R, a chroot in our mount namespace)
	 * maps "/srv/root/usr/lib/..." , which its own root does not hold;
	 * one in a container of its own (pivot_root: Docker, podman) maps
	 * "/usr/lib/...", which is its root's file, not ours. The inode
	 * tells which path is the mapped file. Debug files are still looked
	 * for under its root first.
	 */
	if (!m->deleted && !same_inode(path, m->inode) && same_inode(m->path, m->inode))
		n = snprintf(path, sizeof(path), "%s", m->path);
	/*
	 * The same file by our own path is kept where it is the same file
	 * (one root): its /proc path dies with the process, and a stack
	 * copied before the end may be unwound after it (the images and
	 * lines are opened when first needed).
	 */
	else if (!m->deleted && same_file(path, m->path))
		n = snprintf(path, sizeof(path), "%s", m->path);
	/*
	 * Deleted, or replaced on disk since it was mapped (a package upgraded
	 * under a running job): the path names another file. The mapped one
	 * is still reachable through map_files (which needs privileges); if
	 * not, no symbols beat another file's.
	 */
	if (m->deleted || !same_inode(path, m->inode)) {
		n = snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx",
			     p->pid, (unsigned long long)m->start,
			     (unsigned long long)m->end);
		if (n > 0 && (size_t)n < sizeof(path) && !same_inode(path, m->inode))
			return;
	}
	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	e->open_path = strdup(path);
	if (sym_module_open_in(root, m->path, path, &e->module, NULL, 0))
		e->module = NULL;
}

/*
 * Biases of every mapping of one file, in address order, each mapping
 * hinted by the one before it (see sym_module_bias_hint).
 */
static void assign_biases(struct sym_process *p, struct module_entry *e)
{
	size_t n = sym_maps_count(p->maps);
	const uint64_t *hint = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct sym_mapping *m = sym_maps_at(p->maps, i);
		struct mapping_state *s = &p->states[i];

		if (s->entry != e)
			continue;
		s->bias_done = true;
		s->bias_known = e->module &&
				!sym_module_bias_hint(e->module, m->start,
						      m->pgoff, m->exec, hint,
						      &s->bias);
		if (s->bias_known)
			hint = &s->bias;
	}
}

struct module_entry *module_entry_at(struct sym_process *p,
				     const struct sym_mapping *m,
				     struct mapping_state **state)
{
	struct mapping_state *s = &p->states[m - sym_maps_at(p->maps, 0)];
	struct module_entry *e = s->entry;

	if (!e->loaded)
		load_entry(p, e, m);
	if (!s->bias_done)
		assign_biases(p, e);
	*state = s;
	return s->bias_known ? e : NULL;
}

int sym_process_image(struct sym_process *p, uint64_t addr,
		      const struct sym_image **img, uint64_t *bias,
		      uint64_t *map_start, uint64_t *map_end)
{
	const struct sym_mapping *m = sym_process_mapping(p, addr);
	struct mapping_state *s;
	struct module_entry *e;

	if (!m || !maps_a_file(m) || !(e = module_entry_at(p, m, &s)))
		return -ENOENT;
	if (!e->image_tried) {
		e->image_tried = true;
		if (!e->open_path || sym_image_open(e->open_path, &e->image) < 0)
			e->image = NULL;
	}
	if (!e->image)
		return -ENOENT;
	*img = e->image;
	*bias = s->bias;
	*map_start = m->start;
	*map_end = m->end;
	return 0;
}

/* Source lines (lines.c), loaded per module when first asked. */
int sym_process_line(struct sym_process *p, uint64_t addr, const char **file,
		     uint32_t *line)
{
	const struct sym_mapping *m;
	struct mapping_state *s;
	struct module_entry *e;
	char root[sizeof(p->view) + 8];

	if (!p || !file || !line)
		return -EINVAL;
	m = sym_process_mapping(p, addr);
	if (!m || !maps_a_file(m) || is_vdso(m) || !(e = module_entry_at(p, m, &s)))
		return -ENOENT;
	if (!e->lines_tried) {
		e->lines_tried = true;
		snprintf(root, sizeof(root), "%s/root", p->view);
		if (!e->open_path ||
		    sym_lines_open(root, m->path, e->open_path, &e->lines))
			e->lines = NULL;
	}
	if (!e->lines)
		return -ENOENT;
	return sym_lines_find(e->lines, addr - s->bias, file, line);
}

/* Entries no mapping refers to any more (a library dlclose'd, an image
 * exec'd away) are freed. Only between unwinds: an unwind holds images. */
void module_entries_collect(struct sym_process *p)
{
	size_t n = sym_maps_count(p->maps), kept = 0;

	for (size_t i = 0; i < p->entry_count; i++) {
		struct module_entry *e = p->entries[i];
		bool used = false;

		for (size_t j = 0; j < n && !used; j++)
			used = p->states[j].entry == e;
		if (used) {
			p->entries[kept++] = e;
			continue;
		}
		module_entry_free(e);
	}
	p->entry_count = kept;
}

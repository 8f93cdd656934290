// SPDX-License-Identifier: MIT
/*
 * A process: its maps, and the ELF modules they map, cached by device and
 * inode so a re-read of the maps (after dlopen or exec) keeps them. Modules
 * are loaded on the first address that needs them; a file that cannot be
 * opened or is not ELF is remembered as having no symbols.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "symbolize/internal.h"

/*
 * Re-read the maps for an unknown address at most this often; more often
 * while they keep changing (ld.so loading libraries after an exec), so
 * early samples do not stop at a library the maps do not show yet.
 */
#define MAPS_REREAD_NS (100 * 1000 * 1000ULL)
#define MAPS_REREAD_CHANGING_NS (1 * 1000 * 1000ULL)
#define MAPS_CHANGING_FOR_NS (1000 * 1000 * 1000ULL)

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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool is_vdso(const struct sym_mapping *m)
{
	return !strcmp(m->path, "[vdso]");
}

/* What has an ELF image behind it: a file (its path starts with '/';
 * "anon_inode:..." does not) or the vdso. */
static bool maps_a_file(const struct sym_mapping *m)
{
	return m->path[0] == '/' || is_vdso(m);
}

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

	if (p->entry_count == p->entry_cap) {
		size_t cap = p->entry_cap ? p->entry_cap * 2 : 64;
		struct module_entry **bigger =
			realloc(p->entries, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		p->entries = bigger;
		p->entry_cap = cap;
	}
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
static struct module_entry *find_entry(struct sym_process *p,
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

/* What names and unwinds addresses: mappings of files, and executable ones
 * (JIT code). Heaps and stacks come and go without changing either. */
static bool is_code_mapping(const struct sym_mapping *m)
{
	return m->exec || m->path[0] == '/' || !strcmp(m->path, "[vdso]");
}

static const struct sym_mapping *next_code(const struct sym_maps *m, size_t *i)
{
	for (; *i < sym_maps_count(m); (*i)++)
		if (is_code_mapping(sym_maps_at(m, *i)))
			return sym_maps_at(m, (*i)++);
	return NULL;
}

static bool same_code_mappings(const struct sym_maps *a, const struct sym_maps *b)
{
	size_t i = 0, j = 0;

	if (!a || !b)
		return false;
	for (;;) {
		const struct sym_mapping *x = next_code(a, &i), *y = next_code(b, &j);

		if (!x || !y)
			return x == y;
		if (x->start != y->start || x->end != y->end || x->pgoff != y->pgoff ||
		    x->inode != y->inode || x->exec != y->exec || strcmp(x->path, y->path))
			return false;
	}
}

/* Takes ownership of maps, also on failure. Unchanged maps keep their
 * generation, so callers' caches of resolved addresses stay valid. */
static int install_maps(struct sym_process *p, struct sym_maps *maps)
{
	size_t n = sym_maps_count(maps);
	struct mapping_state *states = calloc(n ? n : 1, sizeof(*states));
	struct module_entry *last = NULL;
	bool code_changed;

	code_changed = !same_code_mappings(p->maps, maps);
	if (code_changed)
		p->changed_ns = p->read_ns;
	if (!states) {
		sym_maps_free(maps);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sym_mapping *m = sym_maps_at(maps, i);

		if (!maps_a_file(m))
			continue;
		last = find_entry(p, m, last);
		if (!last) {
			free(states);
			sym_maps_free(maps);
			return -ENOMEM;
		}
		states[i].entry = last;
	}
	sym_maps_free(p->maps);
	free(p->states);
	p->maps = maps;
	p->states = states;
	if (code_changed)
		p->generation++;
	return 0;
}

/* A thread of the process whose maps are not empty, as p->view. */
static int find_live_view(struct sym_process *p, struct sym_maps **maps,
			  char *err, size_t errlen)
{
	char dir[64], path[128];
	struct dirent *e;
	DIR *d;
	int ret = -ESRCH;

	snprintf(dir, sizeof(dir), "/proc/%d/task", p->pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%.16s/maps", dir, e->d_name);
		if (sym_maps_read_path(path, maps, err, errlen))
			continue;
		if (sym_maps_count(*maps)) {
			snprintf(p->view, sizeof(p->view), "%s/%.16s", dir, e->d_name);
			ret = 0;
			break;
		}
		sym_maps_free(*maps);
	}
	closedir(d);
	return ret;
}

static int read_maps(struct sym_process *p, char *err, size_t errlen)
{
	struct sym_maps *maps;
	char path[sizeof(p->view) + 8];
	int ret;

	p->read_ns = now_ns();
	snprintf(path, sizeof(path), "%s/maps", p->view);
	ret = sym_maps_read_path(path, &maps, err, errlen);
	if (ret == 0 && !sym_maps_count(maps)) {
		/* The thread we read through exited, or is a zombie main thread. */
		sym_maps_free(maps);
		ret = find_live_view(p, &maps, err, errlen);
	}
	if (ret)
		return ret;
	ret = install_maps(p, maps);
	if (ret)
		sym_errorf(err, errlen, "maps of %d: %s", p->pid,
			   strerror(-ret));
	return ret;
}

int sym_process_open(int pid, struct sym_process **out, char *err,
		     size_t errlen)
{
	struct sym_process *p;
	int ret;

	if (!out || pid <= 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	snprintf(p->view, sizeof(p->view), "/proc/%d", pid);
	ret = read_maps(p, err, errlen);
	if (ret) {
		sym_process_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

void sym_process_free(struct sym_process *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->entry_count; i++) {
		sym_module_free(p->entries[i]->module);
		sym_image_free(p->entries[i]->image);
		sym_lines_free(p->entries[i]->lines);
		free(p->entries[i]->open_path);
		free(p->entries[i]->path);
		free(p->entries[i]);
	}
	free(p->entries);
	free(p->states);
	sym_maps_free(p->maps);
	sym_unwinder_free(p->unwinder);
	sym_perf_map_free(p->perf_map);
	free(p);
}

struct sym_unwinder **sym_process_unwinder(struct sym_process *p)
{
	return &p->unwinder;
}

int sym_process_reload(struct sym_process *p)
{
	if (!p)
		return -EINVAL;
	return read_maps(p, NULL, 0);
}

uint64_t sym_process_generation(const struct sym_process *p)
{
	return p ? p->generation : 0;
}

const struct sym_mapping *sym_process_find(struct sym_process *p, uint64_t addr)
{
	return p ? sym_maps_find(p->maps, addr) : NULL;
}

const struct sym_mapping *sym_process_mapping(struct sym_process *p,
					      uint64_t addr)
{
	const struct sym_mapping *m;
	uint64_t now, interval;

	if (!p)
		return NULL;
	m = sym_maps_find(p->maps, addr);
	if (m)
		return m;
	now = now_ns();
	interval = now - p->changed_ns < MAPS_CHANGING_FOR_NS ? MAPS_REREAD_CHANGING_NS : MAPS_REREAD_NS;
	if (now - p->read_ns < interval)
		return NULL;
	if (sym_process_reload(p))
		return NULL;
	return sym_maps_find(p->maps, addr);
}

/* Ours is the target's when it spans as much: the same kernel's image. */
static void load_vdso(struct module_entry *e, const struct sym_mapping *m)
{
	const uint8_t *data;
	size_t len;

	e->image_tried = true;
	if (sym_vdso_bytes(&data, &len) < 0 || len > m->end - m->start)
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

/* Through the process's own root (containers), or its map_files link
 * when the file was deleted or replaced. */
static void load_entry(struct sym_process *p, struct module_entry *e,
		       const struct sym_mapping *m)
{
	char path[PATH_MAX + 96], root[sizeof(p->view) + 8];
	int n;

	e->loaded = true;
	if (is_vdso(m)) {
		load_vdso(e, m);
		return;
	}
	snprintf(root, sizeof(root), "%s/root", p->view);
	n = snprintf(path, sizeof(path), "%s%s", root, m->path);
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

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void resolve_in_file(struct sym_process *p,
			    const struct sym_mapping *m, uint64_t addr,
			    struct sym_location *out)
{
	struct mapping_state *s = &p->states[m - sym_maps_at(p->maps, 0)];
	struct module_entry *e = s->entry;

	out->module = base_name(m->path);
	if (!e->loaded)
		load_entry(p, e, m);
	if (!s->bias_done)
		assign_biases(p, e);
	if (!s->bias_known) {
		/* Not ELF, or no segment fits: the offset in the file. */
		out->vaddr = addr - m->start + m->pgoff;
		return;
	}
	out->vaddr = addr - s->bias;
	out->function = sym_module_function(e->module, out->vaddr,
					    &out->offset);
	if (!out->function)
		out->offset = 0;
}

/* ---- JIT code: /tmp/perf-PID.map (perf_map.c) ---- */

/* Where JITs put code: anonymous memory, named with PR_SET_VMA or not. */
static bool is_anonymous(const struct sym_mapping *m)
{
	return !m->path[0] || !strncmp(m->path, "[anon:", 6);
}

/* A name from the perf map; a change of the map is a new generation, as
 * the sampler's cache may hold the address unnamed or named otherwise. */
static void resolve_jit(struct sym_process *p, uint64_t addr,
			struct sym_location *out)
{
	char root[sizeof(p->view) + 8];
	bool changed = false;

	if (!p->perf_map) {
		snprintf(root, sizeof(root), "%s/root", p->view);
		if (sym_perf_map_open(root, p->pid, &p->perf_map))
			return;
	}
	if (!sym_perf_map_find(p->perf_map, addr, &out->function,
			       &out->offset, &changed))
		out->module = "[perf-map]";
	if (changed)
		p->generation++;
}

int sym_process_resolve(struct sym_process *p, uint64_t addr,
			struct sym_location *out)
{
	const struct sym_mapping *m;

	if (!p || !out)
		return -EINVAL;
	*out = (struct sym_location){
		.module = "[unknown]",
		.vaddr = addr,
	};
	m = sym_process_mapping(p, addr);
	if (!m || (is_anonymous(m) && m->exec)) {
		resolve_jit(p, addr, out);
		if (out->function || !m)
			return 0;
	}
	if (!m->path[0])
		out->module = "[anon]";
	else if (!maps_a_file(m))
		out->module = m->path;
	else
		resolve_in_file(p, m, addr, out);
	return 0;
}

int sym_process_image(struct sym_process *p, uint64_t addr,
		      const struct sym_image **img, uint64_t *bias,
		      uint64_t *map_start, uint64_t *map_end)
{
	const struct sym_mapping *m = sym_process_mapping(p, addr);
	struct mapping_state *s;
	struct module_entry *e;

	if (!m || !maps_a_file(m))
		return -ENOENT;
	s = &p->states[m - sym_maps_at(p->maps, 0)];
	e = s->entry;
	if (!e->loaded)
		load_entry(p, e, m);
	if (!s->bias_done)
		assign_biases(p, e);
	if (!s->bias_known)
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

/* ---- source lines (lines.c) ---- */

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
	if (!m || !maps_a_file(m) || is_vdso(m))
		return -ENOENT;
	s = &p->states[m - sym_maps_at(p->maps, 0)];
	e = s->entry;
	if (!e->loaded)
		load_entry(p, e, m);
	if (!s->bias_done)
		assign_biases(p, e);
	if (!s->bias_known)
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
static void collect_unused(struct sym_process *p)
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
		sym_module_free(e->module);
		sym_image_free(e->image);
		sym_lines_free(e->lines);
		free(e->open_path);
		free(e->path);
		free(e);
	}
	p->entry_count = kept;
}

int sym_process_refresh(struct sym_process *p)
{
	bool changed = false;
	int ret;

	if (!p)
		return -EINVAL;
	ret = read_maps(p, NULL, 0);
	if (p->perf_map) {
		sym_perf_map_refresh(p->perf_map, &changed);
		if (changed)
			p->generation++;
	}
	if (!ret)
		collect_unused(p);
	return ret;
}

int sym_process_exec(struct sym_process *p)
{
	if (!p)
		return -EINVAL;
	if (p->perf_map)
		sym_perf_map_forget(p->perf_map);
	p->generation++;
	return sym_process_refresh(p);
}

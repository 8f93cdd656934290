// SPDX-License-Identifier: MIT
/*
 * A process: its maps, read again when an address falls outside them and
 * every so often, and what an address is: a function of a module
 * (modules.c), JIT code named by the perf map, or an anonymous mapping.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/common.h"
#include "symbolize/process_impl.h"

/*
 * Re-read the maps for an unknown address at most this often; more often
 * while they keep changing (ld.so loading libraries after an exec), so
 * early samples do not stop at a library the maps do not show yet.
 */
#define MAPS_REREAD_NS (100 * 1000 * 1000ULL)
#define MAPS_REREAD_CHANGING_NS (1 * 1000 * 1000ULL)
#define MAPS_CHANGING_FOR_NS (1000 * 1000 * 1000ULL)

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

static bool same_code_mappings(const struct sym_maps *a,
			       const struct sym_maps *b)
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
		last = module_entry_find(p, m, last);
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

	p->read_ns = monotonic_ns();
	/* Through the process's own entry first, every time: a thread we
	 * read through while the main thread was a zombie may be gone (an
	 * exec from a second thread makes it the main thread, and its task
	 * entry vanishes), and the stale view would never see the new image. */
	snprintf(p->view, sizeof(p->view), "/proc/%d", p->pid);
	snprintf(path, sizeof(path), "%s/maps", p->view);
	ret = sym_maps_read_path(path, &maps, err, errlen);
	if (ret == 0 && !sym_maps_count(maps)) {
		/* A zombie main thread: read through a live thread. */
		sym_maps_free(maps);
		ret = find_live_view(p, &maps, err, errlen);
	}
	if (ret)
		return ret;
	ret = install_maps(p, maps);
	if (ret)
		errbuf_set(err, errlen, ret, "maps of %d: %s", p->pid,
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
	for (size_t i = 0; i < p->entry_count; i++)
		module_entry_free(p->entries[i]);
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
	now = monotonic_ns();
	interval = now - p->changed_ns < MAPS_CHANGING_FOR_NS ?
			   MAPS_REREAD_CHANGING_NS : MAPS_REREAD_NS;
	if (now - p->read_ns < interval)
		return NULL;
	if (sym_process_reload(p))
		return NULL;
	return sym_maps_find(p->maps, addr);
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
	struct mapping_state *s;
	struct module_entry *e;

	out->module = base_name(m->path);
	e = module_entry_at(p, m, &s);
	if (!e) {
		/* Not ELF, or no segment fits: the offset in the file. */
		out->vaddr = addr - m->start + m->pgoff;
		return;
	}
	out->vaddr = addr - s->bias;
	out->function = sym_module_function(e->module, out->vaddr,
					    &out->offset);
	if (!out->function)
		out->offset = 0;
	/* ld.so's own _start is in no symbol table it ships with: named by
	 * its entry point, where the unwinder ends a start-up stack. */
	if (!out->function && sym_image_at_entry(e->image, out->vaddr, &out->offset))
		out->function = "_start";
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
		module_entries_collect(p);
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

// SPDX-License-Identifier: MIT
/*
 * Finding a target's CPython: _PyRuntime in the executable or in a
 * libpython3.X.so it maps, the version from Py_Version (3.11+) or the
 * file's name, and a layout that is checked against the live process
 * before it is used. Until an interpreter is ready (under `record --` it
 * does not exist yet at the first ticks) the search is repeated and the
 * process is sampled natively meanwhile. Versions without a layout,
 * free-threaded builds and layouts that fail the check are refused, never
 * guessed at.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/formats.h"
#include "sampler/procs.h"
#include "sampler/python/pysample.h"
#include "symbolize/python/python.h"
#include "symbolize/symbolize.h"

/* How often an unfinished search is repeated: often while a program
 * starts (an interpreter appears within milliseconds of its exec), rarely
 * after that (a native program that may dlopen libpython later). */
#define SEARCH_EARLY_NS 10000000ull
#define SEARCH_LATE_NS 250000000ull
#define SEARCH_EARLY_FOR_NS 2000000000ull
/* Early searches re-read the maps each time (0.4 ms with 500 threads'
 * stacks in them): past this, only while a file may yet hold a runtime
 * (a libpython or the executable looked at once, or its data page not
 * yet writable). A native program's later dlopen of libpython is found
 * at the late pace. */
#define SEARCH_EARLY_NATIVE_NS 200000000ull
#define MISFIT_FOR_NS 1000000000ull

static ssize_t read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return remote_read((pid_t)(intptr_t)ctx, addr, buf, len);
}

static ssize_t readv_target(void *ctx, const struct iovec *local, const struct iovec *remote,
			    int n)
{
	return remote_readv((pid_t)(intptr_t)ctx, local, remote, n);
}

int pysample_new(struct sampler *s)
{
	return pysample_new_for(s, s->pid);
}

int pysample_new_for(struct sampler *s, pid_t pid)
{
	struct pysample *py = calloc(1, sizeof(*py));
	int ret;

	if (!py)
		return -ENOMEM;
	py->spawn_rank = -1;
	py->threads = calloc(PY_MAX_THREADS, sizeof(*py->threads));
	py->frames = calloc(PY_MAX_DEPTH, sizeof(*py->frames));
	py->held = calloc(PY_MAX_DEPTH, sizeof(*py->held));
	py->pre_frames = calloc(PY_PREWALK_FRAMES, sizeof(*py->pre_frames));
	py->tids = calloc(PY_MAX_THREADS, sizeof(*py->tids));
	ret = py->threads && py->frames && py->held && py->pre_frames && py->tids ?
	      py_code_cache_new(&py->codes) : -ENOMEM;
	if (!ret)
		ret = py_walk_scratch_init(&py->scratch);
	if (ret < 0) {
		pysample_free(py);
		return ret;
	}
	py->target.mem.read = read_target;
	py->target.mem.readv = readv_target;
	py->target.mem.ctx = (void *)(intptr_t)pid;
	s->py = py;
	return 0;
}

void pysample_free(struct pysample *py)
{
	if (!py)
		return;
	py_code_cache_free(py->codes);
	py_walk_scratch_free(&py->scratch);
	free(py->threads);
	free(py->frames);
	free(py->held);
	free(py->pre_frames);
	free(py->tids);
	pysample_locals_free(py);
	free(py->loaders);
	free(py);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* "libpython3.11.so.1.0", "python3.11", "libpython3.13t.so": 3, 11, t. */
static bool version_from_name(const char *path, unsigned *major, unsigned *minor,
			      bool *threaded)
{
	const char *b = base_name(path), *p;
	char *end;

	if (!strncmp(b, "lib", 3))
		b += 3;
	if (strncmp(b, "python", 6))
		return false;
	p = b + 6;
	*major = (unsigned)strtoul(p, &end, 10);
	if (end == p || *end != '.')
		return false;
	p = end + 1;
	*minor = (unsigned)strtoul(p, &end, 10);
	if (end == p)
		return false;
	*threaded = *end == 't';
	return true;
}

static bool is_candidate(const char *path, const char *exe)
{
	return !strncmp(base_name(path), "libpython3", 10) || !strcmp(path, exe);
}

/* A file looked at twice (10 ms apart or more) without a runtime has none:
 * once could be a library caught while the loader maps it. */
static bool tried_before(struct pysample *py, uint64_t inode)
{
	for (int i = 0; i < py->ntried; i++)
		if (py->tried[i] == inode)
			return py->tried_times[i] >= 2;
	return false;
}

static void tried_again(struct pysample *py, uint64_t inode)
{
	for (int i = 0; i < py->ntried; i++)
		if (py->tried[i] == inode) {
			py->tried_times[i]++;
			return;
		}
	if (py->ntried < (int)(sizeof(py->tried) / sizeof(py->tried[0]))) {
		py->tried[py->ntried] = inode;
		py->tried_times[py->ntried++] = 1;
	}
}

/* Said once, and kept for --stats and dump, which -q does not silence. */
static void refuse(struct sampler *s, const char *why)
{
	s->py->state = PY_REFUSED;
	snprintf(s->py->refused, sizeof(s->py->refused), "%.*s", (int)sizeof(s->py->refused) - 1, why);
	sampler_notice(s, "%s: native stacks only", why);
}

/* An interpreter older than _PyRuntime (3.6 and before) is refused by the
 * version its file is named with, not passed over in silence. */
static int refuse_older(struct sampler *s, const struct sym_mapping *m)
{
	unsigned major = 0, minor = 0, lo, hi;
	bool threaded = false;
	uint64_t at;
	char why[PATH_MAX + 160];

	if (!version_from_name(m->path, &major, &minor, &threaded) || major != 3 || minor >= 7 ||
	    sym_process_symbol(s->sym, m, "Py_Initialize", &at) < 0)
		return 0;
	py_layout_range(&lo, &hi);
	snprintf(why, sizeof(why), "Python %u.%u (%s) in process %d is not supported (3.%u to 3.%u are)",
		 major, minor, base_name(m->path), (int)s->pid, lo & 0xff, hi & 0xff);
	refuse(s, why);
	return -ENOTSUP;
}

/* Sets the layout of the interpreter whose runtime is at rt. */
static int choose_layout(struct sampler *s, const struct sym_mapping *m, uint64_t rt)
{
	struct pysample *py = s->py;
	const struct py_layout *l;
	unsigned major = 0, minor = 0, lo, hi;
	bool threaded = false, named;
	uint64_t at;
	uint32_t hex;
	char what[PATH_MAX + 32], why[PATH_MAX + 160];

	named = version_from_name(m->path, &major, &minor, &threaded);
	if (!sym_process_symbol(s->sym, m, "Py_Version", &at) &&
	    remote_read(s->pid, at, &hex, sizeof(hex)) == sizeof(hex) && hex >> 24 == 3) {
		major = hex >> 24;
		minor = hex >> 16 & 0xff;
	} else if (!named) {
		snprintf(why, sizeof(why), "the Python in %s of process %d has no version "
			 "trainsample can read", m->path, (int)s->pid);
		refuse(s, why);
		return -ENOTSUP;
	}
	snprintf(py->version, sizeof(py->version), "%u.%u", major, minor);
	snprintf(what, sizeof(what), "Python %s (%s)", py->version, base_name(m->path));
	py_layout_range(&lo, &hi);
	l = major == 3 ? py_layout_find(major, minor) : NULL;
	if (threaded) {
		snprintf(why, sizeof(why), "%s in process %d is a free-threaded build, which "
			 "trainsample does not support", what, (int)s->pid);
		refuse(s, why);
		return -ENOTSUP;
	}
	if (!l) {
		snprintf(why, sizeof(why), "%s in process %d is not supported (3.%u to 3.%u are)",
			 what, (int)s->pid, lo & 0xff, hi & 0xff);
		refuse(s, why);
		return -ENOTSUP;
	}
	py->target.l = *l;
	py->target.runtime = rt;
	snprintf(py->what, sizeof(py->what), "%.90s", what);
	return 0;
}

/* 3.13+: the rest of the layout from the runtime's debug offsets. */
static int read_debug_offsets(struct sampler *s)
{
	struct pysample *py = s->py;
	uint8_t b[PY_DEBUG_OFFSETS_MAX];
	struct py_layout l;
	char err[160];
	ssize_t n;
	int ret;

	if (py->target.l.version < 0x030d)
		return 0;
	n = remote_read(s->pid, py->target.runtime, b, sizeof(b));
	if (n < 0)
		return (int)n;
	ret = py_layout_from_debug_offsets(&py->target.l, b, (size_t)n, &l, err, sizeof(err));
	if (ret < 0) {
		refuse(s, err);
		return ret;
	}
	py->target.l = l;
	return 0;
}

/* Looks for _PyRuntime in the executable and every libpython mapped. */
static int find_runtime(struct sampler *s)
{
	struct pysample *py = s->py;
	const struct sym_maps *maps;
	char link[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)s->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	if (n > 10 && !strcmp(exe + n - 10, " (deleted)"))
		exe[n - 10] = 0;
	sym_process_reload(s->sym);
	maps = sym_process_maps(s->sym);
	py->candidate_open = false;
	for (size_t i = 0; maps && i < sym_maps_count(maps); i++) {
		const struct sym_mapping *m = sym_maps_at(maps, i), *data;
		uint64_t rt, sym;

		if (m->pgoff || !is_candidate(m->path, exe) || tried_before(py, m->inode))
			continue;
		if (sym_process_symbol(s->sym, m, "_PyRuntime", &rt) < 0) {
			if (refuse_older(s, m) < 0)
				return -ENOTSUP;
			tried_again(py, m->inode);
			py->candidate_open |= !tried_before(py, m->inode);
			continue;
		}
		/* _PyRuntime is data (.data, or .bss before 3.10): until its
		 * page is mapped writable the loader has only reserved the
		 * file's span (mapped whole, read only, at offset 0), and the
		 * bytes there are not its. Looked at again at the next search. */
		data = sym_maps_find(maps, rt);
		if (!data || !data->write || (data->inode && data->inode != m->inode)) {
			py->candidate_open = true;
			return -EAGAIN;
		}
		if (choose_layout(s, m, rt) < 0)
			return -ENOTSUP;
		if (!sym_process_symbol(s->sym, m, "PyCode_Type", &sym))
			py->target.code_type = sym;
		if (!sym_process_symbol(s->sym, m, "_Py_NoneStruct", &sym))
			py->target.none = sym;
		return read_debug_offsets(s) < 0 ? -ENOTSUP : 0;
	}
	return -ENOENT;
}

void pysample_finish(struct sampler *s)
{
	struct pysample *py = s->py;

	/* A shell whose child ran Python: the Python is the child's. */
	if (py && !py->ever_ready && py->state != PY_REFUSED && s->st.samples &&
	    !s->tree.followed_python[0])
		sampler_notice(s, "no Python interpreter in process %d: native stacks only",
			       (int)s->pid);
}

/* Early while an interpreter may be about to appear: found, and waiting for
 * its first thread state, or a candidate file not settled. */
static uint64_t search_pace(const struct pysample *py, uint64_t now)
{
	uint64_t age = now - py->image_ns;

	if (age >= SEARCH_EARLY_FOR_NS)
		return SEARCH_LATE_NS;
	if (py->state == PY_FOUND || py->candidate_open || age < SEARCH_EARLY_NATIVE_NS)
		return SEARCH_EARLY_NS;
	return SEARCH_LATE_NS;
}

/*
 * One step of the search, at most every 10 ms: find the runtime (once per
 * process image), then wait for its first thread state and check the
 * layout against it.
 */
void pysample_search(struct sampler *s, uint64_t now)
{
	struct pysample *py = s->py;
	char err[160];
	int ret;

	if (!py)
		return;
	if (!py->image_ns || py->exec_seq != s->exec_seq)
		py->image_ns = now;
	if (py->exec_seq != s->exec_seq) {
		/* A new image: whatever was found belongs to the old one. */
		py->exec_seq = s->exec_seq;
		py->state = PY_SEARCHING;
		py->ntried = 0;
		py->candidate_open = false;
		py->misfits = 0;
		py->refused[0] = 0;
		py->tid_offset = 0;
		py->role_read = false;
		py->spawn_rank = -1;
		py->rank_read = false;
	}
	if (py->state == PY_READY || py->state == PY_REFUSED)
		return;
	if (now - py->last_search_ns < search_pace(py, now))
		return;
	py->last_search_ns = now;
	if (py->state == PY_SEARCHING) {
		ret = find_runtime(s);
		if (ret < 0)
			return;
		py->state = PY_FOUND;
	}
	ret = py_layout_validate(&py->target, err, sizeof(err));
	if (ret == -EAGAIN)
		return;
	/* A thread state read while the interpreter still builds it can look
	 * wrong for a while (longer on a loaded machine): refuse only a
	 * misfit seen three times over a second. Meanwhile the process is
	 * sampled natively, as before an interpreter is found. */
	if (ret < 0 && !py->misfits++)
		py->first_misfit_ns = now;
	if (ret < 0 && (py->misfits < 3 || now - py->first_misfit_ns < MISFIT_FOR_NS))
		return;
	if (ret < 0) {
		refuse(s, err);
		return;
	}
	py->state = PY_READY;
	py->ever_ready = true;
	profile_set_meta(s->profile, "python", py->version);
}

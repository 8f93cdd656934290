// SPDX-License-Identifier: MIT
/*
 * Which DataLoader a thread fetches from, for the summary's figures per
 * loader (profile/train/dl_{loader}/...). The loop's line alone cannot
 * tell: `def run_epoch(loader): for b in loader:` fetches from a training
 * and a validation loader at one line. At a sample in a DataLoader
 * iterator's __next__, the frames outward of it are searched for the one
 * variable that holds a DataLoader (the loop's own `loader`); in
 * DataLoader.__iter__ (an epoch starting) it is the frame's self. The object
 * gets a number, in order of first sight, and the name of the outermost
 * variable that holds it (`train_loader`, passed down as `loader`). The
 * number goes on the counter track "dataloader.PID.TID" when it changes,
 * at the sample's time; the name into the meta "dataloader.PID.N". No
 * picture draws those tracks; the summary reads them.
 *
 * Found once per frame and variable: later samples read that one slot
 * again (8 bytes) and compare, so a frame reused by another call with
 * another loader is noticed; and not found once per caller of __next__. Frames with two DataLoader variables are
 * left to the summary's line, as are `<module>` loops (globals).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"
#include "sampler/python/pysample.h"

#define LOADER_NEXT_FILE "torch/utils/data/dataloader.py"
#define LOADER_TYPE "DataLoader"
/* Frames outward of __next__ searched for the loader (enumerate, tqdm and
 * a framework's own wrappers lie between), and for the names. */
#define HOLDER_FRAMES 8
#define NAME_FRAMES 64
#define LOCALS_READ 64

/* "Class.method" from 3.11, "method" before, in torch's dataloader.py. */
static bool loader_method(const struct py_code *c, const char *cls, const char *method)
{
	size_t flen = c->file ? strlen(c->file) : 0, wlen = strlen(LOADER_NEXT_FILE);
	size_t nlen = c->name ? strlen(c->name) : 0, mlen = strlen(method), clen = strlen(cls);

	if (nlen < mlen || strcmp(c->name + nlen - mlen, method) || flen < wlen ||
	    strcmp(c->file + flen - wlen, LOADER_NEXT_FILE))
		return false;
	return nlen == mlen || (nlen == clen + 1 + mlen && !strncmp(c->name, cls, clen) &&
				c->name[clen] == '.');
}

enum loader_frame pysample_loader_frame(const struct py_code *c)
{
	if (loader_method(c, "_BaseDataLoaderIter", "__next__"))
		return LOADER_NEXT;
	if (loader_method(c, "DataLoader", "__iter__"))
		return LOADER_ITER;
	/* Before 3.11 "__init__" alone: DataLoader's too, told by its self. */
	if (loader_method(c, "_BaseDataLoaderIter", "__init__") ||
	    loader_method(c, "_MultiProcessingDataLoaderIter", "__init__") ||
	    loader_method(c, "_SingleProcessDataLoaderIter", "__init__"))
		return LOADER_ITER_INIT;
	return LOADER_NONE;
}

/* The object in a frame's variable slot now (3.14+: a tagged reference). */
static int slot_object(const struct py_target *t, uint64_t frame, uint32_t slot, uint64_t *obj)
{
	uint64_t v, tag = t->l.stackref_tag;
	int ret = py_read(t, frame + t->l.frame_localsplus + (uint64_t)slot * 8, &v, sizeof(v));

	if (ret < 0)
		return ret;
	*obj = tag && (v & tag) != tag ? v & ~tag : v;
	return 0;
}

static int loader_number(struct sampler *s, uint64_t obj, const char *name)
{
	struct pysample *py = s->py;
	char key[64];

	for (int i = 0; i < py->nloaders; i++)
		if (py->loaders[i] == obj)
			return i;
	if (ARRAY_RESERVE(py->loaders, py->loaders_cap, (size_t)py->nloaders + 1, 4) < 0)
		return -ENOMEM;
	py->loaders[py->nloaders] = obj;
	snprintf(key, sizeof(key), "dataloader.%d.%d", (int)s->pid, py->nloaders);
	profile_set_meta(s->profile, key, name);
	return py->nloaders++;
}

/* The outermost variable holding obj, frames [from, n) of the stack. */
static void outermost_name(struct sampler *s, const struct py_raw_frame *f, int from, int n,
			   uint64_t obj, struct py_local *vars, char *name, size_t len)
{
	for (int i = n - 1 < from + NAME_FRAMES ? n - 1 : from + NAME_FRAMES - 1; i >= from; i--) {
		int m = py_frame_locals(&s->py->target, f[i].addr, f[i].code, vars, LOCALS_READ);

		for (int j = 0; j < m; j++)
			if (vars[j].obj == obj) {
				snprintf(name, len, "%s", vars[j].name);
				return;
			}
	}
}

/*
 * Frames k + 1 onward (outward of __next__ at k): the first with exactly
 * one variable holding a DataLoader. Fills *site; false if none.
 */
static bool find_holder(struct sampler *s, const struct py_raw_frame *f, int n, int k,
			struct loader_site *site, struct py_local *vars, char *name, size_t len)
{
	const struct py_target *t = &s->py->target;

	for (int i = k + 1; i < n && i <= k + HOLDER_FRAMES; i++) {
		int m = py_frame_locals(t, f[i].addr, f[i].code, vars, LOCALS_READ), found = -1;

		for (int j = 0; j < m; j++) {
			if (!vars[j].obj || vars[j].slot == UINT32_MAX ||
			    !py_type_derives(t, vars[j].obj, LOADER_TYPE))
				continue;
			if (found >= 0)
				return false; /* two loaders: the line tells */
			found = j;
		}
		if (found < 0)
			continue;
		*site = (struct loader_site){ .frame = f[i].addr, .code = f[i].code,
					      .obj = vars[found].obj, .slot = vars[found].slot };
		snprintf(name, len, "%s", vars[found].name);
		outermost_name(s, f, i + 1, n, site->obj, vars, name, len);
		return true;
	}
	return false;
}

/* The loader's number, from a site known (its slot unchanged), else found. */
static int loader_of(struct sampler *s, const struct py_raw_frame *f, int n, int k)
{
	struct pysample *py = s->py;
	struct loader_site site;
	struct py_local *vars;
	char name[128] = "";
	int id = -1;

	for (int i = k + 1; i < n && i <= k + HOLDER_FRAMES; i++)
		for (int j = 0; j < py->nloader_sites; j++) {
			struct loader_site *ls = &py->loader_sites[j];
			uint64_t now;

			if (ls->frame != f[i].addr || ls->code != f[i].code)
				continue;
			if (ls->id < 0) {
				if (i == k + 1)
					return -1; /* searched from this caller: none */
				continue;
			}
			if (slot_object(&py->target, ls->frame, ls->slot, &now) == 0 && now == ls->obj)
				return ls->id;
			ls->frame = 0; /* another call's frame now: found again */
		}
	vars = malloc(LOCALS_READ * sizeof(*vars));
	if (!vars)
		return -ENOMEM;
	if (find_holder(s, f, n, k, &site, vars, name, sizeof(name))) {
		id = loader_number(s, site.obj, name);
		site.id = id;
	} else {
		/* None: not searched again from the same caller's frame, the
		 * search being dear (every frame's variables read). */
		site = (struct loader_site){ .frame = k + 1 < n ? f[k + 1].addr : 0,
					     .code = k + 1 < n ? f[k + 1].code : 0, .id = -1 };
	}
	if (site.frame) {
		py->loader_sites[py->next_loader_site] = site;
		py->next_loader_site = (py->next_loader_site + 1) % LOADER_SITES;
		if (py->nloader_sites < LOADER_SITES)
			py->nloader_sites++;
	}
	free(vars);
	return id;
}

/* The loader an iterator was made by, where its making was seen. */
static int loader_of_iter(struct sampler *s, uint64_t iter)
{
	struct pysample *py = s->py;

	for (int i = 0; iter && i < py->nloader_iters; i++)
		if (py->loader_iters[i].iter == iter)
			return py->loader_iters[i].id;
	return -1;
}

static void iter_remember(struct sampler *s, uint64_t iter, int id)
{
	struct pysample *py = s->py;
	int at = py->next_loader_iter;

	for (int i = 0; i < py->nloader_iters; i++)
		if (py->loader_iters[i].iter == iter)
			at = i;
	py->loader_iters[at].iter = iter;
	py->loader_iters[at].id = id;
	if (at == py->next_loader_iter) {
		py->next_loader_iter = (at + 1) % LOADER_SITES;
		if (py->nloader_iters < LOADER_SITES)
			py->nloader_iters++;
	}
}

/* DataLoader.__iter__ (an epoch's start: its workers starting) runs on
 * the loader itself: its self, slot 0; an iterator's __init__ has the
 * iterator in slot 0 and the loader in slot 1 (its argument `loader`). */
static int loader_of_self(struct sampler *s, const struct py_raw_frame *f, int n, int k,
			  uint32_t slot)
{
	struct pysample *py = s->py;
	struct py_local *vars;
	char name[128] = "";
	uint64_t obj;
	int id;

	if (slot_object(&py->target, f[k].addr, slot, &obj) < 0 || !obj ||
	    !py_type_derives(&py->target, obj, LOADER_TYPE))
		return -1;
	for (int i = 0; i < py->nloaders; i++)
		if (py->loaders[i] == obj)
			return i;
	vars = malloc(LOCALS_READ * sizeof(*vars));
	if (!vars)
		return -ENOMEM;
	outermost_name(s, f, k + 1, n, obj, vars, name, sizeof(name));
	id = loader_number(s, obj, name);
	free(vars);
	return id;
}

void pysample_loader_note(struct sampler *s, struct thread *t, const struct py_raw_frame *f,
			  int n, uint64_t now)
{
	struct pysample *py = s->py;
	const struct py_raw_frame *at = py->loader_at;
	struct counter_sample c = { .time_ns = now };
	char track[64];
	int id;

	uint64_t iter = 0;
	int k;

	py->loader_at = NULL;
	if (!at || at < f || at >= f + n)
		return;
	k = (int)(at - f);
	if (py->loader_kind == LOADER_ITER) {
		id = loader_of_self(s, f, n, k, 0);
		t->loader_iterated = id + 1;
	} else if (py->loader_kind == LOADER_ITER_INIT) {
		uint64_t loader = 0;

		/* Also in a worker forked there, at every sample: known once,
		 * while its loader argument is the one remembered. An iterator
		 * freed and another made at its address (one epoch's, then the
		 * next loader's) is not taken for the old one. */
		if (slot_object(&py->target, f[k].addr, 0, &iter) < 0 || !iter)
			return;
		id = loader_of_iter(s, iter);
		if (id < 0 || slot_object(&py->target, f[k].addr, 1, &loader) < 0 ||
		    loader != py->loaders[id]) {
			if (!py_type_derives(&py->target, iter, "_BaseDataLoaderIter"))
				return; /* DataLoader.__init__ before 3.11 */
			id = loader_of_self(s, f, n, k, 1);
			if (id >= 0)
				iter_remember(s, iter, id);
		}
	} else {
		/* __next__'s self is the iterator: made right after a loader's
		 * __iter__ (no fetch between), that loader's; else the loader
		 * a frame outward holds; else the one it was seen made by.
		 * Last, as an address remembered can be another iterator's now
		 * (the last epoch's freed, the next loader's made there). */
		if (slot_object(&py->target, f[k].addr, 0, &iter) < 0)
			iter = 0;
		if (iter && t->loader_iterated) {
			id = t->loader_iterated - 1;
			iter_remember(s, iter, id);
		} else {
			id = loader_of(s, f, n, k);
			if (id >= 0 && iter)
				iter_remember(s, iter, id);
			else if (id < 0)
				id = loader_of_iter(s, iter);
		}
		t->loader_iterated = 0;
	}
	/* A fetch whose loader is not known: not the last one's (the
	 * summary tells it by its line then). */
	if (id < 0 && (py->loader_kind != LOADER_NEXT || !t->loader_shown))
		return;
	if (t->loader_shown == id + 1)
		return;
	snprintf(track, sizeof(track), "dataloader.%d.%d", (int)s->pid, (int)t->tid);
	if (profile_intern_string(s->profile, track, &c.track) < 0)
		return;
	c.value = id < 0 ? -1 : id;
	if (profile_add_counter(s->profile, &c) == 0)
		t->loader_shown = id < 0 ? 0 : id + 1;
}

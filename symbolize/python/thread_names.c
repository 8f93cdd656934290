// SPDX-License-Identifier: MIT
/*
 * Thread names as Python's threading module knows them: sys.modules
 * ["threading"]._active maps each thread's ident (its pthread_t) to its
 * Thread object, whose _name is the name. Reading an instance attribute
 * differs by version: a dict at tp_dictoffset (up to 3.10), values or a
 * dict before the object (3.11, 3.12: tagged), values inline after it
 * (3.13), the keys then being the class's cached keys.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/python/python.h"

#define MAX_ENTRIES 4096
#define NAME_MAX_BYTES 256

struct entry {
	uint64_t key, value;
};

static int read_u64(const struct py_target *t, uint64_t addr, uint64_t *v)
{
	return py_read(t, addr, v, sizeof(*v));
}

/*
 * The (key, value) pairs of a keys object, values from `values` (an array
 * of pointers) where the table is split. Returns their number.
 */
static int keys_entries(const struct py_target *t, uint64_t keys, uint64_t values,
			struct entry *out, int max)
{
	const struct py_layout *l = &t->l;
	uint64_t first, n = 0, index_bytes, size;
	size_t esize, kofs, vofs;
	uint8_t kind = 0, log2;
	uint8_t *buf;
	int ret;

	if (read_u64(t, keys + l->keys_nentries, &n) < 0 || n > MAX_ENTRIES)
		return -EPROTO;
	if (l->version <= 0x030a) {
		if (read_u64(t, keys + l->keys_size, &size) < 0 || size > (1u << 20))
			return -EPROTO;
		index_bytes = size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : 4);
	} else {
		if (py_read(t, keys + l->keys_index_bytes, &log2, 1) < 0 || log2 > 24 ||
		    py_read(t, keys + l->keys_kind, &kind, 1) < 0)
			return -EPROTO;
		index_bytes = 1ull << log2;
	}
	/* General entries are (hash, key, value); 3.11+'s str-keyed ones
	 * (key, value). */
	esize = kind ? 16 : 24;
	kofs = kind ? 0 : 8;
	vofs = kofs + 8;
	first = keys + l->keys_indices + index_bytes;
	if ((int)n > max)
		n = (uint64_t)max;
	buf = malloc(n * esize + 1);
	if (!buf)
		return -ENOMEM;
	ret = py_read(t, first, buf, n * esize);
	for (uint64_t i = 0; !ret && i < n; i++) {
		memcpy(&out[i].key, buf + i * esize + kofs, 8);
		memcpy(&out[i].value, buf + i * esize + vofs, 8);
		if (values && read_u64(t, values + 8 * i, &out[i].value) < 0)
			out[i].value = 0;
	}
	free(buf);
	return ret < 0 ? ret : (int)n;
}

static int dict_entries(const struct py_target *t, uint64_t dict, struct entry *out, int max)
{
	uint64_t keys, values;

	if (read_u64(t, dict + t->l.dict_keys, &keys) < 0 ||
	    read_u64(t, dict + t->l.dict_values, &values) < 0)
		return -EFAULT;
	return keys_entries(t, keys, values ? values + t->l.values_array : 0, out, max);
}

/* The value of the str key `name` among n entries; 0 if none. */
static uint64_t lookup(const struct py_target *t, const struct entry *e, int n, const char *name)
{
	char buf[64];

	for (int i = 0; i < n; i++)
		if (e[i].key && e[i].value && !py_string_read(t, e[i].key, buf, sizeof(buf)) &&
		    !strcmp(buf, name))
			return e[i].value;
	return 0;
}

static uint64_t dict_get(const struct py_target *t, uint64_t dict, const char *name,
			 struct entry *scratch)
{
	int n = dict ? dict_entries(t, dict, scratch, MAX_ENTRIES) : 0;

	return n > 0 ? lookup(t, scratch, n, name) : 0;
}

/* An instance attribute kept in the object's values or dict. */
static uint64_t attr_get(const struct py_target *t, uint64_t obj, const char *name,
			 struct entry *scratch)
{
	const struct py_layout *l = &t->l;
	uint64_t type, dict = 0, values = 0, keys, word;
	int64_t off;
	int n;

	if (read_u64(t, obj + l->object_type, &type) < 0)
		return 0;
	if (l->version <= 0x030a) {
		if (py_read(t, type + l->type_dictoffset, &off, sizeof(off)) < 0 || off <= 0 ||
		    read_u64(t, obj + (uint64_t)off, &dict) < 0)
			return 0;
		return dict_get(t, dict, name, scratch);
	}
	/* The managed dict sits three words before the object. */
	if (read_u64(t, obj - 24, &word) < 0)
		return 0;
	if (l->version == 0x030c && (word & 1)) {
		values = word + 1;
	} else if (word) {
		dict = word;
	} else if (l->version == 0x030b) {
		read_u64(t, obj - 32, &values);
	} else if (l->version >= 0x030d) {
		uint8_t valid = 0;

		if (py_read(t, type + l->type_basicsize, &off, sizeof(off)) < 0 || off <= 0)
			return 0;
		values = obj + (uint64_t)off;
		if (py_read(t, values + 3, &valid, 1) < 0 || !valid)
			return 0;
	}
	if (dict)
		return dict_get(t, dict, name, scratch);
	if (!values || read_u64(t, type + l->type_cached_keys, &keys) < 0)
		return 0;
	n = keys_entries(t, keys, values + l->values_array, scratch, MAX_ENTRIES);
	return n > 0 ? lookup(t, scratch, n, name) : 0;
}

/* A non-negative int of up to two 30-bit digits (a pthread_t). */
static int long_value(const struct py_target *t, uint64_t obj, uint64_t *out)
{
	uint64_t head;
	uint32_t d[2] = { 0, 0 };
	int64_t ndigits;

	if (read_u64(t, obj + t->l.bytes_size, &head) < 0)
		return -EFAULT;
	/* 3.12+: lv_tag, digits << 3 | sign (0 positive, 1 zero); before,
	 * ob_size, negative for negative numbers. */
	ndigits = t->l.version >= 0x030c ? (int64_t)(head >> 3) : (int64_t)head;
	if (t->l.version >= 0x030c && (head & 3) == 2)
		return -ERANGE;
	if (ndigits < 0 || ndigits > 2 ||
	    py_read(t, obj + t->l.long_digits, d, (size_t)ndigits * 4) < 0)
		return -ERANGE;
	*out = (uint64_t)d[0] | (uint64_t)d[1] << 30;
	return 0;
}

/* threading._active: from the cache while it still holds an object of
 * the same type, else looked up through sys.modules (one string read per
 * module). */
static uint64_t active_dict(const struct py_target *t, uint64_t interp,
			    struct py_names_cache *cache, struct entry *scratch)
{
	uint64_t modules, threading, md, dict, type;

	if (cache->active && !read_u64(t, cache->active + t->l.object_type, &type) &&
	    type == cache->active_type)
		return cache->active;
	cache->active = 0;
	if (read_u64(t, interp + t->l.interp_modules, &modules) < 0 ||
	    !(threading = dict_get(t, modules, "threading", scratch)) ||
	    read_u64(t, threading + t->l.module_dict, &md) < 0 ||
	    !(dict = dict_get(t, md, "_active", scratch)) ||
	    read_u64(t, dict + t->l.object_type, &type) < 0)
		return 0;
	cache->active = dict;
	cache->active_type = type;
	return dict;
}

int py_thread_names(const struct py_target *t, uint64_t interp, struct py_names_cache *cache,
		    void (*fn)(void *ctx, uint64_t ident, const char *name), void *ctx)
{
	struct entry *scratch = malloc(MAX_ENTRIES * sizeof(*scratch));
	struct entry *active = malloc(MAX_ENTRIES * sizeof(*active));
	uint64_t dict;
	int n, found = 0;

	if (!scratch || !active) {
		free(scratch);
		free(active);
		return -ENOMEM;
	}
	dict = active_dict(t, interp, cache, scratch);
	n = dict ? dict_entries(t, dict, active, MAX_ENTRIES) : -ENOENT;
	for (int i = 0; i < n; i++) {
		char name[NAME_MAX_BYTES];
		uint64_t ident, obj;

		if (!active[i].key || !active[i].value || long_value(t, active[i].key, &ident) < 0)
			continue;
		obj = attr_get(t, active[i].value, "_name", scratch);
		if (obj && !py_string_read(t, obj, name, sizeof(name))) {
			fn(ctx, ident, name);
			found++;
		}
	}
	free(scratch);
	free(active);
	return n < 0 ? n : found;
}

// SPDX-License-Identifier: MIT
/*
 * Code objects: names, file, first line and line table, read once and
 * cached by address; strings; each version's own line-table format.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "symbolize/python/python.h"

#define STRING_MAX 1024          /* characters read of a name or path */
#define LINETABLE_MAX (1 << 20)
#define CODE_HEADER_MAX 512
/* Code objects checked in one read (IOV_MAX is 1024). */
#define PREFETCH_MAX 256

size_t py_utf8_put(char *out, uint32_t c)
{
	/* Lone surrogates and what lies beyond Unicode have no UTF-8. */
	if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		c = 0xfffd;
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * Compact strings only (what code objects hold): the state's kind (bits
 * 2-4), compact (5) and ascii (6) bits say where the characters are and
 * how wide.
 */
int py_string_read(const struct py_target *t, uint64_t addr, char *buf, size_t len)
{
	const struct py_layout *l = &t->l;
	uint8_t raw[STRING_MAX * 4];
	uint32_t state;
	int64_t length;
	unsigned kind;
	size_t o = 0, n;
	int ret;

	if (!len)
		return -EINVAL;
	buf[0] = 0;
	ret = py_read(t, addr + l->unicode_length, &length, sizeof(length));
	if (!ret)
		ret = py_read(t, addr + l->unicode_state, &state, sizeof(state));
	if (ret < 0)
		return ret;
	kind = state >> 2 & 7;
	if (!(state & 1u << 5) || length < 0 || (kind != 1 && kind != 2 && kind != 4))
		return -EPROTO;
	n = length > STRING_MAX ? STRING_MAX : (size_t)length;
	if (state & 1u << 6)
		ret = py_read(t, addr + l->unicode_ascii_data, raw, n);
	else
		ret = py_read(t, addr + l->unicode_compact_data, raw, n * kind);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		uint32_t c;
		char u[4];
		size_t k;

		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			uint16_t v;

			memcpy(&v, raw + 2 * i, 2);
			c = v;
		} else {
			memcpy(&c, raw + 4 * i, 4);
		}
		k = py_utf8_put(u, c);
		if (o + k >= len)
			break;
		memcpy(buf + o, u, k);
		o += k;
	}
	buf[o] = 0;
	return 0;
}

/* co_lnotab (3.8, 3.9): (byte increment, signed line increment) pairs. */
static uint32_t line_lnotab(const struct py_code *c, uint64_t lasti)
{
	int64_t line = c->firstlineno;
	uint64_t addr = 0;

	if (lasti == UINT64_MAX)
		return c->firstlineno;
	for (size_t i = 0; i + 1 < c->linetable_len; i += 2) {
		addr += c->linetable[i];
		if (addr > lasti)
			break;
		line += (int8_t)c->linetable[i + 1];
	}
	return line > 0 ? (uint32_t)line : 0;
}

/* 3.10: (bytes covered, signed line delta; -128: no line) pairs. */
static uint32_t line_310(const struct py_code *c, uint64_t offset)
{
	int64_t line = c->firstlineno;
	uint64_t end = 0;

	if (offset == UINT64_MAX)
		return c->firstlineno;
	for (size_t i = 0; i + 1 < c->linetable_len; i += 2) {
		int8_t delta = (int8_t)c->linetable[i + 1];
		uint64_t start = end;

		if (delta != -128)
			line += delta;
		end += c->linetable[i];
		if (offset >= start && offset < end)
			break;
	}
	return line > 0 ? (uint32_t)line : 0;
}

static uint64_t varint(const uint8_t *p, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 56)
			return v;
		b = p[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int64_t svarint(const uint8_t *p, size_t len, size_t *i)
{
	uint64_t v = varint(p, len, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/* 3.11+: the location table, entries of (code, length in code units). */
static uint32_t line_locations(const struct py_code *c, uint64_t instr)
{
	const uint8_t *p = c->linetable;
	size_t len = c->linetable_len, i = 0;
	int64_t line = c->firstlineno;
	uint64_t target, addr = 0;

	if (instr < c->code_start)
		return c->firstlineno;
	target = (instr - c->code_start) / 2;
	while (i < len) {
		uint8_t b = p[i++];
		unsigned code = b >> 3 & 15, n = (b & 7) + 1;

		if (!(b & 0x80))
			break; /* out of step: not an entry's first byte */
		if (code == 14) {
			line += svarint(p, len, &i);
			varint(p, len, &i);
			varint(p, len, &i);
			varint(p, len, &i);
		} else if (code == 13) {
			line += svarint(p, len, &i);
		} else if (code >= 10 && code <= 12) {
			line += code - 10;
			i += 2;
		} else if (code < 10) {
			i += 1;
		}
		if (target >= addr && target < addr + n)
			break;
		addr += n;
	}
	return line > 0 ? (uint32_t)line : 0;
}

uint32_t py_code_line(const struct py_target *t, const struct py_code *c, uint64_t instr)
{
	if (!c->linetable)
		return c->firstlineno;
	if (t->l.version <= 0x0309)
		return line_lnotab(c, instr);
	if (t->l.version == 0x030a)
		return line_310(c, instr);
	return line_locations(c, instr);
}

/* ---- the cache ---- */

struct py_code_cache {
	/* Each code object read, at its id; an address keeps its id, its
	 * code replaced when the address holds another. The address beside
	 * the code: a lookup compares it without reaching into the code. */
	struct code_entry {
		uint64_t addr;
		struct py_code *code;
	} *entries;
	uint32_t nentries, capentries;
	struct hash_table index; /* address -> id */
	/* The headers checked by the last py_code_prefetch: entries whose
	 * checked equals epoch, while live. */
	uint32_t epoch;
	bool live;
	uint8_t *headers;
	struct iovec *remote;
	struct py_code **queued;
};

int py_code_cache_new(struct py_code_cache **out)
{
	struct py_code_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	/* Reserved once here, so lookups need no check. */
	if (hash_table_reserve(&c->index) < 0) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

static void code_free(struct py_code *k)
{
	if (!k)
		return;
	free(k->name);
	free(k->file);
	free(k->linetable);
	free(k);
}

void py_code_cache_free(struct py_code_cache *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nentries; i++)
		code_free(c->entries[i].code);
	free(c->entries);
	hash_table_free(&c->index);
	free(c->headers);
	free(c->remote);
	free(c->queued);
	free(c);
}

struct code_key {
	const struct py_code_cache *cache;
	uint64_t addr;
};

static bool same_code(const void *key, uint32_t id)
{
	const struct code_key *k = key;

	return k->cache->entries[id].addr == k->addr;
}

/* One multiply (Fibonacci hashing), its high half: a walk looks up every
 * frame's code, so the hash is kept short. */
static uint32_t addr_hash(uint64_t addr)
{
	return (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 32);
}

static struct hash_slot *slot_of(const struct py_code_cache *c, uint64_t addr)
{
	const struct code_key key = { c, addr };

	return hash_table_find(&c->index, addr_hash(addr), same_code, &key);
}

/* The cached code object at addr, or NULL. */
static struct py_code *cached(const struct py_code_cache *c, uint64_t addr)
{
	const struct hash_slot *s = slot_of(c, addr);

	return s->ref ? c->entries[s->ref - 1].code : NULL;
}

/* Caches k, replacing what its address held. 0 or -ENOMEM (k not kept). */
static int cache_put(struct py_code_cache *c, struct py_code *k)
{
	struct hash_slot *s = slot_of(c, k->addr);
	int ret;

	if (s->ref) {
		code_free(c->entries[s->ref - 1].code);
		c->entries[s->ref - 1].code = k;
		return 0;
	}
	ret = hash_table_reserve(&c->index);
	if (!ret)
		ret = ARRAY_RESERVE(c->entries, c->capentries, c->nentries + 1, 1024);
	if (ret < 0)
		return ret;
	/* Found again: reserving may have moved the slots. */
	s = slot_of(c, k->addr);
	c->entries[c->nentries] = (struct code_entry){ k->addr, k };
	hash_table_fill(&c->index, s, addr_hash(k->addr), c->nentries++);
	return 0;
}

static uint32_t header_len(const struct py_layout *l)
{
	uint32_t m = l->object_type;
	const uint32_t f[] = { l->code_filename, l->code_name, l->code_qualname,
			       l->code_firstlineno, l->code_linetable };

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i] > m)
			m = f[i];
	return m + 8;
}

static uint64_t word(const uint8_t *h, uint32_t off)
{
	uint64_t v;

	memcpy(&v, h + off, sizeof(v));
	return v;
}

/* The header words a cache entry must still match. */
static void signature(const struct py_target *t, const uint8_t *h, uint64_t sig[3])
{
	const struct py_layout *l = &t->l;
	int32_t first;

	memcpy(&first, h + l->code_firstlineno, sizeof(first));
	sig[0] = word(h, l->object_type) ^ (uint64_t)(uint32_t)first << 40;
	sig[1] = word(h, l->code_filename);
	sig[2] = word(h, l->version >= 0x030b ? l->code_qualname : l->code_name) ^
		 word(h, l->code_linetable) << 1;
}

static int linetable_read(const struct py_target *t, uint64_t bytes, struct py_code *k)
{
	const struct py_layout *l = &t->l;
	int64_t size;
	int ret = py_read(t, bytes + l->bytes_size, &size, sizeof(size));

	if (ret < 0)
		return ret;
	if (size < 0 || size > LINETABLE_MAX)
		return -EPROTO;
	k->linetable = malloc(size ? (size_t)size : 1);
	if (!k->linetable)
		return -ENOMEM;
	k->linetable_len = (size_t)size;
	return py_read(t, bytes + l->bytes_data, k->linetable, (size_t)size);
}

static int code_read(const struct py_target *t, uint64_t addr, const uint8_t *h,
		     struct py_code **out)
{
	const struct py_layout *l = &t->l;
	struct py_code *k = calloc(1, sizeof(*k));
	char buf[STRING_MAX * 4 + 1];
	int32_t first;
	int ret;

	if (!k)
		return -ENOMEM;
	k->addr = addr;
	k->id = k->id2 = k->id3 = UINT32_MAX;
	signature(t, h, k->sig);
	memcpy(&first, h + l->code_firstlineno, sizeof(first));
	k->firstlineno = first > 0 ? (uint32_t)first : 0;
	ret = py_string_read(t, word(h, l->version >= 0x030b ? l->code_qualname : l->code_name),
			     buf, sizeof(buf));
	if (!ret && !(k->name = strdup(buf)))
		ret = -ENOMEM;
	if (!ret)
		ret = py_string_read(t, word(h, l->code_filename), buf, sizeof(buf));
	if (!ret && !(k->file = strdup(buf)))
		ret = -ENOMEM;
	/* Without its line table the frame still has its first line. */
	if (!ret && linetable_read(t, word(h, l->code_linetable), k) < 0) {
		free(k->linetable);
		k->linetable = NULL;
		k->linetable_len = 0;
	}
	if (l->version >= 0x030b)
		k->code_start = addr + l->code_adaptive;
	if (ret < 0) {
		code_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

int py_code_get(const struct py_target *t, struct py_code_cache *c, uint64_t addr,
		struct py_code **out)
{
	uint8_t h[CODE_HEADER_MAX];
	uint32_t hlen = header_len(&t->l);
	struct py_code *k;
	uint64_t sig[3];
	int ret;

	if (!addr || (addr & 7) || hlen > sizeof(h))
		return -ENOENT;
	if (addr == t->none)
		return -ENOENT;
	k = cached(c, addr);
	if (c->live && k && k->checked == c->epoch) {
		*out = k;
		return 0;
	}
	ret = py_read(t, addr, h, hlen);
	if (ret < 0)
		return ret;
	if (t->code_type && word(h, t->l.object_type) != t->code_type)
		return t->l.version >= 0x030d ? -ENOENT : -EPROTO;
	signature(t, h, sig);
	if (k && !memcmp(k->sig, sig, sizeof(sig))) {
		*out = k;
		return 0;
	}
	ret = code_read(t, addr, h, &k);
	if (ret < 0)
		return ret;
	ret = cache_put(c, k);
	if (ret < 0) {
		code_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

/*
 * A code object's address may hold another one since it was cached (code
 * made by exec, a module reloaded), so its header is read again at every
 * frame that names it: most of a walk's reads, one call each. Here the
 * headers of a walk's cached code objects are read in one call where the
 * target's memory takes several ranges at once; py_code_get then trusts
 * those whose header is unchanged, until py_code_prefetch_drop.
 */
void py_code_prefetch(const struct py_target *t, struct py_code_cache *c,
		      const struct py_raw_frame *f, int n)
{
	uint32_t hlen = header_len(&t->l);
	struct iovec local;
	ssize_t got;
	int m = 0;

	c->live = false;
	if (!t->mem.readv || hlen > CODE_HEADER_MAX)
		return;
	if (!c->headers) {
		c->headers = malloc((size_t)PREFETCH_MAX * CODE_HEADER_MAX);
		c->remote = malloc(PREFETCH_MAX * sizeof(*c->remote));
		c->queued = malloc(PREFETCH_MAX * sizeof(*c->queued));
		if (!c->headers || !c->remote || !c->queued)
			return; /* freed with the cache; read one by one */
	}
	/* A new epoch forgets the last walk's checks; at the wrap, for real. */
	if (++c->epoch == 0) {
		for (uint32_t i = 0; i < c->nentries; i++)
			c->entries[i].code->checked = c->entries[i].code->queued = 0;
		c->epoch = 1;
	}
	for (int i = 0; i < n && m < PREFETCH_MAX; i++) {
		struct py_code *k;

		if (!f[i].code || (f[i].code & 7) || f[i].code == t->none)
			continue;
		k = cached(c, f[i].code);
		if (!k || k->queued == c->epoch)
			continue;
		k->queued = c->epoch;
		c->queued[m] = k;
		c->remote[m++] = (struct iovec){ (void *)(uintptr_t)k->addr, hlen };
	}
	if (!m)
		return;
	local = (struct iovec){ c->headers, (size_t)m * hlen };
	got = t->mem.readv(t->mem.ctx, &local, c->remote, m);
	/* Whole headers only: the read stops at the first that faults. */
	for (int i = 0; got > 0 && i < (int)((size_t)got / hlen); i++) {
		uint64_t sig[3];

		signature(t, c->headers + (size_t)i * hlen, sig);
		if (!memcmp(c->queued[i]->sig, sig, sizeof(sig)))
			c->queued[i]->checked = c->epoch;
	}
	c->live = true;
}

void py_code_prefetch_drop(struct py_code_cache *c)
{
	c->live = false;
}

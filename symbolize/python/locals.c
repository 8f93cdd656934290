// SPDX-License-Identifier: MIT
/*
 * dump --locals: a frame's local, cell and free variables, each rendered
 * short and safe from the target's memory, never by calling into it.
 * Names come from the code object (co_varnames + co_cellvars +
 * co_freevars up to 3.10, co_localsplusnames from 3.11); values from the
 * frame's localsplus array in the same order. A value is recognised by its
 * type's tp_name, and only a static (non-heap) type with the right
 * subclass bit counts as a builtin: a user class named "int" is not read
 * as one. Nothing is followed further than one object deep, so a list
 * that holds itself costs no more than any other list.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/python/python.h"

/* tp_flags, the same in 3.8-3.13 */
#define TPFLAGS_HEAPTYPE (1ul << 9)
#define TPFLAGS_LONG_SUBCLASS (1ul << 24)
#define TPFLAGS_LIST_SUBCLASS (1ul << 25)
#define TPFLAGS_TUPLE_SUBCLASS (1ul << 26)
#define TPFLAGS_BYTES_SUBCLASS (1ul << 27)
#define TPFLAGS_UNICODE_SUBCLASS (1ul << 28)
#define TPFLAGS_DICT_SUBCLASS (1ul << 29)

/* co_localspluskinds (3.11+) */
#define KIND_CELL 0x40
#define KIND_FREE 0x80

#define PYLONG_SHIFT 30
#define NAMES_MAX 65536       /* a longer names tuple is not a code's */
#define INT_BIG_DIGITS (1 << 24)

/* ---- pure renderings (unit-tested) ---- */

int py_int_render(const uint32_t *digits, size_t n, bool negative, char *buf, size_t len)
{
	/* Base 2**30 to base 10**9, most significant digit first. */
	uint32_t limbs[PY_INT_DIGITS_MAX * 30 / 29 + 2];
	size_t nl = 0, o = 0;
	int k;

	if (n > PY_INT_DIGITS_MAX)
		return -E2BIG;
	for (size_t i = n; i-- > 0;) {
		uint64_t carry = digits[i] & ((1u << PYLONG_SHIFT) - 1);

		for (size_t j = 0; j < nl; j++) {
			uint64_t z = ((uint64_t)limbs[j] << PYLONG_SHIFT) + carry;

			limbs[j] = (uint32_t)(z % 1000000000u);
			carry = z / 1000000000u;
		}
		while (carry) {
			limbs[nl++] = (uint32_t)(carry % 1000000000u);
			carry /= 1000000000u;
		}
	}
	if (!nl)
		negative = false, limbs[nl++] = 0;
	k = snprintf(buf, len, "%s%" PRIu32, negative ? "-" : "", limbs[nl - 1]);
	if (k < 0 || (size_t)k >= len)
		return -ENOSPC;
	o = (size_t)k;
	for (size_t j = nl - 1; j-- > 0;) {
		k = snprintf(buf + o, len - o, "%09" PRIu32, limbs[j]);
		if (k < 0 || (size_t)k >= len - o)
			return -ENOSPC;
		o += (size_t)k;
	}
	return 0;
}

/* Python's repr: the shortest digits that read back as the same double,
 * in positional notation for exponents -4 to 15 and with e+XX beyond. */
void py_float_render(double v, char *buf, size_t len)
{
	char tmp[40], digits[24], *e;
	int exp, nd = 0, p;

	if (isnan(v) || isinf(v)) {
		snprintf(buf, len, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	e = strchr(tmp, 'e');
	exp = e ? atoi(e + 1) : 0;
	for (const char *c = tmp; c < (e ? e : tmp + strlen(tmp)); c++)
		if (*c >= '0' && *c <= '9' && nd < (int)sizeof(digits) - 1)
			digits[nd++] = *c;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = 0;
	if (exp >= -4 && exp < 16) {
		char out[64];
		int o = 0;

		if (signbit(v))
			out[o++] = '-';
		if (exp < 0) {
			o += snprintf(out + o, sizeof(out) - o, "0.%.*s%s", -exp - 1, "0000", digits);
		} else {
			for (int i = 0; i <= exp; i++)
				out[o++] = i < nd ? digits[i] : '0';
			out[o++] = '.';
			if (nd > exp + 1)
				o += snprintf(out + o, sizeof(out) - o, "%s", digits + exp + 1);
			else
				out[o++] = '0';
			out[o] = 0;
		}
		snprintf(buf, len, "%s", out);
		return;
	}
	snprintf(buf, len, "%s%c%s%se%c%02d", signbit(v) ? "-" : "", digits[0], nd > 1 ? "." : "",
		 digits + 1, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
}

/* One character as repr() would show it between single quotes, except
 * that every printable character from U+00A0 on is kept as UTF-8. */
static size_t escape_char(uint32_t c, char *out)
{
	switch (c) {
	case '\\': return (size_t)sprintf(out, "\\\\");
	case '\'': return (size_t)sprintf(out, "\\'");
	case '\n': return (size_t)sprintf(out, "\\n");
	case '\r': return (size_t)sprintf(out, "\\r");
	case '\t': return (size_t)sprintf(out, "\\t");
	}
	if (c < 0x20 || (c >= 0x7f && c < 0xa0))
		return (size_t)sprintf(out, "\\x%02x", (unsigned)c);
	if (c >= 0xd800 && c <= 0xdfff)
		return (size_t)sprintf(out, "\\u%04x", (unsigned)c);
	if (c > 0x10ffff)
		return (size_t)sprintf(out, "\\U%08x", (unsigned)c);
	return py_utf8_put(out, c);
}

int py_str_render(const uint32_t *chars, size_t n, uint64_t length, char *buf, size_t len)
{
	char u[16];
	size_t o = 0, k;

	if (len < 3)
		return -ENOSPC;
	buf[o++] = '\'';
	for (size_t i = 0; i < n; i++) {
		k = escape_char(chars[i], u);
		if (o + k + 2 > len)
			return -ENOSPC;
		memcpy(buf + o, u, k);
		o += k;
	}
	buf[o++] = '\'';
	buf[o] = 0;
	if (length > n) {
		int w = snprintf(buf + o, len - o, "... (%" PRIu64 " characters)", length);

		if (w < 0 || (size_t)w >= len - o)
			return -ENOSPC;
	}
	return 0;
}

/* ---- reading values ---- */

static int read_u64(const struct py_target *t, uint64_t addr, uint64_t *out)
{
	return py_read(t, addr, out, sizeof(*out));
}

/* The type's tp_name (printable ASCII only) and tp_flags. */
static int type_of(const struct py_target *t, uint64_t obj, struct py_local *v, uint64_t *flags)
{
	const struct py_layout *l = &t->l;
	uint64_t type, name;
	ssize_t n;
	int ret;

	if (obj & 7)
		return -EFAULT;
	ret = read_u64(t, obj + l->object_type, &type);
	if (!ret)
		ret = read_u64(t, type + l->type_name, &name);
	if (!ret)
		ret = read_u64(t, type + l->type_flags, flags);
	if (ret < 0)
		return ret;
	if (!name)
		return -EFAULT;
	/* A name near the end of a mapping reads short: what was read counts. */
	n = t->mem.read(t->mem.ctx, name, v->type, sizeof(v->type) - 1);
	if (n <= 0)
		return n < 0 ? (int)n : -EFAULT;
	v->type[n] = 0;
	for (ssize_t i = 0; i < n && v->type[i]; i++)
		if (v->type[i] < 0x20 || v->type[i] > 0x7e)
			v->type[i] = '?';
	if (!memchr(v->type, 0, (size_t)n) && n == (ssize_t)sizeof(v->type) - 1)
		v->type[n - 1] = '.'; /* cut short */
	return v->type[0] ? 0 : -EPROTO;
}

bool py_type_derives(const struct py_target *t, uint64_t obj, const char *name)
{
	const struct py_layout *l = &t->l;
	size_t len = strlen(name);
	uint64_t type, tp_name;
	char buf[64];

	if (obj & 7 || len >= sizeof(buf) || read_u64(t, obj + l->object_type, &type) < 0)
		return false;
	/* object is the root of every chain; a few levels reach it. */
	for (int depth = 0; type && depth < 16; depth++) {
		if (read_u64(t, type + l->type_name, &tp_name) < 0 || !tp_name ||
		    t->mem.read(t->mem.ctx, tp_name, buf, len + 1) != (ssize_t)(len + 1))
			return false;
		if (!memcmp(buf, name, len) && buf[len] == '\0')
			return true;
		if (read_u64(t, type + l->type_base, &type) < 0)
			return false;
	}
	return false;
}

static bool builtin(const struct py_local *v, uint64_t flags, const char *name, uint64_t subclass_bit)
{
	return !(flags & TPFLAGS_HEAPTYPE) && (!subclass_bit || (flags & subclass_bit)) &&
	       !strcmp(v->type, name);
}

static int render_int(const struct py_target *t, uint64_t obj, bool is_bool, struct py_local *v)
{
	const struct py_layout *l = &t->l;
	uint32_t digits[PY_INT_DIGITS_MAX];
	uint64_t tag, n, top;
	bool negative;
	int ret = read_u64(t, obj + l->long_tag, &tag);

	if (ret < 0)
		return ret;
	if (l->version >= 0x030c) {
		/* lv_tag: digits << 3 | sign (0 positive, 1 zero, 2 negative) */
		n = tag >> 3;
		negative = (tag & 3) == 2;
	} else {
		negative = (int64_t)tag < 0;
		n = negative ? -tag : tag;
	}
	if (n > INT_BIG_DIGITS)
		return -EPROTO;
	if (n > PY_INT_DIGITS_MAX) {
		/* Too long to print: its size says enough. */
		int bits = 0;

		ret = py_read(t, obj + l->long_digits + (n - 1) * 4, &top, 4);
		if (ret < 0)
			return ret;
		for (top &= 0xffffffff; top; top >>= 1)
			bits++;
		snprintf(v->value, sizeof(v->value), "<int of %" PRIu64 " bits>",
			 (n - 1) * PYLONG_SHIFT + (uint64_t)bits);
		return 0;
	}
	if (n && (ret = py_read(t, obj + l->long_digits, digits, n * 4)) < 0)
		return ret;
	if (is_bool) {
		snprintf(v->value, sizeof(v->value), "%s", n ? "True" : "False");
		return 0;
	}
	return py_int_render(digits, n, negative, v->value, sizeof(v->value));
}

static int render_str(const struct py_target *t, uint64_t obj, struct py_local *v)
{
	const struct py_layout *l = &t->l;
	uint8_t raw[PY_STR_CHARS * 4];
	uint32_t chars[PY_STR_CHARS], state;
	uint64_t data;
	int64_t length;
	unsigned kind;
	size_t n;
	int ret = py_read(t, obj + l->unicode_length, &length, sizeof(length));

	if (!ret)
		ret = py_read(t, obj + l->unicode_state, &state, sizeof(state));
	if (ret < 0)
		return ret;
	/* state: kind (bits 2-4), compact (5), ascii (6) */
	kind = state >> 2 & 7;
	if (length < 0 || (kind != 1 && kind != 2 && kind != 4))
		return -EPROTO;
	n = length > PY_STR_CHARS ? PY_STR_CHARS : (size_t)length;
	if (!(state & 1u << 5)) {
		/* A legacy string: its characters are behind PyUnicodeObject's
		 * data pointer, which follows the compact header. */
		ret = read_u64(t, obj + l->unicode_compact_data, &data);
		if (ret < 0)
			return ret;
	} else {
		data = obj + (state & 1u << 6 ? l->unicode_ascii_data : l->unicode_compact_data);
	}
	if (n && (ret = py_read(t, data, raw, n * kind)) < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		if (kind == 1) {
			chars[i] = raw[i];
		} else if (kind == 2) {
			uint16_t c;

			memcpy(&c, raw + 2 * i, 2);
			chars[i] = c;
		} else {
			memcpy(&chars[i], raw + 4 * i, 4);
		}
	}
	return py_str_render(chars, n, (uint64_t)length, v->value, sizeof(v->value));
}

/* A container's or bytes' length from the Py_ssize_t at off. */
static int render_len(const struct py_target *t, uint64_t obj, uint32_t off, struct py_local *v)
{
	int64_t size;
	int ret = py_read(t, obj + off, &size, sizeof(size));

	if (ret < 0)
		return ret;
	if (size < 0)
		return -EPROTO;
	snprintf(v->value, sizeof(v->value), "<%s of length %" PRId64 ">", v->type, size);
	return 0;
}

static int render_known(const struct py_target *t, uint64_t obj, uint64_t flags, struct py_local *v)
{
	const struct py_layout *l = &t->l;
	int ret;

	if (builtin(v, flags, "NoneType", 0)) {
		snprintf(v->value, sizeof(v->value), "None");
		return 0;
	}
	if (builtin(v, flags, "int", TPFLAGS_LONG_SUBCLASS))
		return render_int(t, obj, false, v);
	if (builtin(v, flags, "bool", TPFLAGS_LONG_SUBCLASS))
		return render_int(t, obj, true, v);
	if (builtin(v, flags, "float", 0)) {
		double d;

		ret = py_read(t, obj + l->float_value, &d, sizeof(d));
		if (!ret)
			py_float_render(d, v->value, sizeof(v->value));
		return ret;
	}
	if (builtin(v, flags, "str", TPFLAGS_UNICODE_SUBCLASS))
		return render_str(t, obj, v);
	if (builtin(v, flags, "bytes", TPFLAGS_BYTES_SUBCLASS))
		return render_len(t, obj, l->var_size, v);
	if (builtin(v, flags, "list", TPFLAGS_LIST_SUBCLASS))
		return render_len(t, obj, l->var_size, v);
	if (builtin(v, flags, "tuple", TPFLAGS_TUPLE_SUBCLASS))
		return render_len(t, obj, l->var_size, v);
	if (builtin(v, flags, "dict", TPFLAGS_DICT_SUBCLASS))
		return render_len(t, obj, l->dict_used, v);
	if (builtin(v, flags, "set", 0))
		return render_len(t, obj, l->set_used, v);
	ret = py_array_render(t, obj, v);
	if (ret != -ENOENT)
		return ret;
	snprintf(v->value, sizeof(v->value), "<%s object>", v->type);
	return 0;
}

int py_value_render(const struct py_target *t, uint64_t obj, struct py_local *v)
{
	uint64_t flags;
	int ret = type_of(t, obj, v, &flags);

	if (!ret)
		ret = render_known(t, obj, flags, v);
	if (ret < 0) {
		v->type[0] = 0;
		snprintf(v->value, sizeof(v->value), "<unreadable>");
	}
	return ret;
}

/* ---- a frame's variables ---- */

/* Up to max item pointers of a tuple; the tuple's length, or -errno. */
static int tuple_items(const struct py_target *t, uint64_t tuple, uint64_t *items, int max)
{
	int64_t size;
	int ret = py_read(t, tuple + t->l.var_size, &size, sizeof(size));

	if (ret < 0)
		return ret;
	if (size < 0 || size > NAMES_MAX)
		return -EPROTO;
	if (size && (ret = py_read(t, tuple + t->l.tuple_items, items,
				   (size_t)(size < max ? size : max) * 8)) < 0)
		return ret;
	return (int)size;
}

/* The names of localsplus, in its order, and which are cells or free. */
static int frame_names(const struct py_target *t, uint64_t code, uint64_t *names,
		       uint8_t *deref, int max)
{
	const struct py_layout *l = &t->l;
	uint64_t tuple, kinds;
	int n = 0, ret;

	if (l->version >= 0x030b) {
		ret = read_u64(t, code + l->code_localsplusnames, &tuple);
		if (!ret)
			ret = read_u64(t, code + l->code_localspluskinds, &kinds);
		if (!ret)
			ret = n = tuple_items(t, tuple, names, max);
		if (ret > 0) {
			int64_t nk;

			ret = py_read(t, kinds + l->bytes_size, &nk, sizeof(nk));
			if (!ret && nk != n)
				ret = -EPROTO;
			if (!ret)
				ret = py_read(t, kinds + l->bytes_data, deref, (size_t)(n < max ? n : max));
			for (int i = 0; i < n && i < max; i++)
				deref[i] = (deref[i] & (KIND_CELL | KIND_FREE)) != 0;
		}
		return ret < 0 ? ret : n;
	}
	/* Up to 3.10: fast locals, then cells, then free variables. */
	const uint32_t parts[3] = { l->code_varnames, l->code_cellvars, l->code_freevars };

	for (int p = 0; p < 3; p++) {
		int k;

		ret = read_u64(t, code + parts[p], &tuple);
		if (ret < 0)
			return ret;
		k = tuple_items(t, tuple, names + (n < max ? n : max), n < max ? max - n : 0);
		if (k < 0)
			return k;
		for (int i = n; i < n + k && i < max; i++)
			deref[i] = p > 0;
		n += k;
	}
	return n;
}

int py_frame_locals(const struct py_target *t, uint64_t frame, uint64_t code,
		    struct py_local *out, int max)
{
	uint64_t names[PY_LOCALS_MAX], values[PY_LOCALS_MAX];
	uint8_t deref[PY_LOCALS_MAX];
	int n, count = 0, ret;

	if (max > PY_LOCALS_MAX)
		max = PY_LOCALS_MAX;
	n = frame_names(t, code, names, deref, max);
	if (n < 0)
		return n;
	if (n > max)
		n = max;
	if (n && (ret = py_read(t, frame + t->l.frame_localsplus, values, (size_t)n * 8)) < 0)
		return ret;
	for (int i = 0; i < n; i++) {
		struct py_local *v = &out[count];
		uint64_t obj = values[i], tag = t->l.stackref_tag;

		/* 3.14+: a _PyStackRef. Its low bits say how the object is
		 * counted (NULL is the tag alone); all of them set is an int
		 * kept in the reference itself (PyStackRef_TagInt). */
		if (tag && (obj & tag) != tag)
			obj &= ~tag;
		if (!obj)
			continue; /* unbound */
		memset(v, 0, sizeof(*v));
		v->obj = tag && (obj & tag) == tag ? 0 : obj;
		v->slot = (uint32_t)i;
		if (py_string_read(t, names[i], v->name, sizeof(v->name)) < 0 || !v->name[0])
			snprintf(v->name, sizeof(v->name), "<unreadable name>");
		if (tag && (obj & tag) == tag) {
			snprintf(v->type, sizeof(v->type), "int");
			snprintf(v->value, sizeof(v->value), "%lld", (long long)((int64_t)obj >> 2));
			count++;
			continue;
		}
		py_value_render(t, obj, v);
		/* A cell and free variable's value is its cell's content (a
		 * 3.11+ argument is a cell only once MAKE_CELL ran). */
		if (deref[i] && !strcmp(v->type, "cell")) {
			if (read_u64(t, obj + t->l.cell_ref, &obj) < 0) {
				v->type[0] = 0;
				snprintf(v->value, sizeof(v->value), "<unreadable>");
			} else if (!obj) {
				continue; /* an empty cell: unbound */
			} else {
				v->obj = obj;
				v->slot = UINT32_MAX;
				py_value_render(t, obj, v);
			}
		}
		count++;
	}
	return count;
}

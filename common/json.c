// SPDX-License-Identifier: MIT
/*
 * JSON written as it goes: the caller says what comes next (a key, a
 * value, an object or array opened or closed) and the emitter puts the
 * commas, the colons, the quotes and the escapes, and remembers, per
 * level, whether a separator is due. A misuse (a value where a key is due,
 * a key without its value, a closer that does not match) is remembered
 * and nothing more is written: json_end says so.
 *
 * A trace is millions of small writes: they go through stdio's unlocked
 * calls (each writer's file is its own, written by one thread), and
 * integers are formatted here, not by printf.
 */
#include <math.h>
#include <stdio.h>

#include "common/common.h"

static void put(struct json_out *j, const char *s, size_t n)
{
	fwrite_unlocked(s, 1, n, j->f);
}

void json_init(struct json_out *j, FILE *f, bool spaced)
{
	*j = (struct json_out){ .f = f, .spaced = spaced, .indent = -1 };
}

static int misuse(struct json_out *j)
{
	if (!j->err)
		j->err = -EINVAL;
	return j->err;
}

/* The newline and indent json_break asked for, if it did. */
static void put_break(struct json_out *j)
{
	if (j->indent < 0)
		return;
	fputc_unlocked('\n', j->f);
	for (int i = 0; i < j->indent; i++)
		fputc_unlocked(' ', j->f);
	j->indent = -1;
}

/* What comes before a key (key true) or a value at the current level. */
static int separate(struct json_out *j, bool key)
{
	struct json_level *l = j->depth ? &j->level[j->depth - 1] : NULL;

	if (j->err)
		return j->err;
	if (!l) { /* the top level: one value */
		if (key || j->complete)
			return misuse(j);
		j->complete = true;
		put_break(j);
		return 0;
	}
	if (l->object && !key && j->key_open) { /* the value of the key just written */
		j->key_open = false;
		return 0;
	}
	if (l->object != key || j->key_open)
		return misuse(j);
	if (l->items++)
		fputc_unlocked(',', j->f);
	if (j->indent >= 0)
		put_break(j);
	else if (l->items > 1 && j->spaced)
		fputc_unlocked(' ', j->f);
	return 0;
}

void json_break(struct json_out *j, int indent)
{
	j->indent = indent < 0 ? 0 : indent;
}

static int begin(struct json_out *j, bool object)
{
	int ret = separate(j, false);

	if (ret)
		return ret;
	if (j->depth == JSON_MAX_DEPTH)
		return misuse(j);
	j->level[j->depth++] = (struct json_level){ .object = object };
	fputc_unlocked(object ? '{' : '[', j->f);
	return 0;
}

static int end(struct json_out *j, bool object)
{
	if (j->err)
		return j->err;
	if (!j->depth || j->level[j->depth - 1].object != object || j->key_open)
		return misuse(j);
	put_break(j);
	j->depth--;
	fputc_unlocked(object ? '}' : ']', j->f);
	return 0;
}

int json_begin_object(struct json_out *j) { return begin(j, true); }
int json_end_object(struct json_out *j) { return end(j, true); }
int json_begin_array(struct json_out *j) { return begin(j, false); }
int json_end_array(struct json_out *j) { return end(j, false); }

size_t utf8_char_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 :
		     s[0] >= 0xe0 && s[0] < 0xf0 ? 3 : s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : 0;
	uint32_t c;

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3) {
		c = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
		if (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))
			return 0; /* overlong, or a surrogate */
	} else if (len == 4) {
		c = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12;
		if (c < 0x10000 || c > 0x10ffff)
			return 0;
	}
	return len;
}

/* text quoted: plain ASCII in runs, '"' and '\' escaped, control
 * characters as \u00xx, UTF-8 as it is, any other byte as U+FFFD. */
static void put_quoted(struct json_out *j, const char *text)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text), i = 0, run, len;
	char esc[6] = { '\\', 'u', '0', '0' };

	fputc_unlocked('"', j->f);
	while (i < n) {
		for (run = 0; i + run < n && s[i + run] >= 0x20 && s[i + run] < 0x80 &&
			      s[i + run] != '"' && s[i + run] != '\\'; run++)
			;
		if (run) {
			put(j, text + i, run);
			i += run;
			continue;
		}
		len = utf8_char_len(s + i, n - i);
		if (!len) {
			put(j, "\xef\xbf\xbd", 3);
		} else if (s[i] == '"' || s[i] == '\\') {
			esc[1] = (char)s[i];
			put(j, esc, 2);
		} else if (s[i] < 0x20) {
			esc[1] = 'u';
			esc[4] = hex[s[i] >> 4];
			esc[5] = hex[s[i] & 15];
			put(j, esc, 6);
		} else {
			put(j, text + i, len);
		}
		i += len ? len : 1;
	}
	fputc_unlocked('"', j->f);
}

int json_key(struct json_out *j, const char *name)
{
	int ret = separate(j, true);

	if (ret)
		return ret;
	put_quoted(j, name);
	put(j, ": ", j->spaced ? 2 : 1);
	j->key_open = true;
	return 0;
}

int json_string(struct json_out *j, const char *s)
{
	int ret = separate(j, false);

	if (ret)
		return ret;
	if (s)
		put_quoted(j, s);
	else
		put(j, "null", 4);
	return 0;
}

int json_raw(struct json_out *j, const char *text)
{
	int ret = separate(j, false);

	if (!ret)
		put(j, text, strlen(text));
	return ret;
}

/* v's decimal digits, ending at end: where they start. */
static char *digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

int json_uint(struct json_out *j, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *at = digits(end, v);
	int ret = separate(j, false);

	if (!ret)
		put(j, at, (size_t)(end - at));
	return ret;
}

int json_int(struct json_out *j, int64_t v)
{
	char buf[24], *end = buf + sizeof(buf);
	char *at = digits(end, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
	int ret = separate(j, false);

	if (v < 0)
		*--at = '-';
	if (!ret)
		put(j, at, (size_t)(end - at));
	return ret;
}

int json_decimal(struct json_out *j, uint64_t v, int decimals)
{
	char buf[48], *end = buf + sizeof(buf), *at = end;
	int ret = separate(j, false);

	if (ret)
		return ret;
	if (decimals > 19)
		decimals = 19;
	for (int i = 0; i < decimals; i++) {
		*--at = (char)('0' + v % 10);
		v /= 10;
	}
	if (decimals > 0)
		*--at = '.';
	at = digits(at, v);
	put(j, at, (size_t)(end - at));
	return 0;
}

int json_double(struct json_out *j, double v, int decimals)
{
	int ret = separate(j, false);

	if (ret)
		return ret;
	if (isfinite(v))
		fprintf(j->f, "%.*f", decimals, v);
	else
		put(j, "null", 4);
	return 0;
}

int json_double_g(struct json_out *j, double v, int ndigits)
{
	int ret = separate(j, false);

	if (ret)
		return ret;
	if (isfinite(v))
		fprintf(j->f, "%.*g", ndigits, v);
	else
		put(j, "null", 4);
	return 0;
}

int json_bool(struct json_out *j, bool v)
{
	return json_raw(j, v ? "true" : "false");
}

int json_null(struct json_out *j)
{
	return json_raw(j, "null");
}

int json_raw_file(struct json_out *j, FILE *from)
{
	char buf[65536];
	size_t n;
	int ret = separate(j, false);

	if (ret)
		return ret;
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		put(j, buf, n);
	if (ferror(from))
		j->err = -EIO;
	return j->err;
}

int json_key_string(struct json_out *j, const char *key, const char *s)
{
	int ret = json_key(j, key);

	return ret ? ret : json_string(j, s);
}

int json_key_int(struct json_out *j, const char *key, int64_t v)
{
	int ret = json_key(j, key);

	return ret ? ret : json_int(j, v);
}

int json_key_uint(struct json_out *j, const char *key, uint64_t v)
{
	int ret = json_key(j, key);

	return ret ? ret : json_uint(j, v);
}

int json_key_double(struct json_out *j, const char *key, double v, int decimals)
{
	int ret = json_key(j, key);

	return ret ? ret : json_double(j, v, decimals);
}

int json_key_bool(struct json_out *j, const char *key, bool v)
{
	int ret = json_key(j, key);

	return ret ? ret : json_bool(j, v);
}

int json_key_decimal(struct json_out *j, const char *key, uint64_t v, int decimals)
{
	int ret = json_key(j, key);

	return ret ? ret : json_decimal(j, v, decimals);
}

int json_end(struct json_out *j)
{
	if (!j->err && (j->depth || j->key_open || !j->complete))
		misuse(j);
	if (!j->err && ferror(j->f))
		j->err = -EIO;
	return j->err;
}

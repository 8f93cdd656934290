// SPDX-License-Identifier: MIT
/* The JSON emitter (common/json.c): separators, layout, escapes, numbers,
 * and misuse reported, never written. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"

/* An emitter writing to memory; done() returns json_end's result and
 * leaves the text in text. */
struct mem {
	struct json_out j;
	FILE *f;
	char *text;
	size_t len;
};

static void start(struct mem *m, bool spaced)
{
	m->text = NULL;
	m->f = open_memstream(&m->text, &m->len);
	cr_assert_not_null(m->f);
	json_init(&m->j, m->f, spaced);
}

static int done(struct mem *m)
{
	int ret = json_end(&m->j);

	fclose(m->f);
	return ret;
}

#define EXPECT(m, want) do {							\
		int ret_ = done(m);						\
		cr_assert_eq(ret_, 0, "json_end: %d", ret_);			\
		cr_assert_str_eq((m)->text, (want));				\
		free((m)->text);						\
	} while (0)

/* Misuse: json_end says -EINVAL, and nothing after it was written. */
#define EXPECT_MISUSE(m, written) do {						\
		int ret_ = done(m);						\
		cr_assert_eq(ret_, -EINVAL, "json_end: %d", ret_);		\
		cr_assert_str_eq((m)->text, (written));				\
		free((m)->text);						\
	} while (0)

static void one_string(const char *s, const char *want)
{
	struct mem m;

	start(&m, false);
	json_string(&m.j, s);
	EXPECT(&m, want);
}

Test(json, commas_and_nesting)
{
	struct mem m;

	start(&m, false);
	json_begin_object(&m.j);
	json_key_string(&m.j, "a", "x");
	json_key(&m.j, "b");
	json_begin_array(&m.j);
	json_uint(&m.j, 1);
	json_begin_array(&m.j);
	json_end_array(&m.j);
	json_begin_object(&m.j);
	json_end_object(&m.j);
	json_begin_object(&m.j);
	json_key_bool(&m.j, "t", true);
	json_key_bool(&m.j, "f", false);
	json_key(&m.j, "n");
	json_null(&m.j);
	json_end_object(&m.j);
	json_end_array(&m.j);
	json_key_int(&m.j, "c", -3);
	json_end_object(&m.j);
	EXPECT(&m, "{\"a\":\"x\",\"b\":[1,[],{},{\"t\":true,\"f\":false,\"n\":null}],\"c\":-3}");
}

Test(json, spaced)
{
	struct mem m;

	start(&m, true);
	json_begin_object(&m.j);
	json_key_uint(&m.j, "a", 1);
	json_key(&m.j, "b");
	json_begin_array(&m.j);
	json_uint(&m.j, 2);
	json_uint(&m.j, 3);
	json_end_array(&m.j);
	json_key(&m.j, "c");
	json_begin_object(&m.j);
	json_end_object(&m.j);
	json_end_object(&m.j);
	EXPECT(&m, "{\"a\": 1, \"b\": [2, 3], \"c\": {}}");
}

Test(json, breaks)
{
	struct mem m;

	/* Before the first item, between items (after the comma, instead of
	 * the space), before a closer; only where asked. */
	start(&m, true);
	json_begin_object(&m.j);
	json_key_uint(&m.j, "a", 1);
	json_break(&m.j, 1);
	json_key(&m.j, "list");
	json_begin_array(&m.j);
	for (int i = 0; i < 2; i++) {
		json_break(&m.j, 4);
		json_uint(&m.j, (uint64_t)i);
	}
	json_break(&m.j, 1);
	json_end_array(&m.j);
	json_key_uint(&m.j, "b", 2);
	json_end_object(&m.j);
	EXPECT(&m, "{\"a\": 1,\n \"list\": [\n    0,\n    1\n ], \"b\": 2}");

	/* An empty array closed on a line of its own; a top-level break. */
	start(&m, false);
	json_break(&m.j, 0);
	json_begin_array(&m.j);
	json_break(&m.j, 0);
	json_end_array(&m.j);
	EXPECT(&m, "\n[\n]");
}

Test(json, plain_strings_and_keys_quoted)
{
	one_string("", "\"\"");
	one_string("hello, world: {x} [y] <&>", "\"hello, world: {x} [y] <&>\"");
	one_string(NULL, "null");
	one_string("say \"hi\"\\", "\"say \\\"hi\\\"\\\\\"");
}

Test(json, every_control_character_escaped)
{
	for (int c = 1; c < 0x20; c++) {
		char in[4] = { 'a', (char)c, 'b', 0 }, want[16];

		snprintf(want, sizeof(want), "\"a\\u%04xb\"", c);
		one_string(in, want);
	}
	one_string("\x7f", "\"\x7f\""); /* DEL is no control character to JSON */
}

Test(json, utf8_kept)
{
	/* Two, three and four bytes; the edges of each. */
	one_string("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	one_string("\xc2\x80\xdf\xbf", "\"\xc2\x80\xdf\xbf\"");
	one_string("\xe2\x82\xac \xe0\xa0\x80 \xef\xbf\xbf", "\"\xe2\x82\xac \xe0\xa0\x80 \xef\xbf\xbf\"");
	one_string("\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", "\"\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"");
}

#define FFFD "\xef\xbf\xbd"

Test(json, invalid_utf8_replaced)
{
	one_string("a\x80z", "\"a" FFFD "z\"");                    /* a lone continuation */
	one_string("\xc0\xaf", "\"" FFFD FFFD "\"");               /* overlong '/' */
	one_string("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");      /* overlong, 3 bytes */
	one_string("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");      /* a surrogate */
	one_string("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* above U+10FFFF */
	one_string("\xff\xfe", "\"" FFFD FFFD "\"");
	one_string("x\xe2\x82", "\"x" FFFD FFFD "\"");             /* cut short at the end */
	one_string("\xc3(", "\"" FFFD "(\"");                      /* cut short by ASCII */
}

Test(json, keys_escaped_too)
{
	struct mem m;

	start(&m, false);
	json_begin_object(&m.j);
	json_key_uint(&m.j, "a\"b\n\xff", 1);
	json_end_object(&m.j);
	EXPECT(&m, "{\"a\\\"b\\u000a" FFFD "\":1}");
}

Test(json, numbers)
{
	struct mem m;

	start(&m, false);
	json_begin_array(&m.j);
	json_int(&m.j, INT64_MIN);
	json_int(&m.j, INT64_MAX);
	json_uint(&m.j, UINT64_MAX);
	json_uint(&m.j, 0);
	json_double(&m.j, 0.030000000001, 9);
	json_double(&m.j, -1.5, 0);
	json_double(&m.j, 2.0 / 3.0, 4);
	json_double_g(&m.j, 1000, 6);
	json_double_g(&m.j, 99.9, 6);
	json_double_g(&m.j, 1234567, 6);
	json_raw(&m.j, "12.345");
	json_decimal(&m.j, 1234567, 3);
	json_decimal(&m.j, 5, 3);
	json_decimal(&m.j, 0, 3);
	json_decimal(&m.j, 7, 0);
	json_decimal(&m.j, UINT64_MAX, 3);
	json_end_array(&m.j);
	EXPECT(&m, "[-9223372036854775808,9223372036854775807,18446744073709551615,0,"
		   "0.030000000,-2,0.6667,1000,99.9,1.23457e+06,12.345,"
		   "1234.567,0.005,0.000,7,18446744073709551.615]");
}

Test(json, not_a_number_is_null)
{
	struct mem m;

	start(&m, false);
	json_begin_object(&m.j);
	json_key_double(&m.j, "nan", NAN, 3);
	json_key_double(&m.j, "inf", INFINITY, 3);
	json_key(&m.j, "-inf");
	json_double(&m.j, -INFINITY, 3);
	json_key(&m.j, "g");
	json_double_g(&m.j, NAN, 6);
	json_end_object(&m.j);
	EXPECT(&m, "{\"nan\":null,\"inf\":null,\"-inf\":null,\"g\":null}");
}

Test(json, a_value_written_elsewhere)
{
	struct json_out inner;
	FILE *tmp = tmpfile();
	struct mem m;

	cr_assert_not_null(tmp);
	json_init(&inner, tmp, false);
	json_begin_array(&inner);
	json_string(&inner, "x");
	json_uint(&inner, 1);
	json_end_array(&inner);
	cr_assert_eq(json_end(&inner), 0);
	rewind(tmp);
	start(&m, false);
	json_begin_object(&m.j);
	json_key_uint(&m.j, "a", 0);
	json_key(&m.j, "b");
	json_raw_file(&m.j, tmp);
	json_key_uint(&m.j, "c", 2);
	json_end_object(&m.j);
	fclose(tmp);
	EXPECT(&m, "{\"a\":0,\"b\":[\"x\",1],\"c\":2}");
}

Test(json, a_key_without_its_value)
{
	struct mem m;

	start(&m, false);
	json_begin_object(&m.j);
	json_key(&m.j, "a");
	cr_assert_eq(json_end_object(&m.j), -EINVAL);
	json_end_object(&m.j);
	EXPECT_MISUSE(&m, "{\"a\":");

	start(&m, false);
	json_begin_object(&m.j);
	json_key(&m.j, "a");
	cr_assert_eq(json_key(&m.j, "b"), -EINVAL);
	EXPECT_MISUSE(&m, "{\"a\":");
}

Test(json, a_value_where_a_key_is_due)
{
	struct mem m;

	start(&m, false);
	json_begin_object(&m.j);
	json_key_uint(&m.j, "a", 1);
	cr_assert_eq(json_uint(&m.j, 2), -EINVAL);
	cr_assert_eq(json_string(&m.j, "x"), -EINVAL); /* it sticks */
	json_end_object(&m.j);
	EXPECT_MISUSE(&m, "{\"a\":1");
}

Test(json, a_key_in_an_array)
{
	struct mem m;

	start(&m, false);
	json_begin_array(&m.j);
	cr_assert_eq(json_key(&m.j, "a"), -EINVAL);
	EXPECT_MISUSE(&m, "[");

	start(&m, false);
	cr_assert_eq(json_key(&m.j, "a"), -EINVAL); /* nor at the top */
	EXPECT_MISUSE(&m, "");
}

Test(json, closers_must_match)
{
	struct mem m;

	start(&m, false);
	json_begin_array(&m.j);
	cr_assert_eq(json_end_object(&m.j), -EINVAL);
	EXPECT_MISUSE(&m, "[");

	start(&m, false);
	cr_assert_eq(json_end_array(&m.j), -EINVAL);
	EXPECT_MISUSE(&m, "");
}

Test(json, one_whole_value)
{
	struct mem m;

	start(&m, false);
	json_begin_object(&m.j);
	EXPECT_MISUSE(&m, "{"); /* left open */

	start(&m, false);
	EXPECT_MISUSE(&m, ""); /* nothing */

	start(&m, false);
	json_uint(&m.j, 1);
	cr_assert_eq(json_uint(&m.j, 2), -EINVAL);
	EXPECT_MISUSE(&m, "1");
}

Test(json, too_deep)
{
	struct mem m;
	char want[JSON_MAX_DEPTH + 1];

	start(&m, false);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		cr_assert_eq(json_begin_array(&m.j), 0);
	cr_assert_eq(json_begin_array(&m.j), -EINVAL);
	memset(want, '[', JSON_MAX_DEPTH);
	want[JSON_MAX_DEPTH] = 0;
	EXPECT_MISUSE(&m, want);
}

Test(json, a_write_error)
{
	struct json_out j;
	FILE *f = fopen("/dev/full", "w");

	cr_assert_not_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	json_init(&j, f, false);
	json_begin_array(&j);
	json_string(&j, "x");
	json_end_array(&j);
	cr_assert_eq(json_end(&j), -EIO);
	fclose(f);
}

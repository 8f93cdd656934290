// SPDX-License-Identifier: MIT
/*
 * Text for the writers' markup: XML (the flamegraph) and JSON (speedscope,
 * dump). Names come from symbol tables and the target's memory and may
 * hold any bytes; what is not UTF-8 is replaced, so the files always parse.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats.h"

/* The length of the valid UTF-8 character at s (at most n bytes), 0 if
 * it is not one: symbol names and remote strings can hold any bytes. */
static size_t utf8_char(const unsigned char *s, size_t n)
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
			return 0;
	} else if (len == 4) {
		c = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12;
		if (c < 0x10000 || c > 0x10ffff)
			return 0;
	}
	return len;
}

/* Plain ASCII that needs no escaping in either language: written in runs,
 * not a character at a time. */
static size_t plain_run(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\' &&
	       s[i] != '&' && s[i] != '<' && s[i] != '>')
		i++;
	return i;
}

/* One character that is not plain ASCII (len its UTF-8 length, 0 when
 * the byte starts none), as each language needs it. */
static void xml_char(FILE *out, const unsigned char *c, size_t len)
{
	switch (len ? *c : 0) {
	case '&': fputs("&amp;", out); break;
	case '<': fputs("&lt;", out); break;
	case '>': fputs("&gt;", out); break;
	case '"': fputs("&quot;", out); break;
	case 0: fputs("\xef\xbf\xbd", out); break;
	default:
		if (*c < 0x20)
			fputc(' ', out); /* XML 1.0 has no place for them */
		else
			fwrite(c, 1, len, out);
	}
}

static void json_char(FILE *out, const unsigned char *c, size_t len)
{
	if (!len)
		fputs("\xef\xbf\xbd", out);
	else if (*c == '"' || *c == '\\')
		fprintf(out, "\\%c", *c);
	else if (*c < 0x20)
		fprintf(out, "\\u%04x", *c);
	else
		fwrite(c, 1, len, out);
}

/* n bytes of text: plain runs written at once, the rest by put_char. */
static void put_text(FILE *out, const unsigned char *s, size_t n,
		     void (*put_char)(FILE *, const unsigned char *, size_t))
{
	size_t i = 0, run, len;

	while (i < n) {
		run = plain_run(s + i, n - i);
		if (run) {
			fwrite(s + i, 1, run, out);
			i += run;
			continue;
		}
		len = utf8_char(s + i, n - i);
		put_char(out, s + i, len);
		i += len ? len : 1;
	}
}

/* Text for XML: markup escaped, control characters and bytes that are not
 * UTF-8 replaced. */
void xml_put_escaped(FILE *out, const char *text, size_t n)
{
	put_text(out, (const unsigned char *)text, strnlen(text, n), xml_char);
}

void json_put_string(FILE *out, const char *text)
{
	fputc('"', out);
	put_text(out, (const unsigned char *)text, strlen(text), json_char);
	fputc('"', out);
}

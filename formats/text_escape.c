// SPDX-License-Identifier: MIT
/*
 * Text for the flamegraph's XML (JSON's is common/json.c's). Names come
 * from symbol tables and the target's memory and may hold any bytes; what
 * is not UTF-8 is replaced, so the files always parse.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"

/* Plain ASCII that needs no escaping: written in runs, not a character
 * at a time. */
static size_t plain_run(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\' &&
	       s[i] != '&' && s[i] != '<' && s[i] != '>')
		i++;
	return i;
}

/* One character that is not plain ASCII (len its UTF-8 length, 0 when
 * the byte starts none), as XML needs it. */
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

/* n bytes of text: plain runs written at once, the rest by xml_char. */
static void put_text(FILE *out, const unsigned char *s, size_t n)
{
	size_t i = 0, run, len;

	while (i < n) {
		run = plain_run(s + i, n - i);
		if (run) {
			fwrite(s + i, 1, run, out);
			i += run;
			continue;
		}
		len = utf8_char_len(s + i, n - i);
		xml_char(out, s + i, len);
		i += len ? len : 1;
	}
}

/* Text for XML: markup escaped, control characters and bytes that are not
 * UTF-8 replaced. */
void xml_put_escaped(FILE *out, const char *text, size_t n)
{
	put_text(out, (const unsigned char *)text, strnlen(text, n));
}

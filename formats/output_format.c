// SPDX-License-Identifier: MIT
/* Finding an output's row by -f name, file name or format; listing them. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "formats/formats.h"

const struct output_writer *output_writer_of(enum output_format f)
{
	const struct output_writer *w;

	for (size_t i = 0; (w = output_writer_at(i)); i++)
		if (w->format == f)
			return w;
	return NULL;
}

const struct output_writer *output_writer_find(bool (*match)(const struct output_writer *w))
{
	const struct output_writer *w;

	for (size_t i = 0; (w = output_writer_at(i)); i++)
		if (match(w))
			return w;
	return NULL;
}

const struct output_writer *output_writer_by_name(const char *name)
{
	const struct output_writer *w;

	if (!name)
		return NULL;
	for (size_t i = 0; (w = output_writer_at(i)); i++)
		for (size_t j = 0; j < OUTPUT_NAMES_MAX && w->names[j]; j++)
			if (!strcasecmp(w->names[j], name))
				return w;
	return NULL;
}

/* base ends in ".ext", with something before the dot (".svg" is a hidden
 * file with no extension). */
static bool has_extension(const char *base, size_t n, const char *ext)
{
	size_t e = strlen(ext);

	return n > e + 1 && base[n - e - 1] == '.' && !strcasecmp(base + n - e, ext);
}

/* A row that names files: "summary.json" and "run1_summary.json" say which
 * format as plainly as "run1.summary.json" does. */
static bool ends_in_name(const struct output_writer *w, const char *base, size_t n)
{
	size_t e = w->extensions[0] ? strlen(w->extensions[0]) : 0;

	return w->names_files && e && n >= e && !strcasecmp(base + n - e, w->extensions[0]);
}

const struct output_writer *output_writer_by_path(const char *path)
{
	const struct output_writer *w, *found = NULL;
	const char *base;
	size_t n, longest = 0;

	if (!path)
		return NULL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	n = strlen(base);
	/* The longest: a ".json" row would not take ".speedscope.json". */
	for (size_t i = 0; (w = output_writer_at(i)); i++) {
		for (size_t j = 0; j < OUTPUT_EXTENSIONS_MAX && w->extensions[j]; j++) {
			size_t e = strlen(w->extensions[j]);

			if (e > longest && (has_extension(base, n, w->extensions[j]) ||
					    (!j && ends_in_name(w, base, n)))) {
				found = w;
				longest = e;
			}
		}
	}
	return found;
}

/* The k-th item of a listing: a row's first name or any extension. */
static const char *list_item(size_t k, bool extensions)
{
	const struct output_writer *w;

	for (size_t i = 0; (w = output_writer_at(i)); i++) {
		if (!extensions) {
			if (i == k)
				return w->names[0];
			continue;
		}
		for (size_t j = 0; j < OUTPUT_EXTENSIONS_MAX && w->extensions[j]; j++)
			if (k-- == 0)
				return w->extensions[j];
	}
	return NULL;
}

size_t output_writers_list(char *buf, size_t len, bool extensions, const char *sep,
			   const char *last)
{
	size_t count = 0, used = 0;

	while (list_item(count, extensions))
		count++;
	if (len)
		buf[0] = '\0';
	for (size_t k = 0; k < count; k++) {
		const char *before = k == 0 ? "" : k == count - 1 ? last : sep;
		int n = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0,
				 "%s%s%s", before, extensions ? "." : "", list_item(k, extensions));

		if (n > 0)
			used += (size_t)n;
	}
	return used;
}

// SPDX-License-Identifier: MIT
/*
 * A Python frame's source line, read from its file as a traceback reads
 * it: what names a DataLoader (the variable a loop iterates over) and
 * what tells a wait for the GPU without native frames (a blocked
 * `.item()` call). Absent where the file cannot be read here (a
 * recording from another machine or container): the callers then do
 * without.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phase_impl.h"
#include "formats/formats.h"

bool source_line_of(const struct profile *p, uint32_t frame, char *buf, size_t len)
{
	const struct frame *f = frame != FRAME_NONE ? profile_frame(p, frame) : NULL;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *src;

	if (!f || f->kind != FRAME_PYTHON || !f->module || !f->line || !len)
		return false;
	src = fopen(profile_string(p, f->module), "re");
	if (!src)
		return false;
	for (uint32_t n = 1; getline(&line, &cap, src) >= 0; n++)
		if (n == f->line) {
			snprintf(buf, len, "%s", line);
			buf[strcspn(buf, "\n")] = '\0';
			found = true;
			break;
		}
	free(line);
	fclose(src);
	return found;
}

/* "NAME = ...iter(...": an iterator made from a loader, by its name. */
static bool makes_iterator(const char *line, const char *name)
{
	size_t n = strlen(name);

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, name, n))
		return false;
	line += n;
	while (*line == ' ')
		line++;
	return line[0] == '=' && line[1] != '=' && strstr(line, "iter(");
}

bool source_iterator_made(const struct profile *p, uint32_t frame, const char *name, char *buf,
			  size_t len)
{
	const struct frame *f = frame != FRAME_NONE ? profile_frame(p, frame) : NULL;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *src;

	if (!f || f->kind != FRAME_PYTHON || !f->module || !f->line || !len ||
	    !(isalpha((unsigned char)*name) || *name == '_'))
		return false;
	src = fopen(profile_string(p, f->module), "re");
	if (!src)
		return false;
	/* The closest such line before the frame's, within its function's
	 * likely reach. */
	for (uint32_t n = 1; n < f->line && getline(&line, &cap, src) >= 0; n++)
		if (n + 300 >= f->line && makes_iterator(line, name)) {
			snprintf(buf, len, "%s", line);
			buf[strcspn(buf, "\n")] = '\0';
			found = true;
		}
	free(line);
	fclose(src);
	return found;
}

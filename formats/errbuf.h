/* SPDX-License-Identifier: MIT */
/* The caller's error buffer, shared by the files of formats/. */
#ifndef TRAINSAMPLE_FORMATS_ERRBUF_H
#define TRAINSAMPLE_FORMATS_ERRBUF_H

#include <stddef.h>

/* Formats one line into err (when err is non-NULL and errlen non-zero) and
 * returns `code`, so callers can write `return errbuf_set(...)`. */
int errbuf_set(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif

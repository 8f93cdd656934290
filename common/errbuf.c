// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>

#include "common/common.h"

int errbuf_set(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return code;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

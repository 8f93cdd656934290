// SPDX-License-Identifier: MIT
/* Error text for the caller's buffer. */
#include <stdarg.h>
#include <stdio.h>

#include "symbolize/internal.h"

void sym_errorf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "common/common.h"

/* Far above the kernel's PID_MAX_LIMIT: a larger number is a typo, a
 * smaller one that names no process gets "no such process" later. */
#define PID_LIMIT 0x3fffffff

int pid_parse(const char *text, pid_t *out)
{
	char *end;
	long v;

	if (!text)
		return -EINVAL;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v <= 0 || v > PID_LIMIT)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

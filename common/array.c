// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "common/common.h"

int array_reserve(void **items, size_t *cap, size_t need, size_t size, size_t least)
{
	size_t n = *cap > SIZE_MAX / 2 ? need : *cap * 2;
	void *grown;

	if (need <= *cap)
		return 0;
	if (n < need)
		n = need;
	if (n < least)
		n = least;
	if (!size || n > SIZE_MAX / size)
		return -ENOMEM;
	grown = realloc(*items, n * size);
	if (!grown)
		return -ENOMEM;
	*items = grown;
	*cap = n;
	return 0;
}

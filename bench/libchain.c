// SPDX-License-Identifier: MIT
/*
 * A numpy-style call chain for the benchmark: an entry point that
 * dispatches through layers of small functions, in a shared library built
 * without frame pointers, down to a compute kernel. Each layer has locals
 * and calls the next, so unwinding needs CFI at every frame.
 */
#include <stdint.h>

#define LAYER(name, next)                                              \
	__attribute__((noinline)) uint64_t name(uint64_t x, uint64_t n) \
	{                                                               \
		volatile uint64_t local = x ^ n;                        \
		return next(local, n) + 1;                              \
	}

__attribute__((noinline)) uint64_t chain_kernel(uint64_t x, uint64_t n)
{
	volatile uint64_t v = x;

	for (uint64_t i = 0; i < n; i++)
		v = v * 6364136223846793005ull + i;
	return v;
}

LAYER(chain_l12, chain_kernel)
LAYER(chain_l11, chain_l12)
LAYER(chain_l10, chain_l11)
LAYER(chain_l9, chain_l10)
LAYER(chain_l8, chain_l9)
LAYER(chain_l7, chain_l8)
LAYER(chain_l6, chain_l7)
LAYER(chain_l5, chain_l6)
LAYER(chain_l4, chain_l5)
LAYER(chain_l3, chain_l4)
LAYER(chain_l2, chain_l3)
LAYER(chain_entry, chain_l2)

// SPDX-License-Identifier: MIT
/* Log-linear duration histograms: exact to the microsecond for the short
 * pauses that matter, within a bucket's 1.5% for long ones. */
#include <math.h>

#include "sampler/histogram.h"

static unsigned bucket_of(uint64_t us)
{
	unsigned shift;

	if (us < HISTOGRAM_LINEAR_US)
		return (unsigned)us;
	shift = 63 - (unsigned)__builtin_clzll(us); /* >= HISTOGRAM_LINEAR_SHIFT */
	if (shift > HISTOGRAM_TOP_SHIFT)
		return HISTOGRAM_BUCKETS - 1;
	return HISTOGRAM_LINEAR_US + (shift - HISTOGRAM_LINEAR_SHIFT) * (1u << HISTOGRAM_SUB_SHIFT) +
	       (unsigned)((us >> (shift - HISTOGRAM_SUB_SHIFT)) & ((1u << HISTOGRAM_SUB_SHIFT) - 1));
}

/* The middle of bucket i, in ns. */
static uint64_t bucket_middle_ns(unsigned i)
{
	unsigned k, shift, sub;
	uint64_t width;

	if (i < HISTOGRAM_LINEAR_US)
		return (uint64_t)i * 1000 + 500;
	k = i - HISTOGRAM_LINEAR_US;
	shift = HISTOGRAM_LINEAR_SHIFT + (k >> HISTOGRAM_SUB_SHIFT);
	sub = k & ((1u << HISTOGRAM_SUB_SHIFT) - 1);
	width = 1ull << (shift - HISTOGRAM_SUB_SHIFT);
	return (((uint64_t)(1u << HISTOGRAM_SUB_SHIFT) + sub) * width + width / 2) * 1000;
}

void histogram_add(struct duration_histogram *h, uint64_t ns)
{
	h->counts[bucket_of(ns / 1000)]++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

uint64_t histogram_percentile(const struct duration_histogram *h, double q)
{
	uint64_t total = 0, want, seen = 0;

	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		total += h->counts[i];
	if (!total)
		return 0;
	want = (uint64_t)ceil(q * (double)total);
	if (!want)
		want = 1;
	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= want) {
			uint64_t mid = bucket_middle_ns(i);

			/* A bucket's middle can lie past the one value in it. */
			return mid < h->max_ns ? mid : h->max_ns;
		}
	}
	return h->max_ns;
}

void histogram_merge(struct duration_histogram *into, const struct duration_histogram *from)
{
	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		into->counts[i] += from->counts[i];
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

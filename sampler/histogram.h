/* SPDX-License-Identifier: MIT */
/* Histograms of durations (pauses, unwinds) for --stats' percentiles. */
#ifndef TRAINSAMPLE_SAMPLER_HISTOGRAM_H
#define TRAINSAMPLE_SAMPLER_HISTOGRAM_H

#include <stdint.h>

/*
 * 1 us buckets below HISTOGRAM_LINEAR_US, then 64 buckets per power of two
 * (about 1.5% wide) up to 2^HISTOGRAM_TOP_SHIFT us: a long pause reads
 * near its length instead of as the last bucket's edge.
 */
#define HISTOGRAM_LINEAR_US 2048
#define HISTOGRAM_SUB_SHIFT 6 /* 64 buckets per power of two */
#define HISTOGRAM_LINEAR_SHIFT 11 /* log2(HISTOGRAM_LINEAR_US) */
#define HISTOGRAM_TOP_SHIFT 54 /* beyond any uint64_t ns in us */
#define HISTOGRAM_BUCKETS \
	(HISTOGRAM_LINEAR_US + (HISTOGRAM_TOP_SHIFT - HISTOGRAM_LINEAR_SHIFT + 1) * \
				       (1 << HISTOGRAM_SUB_SHIFT))

struct duration_histogram {
	uint32_t counts[HISTOGRAM_BUCKETS];
	uint64_t max_ns;
};

void histogram_add(struct duration_histogram *h, uint64_t ns);
/* Adds from's durations to into's. */
void histogram_merge(struct duration_histogram *into, const struct duration_histogram *from);
/* The q-quantile (0 < q <= 1) in ns: the middle of its bucket, never more
 * than the largest duration added. 0 when empty. */
uint64_t histogram_percentile(const struct duration_histogram *h, double q);

#endif

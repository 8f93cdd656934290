// SPDX-License-Identifier: MIT
/* --stats' percentiles: right beyond 2 ms, never above the largest value. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "sampler/histogram.h"

static struct duration_histogram *hist_new(void)
{
	struct duration_histogram *h = calloc(1, sizeof(*h));

	cr_assert(h);
	return h;
}

Test(histogram, short_durations_to_the_microsecond)
{
	struct duration_histogram *h = hist_new();

	for (int i = 0; i < 100; i++)
		histogram_add(h, 40000 + (uint64_t)i * 10); /* 40.0 .. 40.99 us */
	cr_expect_eq(histogram_percentile(h, 0.50), 40500);
	cr_expect_eq(histogram_percentile(h, 0.99), 40500);
	free(h);
}

/* The old histogram read every pause past 2 ms as 2048 us. */
Test(histogram, long_durations_within_two_percent)
{
	struct duration_histogram *h = hist_new();
	uint64_t p50, p99;

	for (int i = 0; i < 98; i++)
		histogram_add(h, 100000); /* 100 us */
	histogram_add(h, 7000000);        /* 7 ms */
	histogram_add(h, 30000000);       /* 30 ms */
	p50 = histogram_percentile(h, 0.50);
	p99 = histogram_percentile(h, 0.99);
	cr_expect_eq(p50, 100500);
	cr_expect(p99 > 7000000 * 0.98 && p99 < 7000000 * 1.02, "p99 %lu ns", (unsigned long)p99);
	cr_expect_eq(histogram_percentile(h, 1.0), 30000000);
	free(h);
}

Test(histogram, never_above_the_max)
{
	struct duration_histogram *h = hist_new();

	histogram_add(h, 5000100); /* low in its bucket */
	cr_expect_eq(histogram_percentile(h, 0.99), 5000100);
	histogram_add(h, 300); /* below a microsecond */
	cr_expect(histogram_percentile(h, 0.50) <= 5000100);
	histogram_add(h, UINT64_MAX); /* the largest bucket still holds it */
	cr_expect((double)histogram_percentile(h, 1.0) > (double)UINT64_MAX * 0.98);
	free(h);
}

Test(histogram, empty_reads_zero)
{
	struct duration_histogram *h = hist_new();

	cr_expect_eq(histogram_percentile(h, 0.99), 0);
	free(h);
}

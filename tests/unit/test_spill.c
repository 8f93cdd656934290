// SPDX-License-Identifier: MIT
/* Records kept on disk (common/spill.c): back in order, and sorted. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "common/common.h"

struct rec {
	uint64_t key;
	uint64_t index;
	uint8_t pad[88]; /* a GPU activity's size: several sort runs */
};

struct seen {
	uint64_t n, last_key, index_sum;
	bool sorted;
};

static int in_order(const void *record, void *ctx)
{
	const struct rec *r = record;
	struct seen *s = ctx;

	cr_assert_eq(r->index, s->n, "record %llu came as %llu", (unsigned long long)r->index,
		     (unsigned long long)s->n);
	cr_assert_eq(r->pad[87], (uint8_t)r->index);
	s->n++;
	return 0;
}

static int check_sorted(const void *record, void *ctx)
{
	const struct rec *r = record;
	struct seen *s = ctx;

	if (s->n && r->key < s->last_key)
		s->sorted = false;
	cr_assert_eq(r->pad[87], (uint8_t)r->index);
	s->last_key = r->key;
	s->index_sum += r->index;
	s->n++;
	return 0;
}

static int by_key(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static void fill(struct spill *sp, uint64_t n)
{
	uint64_t x = 88172645463325252ull;

	for (uint64_t i = 0; i < n; i++) {
		struct rec r = { .index = i };

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r.key = x % 1000003;
		r.pad[87] = (uint8_t)i;
		cr_assert_eq(spill_append(sp, &r), 0);
	}
}

static void round_trip(uint64_t n)
{
	struct spill *sp = NULL;
	struct seen s = { .sorted = true };

	cr_assert_eq(spill_new(&sp, sizeof(struct rec)), 0);
	fill(sp, n);
	cr_assert_eq(spill_count(sp), n);
	cr_assert_eq(spill_for_each(sp, in_order, &s), 0);
	cr_assert_eq(s.n, n);
	s = (struct seen){ .sorted = true };
	cr_assert_eq(spill_for_each_sorted(sp, by_key, check_sorted, &s), 0);
	cr_assert_eq(s.n, n);
	cr_assert(s.sorted);
	cr_assert_eq(s.index_sum, n ? n * (n - 1) / 2 : 0, "every record once");
	spill_free(sp);
}

Test(spill, nothing_and_few_stay_in_memory)
{
	round_trip(0);
	round_trip(1);
	round_trip(1000);
}

/* 300,000 records of 104 bytes: a 31 MB file, four sorted runs merged. */
Test(spill, many_come_back_in_order_and_sorted)
{
	round_trip(300000);
}

static int stop_at_ten(const void *record, void *ctx)
{
	(void)record;
	return ++*(int *)ctx == 10 ? 7 : 0;
}

Test(spill, a_callback_stops_the_walk)
{
	struct spill *sp = NULL;
	int n = 0;

	cr_assert_eq(spill_new(&sp, sizeof(struct rec)), 0);
	fill(sp, 100000);
	cr_assert_eq(spill_for_each(sp, stop_at_ten, &n), 7);
	n = 0;
	cr_assert_eq(spill_for_each_sorted(sp, by_key, stop_at_ten, &n), 7);
	cr_assert_eq(n, 10);
	spill_free(sp);
}

// SPDX-License-Identifier: MIT
/* The profile model: interning, the stack trie, threads, meta, aggregates. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

static uint32_t string_id(struct profile *p, const char *s)
{
	uint32_t id = UINT32_MAX;

	cr_assert_eq(profile_intern_string(p, s, &id), 0, "interning \"%s\"", s);
	return id;
}

static uint32_t frame_id(struct profile *p, uint32_t kind, const char *name,
			 const char *module, uint32_t line)
{
	struct frame f = {
		.kind = kind,
		.name = string_id(p, name),
		.module = string_id(p, module),
		.line = line,
	};
	uint32_t id = UINT32_MAX;

	cr_assert_eq(profile_intern_frame(p, &f, &id), 0);
	return id;
}

static uint32_t stack_id(struct profile *p, uint32_t parent, uint32_t frame)
{
	uint32_t id = UINT32_MAX;

	cr_assert_eq(profile_intern_stack(p, parent, frame, &id), 0);
	return id;
}

static void add(struct profile *p, uint32_t pid, uint32_t tid, uint32_t stack,
		uint64_t weight, uint32_t flags)
{
	struct sample s = {
		.time_ns = 1, .pid = pid, .tid = tid, .stack = stack,
		.weight_ns = weight, .flags = flags,
	};

	cr_assert_eq(profile_add_sample(p, &s), 0);
}

Test(model, new_profile_has_empty_string_and_root_stack)
{
	struct profile *p = profile_new();

	cr_assert_not_null(p);
	cr_assert_eq(profile_string_count(p), 1);
	cr_assert_str_eq(profile_string(p, 0), "");
	cr_assert_eq(profile_frame_count(p), 0);
	cr_assert_eq(profile_stack_count(p), 1);
	cr_assert_eq(profile_stack(p, 0)->depth, 0);
	cr_assert_eq(profile_sample_count(p), 0);
	cr_assert_eq(string_id(p, ""), 0);
	cr_assert_eq(profile_string_count(p), 1);
	profile_free(p);
	profile_free(NULL);
}

Test(model, strings_are_deduplicated_with_dense_ids)
{
	struct profile *p = profile_new();
	char name[32];

	cr_assert_eq(string_id(p, "alpha"), 1);
	cr_assert_eq(string_id(p, "beta"), 2);
	cr_assert_eq(string_id(p, "alpha"), 1);
	cr_assert_eq(string_id(p, "alph"), 3);
	cr_assert_eq(profile_string_count(p), 4);
	/* Enough to grow the index several times; every id stays put. */
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		cr_assert_eq(string_id(p, name), 4 + (uint32_t)i);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		cr_assert_eq(string_id(p, name), 4 + (uint32_t)i);
		cr_assert_str_eq(profile_string(p, 4 + (uint32_t)i), name);
	}
	cr_assert_str_eq(profile_string(p, 2), "beta");
	cr_assert_null(profile_string(p, profile_string_count(p)));
	profile_free(p);
}

Test(model, frames_are_interned_by_all_four_fields)
{
	struct profile *p = profile_new();
	uint32_t a = frame_id(p, FRAME_NATIVE, "f", "libx.so", 0);
	uint32_t b = frame_id(p, FRAME_PYTHON, "f", "libx.so", 0);
	uint32_t c = frame_id(p, FRAME_NATIVE, "f", "liby.so", 0);
	uint32_t d = frame_id(p, FRAME_NATIVE, "f", "libx.so", 7);
	uint32_t e = frame_id(p, FRAME_NATIVE, "g", "libx.so", 0);
	const struct frame *f;

	cr_assert_eq(a, 0);
	cr_assert_eq(b, 1);
	cr_assert_eq(c, 2);
	cr_assert_eq(d, 3);
	cr_assert_eq(e, 4);
	cr_assert_eq(frame_id(p, FRAME_NATIVE, "f", "libx.so", 7), d);
	cr_assert_eq(profile_frame_count(p), 5);
	f = profile_frame(p, d);
	cr_assert_eq(f->kind, FRAME_NATIVE);
	cr_assert_str_eq(profile_string(p, f->name), "f");
	cr_assert_str_eq(profile_string(p, f->module), "libx.so");
	cr_assert_eq(f->line, 7);
	cr_assert_null(profile_frame(p, 5));
	profile_free(p);
}

Test(model, bad_frames_are_rejected)
{
	struct profile *p = profile_new();
	struct frame f = { .kind = FRAME_KIND_MAX + 1 };
	uint32_t id = 42;

	cr_assert_eq(profile_intern_frame(p, &f, &id), -EINVAL);
	f.kind = FRAME_GPU;
	f.name = 1; /* only string 0 exists */
	cr_assert_eq(profile_intern_frame(p, &f, &id), -EINVAL);
	f.name = 0;
	f.module = 9;
	cr_assert_eq(profile_intern_frame(p, &f, &id), -EINVAL);
	cr_assert_eq(profile_intern_frame(p, NULL, &id), -EINVAL);
	cr_assert_eq(profile_intern_string(p, NULL, &id), -EINVAL);
	cr_assert_eq(profile_frame_count(p), 0);
	cr_assert_eq(id, 42);
	profile_free(p);
}

Test(model, stack_trie)
{
	struct profile *p = profile_new();
	uint32_t main_f = frame_id(p, FRAME_NATIVE, "main", "", 0);
	uint32_t work_f = frame_id(p, FRAME_NATIVE, "work", "", 0);
	uint32_t s1 = stack_id(p, 0, main_f);
	uint32_t s2 = stack_id(p, s1, work_f);
	uint32_t s3 = stack_id(p, 0, work_f);
	uint32_t s4 = stack_id(p, s2, work_f);
	const struct stack_node *n;

	cr_assert_eq(s1, 1);
	cr_assert_eq(s2, 2);
	cr_assert_eq(s3, 3);
	cr_assert_eq(s4, 4);
	cr_assert_eq(stack_id(p, 0, main_f), s1);
	cr_assert_eq(stack_id(p, s1, work_f), s2);
	cr_assert_eq(profile_stack_count(p), 5);
	n = profile_stack(p, s4);
	cr_assert_eq(n->depth, 3);
	cr_assert_eq(n->frame, work_f);
	cr_assert_eq(n->parent, s2);
	n = profile_stack(p, n->parent);
	cr_assert_eq(n->depth, 2);
	cr_assert_eq(n->parent, s1);
	n = profile_stack(p, n->parent);
	cr_assert_eq(n->depth, 1);
	cr_assert_eq(n->frame, main_f);
	cr_assert_eq(n->parent, 0);
	cr_assert_eq(profile_stack(p, s3)->depth, 1);
	cr_assert_null(profile_stack(p, 5));
	profile_free(p);
}

Test(model, bad_stack_ids_are_rejected)
{
	struct profile *p = profile_new();
	uint32_t f = frame_id(p, FRAME_NATIVE, "main", "", 0);
	struct sample s = { .stack = 2 };
	uint32_t id;

	cr_assert_eq(profile_intern_stack(p, 1, f, &id), -EINVAL);
	cr_assert_eq(profile_intern_stack(p, 0, f + 1, &id), -EINVAL);
	cr_assert_eq(profile_stack_count(p), 1);
	cr_assert_eq(stack_id(p, 0, f), 1);
	cr_assert_eq(profile_add_sample(p, &s), -EINVAL);
	cr_assert_eq(profile_add_sample(p, NULL), -EINVAL);
	cr_assert_eq(profile_sample_count(p), 0);
	profile_free(p);
}

Test(model, threads_are_renamed)
{
	struct profile *p = profile_new();

	cr_assert_null(profile_thread_name(p, 10, 11));
	cr_assert_eq(profile_set_thread(p, 10, 11, "python"), 0);
	cr_assert_eq(profile_set_thread(p, 10, 12, "pt_autograd_0"), 0);
	cr_assert_eq(profile_set_thread(p, 20, 11, "other"), 0);
	cr_assert_str_eq(profile_thread_name(p, 10, 11), "python");
	cr_assert_eq(profile_set_thread(p, 10, 11, "trainer"), 0);
	cr_assert_str_eq(profile_thread_name(p, 10, 11), "trainer");
	cr_assert_str_eq(profile_thread_name(p, 10, 12), "pt_autograd_0");
	cr_assert_str_eq(profile_thread_name(p, 20, 11), "other");
	cr_assert_null(profile_thread_name(p, 10, 13));
	profile_free(p);
}

Test(model, meta_is_replaced)
{
	struct profile *p = profile_new();

	cr_assert_null(profile_meta(p, "period_ns"));
	cr_assert_eq(profile_set_meta(p, "period_ns", "10000000"), 0);
	cr_assert_eq(profile_set_meta(p, "command", "python train.py"), 0);
	cr_assert_eq(profile_set_meta(p, "period_ns", "1000000"), 0);
	cr_assert_str_eq(profile_meta(p, "period_ns"), "1000000");
	cr_assert_str_eq(profile_meta(p, "command"), "python train.py");
	cr_assert_null(profile_meta(p, "period"));
	cr_assert_eq(profile_set_meta(p, "", "x"), -EINVAL);
	cr_assert_eq(profile_set_meta(p, "k", NULL), -EINVAL);
	profile_free(p);
}

struct row_sum {
	struct profile_aggregate rows[16];
	int count;
};

static int collect_row(const struct profile_aggregate *row, void *ctx)
{
	struct row_sum *sum = ctx;

	cr_assert_lt(sum->count, 16);
	sum->rows[sum->count++] = *row;
	return 0;
}

static const struct profile_aggregate *find_row(const struct row_sum *sum,
						uint32_t pid, uint32_t tid,
						uint32_t stack, uint32_t flags)
{
	for (int i = 0; i < sum->count; i++) {
		const struct profile_aggregate *r = &sum->rows[i];

		if (r->pid == pid && r->tid == tid && r->stack == stack &&
		    r->flags == flags)
			return r;
	}
	cr_assert_fail("no row for %u/%u stack %u flags %u", pid, tid, stack,
		       flags);
	return NULL;
}

static int stop_at_second(const struct profile_aggregate *row, void *ctx)
{
	int *seen = ctx;

	(void)row;
	return ++*seen == 2 ? 7 : 0;
}

Test(model, aggregates_sum_per_thread_stack_and_flags)
{
	struct profile *p = profile_new();
	uint32_t f = frame_id(p, FRAME_NATIVE, "main", "", 0);
	uint32_t s = stack_id(p, 0, f);
	struct row_sum sum = { 0 };
	int seen = 0;

	add(p, 1, 1, s, 100, 0);
	add(p, 1, 1, s, 250, 0);
	add(p, 1, 2, s, 10, 0);
	add(p, 2, 1, s, 20, 0);
	add(p, 1, 1, s, 5, SAMPLE_IDLE);
	add(p, 1, 1, 0, 7, SAMPLE_TRUNCATED);
	add(p, 1, 1, s, 1, SAMPLE_IDLE);
	cr_assert_eq(profile_sample_count(p), 7);
	cr_assert_eq(profile_for_each_aggregate(p, collect_row, &sum), 0);
	cr_assert_eq(sum.count, 5);
	cr_assert_eq(find_row(&sum, 1, 1, s, 0)->weight_ns, 350);
	cr_assert_eq(find_row(&sum, 1, 1, s, 0)->count, 2);
	cr_assert_eq(find_row(&sum, 1, 2, s, 0)->weight_ns, 10);
	cr_assert_eq(find_row(&sum, 2, 1, s, 0)->count, 1);
	cr_assert_eq(find_row(&sum, 1, 1, s, SAMPLE_IDLE)->weight_ns, 6);
	cr_assert_eq(find_row(&sum, 1, 1, s, SAMPLE_IDLE)->count, 2);
	cr_assert_eq(find_row(&sum, 1, 1, 0, SAMPLE_TRUNCATED)->weight_ns, 7);
	cr_assert_eq(profile_for_each_aggregate(p, stop_at_second, &seen), 7);
	cr_assert_eq(seen, 2);
	profile_free(p);
}

struct big_check {
	uint64_t rows;
	uint64_t bad;
};

static int check_big_row(const struct profile_aggregate *row, void *ctx)
{
	struct big_check *c = ctx;

	c->rows++;
	if (row->count != 10 || row->weight_ns != 10 * 1000 || row->stack == 0)
		c->bad++;
	return 0;
}

/* Memory follows distinct aggregates, not samples: a million samples over
 * 100k stacks leave 100k rows. */
Test(model, many_stacks_and_a_million_samples, .timeout = 60)
{
	struct profile *p = profile_new();
	enum { FRAMES = 1000, STACKS = 100000, SAMPLES = 1000000 };
	uint32_t *stacks = malloc(STACKS * sizeof(*stacks));
	uint32_t frames[FRAMES];
	struct big_check check = { 0 };
	char name[32];

	cr_assert_not_null(stacks);
	for (int i = 0; i < FRAMES; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		frames[i] = frame_id(p, FRAME_NATIVE, name, "libbig.so", 0);
	}
	/* 1000 stacks of depth 1, then 99 x 1000 of depth 2 below them. */
	for (int i = 0; i < STACKS; i++) {
		uint32_t parent = i < FRAMES ? 0 : stacks[i / FRAMES];

		stacks[i] = stack_id(p, parent, frames[i % FRAMES]);
		cr_assert_eq(stacks[i], (uint32_t)i + 1);
	}
	cr_assert_eq(profile_stack_count(p), STACKS + 1);
	cr_assert_eq(profile_stack(p, stacks[STACKS - 1])->depth, 2);
	for (int i = 0; i < SAMPLES; i++)
		add(p, 100, 101, stacks[i % STACKS], 1000, 0);
	cr_assert_eq(profile_sample_count(p), SAMPLES);
	cr_assert_eq(profile_for_each_aggregate(p, check_big_row, &check), 0);
	cr_assert_eq(check.rows, STACKS);
	cr_assert_eq(check.bad, 0);
	cr_assert_eq(profile_string_count(p), FRAMES + 2);
	free(stacks);
	profile_free(p);
}

struct counter_order {
	uint64_t n;
	bool in_order;
};

static int check_counter(const struct counter_sample *c, void *ctx)
{
	struct counter_order *o = ctx;

	if (c->time_ns != 1000 + o->n || c->value != (double)(o->n % 100))
		o->in_order = false;
	o->n++;
	return 0;
}

/* Counters of a long run (a day at 10 Hz per track is millions) wait on
 * disk: every one comes back, in order, past the memory buffer. */
Test(model, counters_come_back_in_order_past_the_buffer)
{
	struct profile *p = profile_new();
	struct counter_order o = { 0, true };
	uint32_t track;

	cr_assert_eq(profile_intern_string(p, "gpu.0.power W", &track), 0);
	for (uint64_t i = 0; i < 40000; i++) {
		struct counter_sample c = { .time_ns = 1000 + i, .track = track,
					    .value = (double)(i % 100) };

		cr_assert_eq(profile_add_counter(p, &c), 0);
	}
	cr_assert_eq(profile_for_each_counter(p, check_counter, &o), 0);
	cr_assert_eq(o.n, 40000);
	cr_assert(o.in_order);
	profile_free(p);
}

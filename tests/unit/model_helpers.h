/* SPDX-License-Identifier: MIT */
/* Building a profile model by hand, for the writers' unit tests. */
#ifndef TRAINSAMPLE_TESTS_MODEL_HELPERS_H
#define TRAINSAMPLE_TESTS_MODEL_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "formats/formats.h"

static inline uint32_t str(struct profile *p, const char *s)
{
	uint32_t id;

	cr_assert_eq(profile_intern_string(p, s, &id), 0);
	return id;
}

static inline uint32_t frame(struct profile *p, uint32_t kind, const char *name,
		      const char *module, uint32_t line)
{
	struct frame f = { kind, str(p, name), str(p, module), line };
	uint32_t id;

	cr_assert_eq(profile_intern_frame(p, &f, &id), 0);
	return id;
}

/* The stack of frames f[0] (outermost) .. f[n - 1]. */
static inline uint32_t stack(struct profile *p, const uint32_t *f, int n)
{
	uint32_t id = 0;

	for (int i = 0; i < n; i++)
		cr_assert_eq(profile_intern_stack(p, id, f[i], &id), 0);
	return id;
}

/* A Python frame as a test program names it, and the stack of n of them
 * (outermost first). */
struct py_test_frame {
	const char *name, *file;
	uint32_t line;
};

static inline uint32_t python_stack(struct profile *p, const struct py_test_frame *f, int n)
{
	uint32_t id = 0;

	for (int i = 0; i < n; i++)
		cr_assert_eq(profile_intern_stack(p, id, frame(p, FRAME_PYTHON, f[i].name, f[i].file,
							       f[i].line), &id), 0);
	return id;
}

static inline void samples(struct profile *p, uint32_t tid, uint32_t stack_id,
		    int n, uint64_t weight, uint32_t flags)
{
	for (int i = 0; i < n; i++) {
		struct sample s = {
			.time_ns = (uint64_t)i, .pid = 100, .tid = tid,
			.stack = stack_id, .weight_ns = weight, .flags = flags,
		};

		cr_assert_eq(profile_add_sample(p, &s), 0);
	}
}

/* A writer's output as a string the caller frees; the writer must
 * return `expect` (0, or the error a test looks for). */
static inline char *written(int (*write)(const struct profile *, FILE *,
					 const struct render_options *, char *, size_t),
			    const struct profile *p, const struct render_options *o, int expect)
{
	char err[160] = "", *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cr_assert(out);
	cr_assert_eq(write(p, out, o, err, sizeof(err)), expect, "%s", err);
	cr_assert_eq(fclose(out), 0);
	return text;
}

#endif

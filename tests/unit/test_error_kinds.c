// SPDX-License-Identifier: MIT
/* --stats' errors line names what failed: "errors 24 (unwind 20, read 4)". */
#include <criterion/criterion.h>

#include "sampler/sampler.h"

Test(error_kinds, lists_the_kinds_that_happened)
{
	struct sampler_stats st = { .errors = 24 };
	char buf[160];

	st.errors_by_kind[SAMPLER_ERR_UNWIND] = 20;
	st.errors_by_kind[SAMPLER_ERR_READ] = 4;
	sampler_errors_describe(&st, buf, sizeof(buf));
	cr_expect_str_eq(buf, "unwind 20, read 4");
}

Test(error_kinds, every_kind_named)
{
	struct sampler_stats st = { 0 };
	char buf[256];

	for (int k = 0; k < SAMPLER_ERR_KINDS; k++)
		st.errors_by_kind[k] = 1;
	sampler_errors_describe(&st, buf, sizeof(buf));
	cr_expect_str_eq(buf, "unwind 1, read 1, ptrace 1, no stop 1, python 1, native merge 1, memory 1");
}

Test(error_kinds, none_is_empty_and_a_short_buffer_is_cut)
{
	struct sampler_stats st = { 0 };
	char buf[8];

	sampler_errors_describe(&st, buf, sizeof(buf));
	cr_expect_str_eq(buf, "");
	st.errors_by_kind[SAMPLER_ERR_PYTHON] = 123456;
	st.errors_by_kind[SAMPLER_ERR_MEMORY] = 1;
	sampler_errors_describe(&st, buf, sizeof(buf));
	cr_expect_str_eq(buf, "python ");
}

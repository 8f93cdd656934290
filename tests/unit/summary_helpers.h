/* SPDX-License-Identifier: MIT */
/* The analysis' text for a profile built in a unit test, by the
 * built-in phase rules: the end's summary lines, its findings (the
 * costliest max), the ranks' table or summary.json. The caller frees it. */
#ifndef TRAINSAMPLE_TESTS_SUMMARY_HELPERS_H
#define TRAINSAMPLE_TESTS_SUMMARY_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "formats/formats.h"

enum summary_part { SUMMARY_LINES, SUMMARY_FINDINGS, SUMMARY_RANKS, SUMMARY_JSON };

static inline char *summary_part_of(struct profile *p, enum summary_part part, size_t max)
{
	struct phase_rules *rules;
	struct phase_map *map;
	struct summary *s;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert(f);
	cr_assert_eq(phase_rules_new(&rules), 0);
	cr_assert_eq(phase_map_new(rules, p, &map), 0);
	cr_assert_eq(summary_build(map, &s), 0);
	cr_assert_eq(part == SUMMARY_FINDINGS ? findings_write(s, max, f) :
		     part == SUMMARY_RANKS    ? summary_ranks_write(s, f) :
		     part == SUMMARY_JSON     ? summary_json_write(s, f) :
						summary_text_write(s, false, f),
		     0);
	fclose(f);
	summary_free(s);
	phase_map_free(map);
	phase_rules_free(rules);
	return text;
}

#endif

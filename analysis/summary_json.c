// SPDX-License-Identifier: MIT
/*
 * summary.json: the summary's figures for a program to read, and each
 * DataLoader's time per step under the names training frameworks log
 * (profile/train/dl_{loader}/time_data_ms, ...), ready for an experiment
 * tracker. Shares are fractions of 1, times in seconds unless the name
 * says ms. The schema, with what each field means, is
 * docs/summary.schema.json.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary_impl.h"
#include "common/common.h"
#include "formats/formats.h"

#define SCHEMA "trainsample-summary/1"

static double share(uint64_t part, uint64_t all)
{
	return all ? (double)part / (double)all : 0.0;
}

static void put_key(FILE *out, const char *key, bool *first)
{
	fprintf(out, "%s", *first ? "" : ", ");
	*first = false;
	json_put_string(out, key);
	fputs(": ", out);
}

static void put_string_or_null(FILE *out, const char *s)
{
	if (s)
		json_put_string(out, s);
	else
		fputs("null", out);
}

/* with_startup: ns has a slot more, the loop's time before its first step. */
static void put_phases(FILE *out, const uint64_t *ns, uint64_t all, double scale, bool with_startup)
{
	bool first = true;

	fputc('{', out);
	for (int k = 0; k < PHASE_KINDS + with_startup; k++) {
		put_key(out, k == LOOP_STARTUP ? "startup" : phase_name((enum phase)k), &first);
		if (scale)
			fprintf(out, "%.3f", (double)ns[k] / scale);
		else
			fprintf(out, "%.4f", share(ns[k], all));
	}
	fputc('}', out);
}

static void put_functions(const struct summary *s, const struct summary_func *v, size_t n,
			  bool self, uint64_t busy, FILE *out)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s{\"function\": ", i ? ", " : "");
		json_put_string(out, profile_string(s->p, v[i].name));
		fputs(", \"file\": ", out);
		put_string_or_null(out, v[i].file ? profile_string(s->p, v[i].file) : NULL);
		fprintf(out, ", \"share\": %.4f}", share(self ? v[i].self_ns : v[i].total_ns, busy));
	}
	fputc(']', out);
}

static void put_threads(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	fputc('[', out);
	for (size_t i = 0; i < sp->nthreads; i++) {
		const struct summary_thread *t = &sp->threads[i];
		uint64_t all = t->busy_ns + t->idle_ns;

		fprintf(out, "%s{\"tid\": %" PRIu32 ", \"name\": ", i ? ", " : "", t->tid);
		put_string_or_null(out, profile_thread_name(s->p, sp->pid, t->tid));
		fprintf(out, ", \"samples\": %" PRIu64 ", \"busy\": %.4f, \"idle\": %.4f, \"gil\": %.4f, "
			"\"cpu_wait\": %.4f, \"phases\": ", t->samples, share(t->busy_ns, all),
			share(t->idle_ns, all), share(t->gil_ns, all), share(t->cpu_wait_ns, all));
		put_phases(out, t->phase_ns, all, 0, false);
		fputc('}', out);
	}
	fputc(']', out);
}

static void put_steps(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	const struct step_stats *st = &sp->steps;

	if (!st->timed || sp->steps_too_short) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"count\": %" PRIu64 ", \"per_second\": %.3f, \"beat\": \"%s\", "
		"\"p50_ms\": %.3f, \"p90_ms\": %.3f, \"max_ms\": %.3f, \"phase_ms\": ", st->steps,
		(double)st->timed * 1e9 / (double)(st->span_ns ? st->span_ns : 1), phase_name(st->beat),
		(double)st->p50_ns / 1e6, (double)st->p90_ns / 1e6, (double)st->max_ns / 1e6);
	put_phases(out, st->phase_ns, 0, 1e6 * (double)st->timed, false);
	fprintf(out, ", \"startup_s\": %.3f, \"epochs\": %" PRIu64 ", \"maybe_merged\": %" PRIu64
		", \"eval_passes\": %" PRIu64 ", \"eval_s\": %.3f}", (double)sp->startup_ns / 1e9,
		sp->epochs, st->maybe_merged, st->eval_passes, (double)sp->loop_ns[PHASE_EVAL] / 1e9);
	(void)s;
}

/* A loader's name, made unique: a second "loader" is "loader_2". */
static void loader_name(const struct summary *s, const struct summary_process *sp, size_t i,
			char *buf, size_t len)
{
	char other[64];
	int same = 1;

	summary_loader_name(s, sp, i, buf, len);
	for (size_t k = 0; k < i; k++) {
		summary_loader_name(s, sp, k, other, sizeof(other));
		same += !strcmp(other, buf);
	}
	if (same > 1)
		snprintf(buf + strlen(buf), len - strlen(buf), "_%d", same);
}

static void put_metric(FILE *out, bool *first, const char *split, const char *loader,
		       const char *what, double ms)
{
	char key[160];

	snprintf(key, sizeof(key), "profile/%s/dl_%s/%s", split, loader, what);
	put_key(out, key, first);
	fprintf(out, "%.3f", ms);
}

static void put_loaders(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	bool first = true;
	char name[64];

	fputs("\"loaders\": [", out);
	for (size_t i = 0, n = 0; i < sp->nloaders; i++) {
		const struct summary_loader *l = &sp->loaders[i];

		/* A loader met only outside steps and batches (its line seen
		 * once, at the start) has nothing to say. */
		if (!l->steps && !l->val_batches)
			continue;
		loader_name(s, sp, i, name, sizeof(name));
		fprintf(out, "%s{\"name\": ", n++ ? ", " : "");
		json_put_string(out, name);
		fprintf(out, ", \"train_steps\": %" PRIu64 ", \"val_batches\": %" PRIu64 "}", l->steps,
			l->val_batches);
	}
	fputs("], \"metrics\": {", out);
	for (size_t i = 0; i < sp->nloaders; i++) {
		const struct summary_loader *l = &sp->loaders[i];
		double steps = (double)l->steps * 1e6, batches = (double)l->val_batches * 1e6;

		loader_name(s, sp, i, name, sizeof(name));
		if (l->steps) {
			put_metric(out, &first, "train", name, "time_data_ms", (double)l->step_ns[PHASE_DATA] / steps);
			put_metric(out, &first, "train", name, "time_forward_ms", (double)l->step_ns[PHASE_FORWARD] / steps);
			put_metric(out, &first, "train", name, "time_backward_ms", (double)l->step_ns[PHASE_BACKWARD] / steps);
			put_metric(out, &first, "train", name, "time_optimizer_ms", (double)l->step_ns[PHASE_OPTIMIZER] / steps);
			put_metric(out, &first, "train", name, "time_batch_wait_ms", (double)l->wait_ns / steps);
		}
		if (l->val_batches) {
			put_metric(out, &first, "val", name, "time_data_ms", (double)l->val_data_ns / batches);
			put_metric(out, &first, "val", name, "time_forward_ms", (double)l->val_forward_ns / batches);
		}
	}
	fputc('}', out);
}

static void put_process(const struct summary *s, const struct summary_process *sp, FILE *out)
{
	uint64_t all = sp->busy_ns + sp->idle_ns;
	char key[32];

	fprintf(out, "    {\"pid\": %" PRIu32 ", \"label\": ", sp->pid);
	put_string_or_null(out, process_label_of(s->p, sp->pid));
	snprintf(key, sizeof(key), "rank.%" PRIu32, sp->pid);
	fputs(", \"rank\": ", out);
	if (profile_meta(s->p, key))
		fprintf(out, "%ld", strtol(profile_meta(s->p, key), NULL, 10));
	else
		fputs("null", out);
	fprintf(out, ", \"samples\": %" PRIu64 ", \"busy\": %.4f, \"idle\": %.4f, \"gil\": %.4f, "
		"\"cpu_wait\": %.4f,\n     \"threads\": ", sp->samples, share(sp->busy_ns, all),
		share(sp->idle_ns, all), share(sp->gil_ns, all), share(sp->cpu_wait_ns, all));
	put_threads(s, sp, out);
	fputs(",\n     \"top_self\": ", out);
	put_functions(s, sp->top_self, sp->ntop_self, true, sp->busy_ns, out);
	fputs(",\n     \"top_total\": ", out);
	put_functions(s, sp->top_total, sp->ntop_total, false, sp->busy_ns, out);
	fputs(",\n     \"compute\": ", out);
	if (sp->native_ns * 2 >= sp->busy_ns && sp->native_ns)
		fprintf(out, "%.4f", share(sp->compute_ns, sp->native_ns));
	else
		fputs("null", out);
	fputs(",\n     \"loop\": ", out);
	if (sp->loop) {
		uint64_t lall = 0;

		for (int k = 0; k <= PHASE_KINDS; k++)
			lall += sp->loop_ns[k];
		fprintf(out, "{\"tid\": %" PRIu32 ", \"phases\": ", sp->loop->tid);
		put_phases(out, sp->loop_ns, lall, 0, true);
		fputs(", \"steps\": ", out);
		put_steps(s, sp, out);
		fputs(",\n      ", out);
		put_loaders(s, sp, out);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fputc('}', out);
}

int summary_json_write(const struct summary *s, FILE *out)
{
	const char *v;

	fprintf(out, "{\"schema\": \"%s\",\n \"command\": ", SCHEMA);
	put_string_or_null(out, profile_meta(s->p, "command"));
	fputs(", \"mode\": ", out);
	put_string_or_null(out, profile_meta(s->p, "mode"));
	v = profile_meta(s->p, "rate_hz");
	fputs(", \"rate_hz\": ", out);
	if (v)
		fprintf(out, "%g", strtod(v, NULL));
	else
		fputs("null", out);
	fprintf(out, ", \"samples\": %" PRIu64 ",\n \"duration_s\": ", s->samples);
	if (s->end_ns > s->start_ns)
		fprintf(out, "%.3f", (double)(s->end_ns - s->start_ns) / 1e9);
	else
		fputs("null", out);
	fputs(",\n \"processes\": [\n", out);
	for (size_t i = 0; i < s->nprocs; i++) {
		put_process(s, &s->procs[i], out);
		fputs(i + 1 < s->nprocs ? ",\n" : "\n", out);
	}
	fputs(" ],\n \"findings\": ", out);
	findings_json_write(s, out);
	fputs(",\n \"gpus\": [", out);
	for (size_t i = 0; i < s->ngpus; i++) {
		const struct summary_gpu *g = &s->gpus[i];

		fprintf(out, "%s{\"device\": %" PRIu32 ", \"busy\": %.4f, \"busy_s\": %.6f, "
			"\"kernels\": %" PRIu64 ", \"energy_j\": ", i ? ", " : "", g->device,
			share(g->busy_ns, s->end_ns - s->start_ns), (double)g->busy_ns / 1e9, g->kernels);
		if (g->have_energy)
			fprintf(out, "%.3f", g->energy_j);
		else
			fputs("null", out);
		fprintf(out, ", \"active_s\": %.6f, \"busy_active\": %.4f",
			(double)summary_gpu_window(s, g) / 1e9, summary_gpu_busy_share(s, g));
		fprintf(out, ", \"copies\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64
			", \"gpu_s\": %.6f, \"pageable\": %" PRIu64 ", \"synchronous\": %" PRIu64
			", \"default_stream\": %" PRIu64 "}}", g->copies, g->copy_bytes,
			(double)g->copy_ns / 1e9, g->pageable_copies, g->sync_copies, g->null_copies);
	}
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}

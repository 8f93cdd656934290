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

/* with_startup: ns has a slot more, the loop's time before its first step. */
static void put_phases(struct json_out *j, const uint64_t *ns, uint64_t all, double scale,
		       bool with_startup)
{
	json_begin_object(j);
	for (int k = 0; k < PHASE_KINDS + with_startup; k++) {
		json_key(j, k == LOOP_STARTUP ? "startup" : phase_name((enum phase)k));
		if (scale)
			json_double(j, (double)ns[k] / scale, 3);
		else
			json_double(j, share(ns[k], all), 4);
	}
	json_end_object(j);
}

static void put_functions(const struct summary *s, const struct summary_func *v, size_t n,
			  bool self, uint64_t busy, struct json_out *j)
{
	json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		json_begin_object(j);
		json_key_string(j, "function", profile_string(s->p, v[i].name));
		json_key_string(j, "file", v[i].file ? profile_string(s->p, v[i].file) : NULL);
		json_key_double(j, "share", share(self ? v[i].self_ns : v[i].total_ns, busy), 4);
		json_end_object(j);
	}
	json_end_array(j);
}

/* busy, idle, gil and cpu_wait as shares of all. */
static void put_shares(struct json_out *j, uint64_t busy, uint64_t idle, uint64_t gil,
		       uint64_t cpu_wait, uint64_t all)
{
	json_key_double(j, "busy", share(busy, all), 4);
	json_key_double(j, "idle", share(idle, all), 4);
	json_key_double(j, "gil", share(gil, all), 4);
	json_key_double(j, "cpu_wait", share(cpu_wait, all), 4);
}

static void put_threads(const struct summary *s, const struct summary_process *sp,
			struct json_out *j)
{
	json_begin_array(j);
	for (size_t i = 0; i < sp->nthreads; i++) {
		const struct summary_thread *t = &sp->threads[i];
		uint64_t all = t->busy_ns + t->idle_ns;

		json_begin_object(j);
		json_key_uint(j, "tid", t->tid);
		json_key_string(j, "name", profile_thread_name(s->p, sp->pid, t->tid));
		json_key_uint(j, "samples", t->samples);
		put_shares(j, t->busy_ns, t->idle_ns, t->gil_ns, t->cpu_wait_ns, all);
		json_key(j, "phases");
		put_phases(j, t->phase_ns, all, 0, false);
		json_end_object(j);
	}
	json_end_array(j);
}

static void put_steps(const struct summary_process *sp, struct json_out *j)
{
	const struct step_stats *st = &sp->steps;

	if (!st->timed || sp->steps_too_short) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_key_uint(j, "count", st->steps);
	json_key_double(j, "per_second",
			(double)st->timed * 1e9 / (double)(st->span_ns ? st->span_ns : 1), 3);
	json_key_string(j, "beat", phase_name(st->beat));
	json_key_double(j, "p50_ms", (double)st->p50_ns / 1e6, 3);
	json_key_double(j, "p90_ms", (double)st->p90_ns / 1e6, 3);
	json_key_double(j, "max_ms", (double)st->max_ns / 1e6, 3);
	json_key(j, "phase_ms");
	put_phases(j, st->phase_ns, 0, 1e6 * (double)st->timed, false);
	json_key_double(j, "startup_s", (double)sp->startup_ns / 1e9, 3);
	json_key_uint(j, "epochs", sp->epochs);
	json_key_uint(j, "maybe_merged", st->maybe_merged);
	json_key_uint(j, "eval_passes", st->eval_passes);
	json_key_double(j, "eval_s", (double)sp->loop_ns[PHASE_EVAL] / 1e9, 3);
	json_key_double(j, "comm_waited_ms",
			(double)st->phase_ns[PHASE_COMM] / 1e6 / (double)st->timed, 3);
	json_key_double(j, "comm_hidden_ms", (double)sp->comm_hidden_ns / 1e6 / (double)st->timed, 3);
	json_key_double(j, "comm_threads_ms", (double)sp->comm_busy_ns / 1e6 / (double)st->timed, 3);
	json_end_object(j);
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

static void put_metric(struct json_out *j, const char *split, const char *loader,
		       const char *what, double ms)
{
	char key[160];

	snprintf(key, sizeof(key), "profile/%s/dl_%s/%s", split, loader, what);
	json_key_double(j, key, ms, 3);
}

/* "loaders": [...], "metrics": {...}, members of the loop's object. */
static void put_loaders(const struct summary *s, const struct summary_process *sp,
			struct json_out *j)
{
	char name[64];

	json_key(j, "loaders");
	json_begin_array(j);
	for (size_t i = 0; i < sp->nloaders; i++) {
		const struct summary_loader *l = &sp->loaders[i];

		/* A loader met only outside steps and batches (its line seen
		 * once, at the start) has nothing to say. */
		if (!l->steps && !l->val_batches)
			continue;
		loader_name(s, sp, i, name, sizeof(name));
		json_begin_object(j);
		json_key_string(j, "name", name);
		json_key_uint(j, "train_steps", l->steps);
		json_key_uint(j, "val_batches", l->val_batches);
		json_end_object(j);
	}
	json_end_array(j);
	json_key(j, "metrics");
	json_begin_object(j);
	for (size_t i = 0; i < sp->nloaders; i++) {
		const struct summary_loader *l = &sp->loaders[i];
		double steps = (double)l->steps * 1e6, batches = (double)l->val_batches * 1e6;

		loader_name(s, sp, i, name, sizeof(name));
		if (l->steps) {
			put_metric(j, "train", name, "time_data_ms", (double)l->step_ns[PHASE_DATA] / steps);
			put_metric(j, "train", name, "time_forward_ms", (double)l->step_ns[PHASE_FORWARD] / steps);
			put_metric(j, "train", name, "time_backward_ms", (double)l->step_ns[PHASE_BACKWARD] / steps);
			put_metric(j, "train", name, "time_optimizer_ms", (double)l->step_ns[PHASE_OPTIMIZER] / steps);
			/* Only where the loop communicates: a single process's
			 * metrics stay the frameworks' usual five. */
			if (sp->steps.phase_ns[PHASE_COMM])
				put_metric(j, "train", name, "time_comm_ms",
					   (double)l->step_ns[PHASE_COMM] / steps);
			put_metric(j, "train", name, "time_batch_wait_ms", (double)l->wait_ns / steps);
		}
		if (l->val_batches) {
			put_metric(j, "val", name, "time_data_ms", (double)l->val_data_ns / batches);
			put_metric(j, "val", name, "time_forward_ms", (double)l->val_forward_ns / batches);
		}
	}
	json_end_object(j);
}

static void put_loop(const struct summary *s, const struct summary_process *sp,
		     struct json_out *j)
{
	uint64_t all = 0;

	if (!sp->loop) {
		json_null(j);
		return;
	}
	for (int k = 0; k <= PHASE_KINDS; k++)
		all += sp->loop_ns[k];
	json_begin_object(j);
	json_key_uint(j, "tid", sp->loop->tid);
	json_key(j, "phases");
	put_phases(j, sp->loop_ns, all, 0, true);
	json_key(j, "steps");
	put_steps(sp, j);
	json_break(j, 6);
	put_loaders(s, sp, j);
	json_end_object(j);
}

static void put_process(const struct summary *s, const struct summary_process *sp,
			struct json_out *j)
{
	uint64_t all = sp->busy_ns + sp->idle_ns;
	const char *rank;
	char key[32];

	json_begin_object(j);
	json_key_uint(j, "pid", sp->pid);
	json_key_string(j, "label", process_label_of(s->p, sp->pid));
	snprintf(key, sizeof(key), "rank.%" PRIu32, sp->pid);
	rank = profile_meta(s->p, key);
	json_key(j, "rank");
	if (rank)
		json_int(j, strtol(rank, NULL, 10));
	else
		json_null(j);
	json_key_uint(j, "samples", sp->samples);
	put_shares(j, sp->busy_ns, sp->idle_ns, sp->gil_ns, sp->cpu_wait_ns, all);
	json_break(j, 5);
	json_key(j, "threads");
	put_threads(s, sp, j);
	json_break(j, 5);
	json_key(j, "top_self");
	put_functions(s, sp->top_self, sp->ntop_self, true, sp->busy_ns, j);
	json_break(j, 5);
	json_key(j, "top_total");
	put_functions(s, sp->top_total, sp->ntop_total, false, sp->busy_ns, j);
	json_break(j, 5);
	json_key(j, "compute");
	if (sp->native_ns * 2 >= sp->busy_ns && sp->native_ns)
		json_double(j, share(sp->compute_ns, sp->native_ns), 4);
	else
		json_null(j);
	json_break(j, 5);
	json_key(j, "loop");
	put_loop(s, sp, j);
	json_end_object(j);
}

static void put_gpu(const struct summary *s, const struct summary_gpu *g, struct json_out *j)
{
	json_begin_object(j);
	json_key_uint(j, "device", g->device);
	json_key_double(j, "busy", share(g->busy_ns, s->end_ns - s->start_ns), 4);
	json_key_double(j, "busy_s", (double)g->busy_ns / 1e9, 6);
	json_key_uint(j, "kernels", g->kernels);
	json_key_double(j, "comm_s", (double)g->comm_ns / 1e9, 6);
	json_key(j, "energy_j");
	if (g->have_energy)
		json_double(j, g->energy_j, 3);
	else
		json_null(j);
	json_key_double(j, "active_s", (double)summary_gpu_window(s, g) / 1e9, 6);
	json_key_double(j, "busy_active", summary_gpu_busy_share(s, g), 4);
	json_key(j, "copies");
	json_begin_object(j);
	json_key_uint(j, "count", g->copies);
	json_key_uint(j, "bytes", g->copy_bytes);
	json_key_double(j, "gpu_s", (double)g->copy_ns / 1e9, 6);
	json_key_uint(j, "pageable", g->pageable_copies);
	json_key_uint(j, "synchronous", g->sync_copies);
	json_key_uint(j, "default_stream", g->null_copies);
	json_end_object(j);
	json_end_object(j);
}

/* Laid out for a person too: the run's figures on the first lines, a
 * process to a line or few, a finding to a line. */
int summary_json_write(const struct summary *s, FILE *out)
{
	const char *rate = profile_meta(s->p, "rate_hz");
	struct json_out j;
	int ret;

	json_init(&j, out, true);
	json_begin_object(&j);
	json_key_string(&j, "schema", SCHEMA);
	json_break(&j, 1);
	json_key_string(&j, "command", profile_meta(s->p, "command"));
	json_key_string(&j, "mode", profile_meta(s->p, "mode"));
	json_key(&j, "rate_hz");
	if (rate)
		json_double_g(&j, strtod(rate, NULL), 6);
	else
		json_null(&j);
	json_key_uint(&j, "samples", s->samples);
	json_break(&j, 1);
	json_key(&j, "duration_s");
	if (s->end_ns > s->start_ns)
		json_double(&j, (double)(s->end_ns - s->start_ns) / 1e9, 3);
	else
		json_null(&j);
	json_break(&j, 1);
	json_key(&j, "processes");
	json_begin_array(&j);
	for (size_t i = 0; i < s->nprocs; i++) {
		json_break(&j, 4);
		put_process(s, &s->procs[i], &j);
	}
	json_break(&j, 1);
	json_end_array(&j);
	json_break(&j, 1);
	json_key(&j, "ranks");
	summary_ranks_json(s, &j);
	json_break(&j, 1);
	json_key(&j, "findings");
	ret = findings_json_write(s, &j);
	if (ret < 0)
		return ret;
	json_break(&j, 1);
	json_key(&j, "gpus");
	json_begin_array(&j);
	for (size_t i = 0; i < s->ngpus; i++)
		put_gpu(s, &s->gpus[i], &j);
	json_end_array(&j);
	json_end_object(&j);
	ret = json_end(&j);
	fputc('\n', out);
	return ret ? ret : ferror(out) ? -EIO : 0;
}

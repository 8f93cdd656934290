// SPDX-License-Identifier: MIT
/*
 * trainsample dump --pid PID [--native | --native-all] [--nonblocking] [--locals]
 * [--json]: every thread's stack, once, innermost frame last like a Python
 * traceback, with --locals each Python frame's variables under it. One
 * tick of the sampler: blocked threads are read without stopping them;
 * without --native nothing is traced but a running GIL holder, stopped for
 * its walk (not while another tracer holds the process), and with
 * --nonblocking not even that one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"
#include "sampler/sampler.h"

struct thread_row {
	uint32_t tid;
	uint32_t stack;
	uint32_t flags;
};

struct rows {
	struct thread_row *r;
	size_t n, cap;
};

static int collect(const struct profile_aggregate *a, void *ctx)
{
	struct rows *rows = ctx;

	if (ARRAY_RESERVE(rows->r, rows->cap, rows->n + 1, 32) < 0)
		return -1;
	rows->r[rows->n++] = (struct thread_row){ a->tid, a->stack, a->flags };
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

struct frames {
	uint32_t *ids;
	uint32_t cap;
};

/* The frames of a stack, outermost first (the idle leaf left out: the
 * thread's state says it). Returns how many. */
static uint32_t stack_frames(const struct profile *p, uint32_t stack, struct frames *f)
{
	int depth = profile_stack_frames(p, stack, &f->ids, &f->cap);

	if (depth <= 0)
		return 0;
	if (profile_frame(p, f->ids[depth - 1])->kind == FRAME_IDLE)
		depth--;
	return (uint32_t)depth;
}

static const char *idle_leaf(const struct profile *p, uint32_t stack)
{
	const struct stack_node *n = profile_stack(p, stack);
	const struct frame *f = n->depth ? profile_frame(p, n->frame) : NULL;

	return f && f->kind == FRAME_IDLE ? profile_string(p, f->name) : NULL;
}

/* "[idle: futex]" -> "idle: futex" */
static void state_of(const struct profile *p, uint32_t stack, char *buf, size_t len)
{
	const char *idle = idle_leaf(p, stack);
	size_t n;

	if (!idle) {
		snprintf(buf, len, "active");
		return;
	}
	snprintf(buf, len, "%s", idle[0] == '[' ? idle + 1 : idle);
	n = strlen(buf);
	if (n && buf[n - 1] == ']')
		buf[n - 1] = 0;
}

/* --locals: under a Python frame, its variables (index: the thread's
 * Python frames before it); a frame whose variables could not be read
 * says so. */
static void local_text(void *ctx, const char *name, const char *type, const char *value)
{
	(void)ctx;
	(void)type;
	printf("        %s = %s\n", name, value);
}

static void print_locals_text(const struct sampler *s, uint32_t tid, uint32_t index)
{
	if (sampler_frame_locals(s, (pid_t)tid, index, local_text, NULL) < 0)
		printf("        <locals unreadable>\n");
}

static void local_json(void *ctx, const char *name, const char *type, const char *value)
{
	struct json_out *j = ctx;

	json_begin_object(j);
	json_key_string(j, "name", name);
	json_key_string(j, "type", type);
	json_key_string(j, "value", value);
	json_end_object(j);
}

/* "locals": [...], or null when they could not be read: the array is
 * opened only once they were. */
static void print_locals_json(const struct sampler *s, uint32_t tid, uint32_t index,
			      struct json_out *j)
{
	json_key(j, "locals");
	if (sampler_frame_locals(s, (pid_t)tid, index, NULL, NULL) < 0) {
		json_null(j);
		return;
	}
	json_begin_array(j);
	sampler_frame_locals(s, (pid_t)tid, index, local_json, j);
	json_end_array(j);
}

/* A frame without a symbol is named "0xADDR (module)" already (the
 * sampler names it so for every output): its module is not shown twice. */
static bool names_its_module(const char *fn, const char *mod)
{
	size_t n = strlen(fn), m = strlen(mod);

	return n >= m + 3 && fn[n - 1] == ')' && fn[n - m - 2] == '(' &&
	       !strncmp(fn + n - m - 1, mod, m);
}

/* "Process 4242", and in a container the PID it has there, which is what
 * its own logs and tools show. */
static void print_process(pid_t pid)
{
	pid_t inner;
	int levels;

	printf("Process %d", (int)pid);
	if (proc_ns_tid(pid, pid, &inner, &levels) == 0 && levels > 1)
		printf(" (PID %d in its PID namespace)", (int)inner);
}

/* Gone, or a zombie: its threads ended while they were read. */
static bool process_ended(pid_t pid)
{
	char state[32];

	return proc_status_field(pid, "State", state, sizeof(state)) < 0 || state[0] == 'Z' ||
	       state[0] == 'X';
}

static void print_text(const struct profile *p, const struct rows *rows, pid_t pid,
		       const struct sampler_stats *st, struct frames *frames,
		       const struct sampler *locals)
{
	const char *script = profile_meta(p, "python_script_dir");

	print_process(pid);
	if (st->python[0])
		printf(": %s\n", st->python);
	else if (st->python_refused[0])
		printf(": no Python stacks: %s (native stacks)\n", st->python_refused);
	else
		printf(": no Python interpreter (native stacks)\n");
	for (size_t i = 0; i < rows->n; i++) {
		const struct thread_row *r = &rows->r[i];
		const char *name = profile_thread_name(p, (uint32_t)pid, r->tid);
		uint32_t n = stack_frames(p, r->stack, frames);
		uint32_t python = 0;
		char state[96];

		state_of(p, r->stack, state, sizeof(state));
		/* A thread that ended before its name was read has none. */
		if (name && *name)
			printf("\nThread %" PRIu32 " \"%s\" (%s%s)\n", r->tid, name, state,
			       r->flags & SAMPLE_GIL ? ", holds the GIL" : "");
		else
			printf("\nThread %" PRIu32 " (%s%s)\n", r->tid, state,
			       r->flags & SAMPLE_GIL ? ", holds the GIL" : "");
		for (uint32_t j = 0; j < n; j++) {
			const struct frame *f = profile_frame(p, frames->ids[j]);
			const char *fn = profile_string(p, f->name);
			const char *mod = f->module ? profile_string(p, f->module) : "";

			if (f->kind == FRAME_PYTHON) {
				printf("    %s (%s:%" PRIu32 ")\n", fn, python_file_short(mod, script), f->line);
				if (locals)
					print_locals_text(locals, r->tid, python++);
			} else if (*mod && !names_its_module(fn, mod))
				printf("    %s [%s]\n", fn, mod);
			else
				printf("    %s\n", fn);
		}
	}
	if (st->threads_live > rows->n)
		printf("\n%u other thread%s running native code only (--native shows them)\n",
		       (unsigned)(st->threads_live - rows->n), st->threads_live - rows->n == 1 ? "" : "s");
}

static void print_json(const struct profile *p, const struct rows *rows, pid_t pid,
		       const struct sampler_stats *st, struct frames *frames,
		       const struct sampler *locals)
{
	static const char *const kinds[] = { "native", "python", "idle", "gpu" };
	struct json_out j;
	pid_t inner;
	int levels;

	json_init(&j, stdout, true);
	json_begin_object(&j);
	json_key_int(&j, "pid", pid);
	/* In a container: the PID it has there, as in the text. */
	if (proc_ns_tid(pid, pid, &inner, &levels) == 0 && levels > 1)
		json_key_int(&j, "pid_in_namespace", inner);
	json_key_string(&j, "python", st->python[0] ? st->python : NULL);
	json_key(&j, "threads");
	json_begin_array(&j);
	for (size_t i = 0; i < rows->n; i++) {
		const struct thread_row *r = &rows->r[i];
		const char *name = profile_thread_name(p, (uint32_t)pid, r->tid);
		const char *idle = idle_leaf(p, r->stack);
		uint32_t n = stack_frames(p, r->stack, frames);
		uint32_t python = 0;
		char state[96];

		json_break(&j, 2);
		json_begin_object(&j);
		json_key_uint(&j, "tid", r->tid);
		json_key_string(&j, "name", name ? name : "");
		json_key_bool(&j, "idle", idle != NULL);
		json_key(&j, "syscall");
		if (idle) {
			state_of(p, r->stack, state, sizeof(state));
			json_string(&j, strncmp(state, "idle: ", 6) ? state : state + 6);
		} else {
			json_null(&j);
		}
		json_key_bool(&j, "gil", r->flags & SAMPLE_GIL);
		json_key(&j, "frames");
		json_begin_array(&j);
		for (uint32_t k = 0; k < n; k++) {
			const struct frame *f = profile_frame(p, frames->ids[k]);

			json_break(&j, 4);
			json_begin_object(&j);
			json_key_string(&j, "kind", f->kind <= FRAME_KIND_MAX ? kinds[f->kind] : "native");
			json_key_string(&j, "name", profile_string(p, f->name));
			json_key_string(&j, f->kind == FRAME_PYTHON || f->line ? "file" : "module",
					f->module ? profile_string(p, f->module) : "");
			json_key_uint(&j, "line", f->line);
			if (locals && f->kind == FRAME_PYTHON)
				print_locals_json(locals, r->tid, python++, &j);
			json_end_object(&j);
		}
		json_end_array(&j);
		json_end_object(&j);
	}
	json_break(&j, 0);
	json_end_array(&j);
	json_end_object(&j);
	json_end(&j);
	putchar('\n');
}

int cmd_dump(int argc, char **argv)
{
	struct cli_options o;
	struct sampler_options so = {
		.rate_hz = 100,
		.stack_bytes = 64 * 1024,
		.idle = true,
		.idle_python = true,
		.python = true,
	};
	struct sampler_stats st;
	struct profile *p = NULL;
	struct sampler *s = NULL;
	struct rows rows = { 0 };
	struct frames frames = { 0 };
	char err[512] = "";
	pid_t tgid;
	int ret = options_parse_dump(argc, argv, &o);

	if (ret)
		return ret < 0 ? 2 : 0;
	if (sampler_resolve_pid(o.pid, &tgid, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		return 1;
	}
	so.native = o.native;
	so.native_all = o.native_all;
	so.nonblocking = o.nonblocking;
	so.locals = o.locals;
	so.memory_only = !o.native;
	p = profile_new();
	if (!p) {
		cli_error("out of memory");
		ret = 1;
		goto out;
	}
	ret = sampler_attach(&s, tgid, p, &so, err, sizeof(err));
	if (!ret)
		ret = sampler_sample_once(s, err, sizeof(err));
	if (ret == -EBUSY && o.native) {
		cli_error("%s; --native needs to trace it: without --native, dump reads its Python "
			  "stacks without tracing it", err);
		ret = 1;
		goto out;
	}
	if (ret < 0) {
		cli_error("%s", err);
		ret = 1;
		goto out;
	}
	sampler_get_stats(s, &st);
	if (profile_for_each_aggregate(p, collect, &rows)) {
		cli_error("out of memory");
		ret = 1;
		goto out;
	}
	array_sort(rows.r, rows.n, sizeof(*rows.r), by_tid);
	if (o.json)
		print_json(p, &rows, tgid, &st, &frames, o.locals ? s : NULL);
	else
		print_text(p, &rows, tgid, &st, &frames, o.locals ? s : NULL);
	if (process_ended(tgid))
		fprintf(stderr, "trainsample: process %d ended during the dump: a thread's name or "
				"frames read after its end may be missing\n", (int)tgid);
	ret = 0;
out:
	sampler_free(s);
	profile_free(p);
	free(rows.r);
	free(frames.ids);
	return ret;
}

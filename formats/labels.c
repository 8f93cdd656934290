// SPDX-License-Identifier: MIT
/*
 * How a frame or thread reads in every output: "name", "name (file:LINE)"
 * for Python frames and native ones with a line, Python files shortened.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "formats/formats.h"
#include "formats/profile_hooks.h"

const char *python_file_short(const char *path, const char *script_dir)
{
	static const char *const marks[] = { "/site-packages/", "/dist-packages/" };
	const char *best = NULL, *lib;
	size_t n;

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		const char *at = strstr(path, marks[i]);

		/* The last one: a venv inside another package's tree. */
		while (at) {
			best = at + strlen(marks[i]);
			at = strstr(at + 1, marks[i]);
		}
	}
	if (best && *best)
		return best;
	lib = strstr(path, "/lib/python");
	if (lib) {
		const char *slash = strchr(lib + 11, '/');

		if (slash && slash[1])
			return slash + 1;
	}
	n = script_dir ? strlen(script_dir) : 0;
	if (n && !strncmp(path, script_dir, n) && path[n] == '/' && path[n + 1])
		return path + n + 1;
	return path;
}

/* Appends s to buf[*n..len), ';' and line breaks replaced: they separate
 * frames and lines in folded stacks. */
static void put(char *buf, size_t len, size_t *n, const char *s)
{
	for (; *s && *n + 1 < len; s++) {
		char c = *s;

		buf[(*n)++] = c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c;
	}
	buf[*n] = 0;
}

int profile_stack_frames(const struct profile *p, uint32_t stack, uint32_t **path,
			 uint32_t *cap)
{
	const struct stack_node *n = profile_stack(p, stack);
	uint32_t depth = n->depth;

	if (ARRAY_RESERVE(*path, *cap, depth, 0) < 0)
		return -ENOMEM;
	for (uint32_t i = depth; i > 0; n = profile_stack(p, n->parent))
		(*path)[--i] = n->frame;
	return (int)depth;
}

bool render_keeps(const struct profile *p, const struct render_options *o,
		  const struct profile_aggregate *row)
{
	const char *name;

	if (!(row->flags & SAMPLE_GPU) != !o->gpu)
		return false;
	if ((row->flags & SAMPLE_IDLE &&
	     (!o->include_idle || !render_keeps_idle_of(o, row->pid, row->tid))) ||
	    (o->gil_only && !(row->flags & SAMPLE_GIL)) ||
	    (o->pid && row->pid != o->pid) || (o->tid && row->tid != o->tid))
		return false;
	if (o->row_class && o->keep_class && render_row_class(o, row) + 1 != o->keep_class)
		return false;
	if (o->process) {
		const char *label = process_label_of(p, row->pid);
		size_t n = strlen(o->process);

		if (!label || strncmp(label, o->process, n) || (label[n] && label[n] != ' '))
			return false;
	}
	if (!o->thread)
		return true;
	name = profile_thread_name(p, row->pid, row->tid);
	return name && !strcmp(name, o->thread);
}

size_t frame_label(const struct profile *p, uint32_t id, const struct render_options *o,
		   const char *script_dir, char *buf, size_t len)
{
	const struct frame *f = profile_frame(p, id);
	const char *file;
	char line[16];
	size_t n = 0;

	buf[0] = 0;
	put(buf, len, &n, profile_string(p, f->name));
	/* Python frames, and native ones that carry a source line (then their
	 * module field holds the source file), print where they are. */
	if (!f->module || (f->kind != FRAME_PYTHON && !(f->kind == FRAME_NATIVE && f->line)))
		return n;
	file = profile_string(p, f->module);
	if (f->kind == FRAME_PYTHON && !o->full_filenames)
		file = python_file_short(file, script_dir);
	put(buf, len, &n, " (");
	put(buf, len, &n, file);
	if (f->line && !(o->by_function && f->kind == FRAME_PYTHON)) {
		snprintf(line, sizeof(line), ":%" PRIu32, f->line);
		put(buf, len, &n, line);
	}
	put(buf, len, &n, ")");
	return n;
}

/* "WHAT ID (name)", the name left out when there is none. */
static size_t root_label(const char *what, uint32_t id, const char *name, char *buf, size_t len)
{
	char head[32];
	size_t n = 0;

	snprintf(head, sizeof(head), "%s %" PRIu32, what, id);
	buf[0] = 0;
	put(buf, len, &n, head);
	if (name && *name) {
		put(buf, len, &n, " (");
		put(buf, len, &n, name);
		put(buf, len, &n, ")");
	}
	return n;
}

size_t thread_label(const struct profile *p, uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	return root_label("thread", tid, profile_thread_name(p, pid, tid), buf, len);
}

size_t process_root_label(const struct profile *p, uint32_t pid, char *buf, size_t len)
{
	return root_label("process", pid, process_label_of(p, pid), buf, len);
}

struct process_count {
	uint32_t pids[64];
	uint32_t n, max;
};

static int count_process(uint32_t pid, uint32_t tid, uint32_t name, void *ctx)
{
	struct process_count *c = ctx;

	(void)tid;
	(void)name;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->pids[i] == pid)
			return 0;
	c->pids[c->n++] = pid;
	return c->n >= c->max ? 1 : 0;
}

uint32_t profile_process_count(const struct profile *p, uint32_t max)
{
	struct process_count c = { .max = max < 64 ? max : 64 };

	if (!c.max)
		return 0;
	profile_for_each_thread(p, count_process, &c);
	return c.n;
}

void gpu_process_suffix(const struct profile *p, uint32_t pid, char *buf, size_t len)
{
	const char *label = process_label_of(p, pid);

	if (label && *label)
		snprintf(buf, len, " (%s, pid %" PRIu32 ")", label, pid);
	else
		snprintf(buf, len, " (pid %" PRIu32 ")", pid);
}

size_t class_root_label(const struct render_options *o, const struct profile_aggregate *row,
			char *buf, size_t len)
{
	int c;

	if (!o->row_class || !o->class_root || !len)
		return 0;
	c = render_row_class(o, row);
	snprintf(buf, len, "[%s: %s]", o->class_kind ? o->class_kind : "class",
		 row->flags & SAMPLE_BEFORE_STEPS ? "startup" :
		 c >= 0 && o->class_names ? o->class_names[c] : "?");
	return strlen(buf);
}

/* A label shows this much of a command line: whole arguments only, so a
 * cut one never reads as a real value ("--val-every )" did). */
#define PROCESS_LABEL_COMMAND_MAX 80

/* How much of cmd to show in at most max bytes: up to the last argument that
 * ends in them; a first argument longer than that is cut at a character. */
static size_t command_cut(const char *cmd, size_t max)
{
	size_t n = strlen(cmd), keep = 0;

	if (n <= max)
		return n;
	for (size_t i = 1; i <= max; i++)
		if (cmd[i] == ' ' || cmd[i] == '\n' || cmd[i] == '\t')
			keep = i;
	if (!keep) {
		keep = max;
		while (keep && ((unsigned char)cmd[keep] & 0xc0) == 0x80)
			keep--;
	}
	while (keep && (cmd[keep - 1] == ' ' || cmd[keep - 1] == '\n' || cmd[keep - 1] == '\t'))
		keep--;
	return keep;
}

/* A process as the summary and pictures name it. */
void process_label(const char *command, const char *rank, const char *host, char *buf,
		   size_t len)
{
	const char *arg0_end, *slash = NULL;

	/* The program by its name, as ps shows it: "python3 train.py". */
	if (command && *command) {
		arg0_end = command + strcspn(command, " ");
		for (const char *c = command; c < arg0_end; c++)
			if (*c == '/')
				slash = c;
		if (slash && slash + 1 < arg0_end)
			command = slash + 1;
	}
	if (rank && *rank) {
		snprintf(buf, len, "rank %s%s%s", rank, host && *host ? " on " : "",
			 host && *host ? host : "");
	} else {
		const char *cmd = command && *command ? command : "?";
		size_t keep = command_cut(cmd, PROCESS_LABEL_COMMAND_MAX);

		snprintf(buf, len, "%.*s%s%s%s", (int)keep, cmd, cmd[keep] ? " ..." : "",
			 host && *host ? " on " : "", host && *host ? host : "");
	}
	for (char *c = buf; *c; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
}

const char *process_label_of(const struct profile *p, uint32_t pid)
{
	char key[32];

	snprintf(key, sizeof(key), "process.%" PRIu32, pid);
	return profile_meta(p, key);
}

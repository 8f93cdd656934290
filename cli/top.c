// SPDX-License-Identifier: MIT
/*
 * trainsample top: a live view of a running process (or of a command's
 * tree), redrawn every second in the terminal as py-spy's top is: the
 * last second's training phases, each process and thread with its busy,
 * idle and GIL shares, and the functions (by line) with the most samples
 * on top of the stack (own) and anywhere on it (total), over the last
 * second and since the start. Plain ANSI on the alternate screen; keys
 * are read without echo. q quits: the target is let go and runs on.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "common/common.h"
#include "sampler/sampler.h"

#define REDRAW_NS 1000000000ull

struct top_row {
	uint32_t pid, tid, stack, flags;
	uint64_t weight;
};

struct top_func {
	uint32_t frame;
	uint64_t own, total;         /* the last second's */
	uint64_t own_all, total_all; /* since the start */
};

struct top_view {
	struct profile *p;
	struct cli_phases phases;
	struct top_row *prev, *cur; /* rows by key: last redraw's and now */
	size_t nprev, ncur, cap_prev, cap_cur;
	struct top_func *funcs;     /* by frame id */
	uint32_t nfuncs;
	uint32_t *seen;             /* frame -> row number that counted it */
	uint32_t *path, cap_path;
	uint64_t last_draw, start;
	int sort;                   /* '1'..'4': %Own, %Total, OwnTime, TotalTime */
	uint32_t pid, tid;          /* shown only; 0 all */
	struct termios saved;
	bool raw;
};

static int by_key(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

static int collect(const struct profile_aggregate *row, void *ctx)
{
	struct top_view *v = ctx;

	if (row->flags & SAMPLE_GPU)
		return 0;
	if (ARRAY_RESERVE(v->cur, v->cap_cur, v->ncur + 1, 256) < 0)
		return -ENOMEM;
	v->cur[v->ncur++] = (struct top_row){ row->pid, row->tid, row->stack, row->flags,
					      row->weight_ns };
	return 0;
}

int top_start(struct profile *p, const struct cli_options *o, struct top_view **out)
{
	struct top_view *v = calloc(1, sizeof(*v));
	struct termios raw;

	if (!v)
		return -ENOMEM;
	v->p = p;
	v->sort = '1';
	v->start = monotonic_ns();
	v->last_draw = v->start;
	if (phases_open(o, p, &v->phases) < 0) {
		free(v);
		return -EINVAL;
	}
	/* Keys without Enter and without echo; the screen as it was after. */
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &v->saved) == 0) {
		raw = v->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		v->raw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
	fputs("\033[?1049h\033[?25l\033[H\033[2J", stdout);
	fflush(stdout);
	*out = v;
	return 0;
}

void top_end(struct top_view *v)
{
	if (!v)
		return;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (v->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &v->saved);
	phases_close(&v->phases);
	free(v->prev);
	free(v->cur);
	free(v->funcs);
	free(v->seen);
	free(v->path);
	free(v);
}

/* The next process or thread to show after cur: 0 (all) after the last. */
static uint32_t next_of(const struct top_view *v, uint32_t cur, bool thread)
{
	uint32_t best = 0;

	for (size_t i = 0; i < v->ncur; i++) {
		uint32_t id = thread ? v->cur[i].tid : v->cur[i].pid;

		if (thread && v->pid && v->cur[i].pid != v->pid)
			continue;
		if (id > cur && (!best || id < best))
			best = id;
	}
	return best;
}

static void keys(struct top_view *v, struct sampler *s)
{
	char c;

	if (!v->raw)
		return;
	while (read(STDIN_FILENO, &c, 1) == 1) {
		if (c == 'q' || c == 'Q') {
			sampler_request_stop(s);
		} else if (c >= '1' && c <= '4') {
			v->sort = c;
		} else if (c == 'p') {
			v->pid = next_of(v, v->pid, false);
			v->tid = 0;
		} else if (c == 't') {
			v->tid = next_of(v, v->tid, true);
		} else if (c == 'a') {
			v->pid = v->tid = 0;
		}
		v->last_draw = 0; /* answer a key at once */
	}
}

static bool shown(const struct top_view *v, const struct top_row *r)
{
	return (!v->pid || r->pid == v->pid) && (!v->tid || r->tid == v->tid);
}

/* Own and total time of each frame, in the last second (delta) and since
 * the start, over busy samples. */
static int count_frames(struct top_view *v, const struct top_row *r, uint64_t delta, uint32_t row)
{
	uint32_t n = profile_frame_count(v->p) + 1;
	int depth;

	if (n > v->nfuncs) {
		struct top_func *f = realloc(v->funcs, n * sizeof(*f));
		uint32_t *seen = realloc(v->seen, n * sizeof(*seen));

		if (f)
			v->funcs = f;
		if (seen)
			v->seen = seen;
		if (!f || !seen)
			return -ENOMEM;
		memset(v->funcs + v->nfuncs, 0, (n - v->nfuncs) * sizeof(*f));
		memset(v->seen + v->nfuncs, 0, (n - v->nfuncs) * sizeof(*seen));
		v->nfuncs = n;
	}
	depth = profile_stack_frames(v->p, r->stack, &v->path, &v->cap_path);
	for (int i = 0; i < depth; i++) {
		struct top_func *f = &v->funcs[v->path[i]];

		f->frame = v->path[i];
		if (v->seen[v->path[i]] != row) {
			v->seen[v->path[i]] = row;
			f->total += delta;
			f->total_all += r->weight;
		}
		if (i == depth - 1) {
			f->own += delta;
			f->own_all += r->weight;
		}
	}
	return depth < 0 ? depth : 0;
}

static uint64_t sort_key(const struct top_view *v, const struct top_func *f)
{
	switch (v->sort) {
	case '2': return f->total;
	case '3': return f->own_all;
	case '4': return f->total_all;
	default: return f->own;
	}
}

static int by_column(const void *a, const void *b, void *ctx)
{
	uint64_t x = sort_key(ctx, a), y = sort_key(ctx, b);

	return (x < y) - (x > y);
}

static void screen_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 100;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* A line of at most cols characters, cleared to its end. */
static void put_line(int cols, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_line(int cols, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (cols > 0 && (size_t)cols < sizeof(buf))
		buf[cols] = '\0';
	printf("%s\033[K\n", buf);
}

struct top_thread {
	uint32_t pid, tid;
	uint64_t busy, idle, gil;
	uint64_t phase[PHASE_KINDS];
	uint64_t process_busy; /* its process's, to keep a process's threads together */
};

static int thread_add(struct top_thread **v, size_t *n, size_t *cap, const struct top_row *r,
		      uint64_t delta, enum phase ph)
{
	struct top_thread *t = NULL;

	for (size_t i = *n; i-- > 0 && !t;)
		if ((*v)[i].pid == r->pid && (*v)[i].tid == r->tid)
			t = &(*v)[i];
	if (!t) {
		if (ARRAY_RESERVE(*v, *cap, *n + 1, 16) < 0)
			return -ENOMEM;
		t = &(*v)[(*n)++];
		*t = (struct top_thread){ .pid = r->pid, .tid = r->tid };
	}
	if (r->flags & SAMPLE_IDLE)
		t->idle += delta;
	else
		t->busy += delta;
	if (r->flags & SAMPLE_GIL)
		t->gil += delta;
	t->phase[ph] += delta;
	return 0;
}

/* Busiest process first, its threads together, busiest first. */
static int by_busy(const void *a, const void *b)
{
	const struct top_thread *x = a, *y = b;

	if (x->process_busy != y->process_busy)
		return (x->process_busy < y->process_busy) - (x->process_busy > y->process_busy);
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->busy < y->busy) - (x->busy > y->busy);
}

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

static void draw_threads(const struct top_view *v, struct top_thread *t, size_t n, int cols,
			 int *lines)
{
	char label[160];
	uint32_t last_pid = 0;

	for (size_t i = 0; i < n; i++) {
		t[i].process_busy = 0;
		for (size_t k = 0; k < n; k++)
			if (t[k].pid == t[i].pid)
				t[i].process_busy += t[k].busy;
	}
	array_sort(t, n, sizeof(*t), by_busy);
	for (size_t i = 0; i < n && *lines > 0; i++, (*lines)--) {
		uint64_t all = t[i].busy + t[i].idle;
		const char *pl = process_label_of(v->p, t[i].pid);

		if (t[i].pid != last_pid && !v->pid) {
			char command[160] = "";

			/* Labels are kept at the end; the command line meanwhile. */
			if (!pl && proc_command_line((pid_t)t[i].pid, command, sizeof(command)) == 0)
				pl = command;
			put_line(cols, "PID %" PRIu32 " %s", t[i].pid, pl ? pl : "");
			(*lines)--;
		}
		last_pid = t[i].pid;
		thread_label(v->p, t[i].pid, t[i].tid, label, sizeof(label));
		put_line(cols, "  %-40s busy %3.0f%%  idle %3.0f%%  GIL %3.0f%%", label,
			 pct(t[i].busy, all), pct(t[i].idle, all), pct(t[i].gil, all));
	}
}

static void draw_functions(struct top_view *v, uint64_t busy, uint64_t busy_all, int cols,
			   int lines)
{
	struct top_func *f = malloc(v->nfuncs * sizeof(*f));
	struct render_options fo = { .include_idle = true };
	char label[256];
	size_t n = 0;

	if (!f)
		return;
	for (uint32_t i = 0; i < v->nfuncs; i++)
		if (v->funcs[i].total_all)
			f[n++] = v->funcs[i];
	qsort_r(f, n, sizeof(*f), by_column, v);
	/* The sort column in reverse video. */
	put_line(cols + 8, "%s%6s%s  %s%7s%s  %s%7s%s  %s%9s%s  Function (file:line)",
		 v->sort == '1' ? "\033[7m" : "", "%Own", v->sort == '1' ? "\033[0m" : "",
		 v->sort == '2' ? "\033[7m" : "", "%Total", v->sort == '2' ? "\033[0m" : "",
		 v->sort == '3' ? "\033[7m" : "", "OwnTime", v->sort == '3' ? "\033[0m" : "",
		 v->sort == '4' ? "\033[7m" : "", "TotalTime", v->sort == '4' ? "\033[0m" : "");
	for (size_t i = 0; i < n && (int)i < lines - 1; i++) {
		frame_label(v->p, f[i].frame, &fo, profile_meta(v->p, "python_script_dir"), label,
			    sizeof(label));
		put_line(cols, "%5.1f%%  %6.1f%%  %6.2fs  %8.2fs  %s", pct(f[i].own, busy),
			 pct(f[i].total, busy), (double)f[i].own_all / 1e9,
			 (double)f[i].total_all / 1e9, label);
	}
	(void)busy_all;
	free(f);
}

static int draw(struct top_view *v, uint64_t now)
{
	struct top_thread *threads = NULL;
	size_t nthreads = 0, cap_threads = 0, j = 0;
	uint64_t busy = 0, busy_all = 0;
	const struct top_thread *loop = NULL;
	struct top_row *swap = v->prev;
	size_t cap_swap = v->cap_prev;
	int rows, cols, lines, ret;
	const char *command = profile_meta(v->p, "command");

	/* The rows now, against the last redraw's: the last second. */
	v->prev = v->cur;
	v->nprev = v->ncur;
	v->cap_prev = v->cap_cur;
	v->cur = swap;
	v->cap_cur = cap_swap;
	v->ncur = 0;
	ret = profile_for_each_aggregate(v->p, collect, v);
	if (ret < 0)
		return ret;
	array_sort(v->cur, v->ncur, sizeof(*v->cur), by_key);
	if (v->nfuncs)
		memset(v->funcs, 0, v->nfuncs * sizeof(*v->funcs));
	if (v->nfuncs)
		memset(v->seen, 0, v->nfuncs * sizeof(*v->seen));
	for (size_t i = 0; i < v->ncur; i++) {
		const struct top_row *r = &v->cur[i];
		struct profile_aggregate row = { .pid = r->pid, .tid = r->tid, .stack = r->stack,
						 .flags = r->flags };
		uint64_t delta = r->weight;
		enum phase p;

		while (j < v->nprev && by_key(&v->prev[j], r) < 0)
			j++;
		if (j < v->nprev && !by_key(&v->prev[j], r))
			delta -= v->prev[j].weight;
		/* A thread with no sample in the last second (it ended) is not shown. */
		if (!shown(v, r) || !delta)
			continue;
		p = phase_of_row(v->phases.map, &row);
		if (thread_add(&threads, &nthreads, &cap_threads, r, delta, p) < 0)
			break;
		if (!(r->flags & SAMPLE_IDLE)) {
			busy += delta;
			busy_all += r->weight;
			if (count_frames(v, r, delta, (uint32_t)i + 1) < 0)
				break;
		}
	}
	screen_size(&rows, &cols);
	lines = rows - 1;
	fputs("\033[H", stdout);
	put_line(cols, "\033[1mtrainsample top\033[0m  %s  %.0f s   keys: 1-4 sort, p process, "
		 "t thread, a all, q quit", command ? command : "", (double)(now - v->start) / 1e9);
	put_line(cols, "showing %s%s, the last second's samples", v->pid ? "one process" :
		 "every process", v->tid ? ", one thread" : "");
	lines -= 2;
	/* The training loop's thread: the one that computed most, else the
	 * one with the most time in any phase; its split of the last second. */
	for (size_t i = 0; i < nthreads; i++) {
		uint64_t c = threads[i].phase[PHASE_FORWARD] + threads[i].phase[PHASE_BACKWARD] +
			     threads[i].phase[PHASE_OPTIMIZER];
		uint64_t lc = loop ? loop->phase[PHASE_FORWARD] + loop->phase[PHASE_BACKWARD] +
				     loop->phase[PHASE_OPTIMIZER] : 0;
		uint64_t any = threads[i].busy + threads[i].idle - threads[i].phase[PHASE_OTHER];
		uint64_t lany = loop ? loop->busy + loop->idle - loop->phase[PHASE_OTHER] : 0;

		if (any && (!loop || c > lc || (c == lc && any > lany)))
			loop = &threads[i];
	}
	if (loop) {
		uint64_t all = loop->busy + loop->idle;
		char buf[256];
		size_t n = 0;

		for (int k = 1; k < PHASE_KINDS && n < sizeof(buf); k++)
			if (loop->phase[k])
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "  %s %.0f%%",
						      phase_name((enum phase)k), pct(loop->phase[k], all));
		put_line(cols, "phases of thread %" PRIu32 ":%s", loop->tid, buf);
		lines--;
	}
	put_line(cols, "%s", "");
	lines--;
	draw_threads(v, threads, nthreads, cols, &lines);
	put_line(cols, "%s", "");
	draw_functions(v, busy, busy_all, cols, lines - 1);
	fputs("\033[J", stdout);
	fflush(stdout);
	free(threads);
	return 0;
}

void top_tick(struct top_view *v, struct sampler *s, uint64_t now)
{
	keys(v, s);
	if (v->last_draw && now - v->last_draw < REDRAW_NS)
		return;
	v->last_draw = now;
	draw(v, now);
}

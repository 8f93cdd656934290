// SPDX-License-Identifier: MIT
/*
 * How much slower a CPU-bound target runs while trainsample samples it.
 *
 *   overhead TRAINSAMPLE PAIRS NAME[+OPTION]=PROGRAM [ARG...]:ROUNDS...
 *
 * TRAINSAMPLE may be an `austin` binary instead, for comparison (Python
 * targets: `austin -i INTERVAL -p PID`; no --stats figures then).
 *
 * For each program, at 100 Hz and 1 kHz: PAIRS alternating runs of it
 * alone and under `trainsample attach`, target pinned to CPU 1 and
 * trainsample to CPU 0. A program waits for a byte on stdin, then works
 * for ROUNDS.
 * Wall time is measured from the start signal to the target's exit, CPU
 * time from wait4's rusage of the target. Prints the ratio of the fastest
 * runs and the median of the per-pair ratios, and the medians of
 * trainsample's own --stats figures. Figures only: nothing is asserted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 100

struct run {
	double wall, cpu;
	double samples, missed, errors, dropped, p50, p99, sampler_cpu;
	double unwind_p50, unwind_p99, unwind_cold;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static long tracer_of(pid_t pid)
{
	char path[64], line[256];
	long t = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &t) == 1)
			break;
	fclose(f);
	return t;
}

/* The nth number after key in trainsample's --stats text. */
static double stat_after(const char *text, const char *key, int nth)
{
	const char *p = strstr(text, key);
	char *end;
	double v = -1;

	if (!p)
		return -1;
	p += strlen(key);
	for (int i = 0; i <= nth; i++) {
		while (*p && !(*p >= '0' && *p <= '9'))
			p++;
		v = strtod(p, &end);
		p = end;
	}
	return v;
}

static void parse_stats(const char *path, struct run *r)
{
	char text[8192] = "";
	FILE *f = fopen(path, "r");

	if (f) {
		size_t n = fread(text, 1, sizeof(text) - 1, f);

		text[n] = '\0';
		fclose(f);
	}
	r->samples = stat_after(text, "  samples", 0);
	r->dropped = stat_after(text, "  samples", 3);
	r->missed = stat_after(text, "  ticks", 1);
	r->errors = stat_after(text, "  errors", 0);
	r->p50 = stat_after(text, "target pause", 1);
	r->p99 = stat_after(text, "target pause", 3);
	r->unwind_p50 = stat_after(text, "  unwind ", 1);
	r->unwind_p99 = stat_after(text, "  unwind ", 3);
	r->unwind_cold = stat_after(text, "  unwind ", 4);
	r->sampler_cpu = stat_after(text, "trainsample cpu", 0);
}

static bool is_austin(const char *profiler)
{
	const char *b = strrchr(profiler, '/');

	return !strcmp(b ? b + 1 : profiler, "austin");
}

/* trainsample attach (with `extra`, one more option, if not NULL), or
 * Austin (`austin -p PID`) for comparison. */
static pid_t start_profiler(const char *ts, const char *extra, pid_t target, double rate,
			    int stats_fd)
{
	char rate_s[32], pid_s[32], interval_s[32];
	pid_t prof;

	snprintf(rate_s, sizeof(rate_s), "%g", rate);
	snprintf(interval_s, sizeof(interval_s), "%d", (int)(1e6 / rate));
	snprintf(pid_s, sizeof(pid_s), "%d", (int)target);
	prof = fork();
	if (prof == 0) {
		dup2(stats_fd, 2);
		pin(0);
		if (is_austin(ts))
			execl(ts, ts, "-i", interval_s, "-o", "/dev/null", "-p", pid_s, (char *)NULL);
		else if (extra)
			execl(ts, ts, "attach", pid_s, "-q", "--stats", "-r", rate_s, "-f", "folded",
			      "-o", "/dev/null", extra, (char *)NULL);
		else
			execl(ts, ts, "attach", pid_s, "-q", "--stats", "-r", rate_s, "-f", "folded",
			      "-o", "/dev/null", (char *)NULL);
		_exit(127);
	}
	/* Start the clock only once every thread is seized; Austin seizes
	 * nothing: give it the time it needs to find the interpreter. */
	if (is_austin(ts))
		usleep(500000);
	for (int i = 0; i < 5000 && !is_austin(ts) && tracer_of(target) != prof; i++)
		usleep(1000);
	return prof;
}

/* "PROGRAM [ARG...]" and the rounds, as an argv. */
static void target_argv(char *words, const char *rounds, char **argv, int max)
{
	int n = 0;

	for (char *save = NULL, *w = strtok_r(words, " ", &save); w && n < max - 2;
	     w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n++] = (char *)rounds;
	argv[n] = NULL;
}

static int run_once(const char *ts, const char *extra, const char *spin, const char *rounds,
		    double rate, struct run *r)
{
	char stats[] = "/tmp/trainsample-bench.XXXXXX";
	int go[2], status, fd = -1;
	struct rusage ru;
	pid_t target, prof = 0;
	double t0;

	if (pipe(go) < 0)
		return -1;
	target = fork();
	if (target == 0) {
		char words[512], *argv[16];

		dup2(go[0], 0);
		close(go[1]);
		pin(1);
		snprintf(words, sizeof(words), "%s", spin);
		target_argv(words, rounds, argv, 16);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	if (rate > 0) {
		fd = mkstemp(stats);
		if (fd < 0)
			return -1;
		prof = start_profiler(ts, extra, target, rate, fd);
		close(fd);
	}
	t0 = now();
	if (write(go[1], "g", 1) != 1)
		return -1;
	close(go[1]);
	if (wait4(target, &status, 0, &ru) != target || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	r->wall = now() - t0;
	r->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (prof) {
		waitpid(prof, &status, 0);
		parse_stats(stats, r);
		unlink(stats);
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double min_of(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

struct series {
	double alone_wall[MAX_PAIRS], alone_cpu[MAX_PAIRS];
	double prof_wall[MAX_PAIRS], prof_cpu[MAX_PAIRS];
	double wall_ratio[MAX_PAIRS], cpu_ratio[MAX_PAIRS];
	double samples[MAX_PAIRS], missed[MAX_PAIRS], errors[MAX_PAIRS], dropped[MAX_PAIRS];
	double p50[MAX_PAIRS], p99[MAX_PAIRS], sampler_cpu[MAX_PAIRS];
	double unwind_p50[MAX_PAIRS], unwind_p99[MAX_PAIRS], unwind_cold[MAX_PAIRS];
};

static int measure(const char *ts, const char *extra, const char *prog, const char *rounds,
		   double rate, int pairs, struct series *s)
{
	for (int i = 0; i < pairs; i++) {
		struct run alone = { 0 }, prof = { 0 };
		int ok;

		/* Alternate the order so drift hits both sides alike. */
		if (i % 2 == 0)
			ok = !run_once(ts, extra, prog, rounds, 0, &alone) &&
			     !run_once(ts, extra, prog, rounds, rate, &prof);
		else
			ok = !run_once(ts, extra, prog, rounds, rate, &prof) &&
			     !run_once(ts, extra, prog, rounds, 0, &alone);
		if (!ok)
			return -1;
		s->alone_wall[i] = alone.wall;
		s->alone_cpu[i] = alone.cpu;
		s->prof_wall[i] = prof.wall;
		s->prof_cpu[i] = prof.cpu;
		s->wall_ratio[i] = prof.wall / alone.wall;
		s->cpu_ratio[i] = prof.cpu / alone.cpu;
		s->samples[i] = prof.samples;
		s->missed[i] = prof.missed;
		s->errors[i] = prof.errors;
		s->dropped[i] = prof.dropped;
		s->p50[i] = prof.p50;
		s->p99[i] = prof.p99;
		s->unwind_p50[i] = prof.unwind_p50;
		s->unwind_p99[i] = prof.unwind_p99;
		s->unwind_cold[i] = prof.unwind_cold;
		s->sampler_cpu[i] = prof.sampler_cpu;
	}
	return 0;
}

static void print_row(const char *name, double rate, int pairs, struct series *s)
{
	char label[32];

	snprintf(label, sizeof(label), "%s", rate >= 1000 ? "1 kHz" : "100 Hz");
	printf("%-10s %-7s %8.4f %8.4f %8.4f %8.4f %7.0f %6.0f %6.0f %7.0f %6.1f %6.1f %6.1f %6.1f %6.1f %9.3fs\n",
	       name, label, min_of(s->prof_wall, pairs) / min_of(s->alone_wall, pairs),
	       median(s->wall_ratio, pairs), min_of(s->prof_cpu, pairs) / min_of(s->alone_cpu, pairs),
	       median(s->cpu_ratio, pairs), median(s->samples, pairs), median(s->missed, pairs),
	       median(s->errors, pairs), median(s->dropped, pairs), median(s->p50, pairs),
	       median(s->p99, pairs), median(s->unwind_p50, pairs), median(s->unwind_p99, pairs),
	       median(s->unwind_cold, pairs), median(s->sampler_cpu, pairs));
}

int main(int argc, char **argv)
{
	static const double rates[] = { 100, 1000 };
	static struct series s;
	int pairs = argc > 2 ? atoi(argv[2]) : 0;

	if (argc < 4 || pairs < 1 || pairs > MAX_PAIRS) {
		fprintf(stderr, "usage: overhead TRAINSAMPLE PAIRS NAME=PROGRAM:ROUNDS...\n");
		return 2;
	}
	printf("trainsample overhead: each program alone and under `trainsample attach`, %d alternating\n"
	       "pairs per rate, the program on CPU 1 and trainsample on CPU 0. Ratios are profiled /\n"
	       "alone (1.000 = no overhead), of wall time and of the program's own CPU time (wait4):\n"
	       "'fast' compares the fastest runs, 'med' is the median of the pairs' ratios. The rest\n"
	       "are medians of trainsample --stats: samples, missed ticks, errors, dropped samples, the\n"
	       "program's pause per sample (us), the unwind per sample warm p50/p99 and the run's first\n"
	       "one, cold (us), and trainsample's own CPU time.\n\n",
	       pairs);
	printf("%-10s %-7s %8s %8s %8s %8s %7s %6s %6s %7s %6s %6s %6s %6s %6s %10s\n", "program", "rate",
	       "wall-fst", "wall-med", "cpu-fst", "cpu-med", "samples", "missed", "errors", "dropped",
	       "pause50", "pause99", "unw50", "unw99", "cold", "sampler");
	for (int t = 3; t < argc; t++) {
		char spec[512], *name = spec, *prog, *rounds, *extra;

		snprintf(spec, sizeof(spec), "%s", argv[t]);
		prog = strchr(spec, '=');
		rounds = prog ? strrchr(prog, ':') : NULL;
		if (!prog || !rounds) {
			fprintf(stderr, "overhead: '%s' is not NAME=PROGRAM:ROUNDS\n", argv[t]);
			return 2;
		}
		*prog++ = '\0';
		*rounds++ = '\0';
		/* NAME+OPTION: trainsample gets OPTION too (+--native). */
		extra = strchr(name, '+');
		if (extra)
			extra++;
		for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
			if (measure(argv[1], extra, prog, rounds, rates[k], pairs, &s) < 0) {
				fprintf(stderr, "overhead: a run of %s failed\n", prog);
				return 1;
			}
			print_row(name, rates[k], pairs, &s);
			fflush(stdout);
		}
	}
	return 0;
}

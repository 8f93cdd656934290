// SPDX-License-Identifier: MIT
/*
 * Rendering a long recording: a synthetic profile the size of an hour at
 * 100 Hz (360 000 samples, 100 000 distinct stacks over 16 threads, Python
 * and native frames), streamed to a .tsprof as it is built, read back, and
 * written to each output format. Prints the time each step takes and the
 * size of its file. Figures only.
 *   render [SAMPLES] [STACKS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/formats.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* A tree of call paths: stack i extends a random earlier one, so shapes
 * branch and share prefixes as real ones do. */
static int build(struct profile *p, uint32_t nsamples, uint32_t nstacks)
{
	uint32_t *stacks = malloc(nstacks * sizeof(*stacks)), nframes = 4000, *frames;
	uint32_t current[16];
	char name[64], file[64];

	frames = malloc(nframes * sizeof(*frames));
	if (!stacks || !frames)
		return -1;
	for (uint32_t i = 0; i < nframes; i++) {
		struct frame f = { .kind = i % 3 ? FRAME_PYTHON : FRAME_NATIVE, .line = i % 500 + 1 };

		snprintf(name, sizeof(name), i % 3 ? "Module%u.function_%u" : "native_%u_%u", i / 40, i);
		snprintf(file, sizeof(file), i % 3 ? "/src/pkg%u/mod.py" : "lib%u.so", i / 100);
		if (profile_intern_string(p, name, &f.name) || profile_intern_string(p, file, &f.module) ||
		    profile_intern_frame(p, &f, &frames[i]))
			return -1;
	}
	for (uint32_t i = 0; i < nstacks; i++) {
		uint32_t parent = i ? stacks[next(i)] : 0;
		const struct stack_node *n = profile_stack(p, parent);

		if (n->depth > 60)
			parent = 0;
		if (profile_intern_stack(p, parent, frames[next(nframes)], &stacks[i]))
			return -1;
	}
	/* 16 threads sampled at every tick, each staying in its stack for a
	 * few ticks (a new one at 30% of them), as code does. */
	for (uint32_t i = 0; i < nsamples; i++) {
		struct sample s = {
			.time_ns = (uint64_t)(i / 16 + 1) * 10000000ull, .pid = 1, .tid = 100 + i % 16,
			.weight_ns = 10000000, .flags = 0,
		};

		if (i < 16 || next(10) < 3)
			current[i % 16] = stacks[next(nstacks)];
		s.stack = current[i % 16];
		if (profile_add_sample(p, &s))
			return -1;
	}
	free(stacks);
	free(frames);
	return 0;
}

static void time_one(const char *what, const struct profile *p, const char *path,
		     int (*write)(const struct profile *, FILE *, const struct render_options *,
				  char *, size_t))
{
	struct render_options o = { .threads = true };
	char err[256] = "";
	struct stat st;
	double t0 = now();
	FILE *f = fopen(path, "w");

	if (!f || write(p, f, &o, err, sizeof(err)) < 0) {
		printf("%-12s failed: %s\n", what, err);
		return;
	}
	fclose(f);
	stat(path, &st);
	printf("%-12s %7.3f s  %9.1f KiB\n", what, now() - t0, (double)st.st_size / 1024);
	unlink(path);
}

#define TSPROF_PATH "/tmp/trainsample-render.tsprof"

/* What report does first: the recording read back into a new model. */
static int read_back(const char *path, uint32_t nsamples)
{
	struct profile *p = profile_new();
	struct tsprof_read_info info;
	char err[256] = "";
	struct stat st;
	double t0 = now();
	int ret = p ? tsprof_read(path, p, &info, err, sizeof(err)) : -1;

	if (ret < 0 || stat(path, &st) < 0) {
		printf("%-12s failed: %s\n", "read .tsprof", err);
		ret = 1;
	} else {
		printf("%-12s %7.3f s  %9.1f KiB  (%.1f bytes per sample)\n", "read .tsprof",
		       now() - t0, (double)st.st_size / 1024, (double)st.st_size / nsamples);
	}
	profile_free(p);
	unlink(path);
	return ret < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint32_t nsamples = argc > 1 ? (uint32_t)atoi(argv[1]) : 360000;
	uint32_t nstacks = argc > 2 ? (uint32_t)atoi(argv[2]) : 100000;
	struct profile *p = profile_new();
	struct tsprof_writer *w = NULL;
	char err[256] = "";
	double t0 = now();

	if (!p || profile_keep_timeline(p) < 0 ||
	    tsprof_writer_open(&w, TSPROF_PATH, p, err, sizeof(err)) < 0) {
		fprintf(stderr, "render: %s\n", err[0] ? err : "out of memory");
		return 1;
	}
	profile_set_meta(p, "period_ns", "10000000");
	profile_set_meta(p, "command", "synthetic: an hour at 100 Hz");
	if (build(p, nsamples, nstacks) < 0 || tsprof_writer_close(w) < 0) {
		fprintf(stderr, "render: out of memory or disk\n");
		return 1;
	}
	printf("render: %u samples, %u distinct stacks, 16 threads (built in %.2f s); -t on\n",
	       nsamples, nstacks, now() - t0);
	time_one("folded", p, "/tmp/trainsample-render.folded", folded_write);
	time_one("svg", p, "/tmp/trainsample-render.svg", flamegraph_write);
	time_one("speedscope", p, "/tmp/trainsample-render.speedscope.json", speedscope_write);
	time_one("pprof", p, "/tmp/trainsample-render.pb.gz", pprof_write);
	time_one("trace", p, "/tmp/trainsample-render.trace.json", trace_write);
	profile_free(p);
	return read_back(TSPROF_PATH, nsamples);
}

// SPDX-License-Identifier: MIT
/*
 * The GPU agent from the command line's side: record sets the variables
 * that make the CUDA driver load libtrainsample_cuda.so into the command
 * (and its children), gives it a private folder for its records, and
 * merges them while sampling and at the end.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sampler/sampler.h"

struct gpu_run {
	char dir[PATH_MAX];
	struct gpu_merge *merge;
};

/* Beside the binary (the build tree), or in PREFIX/lib/trainsample. */
static bool find_agent(char *path, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *env = getenv("TRAINSAMPLE_CUDA_AGENT");
	char *dir;

	if (env && env[0]) {
		snprintf(path, len, "%s", env);
		return access(path, R_OK) == 0;
	}
	if (n <= 0)
		return false;
	exe[n] = 0;
	dir = dirname(exe);
	snprintf(path, len, "%s/libtrainsample_cuda.so", dir);
	if (access(path, R_OK) == 0)
		return true;
	snprintf(path, len, "%s/../lib/trainsample/libtrainsample_cuda.so", dir);
	return access(path, R_OK) == 0;
}

static void notice(void *ctx, const char *line)
{
	(void)ctx;
	cli_warn("%s", line);
}

int gpu_run_start(const struct cli_options *o, struct profile *p, struct gpu_run **out)
{
	const char *base = getenv("XDG_RUNTIME_DIR"), *injected = getenv("CUDA_INJECTION64_PATH");
	char agent[PATH_MAX];
	struct gpu_run *g;

	*out = NULL;
	if (o->gpu == CLI_GPU_OFF || !o->command)
		return 0;
	if (injected && injected[0]) {
		if (o->gpu == CLI_GPU_ON)
			cli_warn("CUDA_INJECTION64_PATH is already set (%s); trainsample leaves it, and "
				 "records no GPU data", injected);
		return 0;
	}
	if (!find_agent(agent, sizeof(agent))) {
		if (o->gpu == CLI_GPU_ON)
			cli_warn("no libtrainsample_cuda.so beside trainsample (built where the CUDA "
				 "toolkit's CUPTI headers are): no GPU data");
		return 0;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	/* A folder only this user can enter: the records name its code. */
	snprintf(g->dir, sizeof(g->dir), "%s/trainsample-gpu-XXXXXX",
		 base && base[0] && access(base, W_OK) == 0 ? base : "/tmp");
	if (!mkdtemp(g->dir) || gpu_merge_new(&g->merge, g->dir, p, notice, NULL) < 0) {
		cli_warn("cannot make a folder for GPU records (%s): no GPU data", strerror(errno));
		free(g);
		return 0;
	}
	setenv("CUDA_INJECTION64_PATH", agent, 1);
	setenv("TRAINSAMPLE_GPU_DIR", g->dir, 1);
	*out = g;
	return 0;
}

void gpu_run_poll(struct gpu_run *g)
{
	if (g)
		gpu_merge_poll(g->merge);
}

void gpu_run_finish(struct gpu_run *g, bool quiet, uint64_t wall_ns)
{
	if (!g)
		return;
	gpu_merge_poll(g->merge);
	if (!quiet)
		gpu_merge_summary(g->merge, stderr, wall_ns);
}

void gpu_run_free(struct gpu_run *g)
{
	if (!g)
		return;
	gpu_merge_free(g->merge);
	free(g);
}

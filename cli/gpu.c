// SPDX-License-Identifier: MIT
/*
 * The GPU agent from the command line's side: record sets the variables
 * that make the CUDA driver load libtrainsample_cuda.so into the command
 * (and its children), gives it a private folder for its records, and
 * merges them while sampling and at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/common.h"
#include "cuda/gpu.h"

struct gpu_run {
	char dir[PATH_MAX];
	struct gpu_merge *merge;       /* NULL: no agent records */
	struct nvml_sampler *nvml;     /* NULL: no NVML */
	char socket[108];  /* attach: the dormant agent's */
	int lease;         /* the connection it collects for; -1 none */
};

/* A dead run's record folder and its record files (nothing below), by
 * name in base, held open: this user's own folder, never through a link. */
static void remove_folder(int base, const char *name)
{
	int fd = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			unlinkat(fd, e->d_name, 0);
	closedir(d);
	unlinkat(base, name, AT_REMOVEDIR);
}
/* dir/name into path, when it fits and can be read. */
static bool agent_at(char *path, size_t len, const char *dir, const char *name)
{
	int n = snprintf(path, len, "%s%s", dir, name);

	return n > 0 && (size_t)n < len && access(path, R_OK) == 0;
}

/*
 * Beside the binary (the build tree), or in PREFIX/lib/trainsample. The
 * folder is cut by hand and every snprintf checked: the dirname() version
 * stopped gcc 12 -O1 with ASan/UBSan on a false "null destination pointer".
 */
static bool find_agent(char *path, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *env = getenv("TRAINSAMPLE_CUDA_AGENT");

	if (env && env[0])
		return agent_at(path, len, env, "");
	if (n <= 0)
		return false;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	slash[1] = 0;
	return agent_at(path, len, exe, "libtrainsample_cuda.so") ||
	       agent_at(path, len, exe, "../lib/trainsample/libtrainsample_cuda.so");
}

static void notice(void *ctx, const char *line)
{
	(void)ctx;
	cli_warn("%s", line);
}

/* The effective uid of a process: its agent's socket is in that user's folder. */
static int process_uid(pid_t pid, unsigned *uid)
{
	char path[64], line[256];
	unsigned real;
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u", &real, uid) == 2) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/*
 * The private folder of this run's GPU records, trainsample-gpu-PID-XXXXXX
 * in base, named with this trainsample's pid so that a later run can tell
 * the folders of runs killed before they could clean up (kill -9) and
 * remove them: theirs only, never a live run's. Its path is handed to the
 * agent and used again by name, so base must be a folder no other user
 * can change a name on the way to (-EPERM otherwise): /tmp, not another
 * user's XDG_RUNTIME_DIR kept by sudo.
 */
static int make_record_folder(struct gpu_run *g, const char *base)
{
	uint64_t r = monotonic_ns() ^ ((uint64_t)getpid() << 32);
	char name[64];
	struct dirent *e;
	struct stat st;
	bool trusted;
	pid_t owner;
	int dir, fd, ret = -EEXIST;
	DIR *d;

	dir = file_folder_open(base, &trusted, NULL, 0);
	if (dir < 0)
		return dir;
	if (!trusted) {
		close(dir);
		return -EPERM;
	}
	fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	while (d && (e = readdir(d)) != NULL) {
		int n = 0;

		if (sscanf(e->d_name, "trainsample-gpu-%d-%*6[A-Za-z0-9]%n", &owner, &n) != 1 ||
		    !n || e->d_name[n] || owner <= 0 || kill(owner, 0) == 0 || errno != ESRCH)
			continue;
		remove_folder(dir, e->d_name);
	}
	if (d)
		closedir(d);
	for (int i = 0; i < 100 && ret == -EEXIST; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		snprintf(name, sizeof(name), "trainsample-gpu-%d-%06x", (int)getpid(),
			 (unsigned)(r >> 40));
		ret = mkdirat(dir, name, 0700) < 0 ? -errno : 0;
	}
	/* Made now, never through a link (mkdirat does not follow one). */
	if (!ret && (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		     st.st_uid != geteuid() || (st.st_mode & 077)))
		ret = -EPERM;
	close(dir);
	if (ret < 0)
		return ret;
	if ((size_t)snprintf(g->dir, sizeof(g->dir), "%s/%s", base, name) >= sizeof(g->dir))
		return -ENAMETOOLONG;
	return 0;
}

/* The same, errno set as well (the callers' message says why). */
static int record_folder(struct gpu_run *g, const char *base)
{
	int ret = make_record_folder(g, base);

	if (ret < 0)
		errno = -ret;
	return ret;
}

/* attach: a process started with the agent (trainsample env) has it
 * dormant; its socket switches it on for this recording. */
static void attach_agent(const struct cli_options *o, struct profile *p, struct gpu_run *g)
{
	char command[PATH_MAX + 16], answer[400], why[PATH_MAX + 128];
	unsigned uid;
	int fd;

	if (process_uid(o->pid, &uid) < 0)
		return;
	why[0] = 0;
	fd = gpu_agent_open(o->pid, uid, g->socket, sizeof(g->socket), why, sizeof(why));
	if (fd < 0 && why[0]) {
		cli_warn("the GPU agent of PID %d is not trusted: %s; no GPU data", (int)o->pid, why);
		return;
	}
	if (fd < 0) {
		if (o->gpu == CLI_GPU_ON)
			cli_warn("PID %d has no GPU agent waiting (start it with eval \"$(trainsample env)\" "
				 "in its environment): no GPU data", (int)o->pid);
		return;
	}
	if (record_folder(g, "/tmp") < 0 || gpu_merge_new(&g->merge, g->dir, p, notice, NULL) < 0) {
		cli_warn("cannot make a folder for GPU records (%s): no GPU data", strerror(errno));
		close(fd);
		return;
	}
	snprintf(command, sizeof(command), "start %s\n", g->dir);
	if (gpu_agent_say(fd, command, answer, sizeof(answer)) < 0) {
		cli_warn("the GPU agent of PID %d did not start: %s; no GPU data", (int)o->pid, answer);
		gpu_merge_free(g->merge);
		g->merge = NULL;
		close(fd);
		return;
	}
	/* The connection is the lease: the agent collects while it is open. */
	g->lease = fd;
}

/* record: the variables that make the driver load the agent into the
 * command, and the private folder its records go to. */
static void spawn_agent(const struct cli_options *o, struct profile *p, struct gpu_run *g)
{
	const char *base = getenv("XDG_RUNTIME_DIR"), *injected = getenv("CUDA_INJECTION64_PATH");
	char agent[PATH_MAX], pid[16];

	if (injected && injected[0]) {
		if (o->gpu == CLI_GPU_ON)
			cli_warn("CUDA_INJECTION64_PATH is already set (%s); trainsample leaves it, and "
				 "records no GPU data", injected);
		return;
	}
	if (!find_agent(agent, sizeof(agent))) {
		if (o->gpu == CLI_GPU_ON)
			cli_warn("no libtrainsample_cuda.so beside trainsample (built where the CUDA "
				 "toolkit's CUPTI headers are): no GPU data");
		return;
	}
	/* A folder only this user can enter: the records name its code. */
	if ((!base || !base[0] || access(base, W_OK) < 0 || record_folder(g, base) < 0) &&
	    record_folder(g, "/tmp") < 0) {
		cli_warn("cannot make a folder for GPU records (%s): no GPU data", strerror(errno));
		return;
	}
	if (gpu_merge_new(&g->merge, g->dir, p, notice, NULL) < 0) {
		cli_warn("cannot make a folder for GPU records (%s): no GPU data", strerror(errno));
		return;
	}
	setenv("CUDA_INJECTION64_PATH", agent, 1);
	setenv("TRAINSAMPLE_GPU_DIR", g->dir, 1);
	/* The agent stops by itself if trainsample dies before the command. */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("TRAINSAMPLE_SAMPLER_PID", pid, 1);
}

int gpu_run_start(const struct cli_options *o, struct profile *p, struct gpu_run **out)
{
	struct gpu_run *g;

	*out = NULL;
	if (o->gpu == CLI_GPU_OFF)
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->lease = -1;
	nvml_open(&g->nvml, p);
	if (o->command)
		spawn_agent(o, p, g);
	else
		attach_agent(o, p, g);
	if (!g->merge && !g->nvml) {
		free(g);
		return 0;
	}
	*out = g;
	return 0;
}

void gpu_run_poll(struct gpu_run *g, uint64_t now_ns)
{
	if (!g)
		return;
	if (g->merge)
		gpu_merge_poll(g->merge);
	nvml_sample(g->nvml, now_ns);
}

void gpu_run_finish(struct gpu_run *g, bool quiet, uint64_t wall_ns)
{
	char answer[400];

	if (!g)
		return;
	/* attach: the agent goes dormant again, its last records written. */
	if (g->lease >= 0 && gpu_agent_say(g->lease, "stop\n", answer, sizeof(answer)) < 0)
		cli_warn("the GPU agent did not say it stopped: %s", answer);
	if (g->lease >= 0)
		close(g->lease);
	g->lease = -1;
	if (g->merge)
		gpu_merge_poll(g->merge);
	if (quiet)
		return;
	if (g->merge)
		gpu_merge_summary(g->merge, stderr, wall_ns);
	nvml_summary(g->nvml, stderr);
}

void gpu_run_free(struct gpu_run *g)
{
	if (!g)
		return;
	/* Whatever ended the run, closing the lease puts the agent back to
	 * sleep (and it drops what nobody will read). */
	if (g->lease >= 0)
		close(g->lease);
	if (g->merge)
		gpu_merge_free(g->merge);
	nvml_close(g->nvml);
	free(g);
}

int cmd_env(int argc, char **argv)
{
	char agent[PATH_MAX];

	(void)argv;
	if (argc > 1) {
		cli_error("env takes no arguments");
		return 2;
	}
	if (!find_agent(agent, sizeof(agent))) {
		cli_error("no libtrainsample_cuda.so beside trainsample (it is built where the CUDA "
			  "toolkit's CUPTI headers are)");
		return 1;
	}
	/* Dormant in every CUDA process started with it, until attach. A
	 * quote in the path is closed, escaped and reopened, as sh needs. */
	fputs("export CUDA_INJECTION64_PATH='", stdout);
	for (const char *c = agent; *c; c++)
		fputs(*c == '\'' ? "'\\''" : (char[2]){ *c, 0 }, stdout);
	fputs("'\n", stdout);
	return 0;
}

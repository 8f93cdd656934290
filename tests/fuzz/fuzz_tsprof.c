// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: any bytes as a .tsprof file, read and rendered to
 * every format. A file that is not a recording must be refused, one cut or
 * corrupted read up to the damage; nothing may crash, leak or overrun.
 *   make fuzz                      (FUZZ_SECONDS=60 by default)
 *   build/fuzz/fuzz_tsprof FILE... (replays inputs, e.g. a regression)
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/formats.h"

static void render(const struct profile *p)
{
	struct render_options o = { .threads = true, .include_idle = true };
	FILE *null = fopen("/dev/null", "w");
	char err[256];

	if (!null)
		return;
	folded_write(p, null, &o, err, sizeof(err));
	flamegraph_write(p, null, &o, err, sizeof(err));
	speedscope_write(p, null, &o, err, sizeof(err));
	pprof_write(p, null, &o, err, sizeof(err));
	trace_write(p, null, &o, err, sizeof(err));
	flamegraph_diff_write(p, p, null, &o, err, sizeof(err));
	diff_table_write(p, p, null, &o, 20, err, sizeof(err));
	o.by_function = o.inverted = o.gil_only = true;
	flamegraph_write(p, null, &o, err, sizeof(err));
	fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsprof_read_info info;
	struct profile *p = profile_new();
	char path[64], err[256];
	int fd = memfd_create("tsprof", 0);

	if (fd < 0 || !p || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		profile_free(p);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	profile_keep_timeline(p);
	if (tsprof_read(path, p, &info, err, sizeof(err)) == 0)
		render(p);
	close(fd);
	profile_free(p);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Perf map files (/tmp/perf-PID.map) naming JIT code: this test process
 * plays the JIT, with an anonymous executable mapping of its own, and
 * writes its own perf map.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "tests/unit/self_helpers.h"

#define JIT_LEN (16 * 4096)

static char map_path[64];

static void remove_map(void)
{
	if (map_path[0])
		unlink(map_path);
}

/* Appends text to this process's perf map, as a JIT does. */
static void append_map(const char *fmt, ...)
{
	static char text[256 * 1024];
	va_list ap;
	int fd, n;

	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof(text));
	fd = open(map_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, (size_t)n), n);
	close(fd);
}

static uint8_t *jit_region(void)
{
	uint8_t *code = mmap(NULL, JIT_LEN, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(code, MAP_FAILED);
	return code;
}

/* Past the 100 ms between two reads of the map. */
static void wait_reread(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 120 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void expect_name(struct sym_process *p, uint64_t addr, const char *name,
			uint64_t offset)
{
	struct sym_location loc;

	cr_assert_eq(sym_process_resolve(p, addr, &loc), 0);
	cr_assert_not_null(loc.function, "%#lx: not named (want %s)",
			   (unsigned long)addr, name);
	cr_expect_str_eq(loc.function, name);
	cr_expect_str_eq(loc.module, "[perf-map]");
	cr_expect_eq(loc.offset, offset, "%s: offset %lu", name,
		     (unsigned long)loc.offset);
	cr_expect_eq(loc.vaddr, addr);
}

static void expect_unnamed(struct sym_process *p, uint64_t addr,
			   const char *module)
{
	struct sym_location loc;

	cr_assert_eq(sym_process_resolve(p, addr, &loc), 0);
	cr_expect_null(loc.function, "%#lx: named %s", (unsigned long)addr,
		       loc.function);
	cr_expect_str_eq(loc.module, module);
}

TestSuite(perf_map, .fini = remove_map);

Test(perf_map, names_jit_code_and_follows_growth)
{
	uint8_t *code = jit_region();
	uint64_t base = addr_of(code);
	struct sym_process *p;
	uint64_t gen;

	append_map("%lx 40 py::train_step:/src/train.py\n"
		   "%lx 20 LazyCompile:*forward model.js:12\n",
		   (unsigned long)base, (unsigned long)base + 0x100);
	p = open_self();
	gen = sym_process_generation(p);
	expect_name(p, base, "py::train_step:/src/train.py", 0);
	expect_name(p, base + 0x3f, "py::train_step:/src/train.py", 0x3f);
	expect_name(p, base + 0x110, "LazyCompile:*forward model.js:12", 0x10);
	cr_expect_gt(sym_process_generation(p), gen, "a new name is a new generation");
	expect_unnamed(p, base + 0x40, "[anon]"); /* past the size */

	/* Appended later, the last line still being written. */
	append_map("%lx 80 appended one\n%lx 10 half wr",
		   (unsigned long)base + 0x200, (unsigned long)base + 0x300);
	expect_unnamed(p, base + 0x200, "[anon]"); /* read < 100 ms ago */
	wait_reread();
	gen = sym_process_generation(p);
	expect_name(p, base + 0x210, "appended one", 0x10);
	cr_expect_gt(sym_process_generation(p), gen);
	expect_unnamed(p, base + 0x300, "[anon]");
	wait_reread();
	append_map("itten\n");
	expect_name(p, base + 0x301, "half written", 1);
	expect_name(p, base + 0x10, "py::train_step:/src/train.py", 0x10);
	sym_process_free(p);
	munmap(code, JIT_LEN);
}

Test(perf_map, later_entries_win)
{
	uint8_t *code = jit_region();
	uint64_t base = addr_of(code);
	struct sym_process *p;

	append_map("%lx 1000 old big\n%lx 100 old small\n",
		   (unsigned long)base, (unsigned long)base + 0x2000);
	p = open_self();
	expect_name(p, base + 0x800, "old big", 0x800);
	/* The JIT freed and reused memory: later entries over earlier ones. */
	append_map("%lx 100 new middle\n%lx 100 new small\n%lx 8 newest\n",
		   (unsigned long)base + 0x400, (unsigned long)base + 0x2000,
		   (unsigned long)base + 0x440);
	wait_reread();
	expect_unnamed(p, base + 0x3000, "[anon]"); /* uncovered: re-reads */
	expect_name(p, base + 0x3ff, "old big", 0x3ff);
	expect_name(p, base + 0x400, "new middle", 0);
	expect_name(p, base + 0x43f, "new middle", 0x3f);
	expect_name(p, base + 0x440, "newest", 0);
	expect_name(p, base + 0x447, "newest", 7);
	expect_name(p, base + 0x448, "new middle", 0x48);
	expect_name(p, base + 0x500, "old big", 0x500);
	expect_name(p, base + 0xfff, "old big", 0xfff);
	expect_name(p, base + 0x2050, "new small", 0x50);
	expect_unnamed(p, base + 0x1000, "[anon]");
	sym_process_free(p);
	munmap(code, JIT_LEN);
}

/* Random overlapping entries in three appends, against the rule itself:
 * the latest entry that covers an address names it. */
Test(perf_map, random_overlaps_match_the_rule)
{
	enum { ENTRIES = 1500, BATCHES = 3 };
	uint8_t *code = jit_region();
	uint64_t base = addr_of(code);
	static uint32_t start[ENTRIES], size[ENTRIES];
	struct sym_process *p = NULL;
	unsigned int seed = 12345;

	for (int i = 0; i < ENTRIES; i++) {
		start[i] = (uint32_t)(rand_r(&seed) % (JIT_LEN - 600));
		size[i] = 1 + (uint32_t)(rand_r(&seed) % 512);
		/* Some in increasing order, as JITs mostly write them. */
		if (i % 5 == 0 && i > 0)
			start[i] = (start[i - 1] + size[i - 1]) % (JIT_LEN - 600);
	}
	for (int b = 0; b < BATCHES; b++) {
		for (int i = b * ENTRIES / BATCHES; i < (b + 1) * ENTRIES / BATCHES; i++)
			append_map("%lx %x entry %d\n",
				   (unsigned long)(base + start[i]), size[i], i);
		if (!p)
			p = open_self();
		wait_reread();
		expect_unnamed(p, base + JIT_LEN - 1, "[anon]"); /* re-reads */
	}
	for (uint32_t off = 0; off < JIT_LEN; off += 3) {
		struct sym_location loc;
		char want[32];
		int latest = -1;

		for (int i = ENTRIES - 1; i >= 0 && latest < 0; i--)
			if (off >= start[i] && off < start[i] + size[i])
				latest = i;
		cr_assert_eq(sym_process_resolve(p, base + off, &loc), 0);
		if (latest < 0) {
			cr_assert_null(loc.function, "+%#x: %s", off, loc.function);
			continue;
		}
		snprintf(want, sizeof(want), "entry %d", latest);
		cr_assert_not_null(loc.function, "+%#x: want %s", off, want);
		cr_assert_str_eq(loc.function, want, "+%#x", off);
		cr_assert_eq(loc.offset, off - start[latest]);
	}
	sym_process_free(p);
	munmap(code, JIT_LEN);
}

Test(perf_map, malformed_lines_are_skipped)
{
	uint8_t *code = jit_region();
	uint64_t base = addr_of(code);
	char long_name[6000];
	struct sym_process *p;

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	append_map("zzzz 10 not hex\n"
		   "%lx\n"
		   "%lx 0 zero size\n"
		   "%lx 10\n"
		   "%lx 10 \n"
		   "%lx ten no size\n"
		   "ffffffffffffff00 1000 wraps around\n"
		   "10000000000000000 10 seventeen digits\n"
		   "\n"
		   "%lx 10 %s\n"
		   "%lx 10 good one\n"
		   "0x%lx 10 with 0x\n"
		   "%lx\t10\ttabs and spaces kept\n"
		   "%lx 10 crlf\r\n",
		   (unsigned long)base, (unsigned long)base + 0x10,
		   (unsigned long)base + 0x20, (unsigned long)base + 0x30,
		   (unsigned long)base + 0x40, (unsigned long)base + 0x50,
		   long_name, (unsigned long)base + 0x60,
		   (unsigned long)base + 0x70, (unsigned long)base + 0x80,
		   (unsigned long)base + 0x90);
	p = open_self();
	for (uint64_t off = 0; off < 0x60; off += 0x10)
		expect_unnamed(p, base + off + 1, "[anon]");
	expect_name(p, base + 0x61, "good one", 1);
	expect_name(p, base + 0x71, "with 0x", 1);
	expect_name(p, base + 0x81, "tabs and spaces kept", 1);
	expect_name(p, base + 0x91, "crlf", 1);
	sym_process_free(p);
	munmap(code, JIT_LEN);
}

/*
 * A line longer than a whole read of the file (64 KiB), whose tail, where
 * the fourth read starts, looks like an entry: it is not one.
 */
Test(perf_map, very_long_line)
{
	uint8_t *code = jit_region();
	uint64_t base = addr_of(code);
	size_t tail_at = 3 * 64 * 1024, len = tail_at + 64;
	char *text = malloc(len);
	struct sym_process *p;
	int n;

	cr_assert_not_null(text);
	n = snprintf(text, len, "%lx 10 ", (unsigned long)base);
	memset(text + n, 'y', tail_at - (size_t)n);
	n = snprintf(text + tail_at, len - tail_at, "%lx 10 tail\n",
		     (unsigned long)base + 0x20);
	append_map("%s%lx 10 after the long one\n", text,
		   (unsigned long)base + 0x10);
	free(text);
	p = open_self();
	expect_unnamed(p, base + 1, "[anon]");
	expect_unnamed(p, base + 0x21, "[anon]");
	expect_name(p, base + 0x11, "after the long one", 1);
	sym_process_free(p);
	munmap(code, JIT_LEN);
}

Test(perf_map, unmapped_yes_data_no)
{
	uint8_t *data = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sym_process *p;

	cr_assert_neq(data, MAP_FAILED);
	append_map("1000 100 unmapped code\n%lx 100 in data\n",
		   (unsigned long)addr_of(data));
	p = open_self();
	expect_name(p, 0x1010, "unmapped code", 0x10);
	expect_unnamed(p, addr_of(data) + 0x10, "[anon]");
	sym_process_free(p);
	munmap(data, 4096);
}

Test(perf_map, no_map_file)
{
	uint8_t *code = jit_region();
	struct sym_process *p = open_self();

	expect_unnamed(p, addr_of(code), "[anon]");
	expect_unnamed(p, 0x1010, "[unknown]");
	sym_process_free(p);
	munmap(code, JIT_LEN);
}

/* A file replaced (a new run of the JIT): what it named goes. */
Test(perf_map, replaced_file_starts_again)
{
	uint8_t *code = jit_region();
	uint64_t base = addr_of(code);
	struct sym_process *p;

	append_map("%lx 10 first run\n%lx 10 first run too\n",
		   (unsigned long)base, (unsigned long)base + 0x10);
	p = open_self();
	expect_name(p, base, "first run", 0);
	unlink(map_path);
	append_map("%lx 10 second run\n", (unsigned long)base + 0x20);
	wait_reread();
	expect_name(p, base + 0x20, "second run", 0);
	expect_unnamed(p, base, "[anon]");
	sym_process_free(p);
	munmap(code, JIT_LEN);
}

/*
 * ---- a JIT in its own pid and mount namespaces ----
 *
 * The helpers are this binary run again (exec'd, so that what they leave
 * at _exit is their own, not a copy of the test runner's), told by
 * NS_HELPER_ENV which pipes to use. The JIT is pid 1 of a new pid
 * namespace, so its perf map is perf-1.map, in a /tmp of its own that only
 * /proc/PID/root reaches; it names an address it does not map.
 */
#define NS_HELPER_ENV "TS_TEST_PERF_MAP_NS_HELPER"
#define NS_JIT_CODE 0x10000UL

static void write_all(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		_exit(1);
}

static void namespaced_jit(int ready, int release)
{
	char text[128];
	int fd, n;

	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/tmp", "tmpfs", 0, NULL))
		_exit(1);
	n = snprintf(text, sizeof(text), "%lx 100 jit in namespace (pid %d)\n",
		     NS_JIT_CODE, getpid());
	fd = open("/tmp/perf-1.map", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(1);
	write_all(fd, text, (size_t)n);
	close(fd);
	write_all(ready, "r", 1);
	while (read(release, text, 1) > 0)
		;
	_exit(0);
}

/* Between the test and the JIT: unshares, and passes on the JIT's pid. */
__attribute__((constructor)) static void namespace_helper(void)
{
	const char *fds = getenv(NS_HELPER_ENV);
	int ready, release, jit_ready[2], status;
	char c;
	pid_t jit;

	if (!fds)
		return;
	if (sscanf(fds, "%d,%d", &ready, &release) != 2)
		_exit(1);
	if (unshare(CLONE_NEWPID | CLONE_NEWNS))
		_exit(77);
	if (pipe(jit_ready))
		_exit(1);
	jit = fork();
	if (jit < 0)
		_exit(1);
	if (jit == 0) {
		close(jit_ready[0]);
		namespaced_jit(jit_ready[1], release);
	}
	close(jit_ready[1]);
	close(release);
	if (read(jit_ready[0], &c, 1) != 1)
		_exit(1);
	dprintf(ready, "%d\n", jit);
	close(ready);
	waitpid(jit, &status, 0);
	_exit(0);
}

static pid_t start_namespace_helper(int ready, int release)
{
	char exe[4096], fds[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t child;

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	snprintf(fds, sizeof(fds), "%d,%d", ready, release);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		/* Only these two ends go on; the test's ends are O_CLOEXEC. */
		if (fcntl(ready, F_SETFD, 0) || fcntl(release, F_SETFD, 0))
			_exit(1);
		setenv(NS_HELPER_ENV, fds, 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	return child;
}

Test(perf_map, pid_namespace_and_root)
{
	int ready[2], release[2], status;
	char text[32] = "";
	struct sym_process *p = NULL;
	struct sym_location loc;
	char err[256] = "";
	pid_t child;
	ssize_t n;
	int jit;

	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(release, O_CLOEXEC), 0);
	child = start_namespace_helper(ready[1], release[0]);
	close(ready[1]);
	close(release[0]);
	n = read(ready[0], text, sizeof(text) - 1);
	if (n <= 0) {
		close(release[1]);
		waitpid(child, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			cr_skip_test("no pid namespaces here (needs CAP_SYS_ADMIN)");
		cr_assert_fail("the namespaced JIT did not start (status %#x)",
			       status);
	}
	jit = atoi(text);
	cr_assert_gt(jit, 1);
	cr_assert_eq(sym_process_open(jit, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sym_process_resolve(p, NS_JIT_CODE + 4, &loc), 0);
	cr_expect_str_eq(loc.module, "[perf-map]");
	cr_expect_str_eq(loc.function, "jit in namespace (pid 1)");
	cr_expect_eq(loc.offset, 4);
	sym_process_free(p);
	close(release[1]);
	waitpid(child, &status, 0);
	close(ready[0]);
}

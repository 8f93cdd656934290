// SPDX-License-Identifier: MIT
/*
 * The launching thread's Python stack, read in-process with the sampler's
 * layout module. The interpreter is found by its symbols (_PyRuntime,
 * PyCode_Type, the version), the thread's state by
 * PyGILState_GetThisThreadState, which needs no GIL. The thread reads its
 * own frames, which only it changes, but the module is given a reader that
 * refuses any address outside a readable mapping, so a wrong layout or a
 * stale pointer ends a walk instead of the process. Code objects are
 * cached by address and checked against their header when hit.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/common.h"
#include "cuda/agent/agent.h"

#define MAX_FRAMES 256
#define MAPS_REREAD_NS 100000000ull /* a miss re-reads the maps at most this often */

static int read_maps(struct agent_maps *m)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], perms[8];
	unsigned long lo, hi;

	if (!f)
		return -errno;
	m->count = 0;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r')
			continue;
		/* Device memory (/dev/nvidia*, /dev/dri) is never read directly:
		 * a load there may have effects or fault. */
		if (path && !strncmp(path, "/dev/", 5))
			continue;
		if (ARRAY_RESERVE(m->ranges, m->cap, m->count + 1, 256) < 0)
			break;
		/* Adjacent readable mappings merge: a read may span them. */
		if (m->count && m->ranges[m->count - 1][1] == lo)
			m->ranges[m->count - 1][1] = hi;
		else
			m->ranges[m->count][0] = lo, m->ranges[m->count++][1] = hi;
	}
	fclose(f);
	m->read_ns = monotonic_ns();
	return 0;
}

static bool readable(const struct agent_maps *m, uint64_t addr, size_t len)
{
	uint32_t lo = 0, hi = m->count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->ranges[mid][1] <= addr)
			lo = mid + 1;
		else if (m->ranges[mid][0] > addr)
			hi = mid;
		else
			return addr + len <= m->ranges[mid][1] && addr + len >= addr;
	}
	return false;
}

/* Memory the maps do not vouch for (new since they were read) goes
 * through the kernel, which answers EFAULT where a load would crash. */
static ssize_t read_checked(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : n;
}

static ssize_t read_self(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct agent_maps *m = ctx;

	if (!readable(m, addr, len)) {
		if (monotonic_ns() - m->read_ns < MAPS_REREAD_NS || read_maps(m) < 0 ||
		    !readable(m, addr, len))
			return read_checked(addr, buf, len);
	}
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return (ssize_t)len;
}

static bool version_of(unsigned *major, unsigned *minor)
{
	const uint32_t *hex = dlsym(RTLD_DEFAULT, "Py_Version");
	const char *(*get_version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT,
									 "Py_GetVersion");

	if (hex && *hex >> 24 == 3) {
		*major = *hex >> 24;
		*minor = *hex >> 16 & 0xff;
		return true;
	}
	return get_version && sscanf(get_version(), "%u.%u", major, minor) == 2;
}

void agent_python_init(void)
{
	struct agent_python *py = &agent.py;
	const struct py_layout *l;
	unsigned major, minor;
	void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	char err[160];

	*(void **)&py->this_thread_state = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!runtime || !py->this_thread_state || !version_of(&major, &minor) ||
	    !(l = py_layout_find(major, minor)))
		return;
	if (read_maps(&agent.maps) < 0)
		return;
	py->target = (struct py_target){
		.l = *l,
		.runtime = (uint64_t)(uintptr_t)runtime,
		.code_type = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type"),
		.none = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "_Py_NoneStruct"),
		.mem = { .read = read_self, .ctx = &agent.maps },
	};
	if (l->version >= 0x030d) {
		uint8_t b[PY_DEBUG_OFFSETS_MAX];
		ssize_t n = read_self(&agent.maps, py->target.runtime, b, sizeof(b));

		if (n <= 0 || py_layout_from_debug_offsets(l, b, (size_t)n, &py->target.l, err,
							   sizeof(err)) < 0)
			return;
	}
	if (py_layout_validate(&py->target, err, sizeof(err)) < 0 ||
	    py_code_cache_new(&py->codes) < 0)
		return;
	if (py_walk_scratch_init(&py->scratch) < 0) {
		py_code_cache_free(py->codes);
		py->codes = NULL;
		return;
	}
	py->ready = true;
}

static uint32_t line_of(struct agent_python *py, const struct py_code *c, uint64_t instr)
{
	struct agent_line *e = &py->lines[((c->addr >> 4) ^ (instr * 0x9e3779b1u)) % AGENT_LINE_CACHE];
	uint64_t sig = c->sig[0] ^ c->sig[1] * 3 ^ c->sig[2] * 7;

	/* Keyed by the header too: another code object at a freed one's
	 * address does not inherit its lines. */
	if (e->code != c->addr || e->instr != instr || e->sig != sig || !e->line) {
		e->code = c->addr;
		e->instr = instr;
		e->sig = sig;
		e->line = py_code_line(&py->target, c, instr);
	}
	return e->line;
}

uint32_t agent_python_stack(void)
{
	struct agent_python *py = &agent.py;
	struct py_raw_frame raw[MAX_FRAMES];
	enum py_walk_end end;
	uint32_t node = 0;
	void *tstate;
	int n;

	if (!py->ready)
		return 0;
	tstate = py->this_thread_state();
	if (!tstate)
		return 0;
	n = py_frames_read(&py->target, (uint64_t)(uintptr_t)tstate, &py->scratch, raw, MAX_FRAMES,
			   &end);
	/* Outermost first: the stack is a path from the root. */
	for (int i = n - 1; i >= 0; i--) {
		struct py_code *c;

		if (py_code_get(&py->target, py->codes, raw[i].code, &c) < 0)
			continue;
		/* The cache marks ids not yet set with UINT32_MAX. */
		if (c->id == UINT32_MAX)
			c->id = agent_string(c->name ? c->name : "?");
		if (c->id2 == UINT32_MAX)
			c->id2 = agent_string(c->file ? c->file : "?");
		node = agent_stack_node(node, c->id, c->id2, line_of(py, c, raw[i].instr));
	}
	return node;
}

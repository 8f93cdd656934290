// SPDX-License-Identifier: MIT
/*
 * C++ and Rust symbol names to what a person reads, with libiberty's
 * demanglers: Rust first (legacy Rust names, _ZN...17h<hash>E, are also
 * valid Itanium C++ names and would keep their hash), then C++. This is the
 * order cplus_demangle(DMGL_AUTO) uses; the callback forms are called here
 * so the output is bounded and nothing in libiberty allocates.
 * Parameters are kept ("ns::f(int)"), as perf shows them.
 */
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "symbolize/symbolize.h"

/*
 * libiberty's C++ demangler keeps its parse on the stack, about 72 bytes
 * per character of the mangled name: longer names stay mangled rather than
 * risk a thread's stack.
 */
#define MANGLED_MAX 8192
/* Substitutions can make the output far longer than the input. */
#define DEMANGLED_MAX (64 * 1024)

#define DEMANGLE_OPTIONS (DMGL_PARAMS | DMGL_ANSI)

struct demangled {
	char *buf; /* NUL-terminated while the demangler runs */
	size_t len;
	size_t cap;
	bool failed; /* too long, or out of memory */
};

static void append_piece(const char *s, size_t n, void *opaque)
{
	struct demangled *d = opaque;

	if (d->failed)
		return;
	if (n >= DEMANGLED_MAX - d->len) {
		d->failed = true;
		return;
	}
	if (ARRAY_RESERVE(d->buf, d->cap, d->len + n + 1, 256) < 0) {
		d->failed = true;
		return;
	}
	memcpy(d->buf + d->len, s, n);
	d->len += n;
	d->buf[d->len] = '\0';
}

static bool looks_mangled(const char *name, size_t len)
{
	return len > 2 && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* Runs one demangler; true when it produced a whole name. */
static bool run(struct demangled *d, const char *mangled, bool rust)
{
	int ok;

	d->len = 0;
	d->failed = false;
	if (rust)
		ok = rust_demangle_callback(mangled, DEMANGLE_OPTIONS,
					    append_piece, d);
	else
		ok = cplus_demangle_v3_callback(mangled, DEMANGLE_OPTIONS,
						append_piece, d);
	return ok && !d->failed && d->len > 0;
}

int sym_demangle(const char *name, size_t len, char **out)
{
	char mangled[MANGLED_MAX + 1];
	struct demangled d = { 0 };
	bool ok;

	if (!name || !out)
		return -EINVAL;
	if (!looks_mangled(name, len) || len > MANGLED_MAX ||
	    memchr(name, '\0', len))
		return -ENOENT;
	memcpy(mangled, name, len);
	mangled[len] = '\0';
	ok = run(&d, mangled, true) ||
	     (name[1] == 'Z' && run(&d, mangled, false));
	if (!ok) {
		free(d.buf);
		return -ENOENT;
	}
	*out = d.buf;
	return 0;
}

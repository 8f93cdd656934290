/* SPDX-License-Identifier: MIT */
/*
 * symbolize/ — addresses of a target process to module and function names,
 * and unwinding of a copied stack. Knows nothing of ptrace: it reads
 * /proc/PID/maps and the ELF files a process maps (through /proc/PID/root
 * and /proc/PID/map_files, so containers and deleted files work).
 *
 * Every function returns 0 or a negative errno (or a count, where said).
 */
#ifndef TRAINSAMPLE_SYMBOLIZE_H
#define TRAINSAMPLE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- /proc/PID/maps ---- */

struct sym_mapping {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	bool read, write, exec, shared;
	bool deleted;     /* path ended in " (deleted)"; suffix removed */
	const char *path; /* "" when anonymous; "[stack]", "[vdso]", ... */
};

struct sym_maps;

void sym_maps_free(struct sym_maps *m);
size_t sym_maps_count(const struct sym_maps *m);
const struct sym_mapping *sym_maps_at(const struct sym_maps *m, size_t i);
/* The mapping that contains addr, or NULL. */
const struct sym_mapping *sym_maps_find(const struct sym_maps *m,
					uint64_t addr);

/* ---- one ELF file ---- */

struct sym_module;

void sym_module_free(struct sym_module *m);
/* The function whose [st_value, st_value + st_size) holds vaddr, or NULL;
 * *offset is vaddr - st_value. Names may carry a version ("@@GLIBC_2.2.5"),
 * which is dropped; C++ and Rust names come demangled (sym_demangle). */
const char *sym_module_function(const struct sym_module *m, uint64_t vaddr,
				uint64_t *offset);

/* ---- a process: its maps and the modules they map ---- */

struct sym_location {
	/* basename of the mapped file, "[vdso]", "[anon]", "[unknown]", or
	 * "[perf-map]" for JIT code (anonymous or unmapped) named by the
	 * process's /tmp/perf-PID.map */
	const char *module;
	const char *function; /* NULL when no symbol covers the address */
	uint64_t vaddr;       /* file address (address - bias); the address itself without a module */
	uint64_t offset;      /* from the function's start */
};

struct sym_process;

int sym_process_open(int pid, struct sym_process **out, char *err,
		     size_t errlen);
void sym_process_free(struct sym_process *p);
/* Re-reads /proc/PID/maps now. Modules stay cached by device and inode. */
int sym_process_reload(struct sym_process *p);
/*
 * Catches up with what changed without an unknown address showing it: a
 * library unloaded and another loaded at its place, new perf map entries
 * over reused JIT memory. Re-reads the maps and the perf map, and frees
 * modules nothing maps any more. Call it every few hundred ms, never while
 * an unwind runs.
 */
int sym_process_refresh(struct sym_process *p);
/* After the process exec'd: forgets the old image's perf map entries. */
int sym_process_exec(struct sym_process *p);
/* Changes whenever a (re-)read found the maps different, or the perf map
 * file changed what it names: callers drop their own caches of resolved
 * addresses then. */
uint64_t sym_process_generation(const struct sym_process *p);
/*
 * The mapping holding addr. When addr is outside every known mapping the
 * maps are re-read once (at most every 100 ms, or 1 ms while they keep
 * changing, as after an exec) before giving up with NULL.
 * The pointer is valid until the maps are re-read.
 */
const struct sym_mapping *sym_process_mapping(struct sym_process *p,
					      uint64_t addr);
/* The mapping holding addr as the maps were last read; never re-reads. */
const struct sym_mapping *sym_process_find(struct sym_process *p, uint64_t addr);
/*
 * Strings in *out live until the generation changes or p is freed.
 * An address in anonymous executable memory or in no mapping is looked up
 * in /tmp/perf-NSPID.map under the process's root, re-read (only what was
 * appended) at most every 100 ms while it does not name the address.
 */
int sym_process_resolve(struct sym_process *p, uint64_t addr,
			struct sym_location *out);

/*
 * The source file and line of addr (a return address minus one for
 * callers, as for sym_process_resolve), from the DWARF line table of the
 * module mapped there: its separate debug file's if it has one, else its
 * own. Loaded on the first call for a module, cached by address; *file
 * lives until p is freed. -ENOENT where there is no line information
 * (anonymous memory, [vdso], a module without DWARF).
 */
int sym_process_line(struct sym_process *p, uint64_t addr, const char **file,
		     uint32_t *line);

/* The maps as last read (valid until they are read again). */
const struct sym_maps *sym_process_maps(struct sym_process *p);
/* The runtime address of the symbol `name`, data or function (.dynsym,
 * then .symtab), of the file mapped at m. -ENOENT when it has none. */
int sym_process_symbol(struct sym_process *p, const struct sym_mapping *m,
		       const char *name, uint64_t *addr);

/* ---- names ---- */

/*
 * The readable form of a C++ (_Z...) or Rust (legacy _ZN...17h<hash>E, v0
 * _R...) symbol name of len bytes, with parameters ("ns::f(int)"), in *out
 * to free(). -ENOENT where the name is not mangled or does not demangle.
 */
int sym_demangle(const char *name, size_t len, char **out);

/* ---- unwinding a copy of a stack ---- */

/* x86-64 registers, numbered as DWARF (and libunwind) number them. */
enum sym_reg {
	SYM_REG_RAX, SYM_REG_RDX, SYM_REG_RCX, SYM_REG_RBX,
	SYM_REG_RSI, SYM_REG_RDI, SYM_REG_RBP, SYM_REG_RSP,
	SYM_REG_R8, SYM_REG_R9, SYM_REG_R10, SYM_REG_R11,
	SYM_REG_R12, SYM_REG_R13, SYM_REG_R14, SYM_REG_R15,
	SYM_REG_RIP,
	SYM_REG_COUNT,
};

/* A thread's registers as they were when its stack was copied; a thread
 * read without stopping it has only rip and rsp. */
struct sym_regs {
	uint64_t r[SYM_REG_COUNT];
	uint32_t known; /* bit (1 << enum sym_reg) */
	int64_t syscall; /* the last syscall made (orig_rax) where rax is
			  * known: a clone's child is told by it */
};

struct sym_stack_copy {
	uint64_t base;       /* target address of data[0] (the stack pointer) */
	const uint8_t *data;
	size_t len;
	bool capped;         /* the stack goes on beyond the copied bytes */
};

/* Why an unwind stopped. */
enum sym_unwind_end {
	SYM_UNWIND_COMPLETE,       /* the outermost frame was reached */
	SYM_UNWIND_NO_INFO,        /* a frame had no CFI and no usable frame pointer */
	SYM_UNWIND_NEEDS_REGISTERS,/* a rule needed a register that was not read */
	SYM_UNWIND_COPY_END,       /* the frames go on past the copied bytes */
	SYM_UNWIND_FRAME_LIMIT,    /* max_pcs frames */
};

/*
 * DWARF unwinding of a copied stack (libunwind, remote, with our own
 * accessors: stack words from the copy, .eh_frame from the module files),
 * with libunwind's frame-pointer fallback where a module has no CFI.
 * pcs[] receives the addresses to symbolize, leaf first: the leaf and a
 * frame interrupted by a signal at their exact ip, callers at their return
 * address - 1. Returns their number (at least 1).
 */
int sym_unwind(struct sym_process *p, const struct sym_regs *regs,
	       const struct sym_stack_copy *stack, uint64_t *pcs, int max_pcs,
	       enum sym_unwind_end *end);

#endif

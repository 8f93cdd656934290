// SPDX-License-Identifier: MIT
/*
 * A followed process that execs a set-user-ID, set-group-ID or
 * file-capability program. The kernel withholds that privilege from an
 * exec traced by a tracer without CAP_SYS_PTRACE, and decides so as the
 * exec starts; ptrace reports an exec only once it is done
 * (PTRACE_EVENT_EXEC). Seeing it before it starts would need a seccomp
 * filter trapping execve, and an unprivileged process may install one only
 * under no_new_privs, which itself withholds every set-user-ID privilege
 * from then on; or a stop at every syscall of every process.
 *
 * So at the exec stop, before the new program's first instruction, the
 * process is made to exec the same file again, with the same arguments and
 * environment (they are on its new stack), and let go: that exec is not
 * traced and gets the privilege, as it would have without trainsample.
 * Nothing of the program has run yet; what the first exec did (close
 * close-on-exec files, reset signal handlers, end other threads) the second
 * does the same. The few instructions that make the call are written over
 * the program's entry point, which the second exec discards.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <elf.h>

#include "sampler/internal.h"

/* Effective uid or gid (Uid:/Gid: second field) of pid; -errno. */
static int effective_id(pid_t pid, const char *field, unsigned long *id)
{
	char buf[96];
	unsigned long r;
	int ret = proc_status_field(pid, field, buf, sizeof(buf));

	if (ret < 0)
		return ret;
	return sscanf(buf, "%lu %lu", &r, id) == 2 ? 0 : -EINVAL;
}

/* Whether pid holds no permitted capability (CapPrm: 0). */
static bool no_capabilities(pid_t pid)
{
	char buf[64];

	return proc_status_field(pid, "CapPrm", buf, sizeof(buf)) == 0 && strtoull(buf, NULL, 16) == 0;
}

/* Whether the program pid runs now is set-user-ID, set-group-ID or has
 * file capabilities and the kernel withheld that privilege: 0 (what names
 * which; st is the file), -ENODATA if not, or -errno (-EACCES: the process
 * may not be read). */
static int setid_withheld(pid_t pid, struct stat *st, char *what, size_t len)
{
	char exe[64];
	unsigned long euid, egid;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (stat(exe, st) < 0)
		return -errno;
	if (effective_id(pid, "Uid", &euid) < 0 || effective_id(pid, "Gid", &egid) < 0)
		return -ESRCH;
	if (st->st_mode & S_ISUID && st->st_uid != euid)
		snprintf(what, len, "set-user-ID");
	else if (st->st_mode & S_ISGID && st->st_mode & S_IXGRP && st->st_gid != egid)
		snprintf(what, len, "set-group-ID");
	else if (getxattr(exe, "security.capability", NULL, 0) > 0 && no_capabilities(pid))
		snprintf(what, len, "file-capability");
	else
		return -ENODATA;
	return 0;
}

/* The address of the exec's file name on the new stack (AT_EXECFN). */
static int exec_file_name(pid_t pid, uint64_t *addr)
{
	char path[64];
	Elf64_auxv_t aux[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, aux, sizeof(aux));
	close(fd);
	for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(aux[0]); i++) {
		if (aux[i].a_type == AT_NULL)
			break;
		if (aux[i].a_type == AT_EXECFN) {
			*addr = aux[i].a_un.a_val;
			return 0;
		}
	}
	return -ENOENT;
}

/* Whether name, as the process resolves it (its root and working folder),
 * is still the file it runs: the second exec must run the same program. */
static bool names_same_file(pid_t pid, const char *name, const struct stat *exe)
{
	char path[PATH_MAX + 64];
	struct stat st;

	if (!strncmp(name, "/dev/fd/", 8) || !strncmp(name, "/proc/", 6))
		return false; /* fexecve: the descriptor may be closed by now */
	snprintf(path, sizeof(path), "/proc/%d/%s/%s", (int)pid, name[0] == '/' ? "root" : "cwd", name);
	return stat(path, &st) == 0 && st.st_dev == exe->st_dev && st.st_ino == exe->st_ino;
}

#define CODE_WORDS 3

/* Writes code (up to CODE_WORDS words) at addr, keeping the words it
 * replaces in old; every word is read before any is written. */
static int poke_code(pid_t pid, uint64_t addr, const unsigned char *code, size_t len, long *old)
{
	long word;
	size_t n = (len + 7) / 8;

	for (size_t i = 0; i < n; i++) {
		errno = 0;
		old[i] = ptrace(PTRACE_PEEKTEXT, pid, (void *)(addr + 8 * i), NULL);
		if (errno)
			return -errno;
	}
	for (size_t i = 0; i < n; i++) {
		word = old[i];
		memcpy(&word, code + 8 * i, len - 8 * i < 8 ? len - 8 * i : 8);
		if (ptrace(PTRACE_POKETEXT, pid, (void *)(addr + 8 * i), (void *)word) < 0) {
			int e = -errno;

			while (i--)
				ptrace(PTRACE_POKETEXT, pid, (void *)(addr + 8 * i), (void *)old[i]);
			return e;
		}
	}
	return 0;
}

/* Makes the process, stopped at its exec, exec the same file (exe) again
 * with the same arguments and environment as soon as it runs; the caller
 * then detaches it, so that this exec is not traced. */
static int setid_exec_again(pid_t pid, const struct stat *exe)
{
	/* execve(rdi, rsi, rdx); if it fails, exit_group(127): the program
	 * never ran, as when a shell cannot run a command. */
	static const unsigned char code[] = {
		0xb8, SYS_execve, 0, 0, 0,	/* mov $SYS_execve, %eax */
		0x0f, 0x05,			/* syscall */
		0xbf, 127, 0, 0, 0,		/* mov $127, %edi */
		0xb8, SYS_exit_group & 0xff, SYS_exit_group >> 8, 0, 0, /* mov $SYS_exit_group, %eax */
		0x0f, 0x05,			/* syscall */
	};
	_Static_assert(sizeof(code) <= 8 * CODE_WORDS, "the code fits in CODE_WORDS words");
	struct user_regs_struct regs;
	char name[PATH_MAX];
	uint64_t argc, name_addr = 0;
	long old[CODE_WORDS];
	ssize_t n;
	int ret;

	ret = regs_get(pid, &regs);
	if (ret < 0)
		return ret;
	ret = exec_file_name(pid, &name_addr);
	if (ret < 0)
		return ret;
	n = remote_read(pid, name_addr, name, sizeof(name) - 1);
	if (n <= 0)
		return n < 0 ? (int)n : -EFAULT;
	name[n] = '\0';
	if (strlen(name) == (size_t)n || !names_same_file(pid, name, exe))
		return -ESTALE;
	/* At entry the stack holds argc, argv[argc], NULL, envp[], NULL. */
	if (remote_read(pid, regs.rsp, &argc, sizeof(argc)) != sizeof(argc) || argc > 1u << 24)
		return -EFAULT;
	ret = poke_code(pid, regs.rip, code, sizeof(code), old);
	if (ret < 0)
		return ret;
	regs.rdi = name_addr;
	regs.rsi = regs.rsp + 8;
	regs.rdx = regs.rsp + 8 * (argc + 2);
	ret = regs_set(pid, &regs);
	if (ret < 0) /* it runs its own code after all, without its privilege */
		for (size_t i = 0; i < CODE_WORDS; i++)
			ptrace(PTRACE_POKETEXT, pid, (void *)(regs.rip + 8 * i), (void *)old[i]);
	return ret;
}

bool setid_at_exec(struct sampler *s, bool may_let_go)
{
	char what[32], comm[64];
	struct stat st;
	int ret = setid_withheld(s->pid, &st, what, sizeof(what));

	if (ret == -ENODATA || ret == -ENOENT || ret == -ESRCH)
		return false;
	proc_comm(s->pid, comm, sizeof(comm));
	if (ret == -EACCES || ret == -EPERM) {
		/* Not dumpable: a program we may not read, which is how an
		 * unreadable set-user-ID one runs traced. */
		sampler_notice(s, "PID %d (%s) now runs a program trainsample may not read (if it is set-user-ID "
			       "or set-group-ID, without that privilege: the kernel withholds it from a traced "
			       "exec)%s", (int)s->pid, comm, may_let_go ? ": left alone" : "");
		return may_let_go;
	}
	if (ret < 0)
		return false;
	if (may_let_go && setid_exec_again(s->pid, &st) == 0) {
		sampler_notice(s, "PID %d (%s) runs a %s program: let go before its first instruction and "
			       "exec'd again untraced, so that it keeps its privilege; left alone",
			       (int)s->pid, comm, what);
		return true;
	}
	sampler_notice(s, "PID %d (%s) runs a %s program without its privilege: the kernel withholds it "
		       "from a traced exec (run trainsample as root to keep it)", (int)s->pid, comm, what);
	return false;
}

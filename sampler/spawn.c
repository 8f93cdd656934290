// SPDX-License-Identifier: MIT
/*
 * Starting a command traced from its first instruction, and waiting for it
 * at the end as a shell would.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/signals.h"

/* Between fork and exec: only async-signal-safe calls. */
static void __attribute__((noreturn))
child_exec(char *const argv[], int go_fd, int err_fd, const struct sampler *s)
{
	char c;
	int e;

	if (read(go_fd, &c, 1) != 1)
		_exit(127); /* trainsample died before it could trace us */
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	setrlimit(RLIMIT_NOFILE, &s->old_nofile);
	prctl(PR_SET_TIMERSLACK, s->old_timer_slack, 0, 0, 0);
	if (s->nice_raised)
		setpriority(PRIO_PROCESS, 0, s->old_nice);
	execvp(argv[0], argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Waits for the child's exec and opens its symbols there; an exec failure
 * arrives through err_fd. */
static int await_exec(struct sampler *s, char *const argv[], int err_fd,
		      char *err, size_t errlen)
{
	for (;;) {
		int status, e = 0, ret;
		pid_t r = waitpid(s->pid, &status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			s->exited = true;
			s->exit_reaped = true;
			s->exit_status = status;
			if (read(err_fd, &e, sizeof(e)) == sizeof(e) && e > 0) {
				snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(e));
				return -e;
			}
			snprintf(err, errlen, "'%s' exited before it started", argv[0]);
			return -ECHILD;
		}
		if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC) {
			/* Stopped before its first instruction: a program we
			 * cannot sample has not run yet and is not started. */
			if (proc_is_64bit(s->pid) == 0) {
				snprintf(err, errlen, "'%s' is a 32-bit program; trainsample samples "
					 "64-bit (x86-64) processes only", argv[0]);
				kill(s->pid, SIGKILL);
				ptrace(PTRACE_CONT, s->pid, NULL, NULL);
				waitpid(s->pid, &status, __WALL);
				s->exited = s->exit_reaped = true;
				return -ENOEXEC;
			}
			/* Its symbols are opened while it is held here: a
			 * command quicker than that would be gone, its maps
			 * with it, before they could be read. */
			ret = sampler_open_symbols(s, err, errlen);
			ptrace(PTRACE_CONT, s->pid, NULL, NULL);
			return ret;
		}
		stops_handle(s, r, status);
	}
}

/* A child that has not exec'd yet exits as soon as its go pipe closes. */
static void reap_unstarted(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, __WALL) == pid && !WIFEXITED(status) && !WIFSIGNALED(status))
		ptrace(PTRACE_CONT, pid, NULL, NULL);
}

int sampler_spawn(struct sampler **out, char *const argv[], struct profile *p,
		  const struct sampler_options *o, char *err, size_t errlen)
{
	struct sampler *s;
	int go[2], ep[2], ret;
	pid_t pid;

	ret = sampler_new(&s, p, o, err, errlen);
	if (ret < 0)
		return ret;
	if (pipe2(go, O_CLOEXEC) < 0) {
		ret = -errno;
		goto fail_free;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		ret = -errno;
		close(go[0]);
		close(go[1]);
		goto fail_free;
	}
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(ep[0]);
		child_exec(argv, go[0], ep[1], s);
	}
	close(go[0]);
	close(ep[1]);
	if (pid < 0) {
		ret = -errno;
		close(go[1]);
		close(ep[0]);
		goto fail_free;
	}
	s->pid = s->child = pid;
	s->spawned = true;
	s->st.processes = 1;
	/* Seized before it execs: the command is traced from its first instruction. */
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)seize_options(s)) < 0 ||
	    !thread_add(s, pid) || write(go[1], "g", 1) != 1) {
		ret = errno ? -errno : -ENOMEM;
		close(go[1]);
		close(ep[0]);
		reap_unstarted(pid);
		goto fail_free;
	}
	close(go[1]);
	ret = await_exec(s, argv, ep[0], err, errlen);
	close(ep[0]);
	if (ret < 0) {
		sampler_free(s);
		return ret;
	}
	*out = s;
	return 0;
fail_free:
	snprintf(err, errlen, "cannot start '%s': %s", argv[0], strerror(-ret));
	sampler_free(s);
	return ret;
}

/*
 * A signal sent to trainsample alone with kill() is passed on to the
 * command, as if it had run without us. Not when the terminal sent it (the
 * whole foreground group got it), nor when the command was seen to get it
 * too within the last second (at a signal-delivery stop, or queued when we
 * let it go): a second one can mean "now, forcefully". Once detached we no
 * longer see its signals; then a signal the command catches is not passed
 * on (it may have had it already), and a line says so.
 */
static void forward_signal(struct sampler *s, int sig, bool from_user, bool watching)
{
	uint64_t seen = sig > 0 && sig <= 64 ? s->signals.target_signal_ns[sig] : 0;
	char buf[32];

	if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP)
		return;
	if (!from_user || (seen && monotonic_ns() - seen < 1000000000ull))
		return;
	if (!watching && proc_status_field(s->pid, "SigCgt", buf, sizeof(buf)) == 0 &&
	    (strtoull(buf, NULL, 16) >> (sig - 1)) & 1) {
		sampler_notice(s, "%s not passed on: PID %d handles it and may have got it already; "
			       "send it there if not", strsignal(sig), (int)s->pid);
		return;
	}
	kill(s->pid, sig);
}

/* Threads that could not be let go at the end (say, in vfork) are let go
 * at their next stop; nothing stays frozen while we wait. */
static void handle_late_stop(struct sampler *s, pid_t tid, int status)
{
	s->detaching_all = true;
	stops_handle(s, tid, status);
	s->detaching_all = false;
}

static void wait_signals(struct sampler *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if ((pid_t)si.ssi_pid == s->pid || (pid_t)si.ssi_pid == s->child)
			continue;
		/* Ctrl-Z stopped the command too; the shell waits for us to stop. */
		if (si.ssi_signo == SIGTSTP && !s->nthreads)
			kill(getpid(), SIGSTOP);
		forward_signal(s, (int)si.ssi_signo, si.ssi_code != SI_KERNEL, false);
	}
}

int sampler_wait_command(struct sampler *s, int timeout_ms, int *exit_code)
{
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : monotonic_ns() + timeout_ms * 1000000ull;
	int status = s->exit_status;

	if (!s->spawned)
		return -EINVAL;
	if (s->signals.stop_requested && s->signals.stop_signo)
		forward_signal(s, s->signals.stop_signo, s->signals.stop_from_user, true);
	s->signals.stop_requested = false; /* passed on once, not at every wait */
	while (!s->exit_reaped) {
		struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };
		pid_t r = waitpid(-1, &status, __WALL | WNOHANG);
		uint64_t now = monotonic_ns();
		int wait_ms = -1;

		if (r == s->child && (WIFEXITED(status) || WIFSIGNALED(status))) {
			s->exit_reaped = true;
			break;
		}
		if (r > 0) {
			handle_late_stop(s, r, status);
			threads_sweep(s);
			continue;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (deadline != UINT64_MAX) {
			if (now >= deadline)
				return -ETIMEDOUT;
			wait_ms = (int)((deadline - now) / 1000000) + 1;
		}
		if (poll(&pfd, 1, wait_ms) > 0)
			wait_signals(s);
	}
	s->exit_status = status;
	if (WIFEXITED(status))
		*exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		*exit_code = 128 + WTERMSIG(status);
	else
		*exit_code = 1;
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The sampler's life: start or attach, tick on absolute deadlines until the
 * end, detach, and for a started command wait for it as a shell would.
 *
 * Ticks come from a timerfd armed at absolute CLOCK_MONOTONIC deadlines
 * (the same hrtimer path as clock_nanosleep TIMER_ABSTIME) so the loop can
 * also sleep on the signalfd that reports tracee stops without a race.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/formats.h"
#include "sampler/internal.h"
#include "symbolize/symbolize.h"

#define PERIODIC_NS 100000000ull
#define SEIZE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)

static uint64_t next_random(struct sampler *s)
{
	/* xorshift64*: jitter only, not security. */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

static int sampler_new(struct sampler **out, struct profile *p,
		       const struct sampler_options *o, char *err, size_t errlen)
{
	struct sampler *s;
	sigset_t set;
	int ret;

	if (o->rate_hz <= 0 || o->rate_hz > 20000 || !isfinite(o->rate_hz)) {
		snprintf(err, errlen, "rate must be between 0 and 20000 Hz");
		return -EINVAL;
	}
	if (o->stack_bytes < 512 || o->stack_bytes > (64u << 20)) {
		snprintf(err, errlen, "stack bytes must be between 512 and 64 MiB");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opt = *o;
	s->period_ns = (uint64_t)(1e9 / o->rate_hz);
	s->profile = p;
	s->sigfd = s->timerfd = -1;
	s->rng = monotonic_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	ret = addr_cache_new(&s->addrs);
	if (ret < 0) {
		free(s);
		return ret;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTSTP);
	sigprocmask(SIG_BLOCK, &set, &s->old_mask);
	s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	s->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->sigfd < 0 || s->timerfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "signalfd/timerfd: %s", strerror(errno));
		sampler_free(s);
		return ret;
	}
	/* Default slack (50 us) would smear the deadlines at 1 kHz. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	/* Two descriptors per thread: a process with a thousand threads would
	 * exhaust the usual soft limit of 1024. A started command gets the
	 * original limit back. */
	if (getrlimit(RLIMIT_NOFILE, &s->old_nofile) == 0) {
		struct rlimit raised = { s->old_nofile.rlim_max, s->old_nofile.rlim_max };

		setrlimit(RLIMIT_NOFILE, &raised);
	}
	*out = s;
	return 0;
}

static int open_symbols(struct sampler *s, char *err, size_t errlen)
{
	int ret = sym_process_open(s->pid, &s->sym, err, errlen);

	if (ret < 0)
		detach_threads(s);
	return ret;
}

int sampler_attach(struct sampler **out, pid_t pid, struct profile *p,
		   const struct sampler_options *o, char *err, size_t errlen)
{
	struct sampler *s;
	int ret = sampler_new(&s, p, o, err, errlen);

	if (ret < 0)
		return ret;
	s->pid = pid;
	ret = attach_threads(s, err, errlen);
	if (ret < 0) {
		detach_threads(s);
		sampler_free(s);
		return ret;
	}
	ret = open_symbols(s, err, errlen);
	if (ret < 0) {
		sampler_free(s);
		return ret;
	}
	stops_wait(s, 0); /* first stops of threads seized by TRACECLONE */
	*out = s;
	return 0;
}

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
	execvp(argv[0], argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Waits for the child's exec; an exec failure arrives through err_fd. */
static int await_exec(struct sampler *s, char *const argv[], int err_fd,
		      char *err, size_t errlen)
{
	for (;;) {
		int status, e = 0;
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
			struct thread *t = thread_find(s, s->pid);

			if (t)
				t->name_tick = 0;
			ptrace(PTRACE_CONT, s->pid, NULL, NULL);
			return 0;
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
	s->pid = pid;
	s->spawned = true;
	/* Seized before it execs: the command is traced from its first instruction. */
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)SEIZE_OPTIONS) < 0 ||
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
	if (ret == 0)
		ret = open_symbols(s, err, errlen);
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

static void arm_timer(struct sampler *s, uint64_t deadline)
{
	struct itimerspec its = {
		.it_value = {
			.tv_sec = (time_t)(deadline / 1000000000ull),
			.tv_nsec = (long)(deadline % 1000000000ull),
		},
	};

	timerfd_settime(s->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/*
 * Deadlines advance by the period plus or minus a quarter of it at random,
 * from the previous deadline rather than from now: the mean rate is exact
 * and the phase wanders, so a target that does something at the sampling
 * rate is not always caught at the same point of it.
 */
static uint64_t next_deadline(struct sampler *s, uint64_t deadline, uint64_t now)
{
	uint64_t quarter = s->period_ns / 4;
	uint64_t next = deadline + s->period_ns - quarter + next_random(s) % (2 * quarter + 1);

	if (next <= now) {
		uint64_t late = (now - next) / s->period_ns + 1;

		s->st.missed_ticks += late;
		next += late * s->period_ns;
	}
	return next;
}

/* Ctrl-Z: never leave the target frozen behind a stopped tracer. */
static void stop_self(struct sampler *s)
{
	char err[256];

	s->tstp_requested = false;
	detach_threads(s);
	kill(getpid(), SIGSTOP);
	/* Continued (fg/bg): take the threads again. */
	if (attach_threads(s, err, sizeof(err)) < 0 || !s->nthreads)
		s->exited = true;
	sym_process_reload(s->sym);
	stops_wait(s, 0);
	s->last_tick_ns = 0;
}

static int wait_ms_until(uint64_t now, uint64_t t)
{
	if (!t)
		return -1;
	if (t <= now)
		return 0;
	return (int)((t - now + 999999) / 1000000);
}

int sampler_run(struct sampler *s, enum sampler_end *end, int *signo,
		char *err, size_t errlen)
{
	uint64_t now = monotonic_ns(), deadline, end_at = 0, next_periodic;

	(void)err;
	(void)errlen;
	s->start_ns = now;
	deadline = now + s->period_ns / 2;
	arm_timer(s, deadline);
	next_periodic = now + PERIODIC_NS;
	if (s->opt.duration_s > 0)
		end_at = now + (uint64_t)(s->opt.duration_s * 1e9);
	*signo = 0;
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = s->sigfd, .events = POLLIN },
			{ .fd = s->timerfd, .events = POLLIN },
		};
		int timeout;

		stops_wait(s, 0);
		now = monotonic_ns();
		if (s->exited) {
			*end = SAMPLER_END_EXITED;
			break;
		}
		if (s->stop_requested) {
			*end = SAMPLER_END_SIGNAL;
			*signo = s->stop_signo;
			break;
		}
		if (end_at && now >= end_at) {
			*end = SAMPLER_END_DURATION;
			break;
		}
		if (s->tstp_requested) {
			stop_self(s);
			deadline = monotonic_ns() + s->period_ns;
			arm_timer(s, deadline);
			continue;
		}
		if (now >= next_periodic) {
			if (s->opt.periodic)
				s->opt.periodic(s->opt.periodic_ctx, now);
			next_periodic = now + PERIODIC_NS;
		}
		timeout = wait_ms_until(now, next_periodic);
		if (end_at) {
			int t = wait_ms_until(now, end_at);

			if (t < timeout)
				timeout = t;
		}
		if (poll(pfd, 2, timeout) <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			signals_drain(s);
		if (pfd[1].revents & POLLIN) {
			uint64_t expirations;

			if (read(s->timerfd, &expirations, sizeof(expirations)) != sizeof(expirations))
				continue;
			now = monotonic_ns();
			tick_sample(s, now);
			deadline = next_deadline(s, deadline, monotonic_ns());
			arm_timer(s, deadline);
		}
	}
	s->end_ns = monotonic_ns();
	detach_threads(s);
	return 0;
}

/*
 * SIGTERM or SIGHUP sent to trainsample alone (kill PID) is passed on to the
 * command, as if it had run without us. Not when the terminal sent it (it
 * went to the command too), nor when the command was seen getting the same
 * signal within the last second (sent to the whole group). Ctrl-C (SIGINT)
 * is never passed on: the terminal delivers it to the command itself.
 */
static void forward_signal(struct sampler *s, int sig, bool from_user)
{
	uint64_t seen = sig > 0 && sig <= 64 ? s->target_signal_ns[sig] : 0;

	if (sig != SIGTERM && sig != SIGHUP)
		return;
	if (!from_user || (seen && monotonic_ns() - seen < 1000000000ull))
		return;
	kill(s->pid, sig);
}

int sampler_wait_command(struct sampler *s, int *exit_code)
{
	int status = s->exit_status;

	if (!s->spawned)
		return -EINVAL;
	if (s->stop_requested)
		forward_signal(s, s->stop_signo, s->stop_from_user);
	while (!s->exit_reaped) {
		struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };
		struct signalfd_siginfo si;
		pid_t r = waitpid(s->pid, &status, WNOHANG);

		if (r == s->pid) {
			if (!WIFEXITED(status) && !WIFSIGNALED(status))
				continue;
			s->exit_reaped = true;
			break;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (poll(&pfd, 1, -1) <= 0)
			continue;
		while (read(s->sigfd, &si, sizeof(si)) == sizeof(si))
			if ((pid_t)si.ssi_pid != s->pid)
				forward_signal(s, (int)si.ssi_signo, si.ssi_code != SI_KERNEL);
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

static uint64_t pause_percentile(const struct sampler *s, double q)
{
	uint64_t total = 0, want, seen = 0;

	for (size_t i = 0; i < PAUSE_BUCKETS; i++)
		total += s->pause_hist[i];
	if (!total)
		return 0;
	want = (uint64_t)ceil(q * (double)total);
	for (size_t i = 0; i < PAUSE_BUCKETS; i++) {
		seen += s->pause_hist[i];
		if (seen >= want)
			return (uint64_t)i * 1000 + 500; /* bucket middle */
	}
	return s->st.pause_max_ns;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *st)
{
	struct rusage ru;
	uint32_t live = 0;

	*st = s->st;
	for (size_t i = 0; i < s->nthreads; i++)
		live += !s->threads[i]->gone;
	st->threads_live = live;
	st->elapsed_ns = (s->end_ns ? s->end_ns : monotonic_ns()) - s->start_ns;
	if (!s->start_ns)
		st->elapsed_ns = 0;
	st->pause_p50_ns = pause_percentile(s, 0.50);
	st->pause_p99_ns = pause_percentile(s, 0.99);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		st->cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
			     (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

pid_t sampler_pid(const struct sampler *s)
{
	return s->pid;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	/* Whatever path got here, nothing stays traced. */
	if (s->nthreads)
		detach_threads(s);
	threads_free(s);
	for (size_t i = 0; i < s->cap_copies; i++)
		free(s->copies[i].data);
	free(s->copies);
	free(s->blocked);
	addr_cache_free(s->addrs);
	sym_process_free(s->sym);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->timerfd >= 0)
		close(s->timerfd);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	if (s->old_nofile.rlim_cur)
		setrlimit(RLIMIT_NOFILE, &s->old_nofile);
	free(s);
}

int sampler_resolve_pid(pid_t pid_or_tid, pid_t *tgid, char *err, size_t errlen)
{
	char buf[32];

	if (pid_or_tid <= 0) {
		snprintf(err, errlen, "invalid PID %d", (int)pid_or_tid);
		return -EINVAL;
	}
	if (proc_status_field(pid_or_tid, "Tgid", buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "no process with PID %d", (int)pid_or_tid);
		return -ESRCH;
	}
	*tgid = (pid_t)strtol(buf, NULL, 10);
	if (*tgid == getpid()) {
		snprintf(err, errlen, "PID %d is trainsample itself", (int)pid_or_tid);
		return -EINVAL;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * A sampler's life outside the sampling loop: creating it (signals, timer,
 * limits), attaching to a running process, its figures, and freeing it,
 * which lets go of whatever is still traced.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/procs.h"
#include "sampler/python/pysample.h"
#include "sampler/queue.h"
#include "sampler/service.h"
#include "sampler/stacks.h"
#include "sampler/storm.h"
#include "sampler/tick.h"
#include "sampler/waits.h"
#include "symbolize/symbolize.h"

void sampler_notice(const struct sampler *s, const char *fmt, ...)
{
	va_list ap;

	if (s->opt.quiet)
		return;
	fputs("trainsample: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int sampler_new(struct sampler **out, struct profile *p,
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
	s->waits.walk_due = true;
	s->rng = monotonic_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	ret = stacks_init(s);
	if (!ret)
		ret = queue_init(s);
	if (ret < 0) {
		stacks_free(s);
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
	s->old_timer_slack = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	/*
	 * A thread we stop stays stopped until we resume it, so every moment
	 * we wait for a CPU is added to its pause. Ahead of CPU-bound
	 * neighbours (nice -10 from ours, where we may: root, CAP_SYS_NICE)
	 * a --native pause under load went from a p50 of about 1 ms to 30 us
	 * (bench/contended.sh). We use no more CPU for it, only get it sooner.
	 */
	errno = 0;
	s->old_nice = getpriority(PRIO_PROCESS, 0);
	s->nice_raised = !errno && setpriority(PRIO_PROCESS, 0, s->old_nice - 10 < -20 ? -20 :
					       s->old_nice - 10) == 0;
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

int sampler_open_symbols(struct sampler *s, char *err, size_t errlen)
{
	int ret = sym_process_open(s->pid, &s->sym, err, errlen);

	threads_note_namespace(s);

	if (!ret && s->opt.python) {
		ret = pysample_new(s);
		if (ret < 0)
			snprintf(err, errlen, "out of memory");
	}
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
	if (proc_is_64bit(pid) == 0) {
		snprintf(err, errlen, "PID %d runs a 32-bit program; trainsample samples 64-bit "
			 "(x86-64) processes only", (int)pid);
		sampler_free(s);
		return -ENOEXEC;
	}
	ret = o->memory_only ? unseized_attach(s, err, errlen) : attach_threads(s, err, errlen);
	if (ret < 0) {
		detach_threads(s);
		sampler_free(s);
		return ret;
	}
	s->st.processes = 1;
	ret = sampler_open_symbols(s, err, errlen);
	if (ret < 0) {
		sampler_free(s);
		return ret;
	}
	if (o->subprocesses && !o->memory_only)
		procs_attach_descendants(s);
	stops_wait(s, 0); /* first stops of threads seized by TRACECLONE */
	*out = s;
	return 0;
}

void stats_error(struct sampler *s, enum sampler_error_kind kind)
{
	s->st.errors++;
	s->st.errors_by_kind[kind]++;
}

void stats_pause(struct sampler *s, uint64_t ns)
{
	histogram_add(&s->pause_hist, ns);
	if (ns > s->st.pause_max_ns)
		s->st.pause_max_ns = ns;
	s->st.stops++;
}

void stats_trap_entry(struct sampler *s, const struct user_regs_struct *regs)
{
	if ((long)regs->orig_rax >= 0)
		s->st.stops_at_kernel_exit++;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *st)
{
	uint32_t live = 0;

	*st = s->st;
	for (size_t i = 0; i < s->nthreads; i++)
		live += !s->threads[i]->gone;
	/* Followed processes still running (the progress line): theirs are
	 * added to the root's when they end. */
	for (size_t k = 0; k < s->tree.nprocs; k++) {
		const struct sampler *p = s->tree.procs[k];

		st->samples += p->st.samples;
		st->idle_samples += p->st.idle_samples;
		st->errors += p->st.errors;
		for (size_t i = 0; i < p->nthreads; i++)
			live += !p->threads[i]->gone;
	}
	st->threads_live = live;
	/* From the start of sampling, and never 0 once it began. */
	if (s->storm.active)
		st->storm_ns = s->st.storm_ns > s->start_ns ? s->st.storm_ns - s->start_ns : 1;
	if (s->py && s->py->ever_ready)
		snprintf(st->python, sizeof(st->python), "%s", s->py->what);
	else if (s->tree.followed_python[0])
		snprintf(st->python, sizeof(st->python), "%s", s->tree.followed_python);
	if (s->py && !s->py->ever_ready)
		snprintf(st->python_refused, sizeof(st->python_refused), "%s", s->py->refused);
	st->elapsed_ns = (s->end_ns ? s->end_ns : monotonic_ns()) - s->start_ns;
	if (!s->start_ns)
		st->elapsed_ns = 0;
	st->pause_p50_ns = histogram_percentile(&s->pause_hist, 0.50);
	st->pause_p99_ns = histogram_percentile(&s->pause_hist, 0.99);
	st->unwind_p50_ns = histogram_percentile(&s->unwind_hist, 0.50);
	st->unwind_p99_ns = histogram_percentile(&s->unwind_hist, 0.99);
	st->cpu_ns = own_cpu_ns();
	if (s->settled_at_ns && s->end_ns > s->settled_at_ns && s->end_cpu_ns) {
		st->settled_ns = s->end_ns - s->settled_at_ns;
		st->cpu_settled_ns = s->end_cpu_ns - s->settled_cpu_ns;
	}
}

uint64_t own_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

void sampler_errors_describe(const struct sampler_stats *st, char *buf, size_t len)
{
	static const char *const names[SAMPLER_ERR_KINDS] = {
		[SAMPLER_ERR_UNWIND] = "unwind",   [SAMPLER_ERR_READ] = "read",
		[SAMPLER_ERR_PTRACE] = "ptrace",   [SAMPLER_ERR_NO_STOP] = "no stop",
		[SAMPLER_ERR_PYTHON] = "python",   [SAMPLER_ERR_MERGE] = "native merge",
		[SAMPLER_ERR_MEMORY] = "memory",
	};
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (int k = 0; k < SAMPLER_ERR_KINDS; k++) {
		if (!st->errors_by_kind[k] || n >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s %" PRIu64, n ? ", " : "", names[k],
				      st->errors_by_kind[k]);
	}
}

bool sampler_target_stopped(const struct sampler *s)
{
	size_t live = 0;

	for (size_t i = 0; i < s->nthreads; i++) {
		if (s->threads[i]->gone)
			continue;
		if (!s->threads[i]->listening)
			return false;
		live++;
	}
	return live > 0;
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
	if (s->tree.nprocs)
		procs_let_go(s);
	free(s->tree.procs);
	free(s->service.seen_later);
	if (s->nthreads)
		detach_threads(s);
	threads_free(s);
	storm_free(s);
	queue_free(s);
	free(s->pass.blocked);
	stacks_free(s);
	pysample_free(s->py);
	sym_process_free(s->sym);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->timerfd >= 0)
		close(s->timerfd);
	if (s->tree.root) { /* a followed process's: the rest is the root's */
		free(s);
		return;
	}
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	if (s->old_nofile.rlim_cur)
		setrlimit(RLIMIT_NOFILE, &s->old_nofile);
	prctl(PR_SET_TIMERSLACK, s->old_timer_slack, 0, 0, 0);
	if (s->nice_raised)
		setpriority(PRIO_PROCESS, 0, s->old_nice);
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

// SPDX-License-Identifier: MIT
/*
 * The sampler's decisions that need no target: how far apart a chore
 * goes for its cost (spaced_for_cost), which quiet threads a tick leaves
 * unasked (quiet.c), when clones make a storm (storm.c), which waits are
 * watched to their end (syscall_watch.c). Each on a
 * struct sampler made here, with nothing seized.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/internal.h"
#include "sampler/quiet.h"
#include "sampler/storm.h"
#include "sampler/syscall_watch.h"

#define MS 1000000ull

Test(spaced_for_cost, a_quarter_percent_within_its_bounds)
{
	/* 400 times the cost: a quarter percent of a core. */
	cr_expect_eq(spaced_for_cost(100000, 10 * MS, 1000 * MS), 40 * MS);
	/* Cheap or free: never closer than the least. */
	cr_expect_eq(spaced_for_cost(0, 10 * MS, 1000 * MS), 10 * MS);
	cr_expect_eq(spaced_for_cost(1000, 10 * MS, 1000 * MS), 10 * MS);
	/* Dear: never further than the most. */
	cr_expect_eq(spaced_for_cost(10 * MS, 10 * MS, 1000 * MS), 1000 * MS);
}

static struct sampler *sampler_here(void)
{
	struct sampler *s = calloc(1, sizeof(*s));

	cr_assert(s);
	s->pid = getpid();
	s->period_ns = 10 * MS; /* 100 Hz */
	return s;
}

/* A thread seen blocked since 1 s before the sampler's now (ticks start
 * at 10 s). */
static struct thread quiet_thread(pid_t tid)
{
	return (struct thread){ .tid = tid, .seen_blocked = true, .quiet_since_ns = 9000 * MS };
}

/* Of 100 ticks, how many ask t. */
static int asked_of_100(struct sampler *s, const struct thread *t)
{
	int asked = 0;

	for (uint64_t k = 0; k < 100; k++) {
		s->tick = 1000 + k;
		s->tick_now = 10000 * MS + k * s->period_ns;
		asked += !quiet_unasked(s, t);
	}
	return asked;
}

Test(quiet, a_long_quiet_thread_is_asked_at_its_turn)
{
	struct sampler *s = sampler_here();
	struct thread t = quiet_thread(4242), fresh = t;

	/* With the process's CPU clock: its turn comes each second, one
	 * tick in 100 at 100 Hz. */
	s->quiet.cpu_clock_ok = true;
	cr_expect_eq(asked_of_100(s, &t), 1);
	/* Not quiet (it ran since it was seen blocked): asked every tick. */
	fresh.quiet_since_ns = 0;
	cr_expect_eq(asked_of_100(s, &fresh), 100);
	/* The clock said one of them may have run: every one is asked. */
	s->quiet.ask_all = true;
	cr_expect_eq(asked_of_100(s, &t), 100);
	/* Without the clock: every 100 ms, 10 ticks in 100. */
	s->quiet.ask_all = false;
	s->quiet.cpu_clock_ok = false;
	cr_expect_eq(asked_of_100(s, &t), 10);
	free(s);
}

/* Turns are spread by tid: two quiet threads are not asked at one tick. */
Test(quiet, turns_are_spread_by_tid)
{
	struct sampler *s = sampler_here();
	struct thread a = quiet_thread(100), b = quiet_thread(101);

	s->quiet.cpu_clock_ok = true;
	for (uint64_t k = 0; k < 100; k++) {
		s->tick = 1000 + k;
		s->tick_now = 10000 * MS + k * s->period_ns;
		cr_expect(quiet_unasked(s, &a) || quiet_unasked(s, &b), "both asked at tick %lu",
			  (unsigned long)s->tick);
	}
	free(s);
}

/* 200 clones within 100 ms make a storm (the clone events of a thread
 * not traced by us are turned off in vain: ESRCH, not counted). */
Test(storm, two_hundred_quick_clones_make_a_storm)
{
	struct sampler *s = sampler_here();
	struct thread t = { .tid = getpid() };

	for (int i = 0; i < 199; i++)
		storm_note_clone(s, &t);
	cr_expect(!s->storm.active, "a storm after 199 clones");
	storm_note_clone(s, &t);
	cr_expect(s->storm.active, "no storm after 200 clones");
	cr_expect_neq(s->st.storm_ns, 0);
	cr_expect_eq(s->st.errors, 0);
	free(s);
}

/* Clones spread out (the window starts again) make none. */
Test(storm, clones_spread_out_make_none)
{
	struct sampler *s = sampler_here();
	struct thread t = { .tid = getpid() };

	for (int i = 0; i < 150; i++)
		storm_note_clone(s, &t);
	s->storm.window_ns -= 200 * MS; /* as if the window began 200 ms ago */
	for (int i = 0; i < 150; i++)
		storm_note_clone(s, &t);
	cr_expect(!s->storm.active, "a storm of 150 + 150 clones 200 ms apart");
	cr_expect_eq(s->storm.clones, 150);
	free(s);
}

static struct user_regs_struct call(long nr, unsigned long long a3, unsigned long long a4,
				    unsigned long long a5)
{
	struct user_regs_struct r = { .orig_rax = (unsigned long long)nr, .rdx = a3, .r10 = a4, .r8 = a5 };

	return r;
}

/* Only a wait that EINTR ends (not one the kernel restarts) and that has
 * no timeout: made again from the start, it waits no longer than it
 * would have. */
Test(syscall_watch, untimed_waits_that_fail_with_eintr)
{
	struct user_regs_struct r;

	r = call(SYS_rt_sigtimedwait, 0, 8, 0); /* sigwaitinfo */
	cr_expect(syscall_watch_wanted(&r));
	r = call(SYS_rt_sigtimedwait, 0x7ffd0000, 8, 0); /* sigtimedwait */
	cr_expect_not(syscall_watch_wanted(&r));
	r = call(SYS_epoll_wait, 1, (unsigned long long)-1, 0);
	cr_expect(syscall_watch_wanted(&r));
	r = call(SYS_epoll_wait, 1, 200, 0);
	cr_expect_not(syscall_watch_wanted(&r));
	r = call(SYS_semop, 1, 0, 0);
	cr_expect(syscall_watch_wanted(&r));
	r = call(SYS_io_getevents, 1, 0x7ffd0000, 0);
	cr_expect(syscall_watch_wanted(&r));
	r = call(SYS_io_getevents, 1, 0, 0x7ffd0000);
	cr_expect_not(syscall_watch_wanted(&r));
	/* Restarted by the kernel itself, or not a wait. */
	r = call(SYS_futex, 0, 0, 0);
	cr_expect_not(syscall_watch_wanted(&r));
	r = call(SYS_read, 0, 0, 0);
	cr_expect_not(syscall_watch_wanted(&r));
	r = call(-1, 0, 0, 0); /* not in a syscall */
	cr_expect_not(syscall_watch_wanted(&r));
}

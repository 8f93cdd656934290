// SPDX-License-Identifier: MIT
/*
 * Counts the signals it is sent, for the profiler killed with SIGKILL
 * while attached (test_sigkill.sh): for SECONDS, a thread sends SIGUSR1,
 * then SIGUSR2, to the process, one at a time (the next once the last
 * arrived, so two never merge), and a POSIX timer expires every
 * millisecond (each signal counts 1 + its overrun), while three threads
 * compute and sleep by turns. Prints
 * "usr1 SENT GOT usr2 SENT GOT timer EXPECTED GOT" and exits 0 when every
 * signal arrived; then "gap_ms N", the longest between two of the timer's
 * signals (its next is not sent until the last was delivered: a thread
 * left in a stop with it shows here).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TIMER_NS 1000000L

static atomic_long usr1, usr2, expirations, last_timer_ns, max_gap_ns;
static atomic_int stop;

static void on_usr(int sig)
{
	atomic_fetch_add(sig == SIGUSR1 ? &usr1 : &usr2, 1);
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	long now = now_ns(), last = atomic_exchange(&last_timer_ns, now);

	(void)sig;
	(void)uc;
	atomic_fetch_add(&expirations, 1 + si->si_overrun);
	if (last && now - last > atomic_load(&max_gap_ns))
		atomic_store(&max_gap_ns, now - last);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	volatile unsigned long x = (unsigned long)arg;

	while (!atomic_load(&stop)) {
		for (int i = 0; i < 200000; i++)
			x = x * 6364136223846793005ul + 1;
		usleep(500);
	}
	return NULL;
}

/* One signal, then until it arrived (at most a second): 1 if it did. */
static int send_one(int sig, atomic_long *count)
{
	long before = atomic_load(count);
	double until = now_s() + 1.0;

	kill(getpid(), sig);
	while (atomic_load(count) == before && now_s() < until)
		usleep(100);
	return atomic_load(count) != before;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5, start, end;
	struct sigaction sa = { .sa_handler = on_usr, .sa_flags = SA_RESTART };
	struct sigaction ta = { .sa_sigaction = on_timer, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	struct itimerspec its = { { 0, TIMER_NS }, { 0, TIMER_NS } };
	long sent1 = 0, sent2 = 0, expected;
	pthread_t workers[3];
	timer_t timer;

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGRTMIN, &ta, NULL);
	for (int i = 0; i < 3; i++)
		pthread_create(&workers[i], NULL, worker, (void *)(long)i);
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) < 0)
		return 2;
	start = now_s();
	timer_settime(timer, 0, &its, NULL);
	end = start + seconds;
	while (now_s() < end) {
		sent1 += 1;
		send_one(SIGUSR1, &usr1);
		sent2 += 1;
		send_one(SIGUSR2, &usr2);
		usleep(200);
	}
	its = (struct itimerspec){ { 0, 0 }, { 0, 0 } };
	timer_settime(timer, 0, &its, NULL);
	end = now_s();
	usleep(50000); /* the last expiration's signal */
	expected = (long)((end - start) * 1e9 / TIMER_NS);
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(workers[i], NULL);
	printf("usr1 %ld %ld usr2 %ld %ld timer %ld %ld gap_ms %ld\n", sent1, atomic_load(&usr1), sent2,
	       atomic_load(&usr2), expected, atomic_load(&expirations), atomic_load(&max_gap_ns) / 1000000);
	return sent1 == atomic_load(&usr1) && sent2 == atomic_load(&usr2) &&
	       atomic_load(&expirations) >= expected - 1 ? 0 : 1;
}

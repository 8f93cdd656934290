// SPDX-License-Identifier: MIT
/*
 * The bundled example for `make demo`: a toy training loop in plain C with
 * the shape of a real one. Each step loads and parses a batch (text to
 * floats, the "data loader"), runs a forward and a backward matrix multiply,
 * updates the weights, and waits for a simulated device sync. A data-loader
 * thread prefetches batches in the background.
 *
 *   train_loop [SECONDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 96
#define BATCH_FLOATS (N * N)

static float weights[N][N], grads[N][N], acts[N][N], input[N][N];
static atomic_int stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Formats a batch as text and parses it back, like a CSV-reading loader. */
__attribute__((noinline)) static void load_batch(unsigned *seed)
{
	char text[32];

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			snprintf(text, sizeof(text), "%.6f", (double)rand_r(seed) / RAND_MAX);
			input[i][j] = strtof(text, NULL);
		}
}

__attribute__((noinline)) static void matmul(float out[N][N], float a[N][N], float b[N][N])
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			float s = 0;

			for (int k = 0; k < N; k++)
				s += a[i][k] * b[k][j];
			out[i][j] = s;
		}
}

/* The empty asm keeps the calls out of tail position, so the steps show
 * as frames of their own (a tail call replaces its caller's frame). */
__attribute__((noinline)) static void forward(void)
{
	matmul(acts, input, weights);
	__asm__ volatile("");
}

__attribute__((noinline)) static void backward(void)
{
	matmul(grads, acts, input);
	matmul(grads, grads, weights);
	__asm__ volatile("");
}

__attribute__((noinline)) static void optimizer_step(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			weights[i][j] -= 1e-6f * grads[i][j];
}

/* Stands in for waiting on the GPU (a .item() or a synchronize). */
__attribute__((noinline)) static void device_sync(void)
{
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
}

static void *prefetcher(void *arg)
{
	unsigned seed = 7;
	float scratch = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		char text[32];

		for (int i = 0; i < 2000; i++) {
			snprintf(text, sizeof(text), "%d", rand_r(&seed));
			scratch += strtof(text, NULL);
		}
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	return scratch > 0 ? NULL : NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0, end = now() + seconds;
	unsigned seed = 1;
	pthread_t loader;
	int steps = 0;

	pthread_create(&loader, NULL, prefetcher, NULL);
	pthread_setname_np(loader, "prefetcher");
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			weights[i][j] = (float)((i * 31 + j) % 17) / 17.0f;
	while (now() < end) {
		load_batch(&seed);
		forward();
		backward();
		optimizer_step();
		device_sync();
		steps++;
	}
	atomic_store(&stop, 1);
	pthread_join(loader, NULL);
	printf("train_loop: %d steps\n", steps);
	return 0;
}

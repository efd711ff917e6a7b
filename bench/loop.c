/* loop: a fixed amount of CPU work for the recorder benchmarks.
 *
 *   loop [ITERATIONS [RESULT_FILE]]     default 40000000 (~2 s here)
 *
 * Calls a small function chain ITERATIONS times (so -g has a few frames to
 * walk), then writes "WALL_S CPU_S" to RESULT_FILE (stdout when absent):
 * the wall time of the work loop alone and this process's own user+sys CPU
 * time, so the caller can subtract it from a recorder's total. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t x)
{
	for (int i = 0; i < 16; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x ^ (x >> 29);
}

__attribute__((noinline)) static uint64_t middle(uint64_t x)
{
	return leaf(x) + leaf(x + 1);
}

__attribute__((noinline)) static uint64_t outer(uint64_t x)
{
	return middle(x) ^ middle(x >> 1);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 40000000;
	FILE *out = stdout;
	struct rusage ru;
	uint64_t x = 1;
	double t0, t1;

	t0 = now();
	for (long i = 0; i < iters; i++)
		x = outer(x + (uint64_t)i);
	t1 = now();
	sink = x;
	getrusage(RUSAGE_SELF, &ru);
	if (argc > 2 && !(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fprintf(out, "%.6f %.6f\n", t1 - t0,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return fclose(out) ? 1 : 0;
}

/* report-load: the workload bench-report.sh records to get a large
 * recording for `perfmark report` against `perf report`: two threads,
 * each a loop of "work"/"step" ranges (perfmark_range_begin/end) that
 * recurse 8..68 calls deep through three alternating functions along one
 * of 16 paths and spin at the bottom in one of four leaves: 16 distinct
 * deep stacks, as a real program's hot paths are few.
 *
 *   report-load SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "perfmark.h"

static volatile uint64_t sink;
static double secs = 5;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define LEAF(n) __attribute__((noinline)) void leaf_##n(void) { \
	uint64_t x = sink; \
	for (int i = 0; i < 20000 * (n + 1); i++) \
		x = x * 6364136223846793005ull + n; \
	sink = x; }
LEAF(0) LEAF(1) LEAF(2) LEAF(3)
static void (*const leaves[4])(void) = { leaf_0, leaf_1, leaf_2, leaf_3 };

void walk_a(int depth, unsigned seed);
void walk_b(int depth, unsigned seed);
void walk_c(int depth, unsigned seed);

#define WALK(me, next1, next2) __attribute__((noinline)) void me(int depth, unsigned seed) { \
	if (!depth) { leaves[seed % 4](); return; } \
	if (seed & 1) next1(depth - 1, seed >> 1 | seed << 31); \
	else next2(depth - 1, seed >> 1 | seed << 31); \
	sink++; }
WALK(walk_a, walk_b, walk_c)
WALK(walk_b, walk_c, walk_a)
WALK(walk_c, walk_a, walk_b)

static const unsigned paths[16] = {
	0x9e3779b9, 0x7f4a7c15, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f, 0x165667b1, 0xd3a2646c,
	0xfd7046c5, 0xb55a4f09, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
	0x5be0cd19, 0x6a09e667,
};

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	double end = now() + secs;

	while (now() < end) {
		seed = seed * 1103515245u + 12345u;
		perfmark_range_begin(seed & 0x100 ? "work" : "step");
		walk_a(8 + 4 * (int)(seed >> 12 & 15), paths[seed >> 12 & 15]);
		perfmark_range_end(seed & 0x100 ? "work" : "step");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		secs = atof(argv[1]);
	pthread_create(&t, NULL, worker, (void *)1);
	worker((void *)7);
	pthread_join(t, NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * prog-stacks SECONDS: burns SECONDS of CPU time through 2^14 call stacks, one
 * after another, for SECONDS: each leaf is reached through a chain of 14
 * calls, each call to stack_a or stack_b by one bit of a counter.  A
 * workload that floods anything keyed by stack (t-aggregate.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 14

static volatile uint64_t sink;

static void step(unsigned depth, unsigned bits);

__attribute__((noinline)) static void stack_a(unsigned depth, unsigned bits)
{
	step(depth, bits);
	sink++;
}

__attribute__((noinline)) static void stack_b(unsigned depth, unsigned bits)
{
	step(depth, bits);
	sink += 2;
}

__attribute__((noinline)) static void step(unsigned depth, unsigned bits)
{
	if (depth == DEPTH) {
		for (int i = 0; i < 20000; i++)
			sink += (uint64_t)i * bits;
		return;
	}
	if (bits >> depth & 1)
		stack_b(depth + 1, bits);
	else
		stack_a(depth + 1, bits);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct timespec t0, t;
	unsigned c = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 64; i++)
			step(0, c++ & ((1u << DEPTH) - 1));
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}

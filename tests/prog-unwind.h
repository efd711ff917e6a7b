/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the unwinding workloads share (prog-unwind*.c): time in the thread's
 * own CPU time, and busy work inlined into the function that names the frame
 * a sample must land in.
 */
#ifndef PERFMARK_PROG_UNWIND_H
#define PERFMARK_PROG_UNWIND_H

#include <stdint.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

/* seconds of this thread's CPU time */
static inline double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* n steps of a generator nobody can fold away, in the caller's frame */
static inline __attribute__((always_inline)) void busy(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	sink = x;
}

#endif

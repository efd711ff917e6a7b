/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clocks, in nanoseconds.  CLOCK_MONOTONIC is the records' clock (that
 * of bpf_ktime_get_ns(), and of every perf attr: use_clockid); CLOCK_REALTIME
 * only pairs with it for perf's CLOCK_DATA.
 */
#ifndef PERFMARK_CLOCK_H
#define PERFMARK_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif

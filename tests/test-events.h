/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cpu-clock event the tests' hand-made perf.data files describe. */
#ifndef PERFMARK_TEST_EVENTS_H
#define PERFMARK_TEST_EVENTS_H

#include "perfdata.h"

/* IDENTIFIER | IP | TID | TIME | CPU | PERIOD, sample_id_all, CLOCK_MONOTONIC */
#define TEST_ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static inline void test_cpu_clock(struct perfdata_event *ev, const uint64_t *id)
{
	perfdata_event_init(ev, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, TEST_ST, "cpu-clock",
			    id, 1);
	ev->attr.sample_period = 1;
}

#endif

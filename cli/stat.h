/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark stat: the command (stat.c) and how it prints counts as perf
 * stat does (stat_print.c): the text layout, -x SEP's fields
 * value,unit,event,run-time,percent,metric-value,metric-unit, and --json's
 * one object per event.
 */
#ifndef PERFMARK_CLI_STAT_H
#define PERFMARK_CLI_STAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "counting.h"

struct stat_out {
	FILE *f;
	const char *sep;        /* -x: CSV with this separator; NULL: text */
	bool json;
	unsigned intervals;     /* -I lines printed so far (the text header repeats) */
};

/*
 * One round of counts: n events, their readings (an interval's share or
 * the totals), what they were counted over (ns: the CPUs-utilized and
 * per-second metrics).  interval_ns >= 0 prefixes each line with the time
 * since the start, as perf's -I does.
 */
struct stat_events {
	const struct evspec *ev;
	const bool *supported;
	size_t n;
};
void stat_print_counts(struct stat_out *o, const struct stat_events *e, const struct counting_value *v,
		       uint64_t elapsed_ns, int64_t interval_ns);
/* the text block around the totals: " Performance counter stats for 'ls':" ... */
void stat_print_head(struct stat_out *o, const char *target);
/* "... seconds time elapsed", and user/sys when a command ran (user_ns < 0: none) */
void stat_print_tail(struct stat_out *o, uint64_t elapsed_ns, int64_t user_ns, int64_t sys_ns);

/* what a metric is for event i given the others (exposed for the unit test) */
struct stat_metric {
	bool have;
	double value;
	const char *unit;       /* "CPUs utilized", "K/sec", "insn per cycle", ... */
	bool percent;           /* printed as "%7.2f%%" */
	char unit_buf[16];
};
void stat_metric(const struct stat_events *e, const struct counting_result *r, size_t i,
		 uint64_t elapsed_ns, struct stat_metric *m);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording options `perfmark record` and `perfmark session create`
 * share (-e --filter -F -c -g --call-graph -a -p -z --no-markers --ringbuf): one
 * option table (opts.h) for both, filling a struct recspec.
 */
#ifndef PERFMARK_CLI_RECOPTS_H
#define PERFMARK_CLI_RECOPTS_H

#include <stdbool.h>

#include "opts.h"
#include "recspec.h"

struct recopts {
	struct recspec spec;
	bool have_freq, have_period, have_a;
	bool have_markers;             /* --markers or --no-markers given */
	size_t last_first, last_n;     /* the events of the last -e (what --filter applies to) */
};

/* the shared rows; their context is a struct recopts */
extern const struct opt recopts_table[];

void recopts_init(struct recopts *o);
/*
 * Conflicts among the shared options, then recspec_validate and the
 * tracepoints' formats and filters; 0 or 1 (error printed).  Settles what
 * depends on several options: a recording of tracepoints only collects no
 * markers unless --markers says so (a session keeping rare hits in a ring
 * must not see it filled with every process's markers).
 */
int recopts_check(struct recopts *o);

#endif

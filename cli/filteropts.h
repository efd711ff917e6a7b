/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf's filters as options, one table for the four commands that read a
 * recording (report, flamegraph, export, script): --comm, --pid, --tid,
 * --dso, --sym, --cpu, --time, with perf's own spellings (--comms, --dsos,
 * --symbols, -c, -d, -S, -C) kept working.  They build one filter
 * (lib/analyze/filter.h) the reading applies (replay.h), so the commands
 * cannot filter differently.
 */
#ifndef PERFMARK_CLI_FILTEROPTS_H
#define PERFMARK_CLI_FILTEROPTS_H

#include "opts.h"

struct filter;

/* The context of pm_filter_table: NULL until a filter option is given. */
struct pm_filters {
	struct filter *f;
};

extern const struct opt pm_filter_table[];

void pm_filters__free(struct pm_filters *pf);

#endif

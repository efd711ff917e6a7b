// SPDX-License-Identifier: LGPL-2.1-or-later
/* perf's filter options, shared by the commands that read a recording: filteropts.h */
#include "filteropts.h"
#include "commands.h"
#include "filter.h"

#include <errno.h>
#include <string.h>

/* o->off holds the filter's key */
static int set_filter(void *ctx, const struct opt *o, const char *arg)
{
	struct pm_filters *pf = ctx;
	char why[256];

	if (!pf->f && filter__new(&pf->f) < 0)
		return pm_err("out of memory");
	if (filter__add(pf->f, (enum filter_key)o->off, arg, why, sizeof(why)) < 0)
		return pm_err("%s", why);
	return 0;
}

#define ROW(flag_, name_, arg_, key_, help_) \
	{ .flag = flag_, .name = name_, .arg = arg_, .help = help_, .set = set_filter, .off = key_ }
#define PERF_SPELLING(name_, arg_, key_) \
	{ .name = name_, .arg = arg_, .set = set_filter, .off = key_, .hidden = true }

const struct opt pm_filter_table[] = {
	ROW('c', "comm", "COMM[,COMM...]", FILTER_COMM,
	    "only the samples of these commands; the others still count in the total "
	    "percentages are of, as in perf report"),
	PERF_SPELLING("comms", "COMM[,COMM...]", FILTER_COMM),
	ROW(0, "pid", "PID[,PID...]", FILTER_PID, "only the samples of these processes (as --comm)"),
	ROW(0, "tid", "TID[,TID...]", FILTER_TID, "only the samples of these threads (as --comm)"),
	ROW('d', "dso", "DSO[,DSO...]", FILTER_DSO,
	    "only the samples whose leaf frame is in these files, by base name "
	    "(libc.so.6) or path (as --comm)"),
	PERF_SPELLING("dsos", "DSO[,DSO...]", FILTER_DSO),
	ROW('S', "sym", "SYM[,SYM...]", FILTER_SYM,
	    "only the samples whose leaf frame is named so, as printed: main, "
	    "clock_gettime@plt, libx.so+0x1a2b (as --comm)"),
	PERF_SPELLING("symbols", "SYM[,SYM...]", FILTER_SYM),
	ROW('C', "cpu", "CPUS", FILTER_CPU,
	    "only the samples taken on these CPUs (0-2,5); the others are left out of the total"),
	ROW(0, "time", "START,END", FILTER_TIME,
	    "only the samples of this time: seconds as perf script prints them, either end "
	    "may be left out; or percent of the recording, 10%/2 (its second tenth) or "
	    "10%-20%; the others are left out of the total"),
	{ 0 },
};

void pm_filters__free(struct pm_filters *pf)
{
	filter__free(pf->f);
	pf->f = NULL;
}

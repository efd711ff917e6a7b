// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "evspec.h"
#include "recopts.h"
#include "tpconfig.h"

#define STR_(x) #x
#define STR(x) STR_(x)

void recopts_init(struct recopts *o)
{
	*o = (struct recopts){ 0 };
	recspec_init(&o->spec);
}

/* -e adds to the events of earlier -e, as perf's does */
static int set_event(void *ctx, const struct opt *opt, const char *arg)
{
	struct recopts *o = ctx;
	struct recspec *r = &o->spec;
	struct evspec *ev = calloc(EVSPEC_MAX, sizeof(*ev));
	char err[256] = "";
	int n, e = 0;

	if (!ev)
		return pm_err("out of memory");
	/* the whole list first: a glob that names too many is refused as such */
	n = evspec_parse(arg, EVSPEC_SAMPLING, ev, EVSPEC_MAX, err, sizeof(err));
	if (n < 0)
		e = pm_err("%s", err);
	else if ((size_t)n > RECSPEC_MAX_EVENTS - r->nr_events)
		e = pm_err("too many events (at most %d)", RECSPEC_MAX_EVENTS);
	if (!e) {
		memcpy(r->events + r->nr_events, ev, (size_t)n * sizeof(*ev));
		o->last_first = r->nr_events;
		o->last_n = (size_t)n;
		r->nr_events += (size_t)n;
	}
	free(ev);
	return e;
}

/* --filter EXPR: the tracepoints of the -e just before it */
static int set_filter(void *ctx, const struct opt *opt, const char *arg)
{
	struct recopts *o = ctx;
	char err[256] = "";

	if (recspec_set_filter(&o->spec, o->last_first, o->last_n, arg, err, sizeof(err)))
		return pm_err("%s", err);
	return 0;
}

static int set_freq(void *ctx, const struct opt *opt, const char *arg)
{
	struct recopts *o = ctx;
	char err[256] = "";

	if (evspec_parse_freq(arg, &o->spec.freq, err, sizeof(err)))
		return pm_err("%s", err);
	o->have_freq = true;
	return 0;
}

static int set_period(void *ctx, const struct opt *opt, const char *arg)
{
	struct recopts *o = ctx;
	char err[256] = "";

	if (evspec_parse_period(arg, &o->spec.period, err, sizeof(err)))
		return pm_err("%s", err);
	o->have_period = true;
	return 0;
}

static int set_g(void *ctx, const struct opt *opt, const char *arg)
{
	((struct recopts *)ctx)->spec.call_graph = RECSPEC_CG_FP;
	return 0;
}

static int set_call_graph(void *ctx, const struct opt *opt, const char *arg)
{
	char err[256] = "";

	if (recspec_parse_call_graph(arg, &((struct recopts *)ctx)->spec, err, sizeof(err)))
		return pm_err("%s", err);
	return 0;
}

static int set_max_stack(void *ctx, const struct opt *opt, const char *arg)
{
	char err[256] = "";

	if (recspec_parse_max_stack(arg, &((struct recopts *)ctx)->spec, err, sizeof(err)))
		return pm_err("%s", err);
	return 0;
}

static int set_all(void *ctx, const struct opt *opt, const char *arg)
{
	((struct recopts *)ctx)->have_a = true;
	return 0;
}

static int set_pids(void *ctx, const struct opt *opt, const char *arg)
{
	struct recspec *r = &((struct recopts *)ctx)->spec;
	char err[256] = "";
	int n = evspec_parse_pids(arg, r->pids, RECSPEC_MAX_PIDS, err, sizeof(err));

	if (n < 0)
		return pm_err("%s", err);
	r->nr_pids = n;
	r->target = RECSPEC_TARGET_PIDS;
	return 0;
}

static int set_zstd(void *ctx, const struct opt *opt, const char *arg)
{
	struct recspec *r = &((struct recopts *)ctx)->spec;
	char *end;
	long l;

	r->zstd_level = 1;
	if (!arg)
		return 0;
	l = strtol(arg, &end, 10);
	if (!*arg || *end || l < 1 || l > RECSPEC_ZSTD_MAX)
		return pm_err("bad compression level '%s' (1-22)", arg);
	r->zstd_level = (int)l;
	return 0;
}

static int set_no_markers(void *ctx, const struct opt *opt, const char *arg)
{
	((struct recopts *)ctx)->spec.markers = false;
	((struct recopts *)ctx)->have_markers = true;
	return 0;
}

static int set_markers(void *ctx, const struct opt *opt, const char *arg)
{
	((struct recopts *)ctx)->spec.markers = true;
	((struct recopts *)ctx)->have_markers = true;
	return 0;
}

static int set_ringbuf(void *ctx, const struct opt *opt, const char *arg)
{
	char err[256] = "";
	uint64_t sz;

	if (evspec_parse_size(arg, &sz, err, sizeof(err)))
		return pm_err("%s", err);
	((struct recopts *)ctx)->spec.ringbuf_size = sz;
	return 0;   /* its range: recspec_validate */
}

static int set_off_cpu(void *ctx, const struct opt *opt, const char *arg)
{
	struct recspec *r = &((struct recopts *)ctx)->spec;
	char err[256] = "";

	r->off_cpu = true;
	if (arg && recspec_parse_off_cpu(arg, r, err, sizeof(err)))
		return pm_err("%s", err);
	return 0;
}

static int set_aggregate(void *ctx, const struct opt *opt, const char *arg)
{
	char *end;
	long l;

	errno = 0;
	l = strtol(arg, &end, 10);
	if (!*arg || *end || errno || l < 1 || l > RECSPEC_AGGREGATE_MAX)
		return pm_err("bad aggregation interval '%s' (1-%d seconds)", arg,
			      RECSPEC_AGGREGATE_MAX);
	((struct recopts *)ctx)->spec.aggregate = (uint32_t)l;
	return 0;
}

const struct opt recopts_table[] = {
	{ .flag = 'e', .name = "event", .arg = "EVENT[,EVENT...]",
	  .help = "sampling events: cycles (cpu-cycles), instructions, cache-misses, branch-misses, "
	    "cpu-clock, task-clock, page-faults (faults); tracepoints SUBSYS:NAME, globs too "
	    "('sched:sched_wake*'): every hit, with its fields",
	  .def = "cycles; cpu-clock where there is no PMU", .set = set_event },
	{ .name = "filter", .arg = "EXPR",
	  .help = "keep the hits of the tracepoints of the -e before it that match EXPR, "
	    "ftrace's syntax: 'prev_pid == 1 && (prev_state & 2 || next_comm ~ \"kworker*\")'",
	  .set = set_filter },
	{ .flag = 'F', .name = "freq", .arg = "HZ",
	  .help = "sample this many times a second (1-100000)", .def = STR(RECSPEC_FREQ_DEFAULT),
	  .set = set_freq, .alt = 1 },
	{ .flag = 'c', .name = "count", .arg = "PERIOD",
	  .help = "sample once every PERIOD events instead", .set = set_period, .alt = 1 },
	{ .flag = 'g', .help = "call graphs from frame pointers (--call-graph fp)", .set = set_g,
	  .alt = 2 },
	{ .name = "call-graph", .arg = "fp|dwarf[,SIZE]|ehframe",
	  .help = "call graphs: fp walks frame pointers; dwarf copies SIZE bytes of user stack "
	    "(8-65528) for perf to unwind; ehframe unwinds from .eh_frame in BPF",
	  .def = "none; dwarf's SIZE " STR(RECSPEC_STACK_DEFAULT), .set = set_call_graph, .alt = 2 },
	{ .name = "max-stack", .arg = "N",
	  .help = "keep at most N frames of each call graph, kernel and user together "
	    "(1-" STR(RECSPEC_MAX_STACK) "), as perf's attr.sample_max_stack",
	  .def = STR(RECSPEC_MAX_STACK), .set = set_max_stack },
	{ .flag = 'a', .name = "all-cpus", .help = "every process on every CPU", .set = set_all,
	  .alt = 3 },
	{ .flag = 'p', .name = "pid", .arg = "PID[,PID...]",
	  .help = "these processes and their new children", .set = set_pids, .alt = 3 },
	{ .name = "no-markers", .help = "do not collect libperfmark markers",
	  .def = "markers are collected, but not with tracepoints alone", .set = set_no_markers,
	  .alt = 4 },
	{ .name = "markers", .help = "collect libperfmark markers with tracepoints alone too",
	  .set = set_markers, .alt = 4 },
	{ .flag = 'z', .name = "compress", .arg = "LEVEL", .optional = true,
	  .help = "zstd-compress the recording (LEVEL 1-22)", .def = "not compressed; LEVEL 1",
	  .set = set_zstd },
	{ .name = "ringbuf", .arg = "SIZE",
	  .help = "the BPF ring buffer that carries samples and markers from the kernel "
	    "(a power of two, 4K-1G)",
	  .def = "16M", .set = set_ringbuf },
	{ .name = "off-cpu", .arg = "MIN_NS", .optional = true,
	  .help = "also record the time threads spend off CPU, with their stacks (event "
	    "offcpu-time, period in ns); intervals under MIN_NS (250us, 1ms, ...) are summed per "
	    "stack",
	  .def = "not recorded; MIN_NS 100us", .set = set_off_cpu },
	{ .name = "aggregate", .arg = "SECONDS",
	  .help = "count samples per (pid, tid, stack) in BPF and write each distinct stack once "
	    "every SECONDS (1-3600) with its summed period: always-on profiles at a fraction "
	    "of the cost and size (with -g: frame pointers only)",
	  .def = "every sample written", .set = set_aggregate },
	{ 0 },
};

int recopts_check(struct recopts *o)
{
	char err[320];

	if (!o->have_markers && o->spec.nr_events && !recspec_nr_sampling(&o->spec))
		o->spec.markers = false;
	if (o->have_freq && o->have_period)
		return pm_err("-F and -c cannot be used together");
	if (o->have_a && o->spec.nr_pids)
		return pm_err("give only one of -a and -p PID");
	if (recspec_validate(&o->spec, err, sizeof(err)))
		return pm_err("%s", err);
	/* tracepoints' formats and filters, here before anything starts (perfmarkd checks again) */
	if (tpconfig_check(&o->spec, err, sizeof(err)))
		return pm_err("%s", err);
	return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct recspec: what a recording records, described once.  The command
 * line fills one (cli/recopts.c), the control protocol carries it (the
 * "opts" of `record`, the "spec" of a session), the store keeps it, the
 * session engine and the collector run from it, and `session show --json`
 * prints it.  Every default is spelled here and nowhere else.
 *
 * Its JSON (recspec_to_json), all keys optional on input, no others taken:
 *   {"events":["cycles",...], "freq":4000 | "period":N,
 *    "call_graph":"none"|"fp"|"dwarf,SIZE"|"ehframe", "markers":true,
 *    "max_stack":1..127, "target":"all"|"pids", "pids":[PID,...], "zstd":0..22, "ringbuf":BYTES,
 *    "off_cpu":true, "off_cpu_min_ns":NS,
 *    "filters":{"sched:sched_switch":"prev_pid == 1",...}, "aggregate":SECONDS}
 * Earlier perfmark wrote "callchain":true|false for "call_graph": still read.
 *
 * A new field: add it to the struct, give it its default in recspec_init,
 * check it in recspec_validate, write it in recspec_to_json (only when it
 * differs from its default, unless all), read it in recspec_from_json and
 * name its key in recspec_json_keys, and, when it changes what BPF
 * collects, compare it in the collector's same_spec (collector.c) so
 * sessions that differ in it do not share programs.
 */
#ifndef PERFMARK_RECSPEC_H
#define PERFMARK_RECSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evspec.h"

#define RECSPEC_MAX_EVENTS    128               /* events of one recording, tracepoints too */
#define RECSPEC_MAX_SAMPLING  8                 /* sampling events among them */
#define RECSPEC_MAX_FILTERS   8                 /* distinct tracepoint filters */
#define RECSPEC_FILTER_MAX    1024              /* bytes of one, its NUL included */
#define RECSPEC_FREQ_DEFAULT  4000
#define RECSPEC_MAX_PIDS      64
#define RECSPEC_STACK_DEFAULT 8192              /* dwarf: user stack bytes per sample */
#define RECSPEC_STACK_MAX     65528             /* perf's limit: a u16, 8-byte aligned */
#define RECSPEC_MAX_STACK     127               /* --max-stack: perf's default; PM_MAX_STACK */
#define RECSPEC_RINGBUF_MIN   4096
#define RECSPEC_RINGBUF_MAX   (1ull << 30)
#define RECSPEC_ZSTD_MAX      22
/*
 * --off-cpu: intervals shorter than this are summed per thread and stack
 * rather than written one each (see README, Off-CPU time, for the figures
 * it was chosen from); the bound keeps a typo from summing everything.
 */
#define RECSPEC_OFFCPU_MIN_DEFAULT (100 * 1000ull)
#define RECSPEC_OFFCPU_MIN_MAX     (10 * 1000 * 1000 * 1000ull)
#define RECSPEC_AGGREGATE_MAX 3600              /* --aggregate: seconds an interval at most */

enum recspec_target {
	RECSPEC_TARGET_ALL,    /* -a (or no target): every process */
	RECSPEC_TARGET_PIDS,   /* -p / -- CMD: these processes and their children */
};

enum recspec_call_graph {
	RECSPEC_CG_NONE,
	RECSPEC_CG_FP,         /* -g: frame pointers, in BPF */
	RECSPEC_CG_DWARF,      /* user registers and stack copy, unwound by perf */
	RECSPEC_CG_EHFRAME,    /* unwound in BPF from .eh_frame */
};

struct recspec {
	struct evspec events[RECSPEC_MAX_EVENTS];   /* as asked, before any fallback */
	size_t nr_events;                   /* 0: the default event (cycles) */
	uint64_t freq;                      /* -F, samples/s; used while period is 0 */
	uint64_t period;                    /* -c, events per sample; 0: use freq */
	enum recspec_call_graph call_graph;
	uint32_t stack_size;                /* RECSPEC_CG_DWARF: bytes, multiple of 8 */
	uint32_t max_stack;                 /* --max-stack: kernel + user frames, 1..RECSPEC_MAX_STACK */
	bool markers;                       /* libperfmark markers (--no-markers) */
	enum recspec_target target;
	int pids[RECSPEC_MAX_PIDS];         /* RECSPEC_TARGET_PIDS (a CMD comes later) */
	size_t nr_pids;
	int zstd_level;                     /* -z; 0: not compressed */
	uint64_t ringbuf_size;              /* BPF ring bytes, a power of two; 0: default */
	bool off_cpu;                       /* --off-cpu: event offcpu-time */
	uint64_t off_cpu_min_ns;            /* shorter intervals are summed (0: none is) */
	/*
	 * --filter of tracepoints (lib/collect/tpfilter.h): filter[i] is 0 for
	 * none, else 1 + the index of events[i]'s expression in filters[]
	 */
	uint8_t filter[RECSPEC_MAX_EVENTS];
	char filters[RECSPEC_MAX_FILTERS][RECSPEC_FILTER_MAX];
	size_t nr_filters;
	/*
	 * --aggregate SECONDS: samples counted per (pid, tid, stack) in BPF and
	 * written once per interval, their periods summed (0: every sample)
	 */
	uint32_t aggregate;
};

struct json_object;

/* The defaults: cycles at 4000 Hz, no call graph, markers, system-wide. */
void recspec_init(struct recspec *r);
/* 0, or -EINVAL with one line in err (no "perfmark: " prefix). */
int recspec_validate(const struct recspec *r, char *err, size_t errlen);
/*
 * New object (the caller puts it).  all: every key (what is stored and
 * shown); else only the keys whose value differs from the default, which is
 * what a client sends, so that an older perfmarkd is never sent a key it
 * does not know for an option the user did not ask for.
 */
struct json_object *recspec_to_json(const struct recspec *r, bool all);
/*
 * From the defaults, the keys o has, then recspec_validate.  0 or -EINVAL +
 * err.  A key that is not one of recspec_json_keys is refused, naming it
 * ("perfmarkd does not know option 'xyz'"): a daemon never records without
 * an option it was asked for.  recspec_from_json_in reads the same keys
 * from an object that holds others too (earlier perfmark's flat session
 * document); the caller checks those.
 */
int recspec_from_json(struct json_object *o, struct recspec *r, char *err, size_t errlen);
int recspec_from_json_in(struct json_object *o, struct recspec *r, char *err, size_t errlen);
extern const char recspec_json_keys[];   /* "events,freq,..." */

/* "fp", "dwarf", "dwarf,SIZE", "ehframe" (and "none"): sets call_graph, stack_size. */
int recspec_parse_call_graph(const char *s, struct recspec *r, char *err, size_t errlen);
/* --max-stack N: 1..RECSPEC_MAX_STACK, else -EINVAL + err */
int recspec_parse_max_stack(const char *s, struct recspec *r, char *err, size_t errlen);
/*
 * --off-cpu's MIN_NS: "0", "100000", "250us", "1ms", "2s" (ns without a
 * unit); sets off_cpu and off_cpu_min_ns.
 */
int recspec_parse_off_cpu(const char *s, struct recspec *r, char *err, size_t errlen);
/* "none", "fp", "dwarf,8192", "ehframe" */
const char *recspec_call_graph_name(const struct recspec *r, char *buf, size_t len);
/* the event's name as asked (i < max(nr_events, 1)): "cycles" when none was given */
const char *recspec_event_name(const struct recspec *r, size_t i);
/* events[i]'s filter expression, NULL when it has none */
const char *recspec_filter(const struct recspec *r, size_t i);
/*
 * Give events[first, first + n) (tracepoints) the filter expr: 0, or
 * -EINVAL + err (not a tracepoint, too long, too many distinct filters).
 * Only its form is checked here; tpfilter compiles it against the formats.
 */
int recspec_set_filter(struct recspec *r, size_t first, size_t n, const char *expr,
		       char *err, size_t errlen);
/* how many of the events sample (not tracepoints) */
size_t recspec_nr_sampling(const struct recspec *r);

#endif

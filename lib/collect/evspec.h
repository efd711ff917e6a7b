/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event specifications: "-e cycles:u,sched:sched_process_*,r003c", -F, -c.
 *
 * One event, as perf spells it:
 *   NAME[:MOD]            a named hardware/software event (lib/common/evnames.c)
 *   rHEX[:MOD]            a raw event of the CPU's PMU (PERF_TYPE_RAW)
 *   PMU/TERMS/[MOD]       a PMU's event: "cpu/event=0x3c,umask=0x01/u", or one
 *                         of its named events ("msr/tsc/"), encoded from the
 *                         PMU's format files in sysfs
 *   SUBSYS:NAME           tracepoints (PERF_TYPE_TRACEPOINT, config = the id
 *                         in tracefs); * and ? glob in either part
 * MOD is u (user only), k (kernel only), h (hypervisor), or a mix: "uk".
 * A list is comma-separated; commas inside PMU/.../ belong to the terms.
 */
#ifndef PERFMARK_EVSPEC_H
#define PERFMARK_EVSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_event_attr;

/*
 * Events in one list once globs are expanded: room for every syscall
 * tracepoint ("syscalls:*" is about 720), refused past it by name.
 */
#define EVSPEC_MAX 1024
#define EVSPEC_NAME_MAX 128            /* an event's name, with its NUL */
#define EVSPEC_FREQ_MAX 100000ULL      /* -F */
#define EVSPEC_PID_MAX 2147483647      /* a positive int; existence is checked where used */

struct evspec {
	char name[EVSPEC_NAME_MAX];  /* perf's: "cycles", "cpu-clock:u", "sched:sched_switch" */
	uint32_t type;     /* PERF_TYPE_HARDWARE / _SOFTWARE / _TRACEPOINT / _RAW / a PMU's */
	uint64_t config, config1, config2;
	bool hardware;     /* needs a PMU (cycles may fall back to cpu-clock) */
	bool tracepoint;
	bool exclude_user, exclude_kernel, exclude_hv;   /* :k, :u */
};

/* what a list is for: record samples a few named events; stat counts any */
#define EVSPEC_SAMPLING 0
#define EVSPEC_COUNTING 1

/*
 * Parse a comma-separated list into up to max entries.  Returns the number
 * parsed or -EINVAL with one line in err: "unknown event 'foo'", "no
 * tracepoint matches 'sched:nope*'", "too many events (at most N)", ...
 * EVSPEC_SAMPLING takes of the named events only those record samples.
 */
int evspec_parse(const char *list, int use, struct evspec *out, size_t max,
		 char *err, size_t errlen);
/* One event, no glob (as recspec's JSON names them); 0 or -EINVAL. */
int evspec_lookup(const char *name, struct evspec *out);
/* ... for this use: EVSPEC_COUNTING names what stat counts (context-switches, ...) */
int evspec_lookup_for(const char *name, int use, struct evspec *out);
/* a and b open the same perf event */
bool evspec_same(const struct evspec *a, const struct evspec *b);
/*
 * The attr that opens e as it is spelled (type, config, :u/:k/:h), all
 * else zero: what sampling and counting add their own fields to.
 */
void evspec_attr(const struct evspec *e, struct perf_event_attr *a);
/* a cpu-clock or task-clock event: sampled by period, opened with exclude_idle */
bool evspec_is_clock(const struct perf_event_attr *a);
/* e becomes the named event base (cycles -> cpu-clock), keeping its modifiers; 0 or -EINVAL */
int evspec_rebase(struct evspec *e, const char *base);
/*
 * Parse -F (1..100000, "max" not accepted) / -c (>= 1) values.
 * 0 or -EINVAL with message ("bad frequency 'x'", "frequency 0 out of range").
 */
int evspec_parse_freq(const char *s, uint64_t *out, char *err, size_t errlen);
int evspec_parse_period(const char *s, uint64_t *out, char *err, size_t errlen);
/* Parse "1,2,3" into pids (1..EVSPEC_PID_MAX); -EINVAL on garbage or an empty list. */
int evspec_parse_pids(const char *s, int *pids, size_t max, char *err, size_t errlen);
/* Parse sizes "64M", "1G", "4096", "512k": bytes, or -EINVAL. */
int evspec_parse_size(const char *s, uint64_t *out, char *err, size_t errlen);

/*
 * Where PMUs and tracepoints are looked up: sysfs's event_source devices
 * and the mounted tracefs, unless a test points them at a tree of its own.
 */
void evspec_set_pmu_root(const char *dir);
int evspec_set_tracing_dir(const char *dir);

#endif

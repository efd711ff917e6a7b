/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counting mode (perfmark stat): perf events opened as counters, no
 * sampling and no BPF, read with PERF_FORMAT_TOTAL_TIME_ENABLED |
 * _RUNNING and summed over CPUs (system-wide) or threads (-p), or one
 * inherited counter per event on a command's process (children included).
 * The counters run with the caller's own rights: perf_event_open applies
 * kernel.perf_event_paranoid.
 */
#ifndef PERFMARK_COUNTING_H
#define PERFMARK_COUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evspec.h"

#define COUNTING_MAX_PIDS    64
#define COUNTING_MAX_THREADS 4096     /* threads of the -p processes, together */

enum counting_target {
	COUNTING_CPUS,     /* every online CPU, every process */
	COUNTING_THREADS,  /* every thread of pids (and what they start) */
	COUNTING_TASK,     /* pids[0], held before its exec: counts from the exec on */
};

struct counting_opts {
	const struct evspec *events;
	size_t nr_events;
	enum counting_target target;
	const pid_t *pids;
	size_t nr_pids;
	/* an event that cannot be opened here (no PMU) is dropped, not "<not supported>" */
	bool drop_unsupported;
};

/* one counter's reading (summed), or a difference of two */
struct counting_value {
	uint64_t val, enabled, running;
};

enum counting_state {
	COUNTING_COUNTED,
	COUNTING_NOT_COUNTED,      /* never ran: perf's "<not counted>" */
	COUNTING_NOT_SUPPORTED,    /* could not be opened here: "<not supported>" */
};

/* a value as perf stat shows it: scaled up by enabled/running when multiplexed */
struct counting_result {
	enum counting_state state;
	double value;
	double pct_running;        /* 100 * running / enabled */
	bool scaled;               /* running < enabled: the value is an estimate */
};

struct counting;

/*
 * Open every event on the target, disabled (COUNTING_TASK: enabled by the
 * exec).  0, or -errno with one line in err ("sched:sched_switch: permission
 * denied ...").
 */
int counting__open(struct counting **out, const struct counting_opts *o, char *err, size_t errlen);
/* the events kept (drop_unsupported leaves some out) and each one's spec */
size_t counting__nr_events(const struct counting *c);
const struct evspec *counting__event(const struct counting *c, size_t i);
bool counting__supported(const struct counting *c, size_t i);
int counting__enable(struct counting *c);
int counting__disable(struct counting *c);
/* every event's current sum, v[counting__nr_events]: 0 or -errno */
int counting__read(struct counting *c, struct counting_value *v);
void counting__close(struct counting *c);

/* now - before, field by field (an interval's share) */
struct counting_value counting_delta(const struct counting_value *now,
				     const struct counting_value *before);
/* perf's arithmetic: running 0 -> not counted; running < enabled -> val * enabled / running */
struct counting_result counting_scale(const struct counting_value *v, bool supported);

#endif

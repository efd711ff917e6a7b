/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The analysis model of one recording, shared by `perfmark report`,
 * `flamegraph` and `export`.
 *
 * profile__load() reads a perf.data file or stream once, in time order,
 * through replay.h (records are re-sorted per FINISHED_ROUND as perf does:
 * everything up to the previous round's latest time is final; the
 * sideband feeds the symbolizer; markers are decoded and ranges paired as
 * for `perfmark script`), and keeps, per sampling event sample:
 *
 *   a node of the call tree (comm -> outermost frame -> ... -> leaf frame),
 *   the innermost marker range open on the sample's thread (or none),
 *   its time, thread and period.
 *
 * Off-CPU time (offcpu-time samples, lib/format/offcpu.h) is kept apart,
 * whatever the event analysed: per interval (or sum of shorter ones) its
 * time, length, state, waker, stack (a node of the same call tree) and
 * innermost range.  offcpu-time is analysed as the sampling event only when
 * asked for (-e offcpu-time): its period is nanoseconds off the CPU.
 *
 * Frames are interned per (function name, file); addresses are symbolized
 * once per (pid, address); a frame no symbol names is named by its file and
 * offset ("libc.so.6+0x2a1b0", symbolize.h).  With a filter (filter.h) only
 * the samples it keeps are in the model; those it hides are counted.
 * Marker ranges (types 1/2) become instances with
 * a parent (the range they nest in on the same thread), numbered as
 * lib/format/marker.h pairs them; counters (type 3)
 * are kept as values.  With keep_marks, every marker is kept for exporters.
 * Nothing is allocated per sample: all of it lives in growing arrays.
 */
#ifndef PERFMARK_PROFILE_H
#define PERFMARK_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table.h"

#define PROFILE_NONE TABLE_NONE

struct profile;

struct filter;

struct profile_opts {
	bool keep_marks;    /* keep every marker (strings, counters, app types) */
	bool keep_addrs;    /* keep every frame's address too: profile__locs(),
			     * profile__anodes() and each sample's anode (pprof) */
	const char *event;  /* the sampling event to analyse (by name); NULL: the
			     * first one whose sample comes, offcpu-time excepted */
	struct filter *filter;  /* perf's filters (filter.h), applied as the recording
				 * is read; NULL: every sample */
};

/* A sampling event of the recording and how many samples it has. */
struct profile_event {
	const char *name;
	uint64_t samples;
};

enum profile_frame_kind {
	PROFILE_FRAME_COMM,     /* the root of a command's stacks: name is the comm */
	PROFILE_FRAME_KERNEL,
	PROFILE_FRAME_USER,
};

struct profile_mapping {
	uint32_t file;              /* string id: path, "[kernel.kallsyms]", "[unknown]" */
	uint32_t build_id;          /* string id (hex) or PROFILE_NONE */
	uint64_t start, end, pgoff; /* as first seen */
	bool exe;                   /* a sampled process's executable */
};

struct profile_frame {
	uint32_t name;              /* string id */
	uint32_t mapping;           /* mapping index or PROFILE_NONE (comm frames) */
	uint32_t kind;              /* enum profile_frame_kind */
	uint64_t addr;              /* the first address seen in this frame */
};

/* Node 0 is the root (no frame); every other node has a parent and a frame. */
struct profile_node {
	uint32_t parent, frame;
};

/*
 * With keep_addrs: a frame at one address.  A caller's frame is named by
 * its return address, as perf names it, and located at the byte before it
 * (inside the call), where its source line is.
 */
struct profile_loc {
	uint32_t frame;
	bool call;                  /* a caller's: addr and offset are the return address - 1 */
	uint64_t addr;              /* in its process (comm frames: 0) */
	uint64_t offset;            /* in its mapping's file: addr - start + pgoff */
};

/* With keep_addrs: the call tree by address, as profile_node by frame (anode 0 the root). */
struct profile_anode {
	uint32_t parent, loc;
};

struct profile_sample {
	uint64_t time, period;
	uint32_t tid, node;
	uint32_t anode;             /* with keep_addrs, else PROFILE_NONE */
	uint32_t cpu;
	uint32_t range;             /* innermost open range instance, or PROFILE_NONE */
	uint32_t thread;            /* index into the threads */
};

/* Time a thread spent off the CPU: one interval, or a sum of shorter ones. */
struct profile_offcpu {
	uint64_t time, period;      /* when it left the CPU; ns away (a sum: all of its intervals) */
	uint64_t runq;              /* of period, ns waiting for a CPU (the last part of an
				     * interval it blocked in, all of one it was preempted in) */
	uint32_t tid, node;         /* node: its stack, in the samples' call tree */
	uint32_t anode;             /* with keep_addrs, its stack by address, else PROFILE_NONE */
	uint32_t range;             /* innermost open range instance, or PROFILE_NONE */
	uint32_t thread;
	uint32_t count;             /* intervals: 1, or how many this sums */
	uint32_t waker_tid;         /* the thread that woke it, 0 when none is named */
	uint8_t runnable;           /* it waited for a CPU; else it was blocked */
	uint8_t waker;              /* PERFMARK_OFFCPU_WAKER_* */
	char state;                 /* 'R', 'S', 'D', ... (offcpu__state_letter) */
};

struct profile_range {
	uint32_t name;              /* string id */
	uint32_t thread;            /* index into the threads */
	uint32_t parent;            /* enclosing instance on the same thread, or PROFILE_NONE */
	uint32_t depth;             /* 0 for an outermost range */
	uint64_t start, end;        /* end: the thread's last time when open */
	bool open;                  /* no end marker was seen */
};

struct profile_thread {
	uint32_t pid, tid;
	uint32_t comm;              /* string id */
	uint64_t first, last;       /* times of its first and last record */
};

struct profile_counter {
	uint32_t name;              /* string id */
	uint64_t count;
	int64_t min, max, last;
};

/* A marker kept with keep_marks: its payload bytes are in the marks arena. */
struct profile_mark {
	uint64_t time;
	uint32_t thread;
	uint32_t type;              /* perfmark type (0 string, 1.. ) */
	uint32_t flags;             /* PERFMARK_UEVENT_F_* */
	uint32_t len;
	size_t off;                 /* into profile__mark_data() */
};

/*
 * Read the recording on fd (regular file or pipe).  On failure returns a
 * negative errno with a one-line reason in err (err may be NULL).
 */
int profile__load(struct profile **out, int fd, const struct profile_opts *opts,
		  char *err, size_t errlen);
void profile__free(struct profile *p);

const struct strtab *profile__strings(const struct profile *p);
const char *profile__str(const struct profile *p, uint32_t id);
const char *profile__event_name(const struct profile *p);   /* the sampling event */
/* The sampling event's frequency (Hz) when it samples by frequency, else 0. */
uint64_t profile__sample_freq(const struct profile *p);
/*
 * The nanoseconds on CPU one sample of the analysed event stands for:
 * its period for cpu-clock and task-clock, 1e9 / frequency for others
 * sampled by frequency; 0 when neither tells (a fixed period of events).
 * ns_per_period true: multiply by the period, else by the sample count.
 */
uint64_t profile__oncpu_ns(const struct profile *p, bool *ns_per_period);
/* Every sampling event with samples, in the order their first came; the
 * one analysed is profile__event_name()'s. */
const struct profile_event *profile__events(const struct profile *p, size_t *n);
/*
 * The samples of the analysed event the filter hid (another command,
 * process, thread, file or symbol): not in the model, but part of the
 * total perf report's percentages are of (--percentage absolute).
 */
uint64_t profile__hidden_samples(const struct profile *p);
uint64_t profile__hidden_period(const struct profile *p);
/* Records the recorder said it lost (PERF_RECORD_LOST, LOST_SAMPLES). */
uint64_t profile__lost(const struct profile *p);
uint64_t profile__start(const struct profile *p);          /* first time seen */
uint64_t profile__end(const struct profile *p);            /* last time seen */

#define PROFILE_ARRAY(type, name) \
	const struct profile_##type *profile__##name(const struct profile *p, size_t *n)
PROFILE_ARRAY(mapping, mappings);
PROFILE_ARRAY(frame, frames);
PROFILE_ARRAY(node, nodes);
PROFILE_ARRAY(sample, samples);
PROFILE_ARRAY(range, ranges);
PROFILE_ARRAY(thread, threads);
PROFILE_ARRAY(counter, counters);
PROFILE_ARRAY(mark, marks);
PROFILE_ARRAY(loc, locs);
PROFILE_ARRAY(anode, anodes);
PROFILE_ARRAY(offcpu, offcpus);
#undef PROFILE_ARRAY
const uint8_t *profile__mark_data(const struct profile *p);

/* Is range instance r, or one it nests in, named name (a string id)? */
bool profile__range_within(const struct profile *p, uint32_t r, uint32_t name);

#endif

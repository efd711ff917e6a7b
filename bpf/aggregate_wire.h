/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --aggregate: samples counted in BPF (bpf/aggregate.bpf.c), drained by
 * user space (lib/collect/collector_agg.c).  Fixed-width fields only, as in
 * perfmark_wire.h.
 *
 * Two sets of maps, 0 and 1; the sampler counts into the set agg_ctl names
 * and user space, at each interval's end, names the other, waits until no
 * CPU is still inside the first (agg_busy), then empties it.
 *
 * A stack is kept once per interval under a 64-bit hash of its frames; the
 * frames are kept with it and compared on every hit, so two stacks that
 * share a hash are never merged: the second is counted lost.  Counts are
 * kept per (pid, tid, uid, event, stack).  Both maps are bounded
 * (max_entries); a sample that finds either full is counted lost
 * (agg_lost, part of the lost samples every session reports).
 */
#ifndef PERFMARK_AGGREGATE_WIRE_H
#define PERFMARK_AGGREGATE_WIRE_H

#include "perfmark_wire.h"

#define PM_AGG_FRAMES (2 * PM_MAX_STACK)

/* the frames of the sample the sampler assembled (its pm_sample.stack, and room) */
struct pm_agg_frames {
	__u64 ip[PM_AGG_FRAMES];
};

struct pm_agg_stack {
	__u64 ip;
	__u32 nr_kstack, nr_ustack;
	__u32 user_mode;
	__u32 cpu;          /* the CPU of the first sample with this stack */
	__u64 frames[PM_AGG_FRAMES];   /* kernel then user; only nr_kstack + nr_ustack used */
};

struct pm_agg_key {
	__u32 pid, tid;
	__u32 uid, event;
	__u64 stack;        /* the hash the stack is kept under */
};

struct pm_agg_val {
	__u64 count;        /* samples */
	__u64 period;       /* their periods summed */
};

struct pm_agg_ctl {
	__u32 on;           /* aggregating: set before load, never changed */
	__u32 slot;         /* the set the sampler counts into (0 or 1) */
	__u64 seed;         /* of the stack hash: random, so no one aims a clash at a stack */
};

#endif

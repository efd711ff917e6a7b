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
 * A set is a stack map (BPF_MAP_TYPE_STACK_TRACE: the kernel walks, hashes
 * and keeps each distinct kernel or user stack once, and compares the frames
 * on a hit, so two stacks are never merged) and a preallocated hash of
 * counts per (pid, tid, uid, event, kernel stack id, user stack id, ip).  A
 * sample whose stack finds its bucket taken by another stack, or the counts
 * full, is not counted but written to the ring as it is (agg_spilled).
 */
#ifndef PERFMARK_AGGREGATE_WIRE_H
#define PERFMARK_AGGREGATE_WIRE_H

#include "perfmark_wire.h"

#define PM_AGG_NO_STACK 0xffffffffu   /* pm_agg_key.kstack/ustack: none */

struct pm_agg_key {
	__u32 pid, tid;
	__u32 uid, event;
	__u32 kstack;       /* stack id in the set's stack map, or PM_AGG_NO_STACK */
	__u32 ustack;
	__u64 ip;
	__u32 user_mode;
	__u32 pad;          /* zero */
};

struct pm_agg_val {
	__u64 count;        /* samples */
	__u64 period;       /* their periods summed */
	__u64 cpu;          /* the CPU of the first of them */
};

struct pm_agg_ctl {
	__u32 on;           /* aggregating: set before the sampler starts, never changed */
	__u32 slot;         /* the set the sampler counts into (0 or 1) */
	__u64 seed;         /* unused (the stack maps hash with the kernel's own seed) */
};

#endif

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Off-CPU time (--off-cpu[=MIN_NS], bpf/offcpu.bpf.c) shared with user
 * space (lib/collect/collector_offcpu.c, lib/engine/encode_offcpu.c).
 * Fixed-width fields only.
 *
 * When a target thread leaves a CPU, sched_switch notes in the thread's
 * own storage when, in which state, and in which system call.  When it
 * runs again (for a wait in a system call: when it leaves the call, where
 * its user stack is taken), one struct pm_offcpu goes into the ring, with
 * its kernel frames, then user frames as the recording's --call-graph
 * takes them: the switch-out time, the
 * nanoseconds it was off and how many of them it waited for a CPU after
 * its wakeup, the state and who woke it.  An interval shorter
 * than MIN_NS is summed instead into a map keyed by thread, state and
 * stack (struct pm_off_key), which user space drains at every read: one
 * record per key, count = how many intervals it merged.
 */
#ifndef PERFMARK_BPF_OFFCPU_WIRE_H
#define PERFMARK_BPF_OFFCPU_WIRE_H

#include "perfmark_wire.h"

/* pm_offcpu.state: what the thread waited for */
#define PM_OFF_RUNNABLE 1   /* a CPU: preempted, still on a runqueue */
#define PM_OFF_BLOCKED  2   /* an event: it slept (TASK_INTERRUPTIBLE, _UNINTERRUPTIBLE, ...) */

/* pm_offcpu.waker_flags */
#define PM_OFF_WAKER_TASK 0x1   /* woken by the task waker_pid/waker_tid */
#define PM_OFF_WAKER_IRQ  0x2   /* woken from an interrupt (a timer, a device): no task */

struct pm_offcpu {
	__u32 rec_type;     /* PM_REC_OFFCPU */
	__u32 cpu;          /* where it ran again (merged: where it last did) */
	__u32 pid, tid;     /* the thread, in the recorder's pid namespace */
	__u64 time;         /* switch-out, CLOCK_MONOTONIC ns (merged: the first) */
	__u64 end;          /* when it ran again (merged: the last time) */
	__u64 period;       /* ns off CPU (merged: the sum) */
	__u64 runq;         /* of period, ns runnable, waiting for a CPU: all of it when
			     * preempted, from its wakeup on when it blocked (merged: the sum) */
	__u32 count;        /* intervals: 1, or how many were merged */
	__u32 state;        /* PM_OFF_RUNNABLE or PM_OFF_BLOCKED */
	__u32 task_state;   /* the kernel's prev_state at the switch (TASK_* bits) */
	__u32 waker_flags;  /* PM_OFF_WAKER_*; 0: not seen (merged: the first's) */
	__u32 waker_pid, waker_tid;
	__u32 waker_uid;    /* the waker's, as pm_sample.uid: whose sessions may name it */
	__u32 uid;          /* as pm_sample.uid */
	__u32 flags;        /* PM_SF_UREGS: struct pm_uregs and the stack copy follow the frames */
	__u32 nr_kstack;    /* frames in stack[0 .. nr_kstack) */
	__u32 nr_ustack;    /* frames in stack[nr_kstack .. +nr_ustack) */
	__u16 nr_wkstack;   /* the waker's kernel frames, after the user frames */
	__u16 nr_wustack;   /* ... then its user frames (frame pointers) */
	/*
	 * followed by __u64 stack[nr_kstack + nr_ustack + nr_wkstack +
	 * nr_wustack] (and, with PM_SF_UREGS, struct pm_uregs and its stack
	 * bytes): no flexible array, so BPF can embed the header in a slot
	 * with room for frames
	 */
};

/* the key intervals shorter than MIN_NS are summed under */
struct pm_off_key {
	__u32 pid, tid;
	__u32 state, task_state;
	__u32 nr_kstack, nr_ustack;
	__u64 hash;         /* of the system call and user frames (dwarf: user ip, sp; a wait in a
			     * system call: the pc it entered it at, nr_ustack PM_MAX_STACK + 1) */
};

/*
 * per CPU, while a program sums an interval: reading off_ctl, and adding
 * into map 0 or 1 (8-byte multiple: a per-CPU value as user space reads it)
 */
struct pm_off_busy {
	__u32 entering;
	__u32 in[2];
	__u32 pad;
};

/*
 * The waker's stack, taken in sched_waking when the interval is already
 * MIN_NS long (so it will be written on its own) and PM_OFF_WAKER_MIN_NS
 * (so that --off-cpu=0 on a switch-heavy program does not walk two more
 * stacks per switch for waits too short to ask who ended them): its kernel
 * frames and its user frames, each at most PM_OFF_WSTACK / 2.
 */
#define PM_OFF_WSTACK   32
#define PM_OFF_WAKER_MIN_NS 100000

/* the BPF side's figures (its .bss), read by user space */
#define PM_OFF_AGG_MAX  4096    /* keys merged between two reads; past it: one record each */

#define PM_OFF_USTACK   8192    /* dwarf mode: user stack bytes copied at a switch, at most */

#endif

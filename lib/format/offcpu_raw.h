/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The payload of an offcpu-time sample (PERF_SAMPLE_RAW), as written to
 * perf.data.  The sample itself is perf's: time = when the thread left the
 * CPU, period = nanoseconds until it ran again, the callchain = its stack
 * as it left.  The payload says why and who ended it:
 *
 *   u16 version      (PERFMARK_OFFCPU_VERSION)
 *   u16 state        (PERFMARK_OFFCPU_RUNNABLE: preempted, waited for a CPU;
 *                     PERFMARK_OFFCPU_BLOCKED: slept, waited for an event)
 *   u32 task_state   (the kernel's TASK_* bits as it left: 1 S, 2 D, ...; 0 runnable)
 *   u32 count        (1: one interval [time, time + period); more: that many
 *                     intervals shorter than MIN_NS summed, the first from time,
 *                     the last ending at end)
 *   u32 waker_flags  (PERFMARK_OFFCPU_WAKER_*)
 *   u32 waker_pid, waker_tid   (WAKER_TASK; 0 when the task is not to be named)
 *   u64 end          (when it ran again; summed: the last time)
 *   u64 runq_ns      (of the period, the ns it was runnable, waiting for a CPU:
 *                     all of it when it was preempted, from its wakeup on when
 *                     it blocked; summed: the sum.  The rest it was blocked.)
 *   u32 nr_waker_kstack, nr_waker_ustack   (the waker's frames that follow)
 *   u64 waker_stack[nr_waker_kstack + nr_waker_ustack]   (where the waker was
 *                     as it woke the thread, leaf first: its kernel frames,
 *                     then its user frames; none for a sum, an interrupt, a
 *                     task not named, or what the session may not show)
 *
 * The first files of version 1 end at runq_ns: no waker stack.
 * Readers skip a version they do not know; fields are only ever added at the end.
 */
#ifndef PERFMARK_OFFCPU_RAW_H
#define PERFMARK_OFFCPU_RAW_H

#include <stdint.h>

#define PERFMARK_OFFCPU_EVENT   "offcpu-time"   /* perf's name for the event */
#define PERFMARK_OFFCPU_VERSION 1

#define PERFMARK_OFFCPU_RUNNABLE 1
#define PERFMARK_OFFCPU_BLOCKED  2

#define PERFMARK_OFFCPU_WAKER_TASK 0x1   /* a task woke it */
#define PERFMARK_OFFCPU_WAKER_IRQ  0x2   /* an interrupt did (a timer, a device) */

struct perfmark_offcpu_raw {
	uint16_t version;
	uint16_t state;
	uint32_t task_state;
	uint32_t count;
	uint32_t waker_flags;
	uint32_t waker_pid, waker_tid;
	uint64_t end;
	uint64_t runq_ns;
	uint32_t nr_waker_kstack, nr_waker_ustack;
	/* followed by uint64_t waker_stack[], unaligned in a perf.data */
};

#define PERFMARK_OFFCPU_RAW_V1_SIZE 40   /* up to runq_ns */
#define PERFMARK_OFFCPU_WAKER_MAX   32   /* waker frames a writer puts, at most */

#endif

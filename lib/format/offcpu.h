/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An offcpu-time sample as every reader sees it: the one decoder of the
 * payload in offcpu_raw.h.  The sample's own fields say the rest: its time
 * is when the thread left the CPU, its period how long it was away, its
 * callchain where it was.
 *
 * offcpu__decode() reads the RAW field: OFFCPU_OK with every field,
 * OFFCPU_VERSION for a later version (the sample still counts: one
 * blocked interval), OFFCPU_MALFORMED when the field is too short.
 */
#ifndef PERFMARK_FORMAT_OFFCPU_H
#define PERFMARK_FORMAT_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offcpu_raw.h"

enum offcpu_state {
	OFFCPU_OK,
	OFFCPU_VERSION,         /* a version this reader does not know */
	OFFCPU_MALFORMED,       /* no RAW field, or one too short */
};

struct offcpu {
	enum offcpu_state state;
	bool runnable;          /* waited for a CPU (preempted); else blocked */
	uint32_t task_state;    /* TASK_* bits as it left (0: runnable) */
	uint32_t count;         /* intervals: 1, or a sum of that many shorter ones */
	uint32_t waker_flags;   /* PERFMARK_OFFCPU_WAKER_* */
	uint32_t waker_pid, waker_tid;
	uint64_t end;           /* when it ran again (a sum: the last time) */
	uint64_t runq_ns;       /* of the period, waiting for a CPU (at most the period
				 * when the reader checks it against the sample's) */
	/* where the waker was: kernel frames, then user frames (offcpu__waker_ip) */
	uint32_t nr_waker_kstack, nr_waker_ustack;
	const unsigned char *waker_stack;   /* in the payload, unaligned */
};

/* Is name the off-CPU event (offcpu-time)? */
bool offcpu__event(const char *name);
/* Decode the RAW field of an offcpu-time sample (raw may be NULL). */
void offcpu__decode(struct offcpu *o, const void *raw, size_t raw_size);
/* The waker's frame i (< nr_waker_kstack + nr_waker_ustack), leaf first. */
uint64_t offcpu__waker_ip(const struct offcpu *o, uint32_t i);
/*
 * The state as ps and perf sched print it: "R" waited for a CPU, "S"
 * interruptible sleep, "D" uninterruptible, "I" idle, "T" stopped, "t"
 * traced, "?" other.
 */
const char *offcpu__state_letter(const struct offcpu *o);

#endif

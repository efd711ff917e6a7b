// SPDX-License-Identifier: LGPL-2.1-or-later
/* The offcpu-time payload, decoded once for every reader.  See offcpu.h. */
#include <string.h>

#include "offcpu.h"

/* the kernel's TASK_* bits (include/linux/sched.h) */
#define TASK_INTERRUPTIBLE   0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_STOPPED         0x0004
#define TASK_TRACED          0x0008
#define TASK_NOLOAD          0x0400

bool offcpu__event(const char *name)
{
	return name && !strcmp(name, PERFMARK_OFFCPU_EVENT);
}

void offcpu__decode(struct offcpu *o, const void *raw, size_t raw_size)
{
	struct perfmark_offcpu_raw r;

	memset(o, 0, sizeof(*o));
	o->count = 1;
	if (!raw || raw_size < sizeof(r.version)) {
		o->state = OFFCPU_MALFORMED;
		return;
	}
	memcpy(&r.version, raw, sizeof(r.version));
	if (r.version != PERFMARK_OFFCPU_VERSION) {
		o->state = OFFCPU_VERSION;
		return;
	}
	if (raw_size < PERFMARK_OFFCPU_RAW_V1_SIZE) {
		o->state = OFFCPU_MALFORMED;
		return;
	}
	memset(&r, 0, sizeof(r));
	memcpy(&r, raw, raw_size < sizeof(r) ? raw_size : sizeof(r));
	o->state = OFFCPU_OK;
	o->runnable = r.state == PERFMARK_OFFCPU_RUNNABLE;
	o->task_state = r.task_state;
	o->count = r.count ? r.count : 1;
	o->waker_flags = r.waker_flags;
	o->waker_pid = r.waker_pid;
	o->waker_tid = r.waker_tid;
	o->end = r.end;
	o->runq_ns = r.runq_ns;
	/* the waker's frames: as many as the payload holds, at most what a writer puts */
	if (raw_size >= sizeof(r) && r.nr_waker_kstack <= PERFMARK_OFFCPU_WAKER_MAX &&
	    r.nr_waker_ustack <= PERFMARK_OFFCPU_WAKER_MAX - r.nr_waker_kstack &&
	    (size_t)(r.nr_waker_kstack + r.nr_waker_ustack) * sizeof(uint64_t) <= raw_size - sizeof(r)) {
		o->nr_waker_kstack = r.nr_waker_kstack;
		o->nr_waker_ustack = r.nr_waker_ustack;
		o->waker_stack = (const unsigned char *)raw + sizeof(r);
	}
}

uint64_t offcpu__waker_ip(const struct offcpu *o, uint32_t i)
{
	uint64_t ip;

	if (!o->waker_stack || i >= o->nr_waker_kstack + o->nr_waker_ustack)
		return 0;
	memcpy(&ip, o->waker_stack + (size_t)i * sizeof(ip), sizeof(ip));
	return ip;
}

const char *offcpu__state_letter(const struct offcpu *o)
{
	uint32_t s = o->task_state;

	if (o->state != OFFCPU_OK)
		return "?";
	if (o->runnable)
		return "R";
	if ((s & (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) == (TASK_UNINTERRUPTIBLE | TASK_NOLOAD))
		return "I";
	if (s & TASK_UNINTERRUPTIBLE)
		return "D";
	if (s & TASK_INTERRUPTIBLE)
		return "S";
	if (s & TASK_STOPPED)
		return "T";
	if (s & TASK_TRACED)
		return "t";
	return "?";
}

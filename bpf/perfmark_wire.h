/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wire structs shared by bpf/perfmark.bpf.c and user space.
 * Only fixed-width fields: this header is compiled by clang -target bpf
 * and by the host compiler and both must agree on every offset.
 */
#ifndef PERFMARK_BPF_WIRE_H
#define PERFMARK_BPF_WIRE_H

#define PM_MAX_STACK      127          /* frames per kernel or user chain */
#define PM_MAX_PAYLOAD    4096         /* marker payload bytes kept      */
#define PM_MAX_EVENTS     8            /* sampling events per session    */

/* every ringbuf record starts with this tag */
enum pm_rec_type {
	PM_REC_SAMPLE = 1,
	PM_REC_MARKER = 2,
};

/* marker flags, also written to perf.data (see daemon/uevent.h) */
#define PM_F_TRUNCATED 0x1
#define PM_F_FAULT     0x2

struct pm_sample {
	__u32 rec_type;     /* PM_REC_SAMPLE */
	__u32 cpu;
	__u32 pid;          /* tgid */
	__u32 tid;
	__u64 time;         /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	__u64 ip;
	__u64 period;
	__u32 event;        /* index of the sampling event (bpf cookie) */
	__u32 nr_kstack;    /* frames in stack[0 .. nr_kstack) */
	__u32 nr_ustack;    /* frames in stack[nr_kstack .. +nr_ustack) */
	__u32 user_mode;    /* ip is a user-space address */
	__u32 uid;
	__u32 pad;
	__u64 stack[];      /* kernel frames then user frames */
};

struct pm_marker {
	__u32 rec_type;     /* PM_REC_MARKER */
	__u32 cpu;
	__u32 pid;
	__u32 tid;
	__u64 time;
	__u32 type;         /* user type (0 = string) */
	__u32 size;         /* payload bytes in data[] */
	__u32 orig_size;    /* size the application passed */
	__u32 flags;        /* PM_F_* */
	__u64 ip;           /* the probe site */
	__u32 uid;
	__u32 pad;
	__u8  data[];
};

/*
 * Several sessions can share one set of programs (a collector).  The BPF
 * filter is the union of what they want; user space then gives each
 * session exactly its own share.  A record passes when
 *   cfg.all != 0                     some session wants every process, or
 *   the task's uid is in `uids`      some session wants all of one uid, or
 *   the task's tgid is in `targets`  some session wants that process
 *                                    (children are added on fork).
 */
struct pm_cfg {
	__u32 all;          /* sessions that want every process of every uid */
	__u32 nr_uids;      /* entries in `uids` (its lookup is skipped when 0) */
};

#endif

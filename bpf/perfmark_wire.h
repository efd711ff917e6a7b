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

/* every ringbuf record starts with this tag */
enum pm_rec_type {
	PM_REC_SAMPLE = 1,
	PM_REC_MARKER = 2,
	PM_REC_FASTREG = 3,   /* a process offers its fast-lane area (struct pm_fastreg) */
	PM_REC_TASK = 4,      /* exec, comm, fork, exit (struct pm_task): gap sideband */
	PM_REC_MMAP = 5,      /* an executable file mapped (struct pm_mmap): gap sideband */
	PM_REC_OFFCPU = 8,    /* a thread ran again after time off CPU (bpf/offcpu_wire.h) */
};

/*
 * The uid a sample or marker is recorded under (pm_sample.uid, pm_marker.uid)
 * when the task is not plainly one user's: its real, effective and saved
 * uids differ (a setuid program, a daemon between setresuid calls) or its mm
 * is not dumpable by that user (setuid exec, prctl(PR_SET_DUMPABLE, 0)).
 * No session with a uid filter ever matches it: only root's see such tasks.
 */
#define PM_UID_PRIVILEGED 0xfffffffeu

/* marker flags, also written to perf.data (see lib/format/uevent.h) */
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
	__u32 flags;        /* PM_SF_* */
	__u64 stack[];      /* kernel frames then user frames (then struct pm_uregs) */
};

/* pm_sample flags */
#define PM_SF_UREGS 0x1     /* user registers and stack follow (bpf/unwind_wire.h) */
#define PM_SF_RAW   0x2     /* a tracepoint's entry ends it (bpf/tracepoint_wire.h) */

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
	__u32 ext;          /* PM_X_*: user space's (the fast lane's); BPF writes 0 */
	__u8  data[];
};

/* pm_marker.ext: the time was outside what the recorder saw, clamped into it */
#define PM_X_CLAMPED   0x1
/*
 * pm_marker.ext: read again after a restart, where the recorder before may
 * have handed it on already (the fast lane's first records of each ring,
 * the BPF ring's first): a session drops it if it journaled it before
 */
#define PM_X_REDELIVERED 0x2

/*
 * Why a marker took the trap lane, as the library says (the trap site's
 * fifth argument, PM_TRAP_TAG | why; anything else is PM_TRAP_UNKNOWN):
 * BPF puts it in pm_marker.ext bits 8-15.  Only ever counted: a traced
 * process can say what it likes here.
 */
#define PM_TRAP_TAG       0x504d545200000000ull   /* "PMTR" in the top half */
#define PM_X_TRAP_SHIFT   8
#define PM_X_TRAP_MASK    0xff00u
enum pm_trap_why {
	PM_TRAP_UNKNOWN = 0,     /* a library that does not say (or the uevent site) */
	PM_TRAP_NO_AREA,         /* the first marker: it offers the area (or none could be made) */
	PM_TRAP_NOT_JOINED,      /* an area, not yet joined by every recorder */
	PM_TRAP_RING_FULL,       /* the thread's ring was full */
	PM_TRAP_SILENT,          /* a reader had gone silent (a recorder died) */
	PM_TRAP_NO_SLOT,         /* a vfork() child: no ring of its own */
	PM_TRAP_TRAPALL,         /* a recorder without a site of its own listens */
	PM_TRAP_OFF,             /* PERFMARK_FASTLANE=0 */
	PM_TRAP_NR
};

/*
 * The attach cookie of on_probe, the program that takes every perfmark site
 * of a file through one uprobe_multi link: the kind of site in the top half,
 * for a register site the site's number (0..2) in the bottom.
 */
#define PM_PROBE_KIND_SHIFT 32
enum pm_probe_kind {
	PM_PROBE_REGISTER = 0,   /* perfmark:registerK, K in the bottom half */
	PM_PROBE_TRAP,           /* perfmark:trap */
	PM_PROBE_MARKER,         /* perfmark:uevent of a library without the trap site */
	PM_PROBE_NONE,           /* a site probed for its semaphore alone (trapall) */
};

/*
 * libperfmark's registration of a fast-lane area: the argument of its
 * perfmark:register probe (layout of the area: lib/perfmark/fastlane_wire.h).
 */
#define PM_FL_REG_AREA 1
/*
 * Offered as the library loaded, before any marker: the recorder maps and
 * joins it, but reads it only once a PM_FL_REG_AREA offer of the same area
 * (the process's first marker, which takes the trap lane) has said whose
 * its markers are: the owner as of the first marker, as before, not as of
 * the load (a process may make itself non-dumpable in between).
 */
#define PM_FL_REG_EARLY 2
struct pm_fl_reg {
	__u32 kind;         /* PM_FL_REG_AREA */
	__u32 version;      /* PM_FL_VERSION */
	__u64 area;         /* address of the area in the process */
	__u64 size;         /* its bytes (the memfd's size) */
	__u64 nonce;        /* equal to the area header's */
	__u32 local_pid;    /* getpid() in the process's own pid namespace */
	__u32 local_tid;
};

/* what the register program puts in the ring: who registered, and what */
struct pm_fastreg {
	__u32 rec_type;     /* PM_REC_FASTREG */
	__u32 cpu;
	__u32 pid;          /* tgid, in the recorder's namespace */
	__u32 tid;
	__u64 time;
	__u32 uid;
	__u16 site;         /* the register site this recorder holds (its consumer word) */
	__u16 wanted;       /* some session records this process: read it, else join only */
	struct pm_fl_reg reg;
};

/*
 * Several sessions can share one set of programs (a collector).  The BPF
 * filter is the union of what they want; user space then gives each
 * session exactly its own share.  A record passes when
 *   cfg.all != 0                     some session wants every process, or
 *   the task's uid is in `uids`      some session wants all of one uid, or
 *   the task's tgid is in `targets`  some session wants that process
 *                                    (children are added on fork).
 * A `targets` value is the root the process descends from: the tgid a
 * session added (-p, a command at its exec), copied from parent to child at
 * fork.  Older pins hold a __u8 1 there (no root known: value_size 1).
 */
struct pm_cfg {
	__u32 all;          /* sessions that want every process of every uid */
	__u32 nr_uids;      /* entries in `uids` (its lookup is skipped when 0) */
	__u32 gap;          /* pinned: write the gap sideband (pm_task, pm_mmap) */
	__u32 tp_on;        /* tracepoint hits are recorded (their programs run always) */
	__u32 self_pid;     /* the recorder's own process (its pid namespace): no off-CPU time */
	__u32 pad;
};

/*
 * The gap sideband (bpf/sideband.bpf.c).  The kernel's COMM/MMAP2/FORK/EXIT
 * records reach a recorder through perf buffers that die with it; while a
 * pinned collection runs with no daemon, these records in the pinned ring
 * say what started, ran and exited meanwhile.  A daemon uses those older
 * than its own perf buffers (collector__sideband_since) and drops the rest.
 */
#define PM_MAX_PATH 512            /* bytes of a mapped file's path kept */

enum pm_task_kind {
	PM_TASK_EXEC = 1,   /* comm after an exec */
	PM_TASK_COMM = 2,   /* prctl(PR_SET_NAME), /proc/PID/comm */
	PM_TASK_FORK = 3,   /* a new process or thread */
	PM_TASK_EXIT = 4,   /* a thread ends */
};

struct pm_task {
	__u32 rec_type;     /* PM_REC_TASK */
	__u32 kind;         /* PM_TASK_* */
	__u32 pid, tid;     /* the task; FORK: the new one */
	__u32 ppid, ptid;   /* FORK: the parent; EXIT: the parent process */
	__u64 time;
	__u32 cpu;
	__u32 uid;          /* as pm_sample.uid */
	char comm[16];
};

struct pm_mmap {
	__u32 rec_type;     /* PM_REC_MMAP */
	__u32 cpu;
	__u32 pid, tid;
	__u64 time;
	__u64 start, len, pgoff;   /* pgoff in bytes */
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	__u32 uid;
	__u32 path_len;     /* bytes in path[], the NUL included */
	char path[];        /* at most PM_MAX_PATH */
};

#endif

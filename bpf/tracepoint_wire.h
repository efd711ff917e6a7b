/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wire structs of tracepoint recording (bpf/tracepoint.bpf.c) shared with
 * user space (lib/collect/tpconfig.c, tpfilter.c).  Fixed-width fields only.
 *
 * One program, attached once per recorded tracepoint through a perf event
 * (PERF_TYPE_TRACEPOINT, config = the id); its attach cookie is the index of
 * the tracepoint's struct pm_tp_cfg in the tp_cfg map.  A hit whose task the
 * union filter wants and whose record passes the tracepoint's filter goes
 * into the ring as a struct pm_sample (bpf/perfmark_wire.h) with PM_SF_RAW:
 * after its frames (and, with PM_SF_UREGS, the registers and stack copy)
 * comes a struct pm_raw, the trace entry as the kernel formats it:
 * the common fields, then the event's, then its dynamic arrays.
 *
 * The program's context is that entry, but the kernel has written the
 * pointer to the hit's registers over its first 8 bytes (the common
 * fields) before any BPF program runs; they are rebuilt: common_type from
 * the id, common_pid from the current task, common_flags and
 * common_preempt_count 0.
 */
#ifndef PERFMARK_BPF_TRACEPOINT_WIRE_H
#define PERFMARK_BPF_TRACEPOINT_WIRE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>    /* user space; BPF has vmlinux.h */
#endif

/* bytes of a trace entry kept: the kernel's PERF_MAX_TRACE_SIZE */
#define PM_TP_RAW_MAX   8192
/* __data_loc / __rel_loc fields whose data a record's size covers */
#define PM_TP_MAX_DYN   16
#define PM_TP_DYN_REL   0x8000     /* in pm_tp_cfg.dyn[]: a __rel_loc field */

/* the filter's program: at most this many instructions and strings */
#define PM_TPF_MAX_INSNS 64
#define PM_TPF_MAX_STRS  8
#define PM_TPF_STR_MAX   64        /* bytes of one string constant (no NUL) */

enum pm_tpf_op {
	PM_TPF_NUM = 1,      /* r = field <cmp> val (numbers) */
	PM_TPF_STR = 2,      /* r = field matches string val (index) by cmp */
	PM_TPF_NOT = 3,      /* r = !r */
	PM_TPF_JF = 4,       /* if !r: jump to instruction val (always forward) */
	PM_TPF_JT = 5,       /* if r: jump to instruction val (always forward) */
};

enum pm_tpf_cmp {
	PM_TPF_EQ = 1, PM_TPF_NE, PM_TPF_LT, PM_TPF_LE, PM_TPF_GT, PM_TPF_GE,
	PM_TPF_AND,          /* (field & val) != 0 */
	/* strings: the value with no glob, prefix*, *suffix, *middle* */
	PM_TPF_MATCH_FULL, PM_TPF_MATCH_PREFIX, PM_TPF_MATCH_SUFFIX, PM_TPF_MATCH_MIDDLE,
};

/* pm_tp_insn.flags */
#define PM_TPF_SIGNED  0x1   /* NUM: the field is signed (sign-extended, compared signed) */
#define PM_TPF_DYN     0x2   /* STR: a __data_loc field (u32: offset | length << 16) */
#define PM_TPF_REL     0x4   /* STR: a __rel_loc field (offset from the field's end) */
#define PM_TPF_NEG     0x8   /* STR: the result negated (!=) */

struct pm_tp_insn {
	__u8 op;             /* enum pm_tpf_op */
	__u8 cmp;            /* enum pm_tpf_cmp */
	__u8 flags;
	__u8 str_len;        /* STR: bytes of strs[val] */
	__u16 off;           /* the field's offset in the entry */
	__u16 size;          /* NUM: 1, 2, 4, 8; STR: a char array's bytes (DYN: 4) */
	__u64 val;           /* NUM: the constant; STR: the string's index; jumps: target */
};

struct pm_tp_cfg {
	__u32 id;            /* the tracepoint's id: common_type */
	__u32 event;         /* pm_sample.event of its hits */
	__u16 fixed;         /* bytes of the entry without dynamic data */
	__u16 nr_dyn;
	__u16 dyn[PM_TP_MAX_DYN];    /* offsets of the dynamic fields, | PM_TP_DYN_REL */
	__u32 nr_insns;      /* the filter's; 0: every hit */
	__u32 pad;
	struct pm_tp_insn insn[PM_TPF_MAX_INSNS];
	char strs[PM_TPF_MAX_STRS][PM_TPF_STR_MAX];
};

/* after the frames of a pm_sample with PM_SF_RAW (and its copy, with PM_SF_UREGS) */
struct pm_raw {
	__u32 size;          /* bytes of data[] (the entry and its zero padding) */
	__u32 pad;
	__u8 data[];
};

#endif

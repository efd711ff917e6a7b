/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wire structs of the user-stack unwinder (bpf/unwind.bpf.c) shared with
 * user space (lib/collect/unwind*.c).  Fixed-width fields only.
 *
 * ehframe mode: user space turns each ELF's .eh_frame (or .debug_frame)
 * into a table of rows sorted by address.  A row says how to find the
 * caller's frame from any pc at or above row.pc up to the next row:
 *
 *   CFA       where the caller's stack pointer was (the canonical frame
 *             address): rsp + off, rbp + off, or a few special forms;
 *   rip       the return address, always at CFA - 8 on x86-64;
 *   rbp       saved at CFA + 8 * k, or unchanged (k == 0).
 *
 * Addresses in rows are the ELF's own virtual addresses (32 bits); a
 * mapping's bias turns a pc into one.  A row of type PM_UW_NONE is a gap
 * no FDE covers: the unwinder falls back to the frame pointer there.
 *
 * dwarf mode: the sample carries the user registers perf's
 * PERF_SAMPLE_REGS_USER would (x86-64 mask PM_UREGS_MASK, in bit order)
 * and a copy of the user stack from rsp up.
 */
#ifndef PERFMARK_BPF_UNWIND_WIRE_H
#define PERFMARK_BPF_UNWIND_WIRE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>    /* user space; BPF has vmlinux.h */
#endif
#include "perfmark_wire.h"

/* how the sample program gets user stacks (rodata ustack_mode) */
enum pm_ustack_mode {
	PM_US_FP = 0,          /* the kernel's frame-pointer walk (bpf_get_stack) */
	PM_US_EHFRAME = 1,     /* pm_unwind_user(): tables from .eh_frame */
	PM_US_DWARF = 2,       /* registers and a stack copy (copy_sample()) */
};

/* CFA rules, the low 4 bits of a row's rule */
enum pm_uw_cfa {
	PM_UW_NONE = 0,        /* no CFI covers this address: frame-pointer fallback */
	PM_UW_RSP = 1,         /* CFA = rsp + off */
	PM_UW_RBP = 2,         /* CFA = rbp + off */
	PM_UW_PLT = 3,         /* CFA = rsp + off + ((rip & 15) >= arg ? 8 : 0): .plt stubs */
	PM_UW_DEREF_RBP = 4,   /* CFA = *(rbp + off): stack realignment (DRAP) */
	PM_UW_REG = 5,         /* CFA = reg arg + off: known in the sampled frame only */
	PM_UW_END = 6,         /* outermost frame (return address undefined) */
	PM_UW_SIGNAL = 7,      /* signal trampoline: registers from the ucontext at rsp */
	PM_UW_UNSUPPORTED = 8, /* a rule the unwinder does not follow: the chain ends */
};

/*
 * rule: bits 0..3 type, bits 4..23 off (signed), bits 24..31 arg: the rbp
 * rule (signed k: rbp saved at CFA + 8k; 0: unchanged; PM_UW_RBP_LOST:
 * not recoverable) or, for PLT and REG, the rule's own argument.
 */
#define PM_UW_OFF_BITS   20
#define PM_UW_OFF_MIN    (-(1 << (PM_UW_OFF_BITS - 1)))
#define PM_UW_OFF_MAX    ((1 << (PM_UW_OFF_BITS - 1)) - 1)
#define PM_UW_RBP_LOST   (-128)
#define PM_UW_RULE(type, off, arg) \
	((__u32)(type) | ((__u32)(off) & ((1u << PM_UW_OFF_BITS) - 1)) << 4 | ((__u32)(arg) & 0xff) << 24)
#define PM_UW_TYPE(rule) ((rule) & 0xf)
#define PM_UW_OFF(rule)  (((__s32)((rule) << 8)) >> 12)
#define PM_UW_ARG(rule)  ((__s32)(__s8)((rule) >> 24))

struct pm_uw_row {
	__u32 pc;     /* ELF virtual address where the rule starts */
	__u32 rule;
};

/*
 * A pool's element is a block of rows, one page: a lookup in a pool is a
 * helper call (the verifier inlines none in an inner map whose size may
 * vary), so the search pays one per step between blocks and reads the
 * rows of its block directly.  Measured on xz at -F 4000 (doubling the
 * search in the BPF program), one row per element made the search about a
 * quarter of the unwinder's time.  Pools hold whole blocks; a table may
 * start anywhere in one.
 */
#define PM_UW_BLOCK_ROWS 512
struct pm_uw_block {
	struct pm_uw_row r[PM_UW_BLOCK_ROWS];
};

/*
 * The x86-64 signal frame (rt_sigframe): the ucontext's saved registers,
 * as offsets from the trampoline's rsp.
 */
#define PM_UW_SIGFRAME_RBP 120
#define PM_UW_SIGFRAME_RSP 160
#define PM_UW_SIGFRAME_RIP 168

/*
 * Tables live in pools: large arrays of rows (an array of maps holds
 * them), each table a run of rows [first, first + nr_rows) in one pool.
 * Filling a pool is a plain array write; only a new pool costs an update
 * of the array of maps (which waits for an RCU grace period).
 *
 * Mappings: an LPM trie keyed by (pid, address) in network byte order,
 * one prefix per aligned block of an executable mapping.
 */
struct pm_uw_map_key {
	__u32 prefixlen;   /* 32 + significant address bits */
	__u32 pid;         /* big endian */
	__u64 addr;        /* big endian */
};

struct pm_uw_map {
	__u32 pool;        /* index in the array of pools */
	__u32 first;       /* the table's first row in the pool */
	__u32 nr_rows;
	__u32 gen;         /* which filling of the table, never reused by a
			    * recorder: the walk's row cache keys on it (0: an
			    * older perfmark's maps, not cached) */
	__u64 bias;        /* runtime address - ELF virtual address */
	__u64 start, end;  /* the whole mapping, runtime addresses: the unwinder
			    * keeps the last one and skips the trie lookup for
			    * the next frame inside it */
};

/*
 * uw_pids: a process whose mappings user space installed, and the image
 * they are of: since is the time (CLOCK_MONOTONIC ns, the sideband's and
 * bpf_ktime_get_ns()'s clock) of the event that began it as user space
 * saw it: its fork, its exec (the COMM record) or the read of /proc.  The
 * walk trusts the entry only if the process began no image after since
 * (its leader's start_time; its last exec, stamped at sched_prepare_exec,
 * before the kernel writes the COMM record): an exec, or a pid used again,
 * that user space has not read yet gets its stack copied instead.
 */
struct pm_uw_pid {
	__u64 since;
};

#define PM_UW_MAX_POOLS    64
#define PM_UW_MAX_ROWS     (1u << 24)   /* rows in one table */
#define PM_UW_BLOCK_STEPS  16           /* log2(PM_UW_MAX_ROWS / PM_UW_BLOCK_ROWS + 2) */
#define PM_UW_ROW_STEPS    9            /* log2(PM_UW_BLOCK_ROWS) */

/* why a user stack stopped (counters in unwind.bpf.c's .bss) */
enum pm_uw_end {
	PM_UW_END_OK = 0,          /* outermost frame reached */
	PM_UW_END_DEPTH,           /* frame limit reached */
	PM_UW_END_NO_TABLE,        /* no table and no frame pointer either */
	PM_UW_END_READ,            /* stack memory unreadable */
	PM_UW_END_RULE,            /* unsupported or inconsistent CFI */
	PM_UW_END_NR
};

/* process seen for the first time: user space loads its mappings */
struct pm_uw_new_pid {
	__u32 rec_type;    /* PM_REC_UNWIND_PID */
	__u32 pid;
};

/* ehframe mode: user frames, written after the kernel frames of a pm_sample */
struct pm_uframes {
	__u64 ip[PM_MAX_STACK];
};

/*
 * dwarf mode: a pm_sample with PM_SF_UREGS has, after its frames, this
 * block and then `size` bytes of user stack copied from regs[SP] up.
 */
struct pm_uregs {
	__u64 abi;                   /* PERF_SAMPLE_REGS_ABI_64 */
	__u64 regs[20];              /* PM_UREGS_NR, in PM_UREGS_MASK bit order */
	__u64 size;                  /* stack bytes that follow */
};

/* dwarf mode: perf's user register set on x86-64 (no segment registers) */
#define PM_UREGS_MASK  0xff0fffull   /* AX..SS (0..11 but DS ES FS GS), R8..R15 */
#define PM_UREGS_NR    20
#define PM_UREGS_ABI_64 2            /* PERF_SAMPLE_REGS_ABI_64 */
#define PM_MAX_USTACK  65528         /* largest stack copy perf accepts */

#endif

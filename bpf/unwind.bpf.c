// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * User stacks for the sample program (bpf/perfmark.bpf.c), linked into the
 * same object (bpftool gen object):
 *
 *   pm_unwind_user()  --call-graph ehframe: walk the user stack with the
 *                     tables user space built from each ELF's .eh_frame
 *                     (bpf/unwind_wire.h), one frame per bpf_loop() step,
 *                     falling back to the frame pointer where no table
 *                     covers an address.
 *
 *   uw_prepare_exec   stamps each exec as it begins: the walk trusts the
 *                     mappings user space installed for a process only
 *                     if it began no image since (struct pm_uw_pid).
 *
 * A global function: the verifier checks it once, on its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "perfmark_wire.h"
#include "uregs.bpf.h"
#include "unwind_wire.h"

#define UW_STEP_READ(ctx, dst, len, addr) bpf_probe_read_user((dst), (len), (void *)(addr))
#define UW_STEP_BARRIER(x) barrier_var(x)
#include "unwind_step.h"

/* pools of table rows, any size (BPF_F_INNER_MAP), written by user space */
struct uw_rows {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pm_uw_block);
} uw_rows_proto SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, PM_UW_MAX_POOLS);
	__type(key, __u32);
	__array(values, struct uw_rows);
} uw_pools SEC(".maps");

/* (pid, address) -> the executable mapping holding it */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 16);   /* resized before load */
	__type(key, struct pm_uw_map_key);
	__type(value, struct pm_uw_map);
} uw_maps SEC(".maps");

/* processes whose mappings user space has installed in uw_maps, and since when */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, struct pm_uw_pid);
} uw_pids SEC(".maps");

/*
 * When a task last began an exec (sched_prepare_exec): kept with the task,
 * so it goes with it, and a pid used again starts without one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} uw_exec_ns SEC(".maps");

/* how user stacks ended, and how frames were found (read by user space) */
__u64 uw_ends[PM_UW_END_NR] = {};
__u64 uw_frames_cfi = 0;
__u64 uw_frames_fp = 0;
/* samples whose process's installed mappings were of an older image (copied) */
__u64 uw_stale = 0;
/* samples with a frame in a file mapping user space has not installed yet (copied) */
__u64 uw_unknown = 0;
/* walks asked for while this CPU's was under way (left to the caller's fallback) */
__u64 uw_nested = 0;

/*
 * Is this CPU's uw_state in use?  A program that walks where interrupts
 * are on (a tracepoint's, in a system call) can be interrupted by a
 * cpu-clock sample, whose walk would overwrite the state (and the cache
 * entry) the first is part way through.  The second one is left to its
 * caller's fallback (a copy of the stack, or frame pointers).  Interrupts
 * nest, so a plain flag does.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} uw_busy SEC(".maps");

/*
 * The rules found lately, per CPU, by (table generation, ELF address): a
 * profile's samples walk the same few hundred return addresses again and
 * again, and a hit costs a few loads where the search costs a helper call
 * per step between blocks.  Direct-mapped; a generation is never reused,
 * so an entry of an evicted table just never matches again.
 */
#define UW_CACHE 1024
struct uw_cached {
	__u32 gen, rel, rule, pad;
};

struct uw_state {
	struct pm_uw_cursor cur;   /* the frame being unwound (unwind_step.h) */
	__u64 uregs[PM_UREGS_NR];  /* the sampled frame's registers (perf order) */
	__u32 pid;
	__u32 n;               /* frames written */
	__u32 max;             /* frames wanted at most (--max-stack's room), <= PM_MAX_STACK */
	__u32 end;             /* PM_UW_END_* + 1 once ended */
	__u32 unknown;         /* stopped at a file mapping not installed: copy the stack */
	__u64 cfi, fp;         /* frames found each way */
	struct pm_uw_map m;    /* the last frame's mapping (m.end 0: none) */
	struct uw_cached cache[UW_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_state);
} uw_state SEC(".maps");

struct uw_loop {
	struct uw_state *st;
	struct pm_uframes *out;
};

static __always_inline long uw_stop(struct uw_state *st, __u32 why)
{
	st->end = why + 1;
	return 1;
}

/* the frame pointer's step, counted */
static __always_inline long fp_step(struct uw_state *st)
{
	int end = pm_uw_fp_step(&st->cur, NULL);

	if (end)
		return uw_stop(st, end - 1);
	st->fp++;
	return 0;
}

static long vma_file_exec(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	*(__u32 *)data = vma->vm_file && (vma->vm_flags & 0x4 /* VM_EXEC */);
	return 0;
}

/*
 * No mapping installed at pc: code of no file (a JIT's: its frame pointers
 * are all there is), or a file the process mapped that user space has not
 * installed yet (the MMAP2 not read, or read after this process's first
 * sample was).  Frame pointers there end most chains of code built without
 * them, so the stack is copied for user space, which reads the mapping
 * first; every file mapping it knows is installed, with a table or without.
 */
static __always_inline bool uw_not_installed(struct uw_state *st)
{
	__u32 file_exec = 0;

	return !bpf_find_vma(bpf_get_current_task_btf(), st->cur.pc, vma_file_exec, &file_exec, 0) &&
	       file_exec;
}

/*
 * The row covering ELF address rel in rows [first, first + nr) of a pool,
 * or NULL: which block, by the first row of each (a helper call a step),
 * then which row of that block (plain loads).
 */
static __always_inline struct pm_uw_row *find_row(void *pool, __u32 first, __u32 nr, __u64 rel)
{
	const __u32 BR = PM_UW_BLOCK_ROWS;
	__u32 lo = first / BR, hi, mid, rlo, rhi, i, end = first + nr;
	struct pm_uw_block *b, *cur;

	if (rel > 0xffffffffull || !nr || end < first)
		return NULL;
	hi = (end - 1) / BR + 1;
	cur = bpf_map_lookup_elem(pool, &lo);
	if (!cur || cur->r[first & (BR - 1)].pc > rel)
		return NULL;
	/* every block after the first starts inside the table */
	for (i = 0; i < PM_UW_BLOCK_STEPS; i++) {
		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		b = bpf_map_lookup_elem(pool, &mid);
		if (!b)
			return NULL;
		if (b->r[0].pc <= rel) {
			lo = mid;
			cur = b;
		} else {
			hi = mid;
		}
	}
	rlo = lo * BR < first ? first - lo * BR : 0;
	rhi = end - lo * BR < BR ? end - lo * BR : BR;
	for (i = 0; i < PM_UW_ROW_STEPS + 1; i++) {
		if (rhi - rlo <= 1)
			break;
		mid = rlo + (rhi - rlo) / 2;
		if (cur->r[mid & (BR - 1)].pc <= rel)
			rlo = mid;
		else
			rhi = mid;
	}
	return cur->r[rlo & (BR - 1)].pc <= rel ? &cur->r[rlo & (BR - 1)] : NULL;
}

/* the row's rule's step (unwind_step.h), counted; the sampled frame's registers are known */
static __always_inline long cfi_step(struct uw_state *st, __u32 rule)
{
	int end = pm_uw_step(&st->cur, rule, st->n == 1, st->uregs, NULL);

	if (end)
		return uw_stop(st, end - 1);
	st->cfi++;
	return 0;
}

static long uw_frame(__u32 i, void *data)
{
	struct uw_loop *lc = data;
	struct uw_state *st = lc->st;
	struct pm_uframes *out = lc->out;
	struct pm_uw_map_key key;
	struct pm_uw_map *m;
	struct pm_uw_row *r;
	struct uw_cached *c;
	void *pool;
	__u32 n = st->n, rule;
	__u64 rel;

	if (n >= PM_MAX_STACK || n >= st->max)
		return uw_stop(st, PM_UW_END_DEPTH);
	out->ip[n] = st->cur.pc;
	st->n = n + 1;
	/* callers are mostly in the callee's own object: one trie walk per
	 * object rather than per frame */
	m = &st->m;
	if (st->cur.pc < m->start || st->cur.pc >= m->end) {
		key.prefixlen = 96;
		key.pid = bpf_htonl(st->pid);
		key.addr = bpf_cpu_to_be64(st->cur.pc);
		m = bpf_map_lookup_elem(&uw_maps, &key);
		if (!m) {
			st->m.end = 0;
			if (uw_not_installed(st)) {
				st->unknown = 1;
				return 1;
			}
			return fp_step(st);
		}
		st->m = *m;
		m = &st->m;
	}
	if (!m->nr_rows)               /* installed without a table */
		return fp_step(st);
	rel = st->cur.pc - m->bias - (st->cur.exact ? 0 : 1);
	c = &st->cache[((__u32)rel * 2654435761u ^ m->gen * 2246822519u) >> 22 & (UW_CACHE - 1)];
	if (m->gen && c->gen == m->gen && c->rel == rel)
		return cfi_step(st, c->rule);
	pool = bpf_map_lookup_elem(&uw_pools, &m->pool);
	if (!pool)
		return fp_step(st);
	r = find_row(pool, m->first, m->nr_rows, rel);
	if (!r || PM_UW_TYPE(r->rule) == PM_UW_NONE)
		return fp_step(st);
	rule = r->rule;
	if (m->gen && rel <= 0xffffffffull) {
		c->gen = m->gen;
		c->rel = rel;
		c->rule = rule;
	}
	return cfi_step(st, rule);
}


/*
 * The exec is stamped before the kernel writes its COMM record (begin_new_exec
 * fires this tracepoint first), so the COMM's time, which user space installs
 * the new image with, is never older than the stamp.  The task that execs
 * leads its process afterwards.  Attached in ehframe mode only.
 */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(uw_prepare_exec, struct task_struct *task, struct linux_binprm *bprm)
{
	__u64 *t = bpf_task_storage_get(&uw_exec_ns, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (t)
		*t = bpf_ktime_get_ns();
	return 0;
}

/*
 * Are the installed mappings of the image the current process runs?  Not
 * when it began after user space's since: an exec, or a new process under
 * an old pid, whose sideband is not read yet.  A thread's process began
 * with its leader (de_thread() gives an exec'ing thread the leader's
 * start_time).
 */
static __always_inline bool uw_current(const struct pm_uw_pid *v)
{
	struct task_struct *leader = bpf_get_current_task_btf()->group_leader;
	__u64 began = BPF_CORE_READ(leader, start_time), *exec;

	exec = bpf_task_storage_get(&uw_exec_ns, leader, NULL, 0);
	if (exec && *exec > began)
		began = *exec;
	return v->since >= began;
}

/* pm_unwind_user's walk, this CPU's uw_state its own (uw_busy) */
static __always_inline int uw_walk(__u32 pid, struct pm_uframes *out, __u32 max)
{
	__u32 zero = 0, end;
	struct uw_loop lc;
	struct uw_state *st;

	st = bpf_map_lookup_elem(&uw_state, &zero);
	if (!st || !user_regs(st->uregs))
		return 0;
	st->cur.pc = st->uregs[UREG_IP];
	st->cur.sp = st->uregs[UREG_SP];
	st->cur.bp = st->uregs[UREG_BP];
	st->pid = pid;
	st->n = 0;
	st->max = max < PM_MAX_STACK ? max : PM_MAX_STACK;
	st->end = 0;
	st->unknown = 0;
	st->cur.exact = 1;
	st->cfi = st->fp = 0;
	st->m.start = st->m.end = 0;
	lc.st = st;
	lc.out = out;
	bpf_loop(PM_MAX_STACK + 1, uw_frame, &lc, 0);
	if (st->unknown) {
		__sync_fetch_and_add(&uw_unknown, 1);
		return -1;
	}
	end = st->end ? st->end - 1 : PM_UW_END_DEPTH;
	if (end < PM_UW_END_NR)
		__sync_fetch_and_add(&uw_ends[end], 1);
	__sync_fetch_and_add(&uw_frames_cfi, st->cfi);
	__sync_fetch_and_add(&uw_frames_fp, st->fp);
	return st->n > st->max ? st->max : st->n;
}

/*
 * Unwind the user stack of the current task into out, at most max frames
 * (what --max-stack leaves after the kernel's); returns the frames written,
 * or -1 when user space has not installed the mappings of the process's
 * current image, or not all of them (the caller copies the stack instead,
 * as dwarf mode does), and when this CPU's walk is under way (uw_busy:
 * this one was interrupted into, and is left to the caller's fallback).
 */
__noinline int pm_unwind_user(struct bpf_perf_event_data *ctx, __u32 pid, struct pm_uframes *out,
			      __u32 max)
{
	__u32 zero = 0, *busy;
	struct pm_uw_pid *v;
	int n;

	if (!ctx || !out)
		return 0;
	v = bpf_map_lookup_elem(&uw_pids, &pid);
	if (!v)
		return -1;
	if (!uw_current(v)) {
		__sync_fetch_and_add(&uw_stale, 1);
		return -1;
	}
	busy = bpf_map_lookup_elem(&uw_busy, &zero);
	if (!busy)
		return -1;
	if (*busy) {
		__sync_fetch_and_add(&uw_nested, 1);
		return -1;
	}
	*busy = 1;
	n = uw_walk(pid, out, max);
	*busy = 0;
	return n;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Off-CPU time (--off-cpu[=MIN_NS]; records: bpf/offcpu_wire.h).
 *
 *   off_switch  sched_switch: the thread going off (prev) gets its time,
 *               state and stack noted in its own task storage; the thread
 *               coming on (next), if noted, is written out: one record, or
 *               summed into off_agg when it was off less than MIN_NS.
 *   off_waking  sched_waking: who woke a noted thread (a task, or an
 *               interrupt), kept with it until it runs.
 *
 * Stacks are taken as the sample program takes them (the recording's
 * --call-graph mode; frame pointers without one): kernel frames with
 * bpf_get_stack, user frames with bpf_get_stack, pm_unwind_user (ehframe)
 * or, for dwarf, a copy of the registers and stack in a second storage.
 *
 * The per-thread state lives in task storage: it goes with the thread (no
 * table to fill or clean, no bound on threads but the system's), created
 * at a target thread's first switch.  Kernel threads and exiting threads
 * are left out.
 *
 * Included by perfmark.bpf.c: the same ring, filter and helpers.  Nothing
 * is attached unless the recording asks for --off-cpu.
 */
#include "offcpu_wire.h"

#define PF_EXITING     0x00000004
#define PF_KTHREAD     0x00200000
#define OFF_IRQ_MASK   0x00ff0100   /* preempt count: NMI, hard irq, serving a softirq */

const volatile __u64 offcpu_min_ns = 0;
/*
 * Where this CPU's preempt count is, from its runqueue: both are per-CPU
 * variables, and BTF gives their offsets in the per-CPU section (0: not
 * known).  The kernel here has no CONFIG_KALLSYMS_ALL: a per-CPU ksym
 * would not resolve.
 */
const volatile __s64 pc_from_rq = 0;
/* __schedule's code, from kallsyms (0: not known): kernel stacks start there */
const volatile __u64 sched_lo = 0;
const volatile __u64 sched_hi = 0;
/* frames of the tracing machinery above __schedule, as last found */
__u32 off_kskip = 0;

/* intervals written one each, summed into off_agg, and lost (ring and map full, or no storage) */
__u64 offcpu_samples = 0;
__u64 offcpu_merged = 0;
__u64 offcpu_lost = 0;

/* a thread's record as it is built: the header and room for every frame */
struct off_slot {
	struct pm_offcpu h;
	__u64 frames[2 * PM_MAX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_slot);
} off_slot SEC(".maps");

/* dwarf mode: the registers and stack copied at the switch */
struct off_copy {
	struct pm_uregs u;
	__u8 data[PM_OFF_USTACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_copy);
} off_copy SEC(".maps");

/* short intervals, summed per thread, state and stack; user space drains it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PM_OFF_AGG_MAX);
	__type(key, struct pm_off_key);
	__type(value, struct off_slot);
} off_agg SEC(".maps");

/*
 * Does sched_waking run in an interrupt (hard, soft, NMI)?  The preempt
 * count says: this CPU's runqueue is current's (its cfs_rq's), the count a
 * fixed distance from it.  Unknown: false (the task running is named).
 */
static __always_inline bool off_in_irq(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rq *rq;
	__u32 pc;

	if (!pc_from_rq || !bpf_core_field_exists(struct cfs_rq, rq))
		return false;
	rq = BPF_CORE_READ(t, se.cfs_rq, rq);
	if (!rq || bpf_probe_read_kernel(&pc, sizeof(pc), (void *)((__u64)rq + pc_from_rq)))
		return false;
	return pc & OFF_IRQ_MASK;
}

/* dwarf: the copy of a thread going off (bytes of ustack_size, at most PM_OFF_USTACK) */
static __always_inline void off_take_copy(struct task_struct *t)
{
	struct off_copy *c = bpf_task_storage_get(&off_copy, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 want = ustack_size < PM_OFF_USTACK ? ustack_size : PM_OFF_USTACK, len, sp;

	if (!c)
		return;
	c->u.size = 0;
	if (!user_regs(c->u.regs))
		return;
	c->u.abi = PM_UREGS_ABI_64;
	sp = c->u.regs[UREG_SP];
	/* all at once; where the stack ends sooner, up to the end of its page */
	barrier_var(want);
	if (want > PM_OFF_USTACK)
		want = PM_OFF_USTACK;
	if (!bpf_probe_read_user(c->data, want, (void *)sp)) {
		c->u.size = want & ~7ull;
		return;
	}
	len = 4096 - (sp & 4095);
	if (len > want)
		len = want;
	if (!bpf_probe_read_user(c->data, len, (void *)sp))
		c->u.size = len & ~7ull;
}

/*
 * The kernel frames of the thread going off, from __schedule down: above
 * it are this program and the tracepoint's machinery, as many frames as
 * the tracers attached to sched_switch make (another one adds an
 * iterator).  The count found last is tried first; frames[0] says if it
 * still holds.
 */
static __always_inline __u64 off_kstack(void *ctx, __u64 *frames)
{
	__u32 skip = off_kskip & BPF_F_SKIP_FIELD_MASK, i;
	long n = bpf_get_stack(ctx, frames, PM_MAX_STACK * sizeof(__u64), skip);

	if (n <= 0)
		return 0;
	if (!sched_hi || (frames[0] >= sched_lo && frames[0] < sched_hi))
		return (__u64)n / sizeof(__u64);
	n = bpf_get_stack(ctx, frames, PM_MAX_STACK * sizeof(__u64), 0);
	for (i = 0; i < 12; i++)
		if (i >= (__u64)n / sizeof(__u64) || (frames[i] >= sched_lo && frames[i] < sched_hi))
			break;
	if (n <= 0 || i == 12 || i >= (__u64)n / sizeof(__u64))
		return n > 0 ? (__u64)n / sizeof(__u64) : 0;   /* not found: all of it */
	off_kskip = i;
	if (i)
		n = bpf_get_stack(ctx, frames, PM_MAX_STACK * sizeof(__u64), i);
	return n > 0 ? (__u64)n / sizeof(__u64) : 0;
}

/* prev goes off the CPU: note when, why and where */
static __always_inline void off_out(void *ctx, struct task_struct *prev, bool preempt,
				    __u32 prev_state, __u64 now)
{
	struct off_slot *sl;
	__u64 id, nk = 0, nu = 0;
	__u32 uid;
	long n;

	if (prev->flags & (PF_KTHREAD | PF_EXITING))
		return;
	/* prev is current here: the filter and helpers the samples use apply */
	if (!current_ids(&id, false))
		return;
	uid = task_owner_uid();
	if (!wanted(id >> 32, uid))
		return;
	sl = bpf_task_storage_get(&off_slot, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sl) {
		__sync_fetch_and_add(&offcpu_lost, 1);
		return;
	}
	sl->h.rec_type = PM_REC_OFFCPU;
	sl->h.pid = id >> 32;
	sl->h.tid = (__u32)id;
	sl->h.uid = uid;
	/* preempted, or woken before it could sleep (TASK_RUNNING is 0): waits for a CPU */
	sl->h.state = preempt || !prev_state ? PM_OFF_RUNNABLE : PM_OFF_BLOCKED;
	sl->h.task_state = preempt ? 0 : prev_state;
	sl->h.waker_flags = 0;
	sl->h.waker_pid = 0;
	sl->h.waker_tid = 0;
	sl->h.waker_uid = 0;
	sl->h.count = 1;
	sl->h.flags = 0;
	nk = off_kstack(ctx, sl->frames);
	if (nk > PM_MAX_STACK)
		nk = PM_MAX_STACK;
	if (ustack_mode == PM_US_DWARF) {
		off_take_copy(prev);
		sl->h.flags = PM_SF_UREGS;
	} else {
		n = -2;
		/* the unwinder reads no context: any memory of the size will do */
		if (ustack_mode == PM_US_EHFRAME)
			n = pm_unwind_user((struct bpf_perf_event_data *)sl, id >> 32,
					   (struct pm_uframes *)&sl->frames[nk]);
		if (n < 0) {   /* fp, or no tables for this process yet */
			n = bpf_get_stack(ctx, &sl->frames[nk], PM_MAX_STACK * sizeof(__u64),
					  BPF_F_USER_STACK);
			n = n > 0 ? n / sizeof(__u64) : 0;
		}
		if (n > 0)
			nu = n;
		if (nu > PM_MAX_STACK)
			nu = PM_MAX_STACK;
	}
	sl->h.nr_kstack = nk;
	sl->h.nr_ustack = nu;
	sl->h.time = now;   /* last: the thread is noted */
}

/* the record of a slot, as it goes into the ring; false: the ring is full */
static __always_inline bool off_emit(struct off_slot *sl, struct task_struct *t, __u64 now)
{
	__u64 nk = sl->h.nr_kstack, nu = sl->h.nr_ustack, size;
	struct off_copy *c;
	struct pm_uregs *u;
	__u8 *rec;

	if (!(sl->h.flags & PM_SF_UREGS)) {
		size = sizeof(sl->h) + (nk + nu) * sizeof(__u64);
		barrier_var(size);
		if (size > sizeof(*sl))
			return true;   /* cannot be: dropped, not retried */
		return !bpf_ringbuf_output(&rb, sl, size, rb_flags(now));
	}
	/* dwarf: header, kernel frames, registers and the copy, reserved at the largest */
	c = bpf_task_storage_get(&off_copy, t, NULL, 0);
	if (!c)
		return true;
	rec = bpf_ringbuf_reserve(&rb, sizeof(sl->h) + PM_MAX_STACK * sizeof(__u64) +
				  sizeof(struct pm_uregs) + PM_OFF_USTACK, 0);
	if (!rec)
		return false;
	if (nk > PM_MAX_STACK)
		nk = PM_MAX_STACK;
	size = sizeof(sl->h) + nk * sizeof(__u64);
	barrier_var(size);
	if (size > sizeof(sl->h) + PM_MAX_STACK * sizeof(__u64))
		size = sizeof(sl->h);
	bpf_probe_read_kernel(rec, size, sl);
	((struct pm_offcpu *)rec)->nr_kstack = (size - sizeof(sl->h)) / sizeof(__u64);
	((struct pm_offcpu *)rec)->nr_ustack = 0;
	u = (struct pm_uregs *)(rec + size);
	bpf_probe_read_kernel(u, sizeof(*u), &c->u);
	if (u->size > PM_OFF_USTACK)
		u->size = 0;
	bpf_probe_read_kernel(u + 1, PM_OFF_USTACK, c->data);
	bpf_ringbuf_submit(rec, rb_flags(now));
	return true;
}

struct off_hash {
	struct off_slot *sl;
	__u64 n, h;
};

static long off_hash_step(__u32 i, void *data)
{
	struct off_hash *hs = data;

	if (i >= hs->n || i >= 2 * PM_MAX_STACK)
		return 1;
	hs->h = (hs->h ^ hs->sl->frames[i]) * 0x100000001b3ull;
	hs->h ^= hs->h >> 29;
	return 0;
}

/* sum a short interval under its thread, state and stack; false: the map is full */
static __always_inline bool off_merge(struct off_slot *sl, struct task_struct *t, __u64 now)
{
	struct pm_off_key key;
	struct off_hash hs = { .sl = sl, .h = 0xcbf29ce484222325ull };
	struct off_slot *v;
	struct off_copy *c;
	__u64 nk = sl->h.nr_kstack;

	if (sl->h.flags & PM_SF_UREGS) {
		/* dwarf: no copy is kept for a sum; its stack is the kernel's and the user pc */
		c = bpf_task_storage_get(&off_copy, t, NULL, 0);
		sl->h.flags = 0;
		sl->h.nr_ustack = 0;
		if (c && c->u.abi && nk < PM_MAX_STACK) {
			sl->frames[nk] = c->u.regs[UREG_IP];
			sl->h.nr_ustack = 1;
			hs.h ^= c->u.regs[UREG_SP];
		}
	}
	key.pid = sl->h.pid;
	key.tid = sl->h.tid;
	key.state = sl->h.state;
	key.task_state = sl->h.task_state;
	key.nr_kstack = sl->h.nr_kstack;
	key.nr_ustack = sl->h.nr_ustack;
	hs.n = (__u64)sl->h.nr_kstack + sl->h.nr_ustack;
	bpf_loop(2 * PM_MAX_STACK, off_hash_step, &hs, 0);
	key.hash = hs.h;
	v = bpf_map_lookup_elem(&off_agg, &key);
	if (v) {
		__sync_fetch_and_add(&v->h.period, sl->h.period);
		__sync_fetch_and_add(&v->h.count, 1);
		v->h.end = now;
		v->h.cpu = sl->h.cpu;
		return true;
	}
	return !bpf_map_update_elem(&off_agg, &key, sl, BPF_NOEXIST);
}

/* next runs again: its interval, if noted, goes out */
static __always_inline void off_in(struct task_struct *next, __u64 now)
{
	struct off_slot *sl = bpf_task_storage_get(&off_slot, next, NULL, 0);
	__u64 d;
	bool ok;

	if (!sl || !sl->h.time)
		return;
	d = now - sl->h.time;
	sl->h.end = now;
	sl->h.period = d;
	sl->h.count = 1;
	sl->h.cpu = bpf_get_smp_processor_id();
	if (d >= offcpu_min_ns) {
		ok = off_emit(sl, next, now);
		if (ok)
			__sync_fetch_and_add(&offcpu_samples, 1);
		else if ((ok = off_merge(sl, next, now)))   /* the ring is full: sum it, not lose it */
			__sync_fetch_and_add(&offcpu_merged, 1);
	} else {
		ok = off_merge(sl, next, now);
		if (ok)
			__sync_fetch_and_add(&offcpu_merged, 1);
		else if ((ok = off_emit(sl, next, now)))
			__sync_fetch_and_add(&offcpu_samples, 1);
	}
	if (!ok)
		__sync_fetch_and_add(&offcpu_lost, 1);
	sl->h.time = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(off_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	off_out(ctx, prev, preempt, prev_state, now);
	off_in(next, now);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(off_waking, struct task_struct *p)
{
	struct off_slot *sl = bpf_task_storage_get(&off_slot, p, NULL, 0);
	__u64 id;

	if (!sl || !sl->h.time || sl->h.waker_flags)
		return 0;
	if (off_in_irq()) {
		sl->h.waker_flags = PM_OFF_WAKER_IRQ;
		return 0;
	}
	/* a waker the recorder cannot see is pid 0 */
	current_ids(&id, true);
	sl->h.waker_pid = id >> 32;
	sl->h.waker_tid = (__u32)id;
	sl->h.waker_uid = task_owner_uid();
	sl->h.waker_flags = PM_OFF_WAKER_TASK;
	return 0;
}

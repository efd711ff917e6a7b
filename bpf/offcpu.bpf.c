// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Off-CPU time (--off-cpu[=MIN_NS]; records: bpf/offcpu_wire.h).
 *
 *   off_switch  sched_switch: the thread going off (prev) gets its time,
 *               state and system call noted in its own task storage; the
 *               thread coming on (next), if noted, is written out: one
 *               record, or summed into off_agg when it was off less than
 *               MIN_NS.
 *   off_sys_exit  sys_exit: a thread that waited MIN_NS or more in a
 *               system call leaves it: its record goes out, with its user
 *               stack taken now.
 *   off_waking  sched_waking: who woke a noted thread (a task, or an
 *               interrupt), kept with it until it runs; and where: the
 *               waker's kernel and user stack (frame pointers), when the
 *               interval is MIN_NS long already, so will be written alone,
 *               and 100 us (PM_OFF_WAKER_MIN_NS).
 *
 * Where the time goes (bench/bench-offcpu.sh, and a build that timed each
 * part): the user stack (bpf_get_stack, fp, 5-8 frames) costs 1.5-2 us,
 * the kernel's walk of a task that is not running (bpf_get_task_stack)
 * about 2.7 us however few its frames; all the rest of a switch about
 * 0.3 us.  Most intervals are short (a pipe ping-pong: all of them) and
 * are summed, so neither stack is taken for them:
 *
 * - User stacks: a thread waiting inside a system call (orig_ax its
 *   number, ax still -ENOSYS; not exec, not a 32-bit task) has the same
 *   user registers and frames until it leaves the call, so its user stack
 *   is taken there, in its own context, and only when the interval is
 *   written alone: at sys_exit, or at its next switch-out if it leaves a
 *   CPU again first (still in the call).  The kernel gives no user stack
 *   of another task, so not at the switch-in.  A sum of such waits is
 *   keyed by thread, state, system call and the user pc it entered the
 *   call at (its user part: that pc).  Preempted in user code, or waiting
 *   in an exception (a page fault): the stack is taken at the switch, as
 *   the sample program takes them (the recording's --call-graph mode;
 *   frame pointers without one), and a sum is keyed by it.  dwarf: the
 *   registers and stack are copied at the switch (a sum keeps the pc).
 *   ehframe: taken at the switch too, where interrupts are off: the walk
 *   keeps its state per CPU (uw_state), which a cpu-clock sample taken
 *   during a sys_exit walk would reuse (collector_offcpu.c).
 * - Kernel stacks are taken as the thread comes back, with
 *   bpf_get_task_stack: it has not run since, so its kernel stack is as it
 *   left it, and the walk is made only for an interval written on its own
 *   or the first of a sum.  The kernel's walk of a task that is not
 *   running leaves out the scheduler's own functions (.sched.text:
 *   schedule, do_nanosleep, schedule_timeout, the mutex and rwsem slow
 *   paths), as /proc/PID/stack does: a stack starts where the thread chose
 *   to wait.  A sum's kernel stack is its first interval's.
 * - The recording's own process (pm_cfg.self_pid: perfmarkd, or perfmark
 *   record) is not noted: its waits are its drain timer's, and each one
 *   would be a record for its next drain to write.
 * - Nothing wakes the reader per record (rb_flags: it drains on a timer).
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
#include "offcpu_clock.bpf.h"

#define PF_IDLE        0x00000002
#define PF_EXITING     0x00000004
#define PF_KTHREAD     0x00200000
#define OFF_IRQ_MASK   0x00ff0100   /* preempt count: NMI, hard irq, serving a softirq */
#define OFF_ENOSYS     38           /* pt_regs->ax while a system call has not returned */
#define OFF_USER_CS    0x33         /* __USER_CS: a 64-bit task (compat numbers differ) */
#define OFF_NR_EXECVE  59           /* a successful exec returns to other user registers */
#define OFF_NR_EXECVEAT 322

const volatile __u64 offcpu_min_ns = 0;
/*
 * User stacks of waits in a system call taken as the thread leaves it
 * (off_sys_exit attached), or at the switch.  sys_exit runs at every
 * system call of the machine (110-150 ns with bpf_stats): it pays where
 * the recorded threads switch often (a recording of a command), not for
 * -a on an idle machine, where the calls outnumber the switches 20 to 1
 * (bench-offcpu, collector_offcpu.c).
 */
const volatile __u32 offcpu_lazy = 0;
/*
 * Where this CPU's preempt count is, from its runqueue: both are per-CPU
 * variables, and BTF gives their offsets in the per-CPU section (0: not
 * known).  The kernel here has no CONFIG_KALLSYMS_ALL: a per-CPU ksym
 * would not resolve.
 */
const volatile __s64 pc_from_rq = 0;

/* intervals written one each, summed into off_agg, and lost (ring and map full, or no storage) */
__u64 offcpu_samples = 0;
__u64 offcpu_merged = 0;
__u64 offcpu_lost = 0;
/* of those, intervals whose end no switch program saw (off_unseen) */
__u64 offcpu_unseen = 0;
/*
 * of those, intervals blocked whose wakeup no off_waking saw: no waker
 * named (waker_flags 0).  The kernel does not always deliver sched_waking:
 * under load a timer's wakeup of a thread in nanosleep reached no program
 * and no perf event either (perf record -e sched:sched_waking,sched_wakeup
 * of the same run had neither for it, then its switch-in), as switches go
 * unseen (off_unseen).  Counted, so that a waker left out is said.
 */
__u64 offcpu_nowaker = 0;

/*
 * a thread off the CPU: the record's header, the system call, the user
 * frames; lazy: its user frames are not taken yet (it waits in a system
 * call), pc is where it entered it; pending: it ran again after MIN_NS or
 * more, its kernel frames are in kfr, and its record goes out when it
 * leaves the system call (or leaves a CPU again first)
 */
struct off_task {
	struct pm_offcpu h;
	__s64 sysno;                    /* orig_ax: the system call it left in, or < 0 */
	__u64 woken;                    /* when sched_waking woke it (0: not yet) */
	__u64 pc;                       /* lazy: the user pc it entered the system call at */
	__u32 lazy, pending;
	__u32 nr_kfr, pad;
	__u64 ufr[PM_MAX_STACK];
	__u64 wfr[PM_OFF_WSTACK];       /* the waker's kernel, then user frames */
	__u64 kfr[PM_MAX_STACK];        /* pending: the kernel frames it left with */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_task);
} off_task SEC(".maps");

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

/* a record as it goes out: the header, kernel frames, user frames, the waker's */
struct off_slot {
	struct pm_offcpu h;
	__u64 frames[2 * PM_MAX_STACK + PM_OFF_WSTACK];
};

/* where a record is built, per CPU (sched_switch runs with interrupts off) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_slot);
} off_build SEC(".maps");

/*
 * Short intervals, summed per thread, state, system call and user stack,
 * in one of two maps: the one off_ctl names.  User space empties the other
 * (collector_offcpu.c): it switches the maps, waits until no CPU is still
 * adding into the one it left (off_busy), and takes that one whole.  One
 * map taken while a program added into it lost what the program added to
 * an entry already taken out.
 */
#define OFF_AGG(name) \
	struct { \
		__uint(type, BPF_MAP_TYPE_HASH); \
		__uint(map_flags, BPF_F_NO_PREALLOC); \
		__uint(max_entries, PM_OFF_AGG_MAX); \
		__type(key, struct pm_off_key); \
		__type(value, struct off_slot); \
	} name SEC(".maps")
OFF_AGG(off_agg);
OFF_AGG(off_agg1);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);   /* the map sums go into: 0 off_agg, 1 off_agg1 */
} off_ctl SEC(".maps");

/* per CPU: programs reading off_ctl, and programs adding into each map (bpf/offcpu_wire.h) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pm_off_busy);
} off_busy SEC(".maps");

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
	rq = t->se.cfs_rq ? t->se.cfs_rq->rq : NULL;   /* BTF loads, no helper */
	if (!rq || bpf_probe_read_kernel(&pc, sizeof(pc), (void *)((__u64)rq + pc_from_rq)))
		return false;
	return pc & OFF_IRQ_MASK;
}

/* dwarf: the copy of a thread going off (bytes of ustack_size, at most PM_OFF_USTACK) */
static __always_inline void off_take_copy(struct task_struct *t)
{
	struct off_copy *c = bpf_task_storage_get(&off_copy, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!c)
		return;
	c->u.size = 0;
	c->u.abi = 0;
	if (!user_regs(c->u.regs))
		return;
	c->u.abi = PM_UREGS_ABI_64;
	c->u.size = ustack_copy(c->data, c->u.regs[UREG_SP], ustack_size, PM_OFF_USTACK);
}

/*
 * The user frames of the thread running (current), as the recording's
 * --call-graph takes them (fp, or ehframe where its tables are), into
 * ot->ufr: how many, --max-stack at most.
 */
static __always_inline __u32 off_ustack(void *ctx, struct off_task *ot, __u32 pid)
{
	long n = -2;
	__u64 nu = 0;

	/* the unwinder reads no context: any memory of the size will do */
	if (ustack_mode == PM_US_EHFRAME)
		n = pm_unwind_user((struct bpf_perf_event_data *)ot, pid, (struct pm_uframes *)ot->ufr,
				   kstack_max());
	if (n < 0)     /* fp, or no tables for this process yet */
		n = ustack_fp(ot->ufr, PM_MAX_STACK);
	if (n < 0) {
		n = bpf_get_stack(ctx, ot->ufr, sizeof(ot->ufr), BPF_F_USER_STACK);
		n = n > 0 ? n / sizeof(__u64) : 0;
	}
	if (n > 0)
		nu = n;
	/* --max-stack: the kernel's frames, taken when it comes back, go first */
	if (nu > kstack_max())
		nu = kstack_max();
	return nu;
}

/*
 * Is the thread waiting inside a system call that will return to the
 * registers it entered with?  On x86-64 the entry saves the number in
 * orig_ax and -ENOSYS in ax until the call returns (an exception saves
 * its error code in orig_ax, but not -ENOSYS in ax, unless the user had
 * it there); not for exec (it returns elsewhere) nor a 32-bit task.  Then
 * its user stack does not change until it leaves the call: it is taken
 * there (off_sys_exit), and only for an interval written on its own.
 */
static __always_inline bool off_in_syscall(struct pt_regs *regs, __s64 sysno)
{
	return sysno >= 0 && sysno < 1024 && sysno != OFF_NR_EXECVE && sysno != OFF_NR_EXECVEAT &&
	       (__s64)regs->ax == -OFF_ENOSYS && regs->cs == OFF_USER_CS;
}

static void off_finish(void *ctx, struct off_task *ot, struct task_struct *t, __u64 now, bool ustack);
static __always_inline void off_unseen(void *ctx, struct off_task *ot, struct task_struct *prev,
				       struct pt_regs *regs, __u64 now);

/*
 * Is this a thread of the recording's own process (perfmarkd, or the
 * perfmark record running the command)?  Its waits are the drain timer's
 * by design, and each one noted would be a record its next drain writes:
 * the recorder measuring itself, most of what an idle machine switches.
 */
static __always_inline bool off_self(__u32 tgid)
{
	__u32 zero = 0;
	struct pm_cfg *c = bpf_map_lookup_elem(&cfg, &zero);

	return c && c->self_pid && c->self_pid == tgid;
}

/* prev goes off the CPU: note when, why and where in user code */
static __always_inline void off_out(void *ctx, struct task_struct *prev, bool preempt,
				    __u32 prev_state, __u64 now)
{
	struct off_task *ot;
	struct pt_regs *regs;
	__u64 id;
	__u32 uid;

	if (prev->flags & PF_KTHREAD)
		return;
	if (prev->flags & PF_EXITING) {
		/* it leaves for good: a record still waiting for its user frames goes without */
		ot = bpf_task_storage_get(&off_task, prev, NULL, 0);
		if (ot && ot->pending)
			off_finish(ctx, ot, prev, now, false);
		else if (ot && ot->h.time)
			off_unseen(ctx, ot, prev, NULL, now);
		return;
	}
	/* prev is current here: the filter and helpers the samples use apply */
	if (!current_ids(&id, false))
		return;
	uid = task_owner_uid();
	if (!wanted(id >> 32, uid) || off_self(id >> 32))
		return;
	ot = bpf_task_storage_get(&off_task, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ot) {
		__sync_fetch_and_add(&offcpu_lost, 1);
		return;
	}
	/* a BTF pointer: plain loads the JIT inlines (a fault reads 0), not a helper call each */
	regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	/*
	 * Its last interval ran again but has not left the system call: it is
	 * in it still, so its user frames are the same for both.
	 */
	if (ot->pending)
		off_finish(ctx, ot, prev, now, true);
	else if (ot->h.time)
		off_unseen(ctx, ot, prev, regs, now);
	ot->h.rec_type = PM_REC_OFFCPU;
	ot->h.pid = id >> 32;
	ot->h.tid = (__u32)id;
	ot->h.uid = uid;
	/* preempted, or woken before it could sleep (TASK_RUNNING is 0): waits for a CPU */
	ot->h.state = preempt || !prev_state ? PM_OFF_RUNNABLE : PM_OFF_BLOCKED;
	ot->h.task_state = preempt ? 0 : prev_state;
	ot->h.waker_flags = 0;
	ot->h.waker_pid = 0;
	ot->h.waker_tid = 0;
	ot->h.waker_uid = 0;
	ot->h.nr_wkstack = 0;
	ot->h.nr_wustack = 0;
	ot->woken = 0;
	ot->h.count = 1;
	ot->h.flags = 0;
	ot->h.nr_kstack = 0;
	ot->lazy = 0;
	ot->sysno = regs ? (__s64)regs->orig_ax : -1;
	if (ustack_mode == PM_US_DWARF) {
		off_take_copy(prev);
		ot->h.flags = PM_SF_UREGS;
		ot->h.nr_ustack = 0;
	} else if (offcpu_lazy && regs && off_in_syscall(regs, ot->sysno)) {
		/* the stack waits: most intervals end up summed, which need only the pc */
		ot->lazy = 1;
		ot->pc = regs->ip;
		ot->h.nr_ustack = 0;
	} else {
		ot->h.nr_ustack = off_ustack(ctx, ot, id >> 32);
	}
	ot->h.time = now;   /* last: the thread is noted */
}

/*
 * The record of a thread coming back, built in this CPU's off_build: the
 * header, its kernel stack as it left (it has not run since), its user
 * frames.  dwarf: no user frames; the copy follows when it is written.
 */
static __always_inline struct off_slot *off_build_rec(struct off_task *ot, struct task_struct *t,
						     bool walk)
{
	__u32 zero = 0;
	struct off_slot *b = bpf_map_lookup_elem(&off_build, &zero);
	__u64 nk = 0, nu = ot->h.nr_ustack, off, nw, room;
	long n;

	if (!b)
		return NULL;
	b->h = ot->h;
	if (walk) {
		n = bpf_get_task_stack(t, b->frames, kstack_max() * sizeof(__u64), 0);
		if (n > 0)
			nk = (__u64)n / sizeof(__u64);
	} else {   /* pending: walked as it came back */
		nk = ot->nr_kfr;
		barrier_var(nk);
		if (nk > PM_MAX_STACK)
			nk = PM_MAX_STACK;
		if (nk && bpf_probe_read_kernel(b->frames, nk * sizeof(__u64), ot->kfr))
			nk = 0;
	}
	if (nk > PM_MAX_STACK)
		nk = PM_MAX_STACK;
	b->h.nr_kstack = nk;
	room = ustack_room(nk);   /* --max-stack: the user's in what the kernel's left */
	if (nu > room)
		nu = room;
	off = nk;
	barrier_var(off);
	if (off > PM_MAX_STACK)
		off = PM_MAX_STACK;
	if (nu && bpf_probe_read_kernel(&b->frames[off], nu * sizeof(__u64), ot->ufr))
		nu = 0;
	b->h.nr_ustack = nu;
	nw = (__u64)ot->h.nr_wkstack + ot->h.nr_wustack;
	off = nk + nu;
	barrier_var(off);
	if (off > 2 * PM_MAX_STACK)
		off = 2 * PM_MAX_STACK;
	if (nw > PM_OFF_WSTACK || (nw && bpf_probe_read_kernel(&b->frames[off], nw * sizeof(__u64), ot->wfr))) {
		b->h.nr_wkstack = 0;
		b->h.nr_wustack = 0;
	}
	return b;
}

/* a built record into the ring; false: the ring is full */
static __always_inline bool off_emit(struct off_slot *b, struct task_struct *t, __u64 now)
{
	__u64 nk = b->h.nr_kstack, nu = b->h.nr_ustack, size;
	__u64 nw = (__u64)b->h.nr_wkstack + b->h.nr_wustack;
	struct off_copy *c;
	struct pm_uregs *u;
	__u8 *rec;

	if (!(b->h.flags & PM_SF_UREGS)) {
		size = sizeof(b->h) + (nk + nu + nw) * sizeof(__u64);
		barrier_var(size);
		if (size > sizeof(*b))
			return true;   /* cannot be: dropped, not retried */
		return !bpf_ringbuf_output(&rb, b, size, rb_flags(now));
	}
	/*
	 * dwarf: header, kernel frames, the waker's (no user frames: they lie
	 * between, at none), registers and the copy, reserved at the largest
	 */
	c = bpf_task_storage_get(&off_copy, t, NULL, 0);
	if (!c)
		return true;
	rec = bpf_ringbuf_reserve(&rb, sizeof(b->h) + (PM_MAX_STACK + PM_OFF_WSTACK) * sizeof(__u64) +
				  sizeof(struct pm_uregs) + PM_OFF_USTACK, 0);
	if (!rec)
		return false;
	if (nk > PM_MAX_STACK || nu || nw > PM_OFF_WSTACK)
		nk = nw = 0;
	size = sizeof(b->h) + (nk + nw) * sizeof(__u64);
	barrier_var(size);
	if (size > sizeof(b->h) + (PM_MAX_STACK + PM_OFF_WSTACK) * sizeof(__u64))
		size = sizeof(b->h);
	bpf_probe_read_kernel(rec, size, b);
	if (size == sizeof(b->h)) {
		((struct pm_offcpu *)rec)->nr_kstack = 0;
		((struct pm_offcpu *)rec)->nr_wkstack = 0;
		((struct pm_offcpu *)rec)->nr_wustack = 0;
	}
	((struct pm_offcpu *)rec)->nr_ustack = 0;
	u = (struct pm_uregs *)(rec + size);
	bpf_probe_read_kernel(u, sizeof(*u), &c->u);
	if (u->size > PM_OFF_USTACK)
		u->size = 0;
	bpf_probe_read_kernel(u + 1, PM_OFF_USTACK, c->data);
	bpf_ringbuf_submit(rec, rb_flags(now));
	return true;
}

/*
 * a short interval's key: thread, state, system call, user stack (dwarf:
 * user pc and sp; lazy: the pc it entered the system call at, told from a
 * stack by nr_ustack PM_MAX_STACK + 1)
 */
static __always_inline void off_key(struct pm_off_key *k, struct off_task *ot, struct task_struct *t)
{
	__u64 h = 0xcbf29ce484222325ull ^ (__u64)ot->sysno;
	struct off_copy *c;
	__u32 i, nu = ot->h.nr_ustack;

	k->pid = ot->h.pid;
	k->tid = ot->h.tid;
	k->state = ot->h.state;
	k->task_state = ot->h.task_state;
	k->nr_kstack = 0;
	k->nr_ustack = nu;
	if (ot->lazy) {
		k->nr_ustack = PM_MAX_STACK + 1;
		k->hash = h ^ ot->pc * 0x9e3779b97f4a7c15ull;
		return;
	}
	if (ot->h.flags & PM_SF_UREGS) {
		c = bpf_task_storage_get(&off_copy, t, NULL, 0);
		if (c && c->u.abi)
			h ^= c->u.regs[UREG_IP] * 0x9e3779b97f4a7c15ull ^ c->u.regs[UREG_SP];
	}
	for (i = 0; i < PM_MAX_STACK; i++) {
		if (i >= nu)
			break;
		h = (h ^ ot->ufr[i]) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	k->hash = h;
}

/*
 * Sum a short interval into map; false: the map is full.  A new sum's
 * record is built whole (its kernel stack walked once); dwarf keeps no
 * copy for a sum: its user part is the pc the thread left at.
 */
static __always_inline bool off_sum(void *map, struct off_task *ot, struct task_struct *t, bool walk)
{
	struct pm_off_key key;
	struct off_slot *v, *b;
	struct off_copy *c;
	__u64 nk;

	off_key(&key, ot, t);
	v = bpf_map_lookup_elem(map, &key);
	if (v) {
		__sync_fetch_and_add(&v->h.period, ot->h.period);
		__sync_fetch_and_add(&v->h.runq, ot->h.runq);
		__sync_fetch_and_add(&v->h.count, 1);
		v->h.end = ot->h.end;
		v->h.cpu = ot->h.cpu;
		return true;
	}
	b = off_build_rec(ot, t, walk);
	if (!b)
		return false;
	nk = b->h.nr_kstack;
	if (ot->lazy && nk < PM_MAX_STACK && kstack_max() > nk) {
		b->frames[nk] = ot->pc;   /* a sum of waits in a system call: where it was entered */
		b->h.nr_ustack = 1;
	}
	b->h.nr_wkstack = 0;   /* a sum names its first waker, not where it woke it */
	b->h.nr_wustack = 0;
	if (b->h.flags & PM_SF_UREGS) {
		b->h.flags = 0;
		c = bpf_task_storage_get(&off_copy, t, NULL, 0);
		nk = b->h.nr_kstack;
		if (c && c->u.abi && nk < PM_MAX_STACK) {
			b->frames[nk] = c->u.regs[UREG_IP];
			b->h.nr_ustack = 1;
		}
	}
	return !bpf_map_update_elem(map, &key, b, BPF_NOEXIST);
}

/*
 * Sum a short interval into the map off_ctl names, saying so in off_busy
 * while at it: counts, not flags, so that a program that interrupts
 * another on this CPU leaves them as it found them.  Atomic adds: each is
 * a full barrier, so user space, having switched maps, sees every CPU
 * that may still add into the one it left.
 */
static __always_inline bool off_merge(struct off_task *ot, struct task_struct *t, bool walk)
{
	__u32 zero = 0, *ctl = bpf_map_lookup_elem(&off_ctl, &zero), slot;
	struct pm_off_busy *busy = bpf_map_lookup_elem(&off_busy, &zero);
	bool ok;

	if (!ctl || !busy)
		return false;
	__sync_fetch_and_add(&busy->entering, 1);
	slot = *(volatile __u32 *)ctl & 1;
	__sync_fetch_and_add(&busy->in[slot], 1);
	__sync_fetch_and_add(&busy->entering, -1);
	ok = slot ? off_sum(&off_agg1, ot, t, walk) : off_sum(&off_agg, ot, t, walk);
	__sync_fetch_and_add(&busy->in[slot], -1);
	return ok;
}

/*
 * A pending interval goes out, its user frames taken now (ustack: t is
 * current and has not left the system call it waited in), or none (it
 * exits).  A full ring: summed instead.
 */
static __noinline void off_finish(void *ctx, struct off_task *ot, struct task_struct *t, __u64 now,
				  bool ustack)
{
	struct off_slot *b;

	ot->h.nr_ustack = ustack ? off_ustack(ctx, ot, ot->h.pid) : 0;
	ot->lazy = 0;
	if ((b = off_build_rec(ot, t, false)) && off_emit(b, t, now))
		__sync_fetch_and_add(&offcpu_samples, 1);
	else if (off_merge(ot, t, false))
		__sync_fetch_and_add(&offcpu_merged, 1);
	else
		__sync_fetch_and_add(&offcpu_lost, 1);
	ot->pending = 0;
	ot->h.time = 0;
}

/*
 * A lazy interval MIN_NS or longer: its kernel frames now (it has not run
 * since it left), its user frames when it leaves the system call.
 */
static __always_inline void off_pend(struct off_task *ot, struct task_struct *t)
{
	long n = bpf_get_task_stack(t, ot->kfr, kstack_max() * sizeof(__u64), 0);

	ot->nr_kfr = n > 0 ? (__u64)n / sizeof(__u64) : 0;
	ot->pending = 1;
}

/*
 * A noted interval ends at end: written, summed (shorter than MIN_NS, or
 * the ring is full) or counted lost.  walk: t has not run since it left,
 * so its kernel stack is walked now; a lazy one then waits for its user
 * frames (off_sys_exit).
 */
static __always_inline void off_close(struct off_task *ot, struct task_struct *t, __u64 end, bool walk)
{
	struct off_slot *b;
	__u64 d = end - ot->h.time;

	ot->h.end = end;
	ot->h.period = d;
	/* preempted: it waited for a CPU all along; blocked: from its wakeup on */
	if (ot->h.state == PM_OFF_RUNNABLE)
		ot->h.runq = d;
	else if (ot->woken >= ot->h.time && ot->woken <= end)
		ot->h.runq = end - ot->woken;
	else
		ot->h.runq = 0;
	ot->h.count = 1;
	ot->h.cpu = bpf_get_smp_processor_id();
	if (ot->h.state == PM_OFF_BLOCKED && !ot->h.waker_flags)
		__sync_fetch_and_add(&offcpu_nowaker, 1);
	if (d < offcpu_min_ns && off_merge(ot, t, walk)) {
		__sync_fetch_and_add(&offcpu_merged, 1);
	} else if (ot->lazy && walk) {
		off_pend(ot, t);
		return;   /* still noted: off_sys_exit writes it */
	} else if ((b = off_build_rec(ot, t, walk)) && off_emit(b, t, end)) {
		__sync_fetch_and_add(&offcpu_samples, 1);
	} else if (d >= offcpu_min_ns && off_merge(ot, t, walk)) {
		/* the ring is full: summed, not lost */
		__sync_fetch_and_add(&offcpu_merged, 1);
	} else {
		__sync_fetch_and_add(&offcpu_lost, 1);
	}
	ot->h.time = 0;
}

/* next runs again: its interval, if noted, goes out */
static __always_inline void off_in(struct task_struct *next, __u64 now)
{
	struct off_task *ot;

	/* kernel threads and the idle task are never noted (off_out): no lookup */
	if (next->flags & PF_KTHREAD)
		return;
	ot = bpf_task_storage_get(&off_task, next, NULL, 0);
	if (!ot || !ot->h.time || ot->pending)
		return;
	off_clk_note(next, now);
	off_close(ot, next, now, true);
}

/*
 * prev leaves the CPU with its last interval still noted: the switch that
 * brought it back ran no program.  Seen on this kernel under load (one
 * switch-in in some thousands, with no recursion miss counted; the
 * program's first instruction did not run), so not to be lost silently:
 * the interval ends when the scheduler says prev arrived, its kernel
 * stack unknown (it has run since), and is counted (offcpu_unseen).
 */
static __always_inline void off_unseen(void *ctx, struct off_task *ot, struct task_struct *prev,
				       struct pt_regs *regs, __u64 now)
{
	__u64 end;

	if (!off_arrived(prev, now, &end) || end < ot->h.time) {
		__sync_fetch_and_add(&offcpu_lost, 1);
		ot->h.time = 0;
		return;
	}
	__sync_fetch_and_add(&offcpu_unseen, 1);
	ot->nr_kfr = 0;
	if (ot->lazy) {
		/* still in the same system call: its user frames are those it waited with */
		ot->lazy = 0;
		ot->h.nr_ustack = regs && off_in_syscall(regs, (__s64)regs->orig_ax) && regs->ip == ot->pc ?
				  off_ustack(ctx, ot, ot->h.pid) : 0;
	}
	off_close(ot, prev, end, false);
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
	struct off_task *ot = bpf_task_storage_get(&off_task, p, NULL, 0);
	__u64 id, nk, nu;
	long n;

	if (!ot || !ot->h.time || ot->pending || ot->h.waker_flags)
		return 0;
	ot->woken = bpf_ktime_get_ns();
	/*
	 * The idle task wakes no one of its own: on an idle CPU a wakeup is an
	 * interrupt's (a timer's), and the idle task, not a fair one, has no
	 * runqueue for off_in_irq to read the preempt count from.
	 */
	if (off_in_irq() || (bpf_get_current_task_btf()->flags & PF_IDLE)) {
		ot->h.waker_flags = PM_OFF_WAKER_IRQ;
		return 0;
	}
	/* a waker the recorder cannot see is pid 0 */
	current_ids(&id, true);
	ot->h.waker_pid = id >> 32;
	ot->h.waker_tid = (__u32)id;
	ot->h.waker_uid = task_owner_uid();
	ot->h.waker_flags = PM_OFF_WAKER_TASK;
	/* where it woke it: only for a wait written on its own, and long (two walks, ~2 us) */
	if (ot->woken - ot->h.time < offcpu_min_ns || ot->woken - ot->h.time < PM_OFF_WAKER_MIN_NS)
		return 0;
	/* from try_to_wake_up on: past this program's frame and bpf_trace_run1's */
	n = bpf_get_stack(ctx, ot->wfr, PM_OFF_WSTACK / 2 * sizeof(__u64), 2 & BPF_F_SKIP_FIELD_MASK);
	nk = n > 0 ? (__u64)n / sizeof(__u64) : 0;
	if (nk > PM_OFF_WSTACK / 2)
		nk = PM_OFF_WSTACK / 2;
	ot->h.nr_wkstack = nk;
	if (!ot->h.waker_pid)
		return 0;   /* a task not traced: no user frames */
	n = bpf_get_stack(ctx, &ot->wfr[nk], PM_OFF_WSTACK / 2 * sizeof(__u64), BPF_F_USER_STACK);
	nu = n > 0 ? (__u64)n / sizeof(__u64) : 0;
	if (nu > PM_OFF_WSTACK / 2)
		nu = PM_OFF_WSTACK / 2;
	ot->h.nr_wustack = nu;
	return 0;
}

/* a thread leaves a system call: the interval that waited in it, if pending, goes out */
SEC("tp_btf/sys_exit")
int BPF_PROG(off_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct off_task *ot = bpf_task_storage_get(&off_task, t, NULL, 0);

	if (ot && ot->pending)
		off_finish(ctx, ot, t, bpf_ktime_get_ns(), true);
	return 0;
}

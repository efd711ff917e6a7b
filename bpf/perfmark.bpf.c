// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfmark's BPF side: one perf_event program for CPU samples, one uprobe
 * program for markers fired in libperfmark's probe site, and three task
 * tracepoints that keep the target set in step with fork, exec and exit.  Everything
 * goes into one ringbuf; nothing wakes the consumer per record (it drains on
 * a timer) unless the ring is filling up.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "perfmark_wire.h"
#include "unwind_wire.h"
#include "uregs.bpf.h"
#include "ustack.bpf.h"
#include "aggregate_wire.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* settings, fixed between open and load */
const volatile __u32 want_callchain = 0;
const volatile __u32 ustack_mode = PM_US_FP;    /* user part of call chains */
const volatile __u32 ustack_size = 0;           /* dwarf: stack bytes per sample */
const volatile __u32 max_stack = PM_MAX_STACK;  /* --max-stack: kernel + user frames, 1..PM_MAX_STACK */
/*
 * The recorder's pid namespace: pids are reported as the recorder sees
 * them (perfmarkd in a container sees its container's pids, as the
 * sideband events report them), and tasks it cannot see are left out.
 */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 pidns_init = 1;   /* the initial namespace: pids as they are */
const volatile __u64 wakeup_bytes = 1 << 20;   /* force a wakeup past this fill */

/* drop counters, read by user space from .bss */
__u64 lost_samples = 0;
__u64 lost_markers = 0;
/* fast-lane offers (register records) the ring had no room for: not markers */
__u64 lost_offers = 0;
/*
 * The collector's token in fast-lane areas, kept here so that a daemon that
 * adopts pinned programs is the same consumer of the areas (user space only).
 */
__u64 fl_token = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);          /* resized before load */
} rb SEC(".maps");

/* the union filter of the sessions sharing these programs (see pm_cfg) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pm_cfg);
} cfg SEC(".maps");

/* uid -> number of sessions that want all of that uid's processes */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} uids SEC(".maps");

/*
 * tgids some session records; children are added on fork.  The value is
 * the root the process descends from (perfmark_wire.h): the -p pid or
 * command that made it a target, inherited at fork, so a restarted daemon
 * can tell which session's it is whatever exited in between.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

/* tgids that become targets at their next exec (a command held before it) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} exec_pending SEC(".maps");

/* one sample and one marker being assembled per CPU */
#define PM_SCRATCH_SIZE (sizeof(struct pm_marker) + PM_MAX_PAYLOAD)
struct scratch {
	__u8 buf[PM_SCRATCH_SIZE];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/*
 * Markers are assembled in one of four scratch slots per CPU, taken with a
 * compare-and-swap on a per-CPU bitmap: a uprobe program runs with only
 * migration disabled, so another task that traps on this CPU while one is
 * halfway through would otherwise overwrite its marker (a marker lost and
 * another written twice, and nothing counted).  No free slot: counted lost.
 */
#define PM_MARKER_SLOTS 4
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PM_MARKER_SLOTS);
	__type(key, __u32);
	__type(value, struct scratch);
} mscratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} mbusy SEC(".maps");

/* --aggregate: bpf/aggregate.bpf.c (-1: not counted, the sample goes to the ring) */
extern int pm_aggregate(struct bpf_perf_event_data *ctx, __u64 id, __u32 uid, __u32 callchain);

/* user stacks: bpf/unwind.bpf.c */
extern int pm_unwind_user(struct bpf_perf_event_data *ctx, __u32 pid, struct pm_uframes *out,
			  __u32 max);

/*
 * --max-stack N, as perf's attr.sample_max_stack: N frames in all, the
 * kernel's first (the innermost), the user's in what is left.
 */
static __always_inline __u64 kstack_max(void)
{
	return max_stack < PM_MAX_STACK ? max_stack : PM_MAX_STACK;
}

/* the kernel's frames of the sample into stack: how many, kstack_max() at most */
static __always_inline __u64 kstack_take(void *ctx, __u64 *stack)
{
	long n = bpf_get_stack(ctx, stack, kstack_max() * sizeof(__u64), 0);
	__u64 nk = 0;

	if (n > 0)
		nk = (__u64)n / sizeof(__u64);
	barrier_var(nk);
	if (nk > PM_MAX_STACK)
		nk = PM_MAX_STACK;
	return nk;
}

static __always_inline __u64 ustack_room(__u64 nk)
{
	__u64 room = nk < kstack_max() ? kstack_max() - nk : 0;

	barrier_var(room);
	return room < PM_MAX_STACK ? room : PM_MAX_STACK;
}

/*
 * The user's frames into frames, room at most: n as the ehframe walk left
 * it (its frames; below 0: none, then the frame pointers').  How many.
 */
static __always_inline __u64 ustack_take(void *ctx, __u64 *frames, __u64 room, long n)
{
	__u64 nu = 0;

	if (n < 0)
		n = ustack_fp(frames, room);
	if (n < 0) {
		n = bpf_get_stack(ctx, frames, room * sizeof(__u64), BPF_F_USER_STACK);
		n = n > 0 ? n / sizeof(__u64) : 0;
	}
	if (n > 0)
		nu = n;
	if (nu > room)
		nu = room;
	return nu;
}

/* perf buffers of the sideband (dummy) events, filled by libbpf */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} sideband SEC(".maps");

/*
 * current tgid << 32 | tid in the recorder's namespace.  A task the
 * recorder cannot see is pid 0 (as perf reports it: "swapper") when
 * invisible_as_0, else left out (false): markers carry the application's
 * data, which must not cross into another container's recording.
 */
static __always_inline bool current_ids(__u64 *id, bool invisible_as_0)
{
	struct bpf_pidns_info ns;

	if (pidns_init) {           /* sees everything (idle too), numbered as is */
		*id = bpf_get_current_pid_tgid();
		return true;
	}
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns))) {
		*id = 0;
		return invisible_as_0;
	}
	*id = (__u64)ns.tgid << 32 | ns.pid;
	return true;
}

/* the number a struct pid has in the recorder's namespace (0: not visible there) */
static __always_inline __u32 pid_nr_ns(struct pid *pid)
{
	__u32 level, i;

	if (!pid)
		return 0;
	level = BPF_CORE_READ(pid, level);
	for (i = 0; i < 8; i++) {
		struct upid up = { 0 };

		if (i > level)
			break;
		if (bpf_probe_read_kernel(&up, sizeof(up), &pid->numbers[i]))
			return 0;
		if (up.ns && BPF_CORE_READ(up.ns, ns.inum) == pidns_ino)
			return up.nr;
	}
	return 0;
}

/* a task's thread-group id as the recorder's namespace numbers it (0: not visible) */
static __always_inline __u32 task_tgid_ns(struct task_struct *t)
{
	if (pidns_init)
		return BPF_CORE_READ(t, tgid);
	return pid_nr_ns(BPF_CORE_READ(t, group_leader, thread_pid));
}

/*
 * RULE (issue 8 case 4): a task's records belong to a uid only when perf
 * would let that uid attach to the task: real, effective and saved uid all
 * that uid, and the mm dumpable by its user (SUID_DUMP_USER, the two low
 * bits of mm->flags; the kernel clears them on a setuid exec).  Anything
 * else is PM_UID_PRIVILEGED, which no member's uid filter matches.  The
 * real uid alone (bpf_get_current_uid_gid) let a member record the
 * setuid-root programs they start, secrets included.
 *
 * A global function: the verifier checks it once per program, not at each
 * call site on each path.  Each load of a pointer through a trusted BTF
 * pointer makes it search the kernel's BTF for a type by name, one type
 * after another (btf_nested_type_is_trusted): inlined, those searches were
 * a fifth of the CPU time of `record -- true` (perf record of it).
 */
__noinline __u32 task_owner_uid(void)
{
	/*
	 * Through the task's BTF pointer: plain loads the JIT inlines (a fault
	 * reads 0), not one probe-read helper call a field: this runs on every
	 * sample of every CPU, and the calls were most of a filtered sample's cost.
	 */
	struct task_struct *t = bpf_get_current_task_btf();
	const struct cred *c = t->real_cred;
	struct mm_struct *mm = t->mm;
	__u32 uid = c->uid.val;

	if (c->euid.val != uid || c->suid.val != uid)
		return PM_UID_PRIVILEGED;
	/* mm->flags: an unsigned long, or (6.18) a bitmap whose first word it is */
	if (mm && (*(unsigned long *)&mm->flags & 3) != 1)
		return PM_UID_PRIVILEGED;
	return uid;
}

static __always_inline bool wanted(__u32 tgid, __u32 uid)
{
	__u32 zero = 0;
	struct pm_cfg *c = bpf_map_lookup_elem(&cfg, &zero);

	if (!c)
		return false;
	if (c->all)
		return true;
	if (c->nr_uids && bpf_map_lookup_elem(&uids, &uid))
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/*
 * wanted() with the owner's uid looked up only when needed: the filter
 * first (most samples of a recording of one command are other tasks').
 * *uid is set when true is returned.
 */
static __always_inline bool wanted_uid(__u32 tgid, __u32 *uid)
{
	__u32 zero = 0;
	struct pm_cfg *c = bpf_map_lookup_elem(&cfg, &zero);

	if (!c)
		return false;
	if (c->all || bpf_map_lookup_elem(&targets, &tgid)) {
		*uid = task_owner_uid();
		return true;
	}
	if (!c->nr_uids)
		return false;
	*uid = task_owner_uid();
	return bpf_map_lookup_elem(&uids, uid) != NULL;
}

/*
 * The ring's fill is looked at no more than every 100 us (not per record),
 * and a filling ring wakes the consumer at most once a millisecond.
 */
__u64 next_fill_check_ns = 0;
__u64 last_wakeup_ns = 0;

static __always_inline __u64 rb_flags(__u64 now)
{
	if (now < next_fill_check_ns)
		return BPF_RB_NO_WAKEUP;
	next_fill_check_ns = now + 100000;
	if (now - last_wakeup_ns < 1000000 ||
	    bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) < wakeup_bytes)
		return BPF_RB_NO_WAKEUP;
	last_wakeup_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

/* the sample's own fields, the same whatever its stack */
static __always_inline void sample_head(struct pm_sample *s, struct bpf_perf_event_data *ctx,
					__u64 id, __u32 uid)
{
	s->rec_type = PM_REC_SAMPLE;
	s->cpu = bpf_get_smp_processor_id();
	s->pid = id >> 32;
	s->tid = (__u32)id;
	s->time = bpf_ktime_get_ns();
	s->ip = PT_REGS_IP(&ctx->regs);
	/* ctx fields must be read whole: a narrowed load is rejected */
	s->user_mode = (*(volatile __u64 *)&ctx->regs.cs & 3) == 3;
	s->period = ctx->sample_period;
	s->event = (__u32)bpf_get_attach_cookie(ctx);
	s->uid = uid;
	s->flags = 0;
	s->nr_ustack = 0;
}

/* the record a stack copy goes out in: every kernel frame, the registers, the copy */
#define PM_COPY_REC (sizeof(struct pm_sample) + PM_MAX_STACK * sizeof(__u64) + \
		     sizeof(struct pm_uregs) + ustack_size)

/*
 * dwarf mode (and ehframe, for a process with no tables yet): the sample
 * with the user registers and up to ustack_size bytes of stack from sp up,
 * as perf's REGS_USER and STACK_USER carry them.  It is written straight
 * into the ring, reserved at its largest; the counts inside say how much of
 * it is used: one copy of the stack, as perf makes, and no per-CPU map to
 * assemble it in.  (Measured, the second copy cost little: the ring's cold
 * lines dominate, ~3 us a sample at 8 KiB.)
 */
static __always_inline int copy_sample(struct bpf_perf_event_data *ctx, __u64 id, __u32 uid)
{
	struct pm_sample *s;
	struct pm_uregs *u;
	__u64 nk;
	__u8 *data;

	s = bpf_ringbuf_reserve(&rb, PM_COPY_REC, 0);
	if (!s) {
		__sync_fetch_and_add(&lost_samples, 1);
		return 0;
	}
	sample_head(s, ctx, id, uid);
	nk = kstack_take(ctx, s->stack);
	s->nr_kstack = nk;
	u = (struct pm_uregs *)&s->stack[nk];
	if (!user_regs(u->regs))
		goto out;
	u->abi = PM_UREGS_ABI_64;
	data = (__u8 *)(u + 1);
	u->size = ustack_copy(data, u->regs[UREG_SP], ustack_size, PM_MAX_USTACK);
	s->flags = PM_SF_UREGS;
out:
	bpf_ringbuf_submit(s, rb_flags(s->time));
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u32 tgid, zero = 0, uid = 0;
	struct pm_sample *s;
	__u64 nk = 0, nu = 0, room, size, id, flags;
	bool no_room = false;
	long n;

	if (!current_ids(&id, true))
		return 0;
	tgid = id >> 32;
	if (!wanted_uid(tgid, &uid))
		return 0;
	if (want_callchain && ustack_mode == PM_US_DWARF)
		return copy_sample(ctx, id, uid);
	/* --aggregate (frame pointers or no stacks): counted in maps, before any sample is assembled */
	if (ustack_mode == PM_US_FP && !pm_aggregate(ctx, id, uid, want_callchain))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	sample_head(s, ctx, id, uid);
	if (want_callchain) {
		nk = kstack_take(ctx, s->stack);
		room = ustack_room(nk);
		n = room ? -2 : 0;
		if (room && ustack_mode == PM_US_EHFRAME) {
			n = pm_unwind_user(ctx, tgid, (struct pm_uframes *)&s->stack[nk], room);
			/*
			 * No tables for this process yet: copy its stack for user space
			 * to walk, while the ring has room for copies (a quarter of it
			 * filled); else its frame pointers, as fp mode, and the consumer
			 * is called (once a millisecond at most) to make room and
			 * install the process: rb_flags() would wait for half the ring.
			 */
			if (n == -1) {
				if (bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) <= wakeup_bytes / 2)
					return copy_sample(ctx, id, uid);
				no_room = true;
			}
		}
		nu = ustack_take(ctx, &s->stack[nk], room, n);
	}
	s->nr_kstack = nk;
	s->nr_ustack = nu;
	size = sizeof(*s) + (nk + nu) * sizeof(__u64);
	if (size > sizeof(struct scratch))
		return 0;
	flags = rb_flags(s->time);
	if (no_room && flags != BPF_RB_FORCE_WAKEUP && s->time - last_wakeup_ns >= 1000000) {
		last_wakeup_ns = s->time;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (bpf_ringbuf_output(&rb, s, size, flags))
		__sync_fetch_and_add(&lost_samples, 1);
	return 0;
}

/*
 * A marker from libperfmark's trap lane: copy it into the ring.  ip is where
 * the marker was emitted from (the trap site passes its caller), or the
 * probe site itself for libraries that do not pass one.
 */
static __always_inline int marker_in(struct pm_marker *m, __u32 type, const void *data, __u32 size,
				     __u64 ip, __u32 tgid, __u32 tid, __u32 uid, __u32 ext)
{
	__u32 flags = 0;
	__u64 n = size;

	if (n > PM_MAX_PAYLOAD)
		flags |= PM_F_TRUNCATED;
	/* keep the bound visible to the verifier on the 64-bit register */
	barrier_var(n);
	if (n > PM_MAX_PAYLOAD)
		n = PM_MAX_PAYLOAD;
	if (n) {
		if (!data || bpf_probe_read_user(m->data, n, data)) {
			flags |= PM_F_FAULT;
			n = 0;
		}
	}
	m->rec_type = PM_REC_MARKER;
	m->cpu = bpf_get_smp_processor_id();
	m->pid = tgid;
	m->tid = tid;
	m->time = bpf_ktime_get_ns();
	m->type = type;
	m->size = n;
	m->orig_size = size;
	m->flags = flags;
	m->ip = ip;
	m->uid = uid;
	m->ext = ext;
	barrier_var(n);
	if (n > PM_MAX_PAYLOAD)
		return 0;
	if (bpf_ringbuf_output(&rb, m, sizeof(*m) + n, rb_flags(m->time)))
		__sync_fetch_and_add(&lost_markers, 1);
	return 0;
}

/* the library's word on why the marker came this way (PM_TRAP_TAG | why), for pm_marker.ext */
static __always_inline __u32 trap_ext(__u64 why)
{
	if ((why & ~0xffull) != PM_TRAP_TAG || (why & 0xff) >= PM_TRAP_NR)
		return 0;        /* PM_TRAP_UNKNOWN */
	return (__u32)(why & 0xff) << PM_X_TRAP_SHIFT;
}

static __always_inline int marker(__u32 type, const void *data, __u32 size, __u64 ip, __u32 ext)
{
	__u32 tgid, zero = 0, slot = PM_MARKER_SLOTS, uid = 0, *busy;
	struct pm_marker *m;
	__u64 id;

	if (!current_ids(&id, false))
		return 0;
	tgid = id >> 32;
	if (!wanted_uid(tgid, &uid))
		return 0;
	busy = bpf_map_lookup_elem(&mbusy, &zero);
	if (!busy)
		return 0;
	for (__u32 i = 0; i < PM_MARKER_SLOTS; i++) {
		__u32 old = *(volatile __u32 *)busy;

		if (old & (1u << i))
			continue;
		if (__sync_val_compare_and_swap(busy, old, old | (1u << i)) == old) {
			slot = i;
			break;
		}
	}
	if (slot >= PM_MARKER_SLOTS) {
		__sync_fetch_and_add(&lost_markers, 1);
		return 0;
	}
	m = bpf_map_lookup_elem(&mscratch, &slot);
	if (m)
		marker_in(m, type, data, size, ip, tgid, (__u32)id, uid, ext);
	__sync_fetch_and_and(busy, ~(1u << slot));
	return 0;
}

/* perfmark:trap (type, data, size, caller, why), attached by file, pid -1 */
SEC("uprobe")
int BPF_KPROBE(on_trap, __u32 type, const void *data, __u32 size, __u64 ip, __u64 why)
{
	return marker(type, data, size, ip, trap_ext(why));
}

/* perfmark:uevent of a libperfmark without the trap site: (type, data, size) */
SEC("uprobe")
int BPF_KPROBE(on_marker, __u32 type, const void *data, __u32 size)
{
	return marker(type, data, size, PT_REGS_IP(ctx), 0);
}

/*
 * perfmark:registerK (struct pm_fl_reg *): a process offers its fast-lane
 * area; this recorder holds site K (the attach cookie).  The recorder is
 * woken at once to join it: until every site holder has, the process's
 * markers take the trap lane.  Sent for every process, wanted or not: the
 * process waits for every site holder, and one that records nothing of it
 * joins without reading.
 */
static __always_inline int fast_register(const struct pm_fl_reg *reg, __u16 site)
{
	/* the uid every fast-lane marker of this area is recorded under: task_owner_uid's */
	__u32 uid = task_owner_uid();
	struct pm_fastreg r = { 0 };
	__u64 id;

	if (!current_ids(&id, false))
		return 0;
	if (bpf_probe_read_user(&r.reg, sizeof(r.reg), reg))
		return 0;
	r.rec_type = PM_REC_FASTREG;
	r.cpu = bpf_get_smp_processor_id();
	r.pid = id >> 32;
	r.tid = (__u32)id;
	r.time = bpf_ktime_get_ns();
	r.uid = uid;
	r.site = site;
	r.wanted = wanted(r.pid, uid);
	/*
	 * An offer carries no marker: one lost leaves the area unconfirmed
	 * (read anyway after FL_CONFIRM_NS), so it is counted on its own, not
	 * as a lost marker (received + lost markers == emitted markers).
	 */
	if (bpf_ringbuf_output(&rb, &r, sizeof(r), BPF_RB_FORCE_WAKEUP))
		__sync_fetch_and_add(&lost_offers, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_register, const struct pm_fl_reg *reg)
{
	return fast_register(reg, (__u16)bpf_get_attach_cookie(ctx));
}

/*
 * Every perfmark site of one file on one uprobe_multi link (user space sets
 * its attach type before the load, where the kernel has it): the cookie says
 * which site this is (enum pm_probe_kind).  One link per file is one
 * unregistration when the recording ends, one wait for the kernel's grace
 * periods, where a perf-event link per site costs a few of them each.
 */
SEC("uprobe")
int BPF_KPROBE(on_probe)
{
	__u64 ck = bpf_get_attach_cookie(ctx);

	switch (ck >> PM_PROBE_KIND_SHIFT) {
	case PM_PROBE_REGISTER:
		return fast_register((const struct pm_fl_reg *)PT_REGS_PARM1(ctx), (__u16)ck);
	case PM_PROBE_TRAP:
		return marker((__u32)PT_REGS_PARM1(ctx), (const void *)PT_REGS_PARM2(ctx),
			      (__u32)PT_REGS_PARM3(ctx), PT_REGS_PARM4(ctx),
			      trap_ext(PT_REGS_PARM5(ctx)));
	case PM_PROBE_MARKER:
		return marker((__u32)PT_REGS_PARM1(ctx), (const void *)PT_REGS_PARM2(ctx),
			      (__u32)PT_REGS_PARM3(ctx), PT_REGS_IP(ctx), 0);
	default:
		return 0;
	}
}

/* a new process whose parent is a target becomes one */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = task_tgid_ns(parent);
	__u32 ctgid = task_tgid_ns(child);
	__u32 *root, r;

	if (!ptgid || !ctgid || ptgid == ctgid)
		return 0;
	root = bpf_map_lookup_elem(&targets, &ptgid);
	if (root) {
		r = *root;      /* the parent's root is the child's */
		bpf_map_update_elem(&targets, &ctgid, &r, BPF_ANY);
	}
	return 0;
}

/* the command perfmark started is recorded from its exec on, as perf does */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = task_tgid_ns(p);

	if (!bpf_map_lookup_elem(&exec_pending, &tgid))
		return 0;
	bpf_map_delete_elem(&exec_pending, &tgid);
	bpf_map_update_elem(&targets, &tgid, &tgid, BPF_ANY);   /* a root of its own */
	return 0;
}

/* forget a process when its last thread exits */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = task_tgid_ns(p);

	if (BPF_CORE_READ(p, signal, live.counter) == 0)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/* the gap sideband: what starts, runs and ends while no daemon reads */
#include "sideband.bpf.c"

/* off-CPU time: --off-cpu */
#include "offcpu.bpf.c"

/* tracepoints: -e SUBSYS:NAME */
#include "tracepoint.bpf.c"

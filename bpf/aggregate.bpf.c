// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --aggregate SECONDS: instead of writing each sample to the ring, the
 * sampler (bpf/perfmark.bpf.c) hands it to pm_aggregate(), which counts it
 * per (pid, tid, uid, event, kernel stack, user stack, ip) in the current
 * set of maps (see aggregate_wire.h).  User space drains a set once per
 * interval.
 *
 * What a sample costs here was measured (bpf_stats, idle VM): the stacks
 * are walked, hashed and compared by the kernel (bpf_get_stackid into a
 * stack map), not in BPF loops over up to 254 frames, and both maps are
 * preallocated: no allocation on the sample path.  A sample counts with one
 * hash lookup and two atomic adds once its stacks and key are known.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "aggregate_wire.h"

/* samples that found a map full, or a different stack in their bucket: written as they are */
__u64 agg_spilled = 0;
/* unused since the spill (kept: a daemon adopting older programs reads it) */
__u64 agg_lost = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pm_agg_ctl);
} agg_ctl SEC(".maps");

/*
 * per CPU: 1 + the set a sample is being counted into, AGG_ENTERING while
 * it reads which, 0 when none
 */
#define AGG_ENTERING 3
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} agg_busy SEC(".maps");

/* sized by user space before load (1 entry when not aggregating; value: --max-stack frames) */
#define AGG_COUNTS(name) \
	struct { \
		__uint(type, BPF_MAP_TYPE_HASH); \
		__uint(max_entries, 16384); \
		__type(key, struct pm_agg_key); \
		__type(value, struct pm_agg_val); \
	} name SEC(".maps")
#define AGG_STACKS(name) \
	struct { \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE); \
		__uint(max_entries, 8192); \
		__uint(key_size, sizeof(__u32)); \
		__uint(value_size, PM_MAX_STACK * sizeof(__u64)); \
	} name SEC(".maps")
AGG_COUNTS(agg_counts0);
AGG_COUNTS(agg_counts1);
AGG_STACKS(agg_stacks0);
AGG_STACKS(agg_stacks1);

/*
 * A stack id, -1 when none was kept.  Asked only where a stack is expected
 * (a kernel-mode sample's kernel part; the user part of a task with an mm),
 * so no stack (-EFAULT) is a walk that failed, not an empty stack: measured
 * on 6.18, bpf_get_stackid() finds no user stack for about a fifth of a
 * CPU-bound loop's samples where bpf_get_stack() finds it; those samples go
 * to the ring as they are, where the sampler's walk finds their stack.
 */
static __always_inline long stack_id(struct bpf_perf_event_data *ctx, void *stacks, __u64 flags)
{
	long id = bpf_get_stackid(ctx, stacks, flags);

	return id >= 0 ? id : -1;
}

static __always_inline int count_in(struct bpf_perf_event_data *ctx, void *counts, void *stacks,
				    struct pm_agg_key *k, __u32 callchain, bool has_mm, __u64 period)
{
	struct pm_agg_val *v, nv = { .count = 1, .period = period };
	long id;

	if (callchain) {
		if (!k->user_mode) {        /* a user-mode sample has no kernel part */
			id = stack_id(ctx, stacks, 0);
			if (id < 0)
				return -1;
			k->kstack = id;
		}
		if (has_mm) {
			id = stack_id(ctx, stacks, BPF_F_USER_STACK);
			if (id < 0)
				return -1;
			k->ustack = id;
		}
	}
	v = bpf_map_lookup_elem(counts, k);
	if (!v) {
		nv.cpu = bpf_get_smp_processor_id();
		if (!bpf_map_update_elem(counts, k, &nv, BPF_NOEXIST))
			return 0;
		/* another CPU put it there meanwhile, or the map is full */
		v = bpf_map_lookup_elem(counts, k);
		if (!v)
			return -1;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->period, period);
	return 0;
}

/*
 * Count the sample of ctx (id: tgid << 32 | tid as the recorder sees them):
 * 0, or -1 when it is not counted (not aggregating; or spilled): the caller
 * then writes it to the ring.
 */
__noinline int pm_aggregate(struct bpf_perf_event_data *ctx, __u64 id, __u32 uid, __u32 callchain)
{
	__u32 zero = 0, slot, *busy;
	struct pm_agg_ctl *ctl = bpf_map_lookup_elem(&agg_ctl, &zero);
	struct task_struct *t;
	struct pm_agg_key k = {
		.pid = id >> 32, .tid = (__u32)id, .uid = uid,
		.kstack = PM_AGG_NO_STACK, .ustack = PM_AGG_NO_STACK,
	};
	bool has_mm;
	int e;

	if (!ctl || !ctl->on || !ctx)
		return -1;
	busy = bpf_map_lookup_elem(&agg_busy, &zero);
	if (!busy)
		return -1;
	k.event = (__u32)bpf_get_attach_cookie(ctx);
	k.ip = PT_REGS_IP(&ctx->regs);
	/* ctx fields must be read whole: a narrowed load is rejected */
	k.user_mode = (*(volatile __u64 *)&ctx->regs.cs & 3) == 3;
	/* a kernel thread (the idle task: most samples of an idle machine) has no user stack to walk */
	t = bpf_get_current_task_btf();
	has_mm = t->mm != NULL;
	/*
	 * Say so before reading the set (an exchange: a full barrier), so that
	 * user space, having switched sets, never misses a CPU still counting
	 * into the one it is about to empty.
	 */
	__atomic_exchange_n(busy, AGG_ENTERING, __ATOMIC_SEQ_CST);
	slot = *(volatile __u32 *)&ctl->slot & 1;
	*(volatile __u32 *)busy = slot + 1;
	if (slot)
		e = count_in(ctx, &agg_counts1, &agg_stacks1, &k, callchain, has_mm, ctx->sample_period);
	else
		e = count_in(ctx, &agg_counts0, &agg_stacks0, &k, callchain, has_mm, ctx->sample_period);
	*(volatile __u32 *)busy = 0;
	if (e)
		__sync_fetch_and_add(&agg_spilled, 1);
	return e;
}

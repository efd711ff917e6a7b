// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --aggregate SECONDS: instead of writing each sample to the ring, the
 * sampler (bpf/perfmark.bpf.c) hands it to pm_aggregate(), which counts it
 * per (pid, tid, uid, event, stack) in the current set of maps (see
 * aggregate_wire.h).  User space drains a set once per interval.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "aggregate_wire.h"

/* samples that found a map full, or a different stack under their hash */
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

/* a stack being assembled, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pm_agg_stack);
} agg_scratch SEC(".maps");

/* sized by user space before load (1 entry when not aggregating) */
#define AGG_COUNTS(name) \
	struct { \
		__uint(type, BPF_MAP_TYPE_HASH); \
		__uint(map_flags, BPF_F_NO_PREALLOC); \
		__uint(max_entries, 16384); \
		__type(key, struct pm_agg_key); \
		__type(value, struct pm_agg_val); \
	} name SEC(".maps")
#define AGG_STACKS(name) \
	struct { \
		__uint(type, BPF_MAP_TYPE_HASH); \
		__uint(map_flags, BPF_F_NO_PREALLOC); \
		__uint(max_entries, 4096); \
		__type(key, __u64); \
		__type(value, struct pm_agg_stack); \
	} name SEC(".maps")
AGG_COUNTS(agg_counts0);
AGG_COUNTS(agg_counts1);
AGG_STACKS(agg_stacks0);
AGG_STACKS(agg_stacks1);

static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* the stack already kept under this hash is this one */
static __always_inline bool same_stack(const struct pm_agg_stack *a, const struct pm_agg_stack *b)
{
	__u32 n = a->nr_kstack + a->nr_ustack;

	if (a->ip != b->ip || a->nr_kstack != b->nr_kstack || a->nr_ustack != b->nr_ustack ||
	    a->user_mode != b->user_mode)
		return false;
	for (__u32 i = 0; i < PM_AGG_FRAMES; i++) {
		if (i >= n)
			break;
		if (a->frames[i] != b->frames[i])
			return false;
	}
	return true;
}

static __always_inline void count_in(void *counts, void *stacks, const struct pm_sample *in,
				     struct pm_agg_stack *st, __u64 h)
{
	struct pm_agg_key k = {
		.pid = in->pid, .tid = in->tid, .uid = in->uid, .event = in->event,
		.stack = h,
	};
	struct pm_agg_val *v, nv = { .count = 1, .period = in->period };
	struct pm_agg_stack *old;

	old = bpf_map_lookup_elem(stacks, &h);
	if (old) {
		if (!same_stack(old, st))
			goto lost;
	} else if (bpf_map_update_elem(stacks, &h, st, BPF_NOEXIST)) {
		/* another CPU put it there meanwhile: the same stack? */
		old = bpf_map_lookup_elem(stacks, &h);
		if (!old || !same_stack(old, st))
			goto lost;
	}
	v = bpf_map_lookup_elem(counts, &k);
	if (!v) {
		if (!bpf_map_update_elem(counts, &k, &nv, BPF_NOEXIST))
			return;
		v = bpf_map_lookup_elem(counts, &k);
		if (!v)
			goto lost;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->period, in->period);
	return;
lost:
	__sync_fetch_and_add(&agg_lost, 1);
}

/*
 * Count the sample in (its frames after it): 0, or -1 when not
 * aggregating (the caller writes it to the ring).
 */
__noinline int pm_aggregate(const struct pm_sample *in, const struct pm_agg_frames *fr)
{
	__u32 zero = 0, n, slot, *busy;
	struct pm_agg_ctl *ctl = bpf_map_lookup_elem(&agg_ctl, &zero);
	struct pm_agg_stack *st;
	__u64 h;

	if (!ctl || !ctl->on)
		return -1;
	if (!in || !fr)
		return 0;
	st = bpf_map_lookup_elem(&agg_scratch, &zero);
	busy = bpf_map_lookup_elem(&agg_busy, &zero);
	if (!st || !busy)
		return 0;
	st->ip = in->ip;
	st->nr_kstack = in->nr_kstack;
	st->nr_ustack = in->nr_ustack;
	st->user_mode = in->user_mode;
	st->cpu = in->cpu;
	n = st->nr_kstack + st->nr_ustack;
	h = mix(mix(ctl->seed, st->ip), (__u64)st->nr_kstack << 32 | st->nr_ustack);
	h = mix(h, st->user_mode);
	for (__u32 i = 0; i < PM_AGG_FRAMES; i++) {
		if (i >= n)
			break;
		st->frames[i] = fr->ip[i];
		h = mix(h, fr->ip[i]);
	}
	/*
	 * Say so before reading the set (an exchange: a full barrier), so that
	 * user space, having switched sets, never misses a CPU still counting
	 * into the one it is about to empty.
	 */
	__atomic_exchange_n(busy, AGG_ENTERING, __ATOMIC_SEQ_CST);
	slot = *(volatile __u32 *)&ctl->slot & 1;
	*(volatile __u32 *)busy = slot + 1;
	if (slot)
		count_in(&agg_counts1, &agg_stacks1, in, st, h);
	else
		count_in(&agg_counts0, &agg_stacks0, in, st, h);
	*(volatile __u32 *)busy = 0;
	return 0;
}

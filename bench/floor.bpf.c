// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of sampling on this machine (bench/floor.c, bench/bench-floor.sh):
 * what a BPF program on the same timer event costs when it does nothing
 * (floor_empty), and when it counts user+kernel stacks in maps, as a
 * continuous profiler (or bpftrace's @[kstack, ustack] = count()) does,
 * writing nothing per sample to any ring (floor_stacks).  And the floor
 * of off-CPU time (bench/bench-offcpu.sh): a program on sched_switch that
 * does nothing (floor_switch), and one that takes what any design writing
 * each interval with its stacks must, the user and kernel stack of each
 * user thread leaving a CPU, and nothing else (floor_switch_stacks).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define FLOOR_MAX_STACK 127

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FLOOR_MAX_STACK * sizeof(__u64));
} kstacks SEC(".maps"), ustacks SEC(".maps");

struct floor_key {
	__u32 pid;
	__s32 kstack, ustack;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct floor_key);
	__type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int floor_empty(void *ctx)
{
	return 0;
}

SEC("perf_event")
int floor_stacks(struct bpf_perf_event_data *ctx)
{
	struct floor_key k = { .pid = bpf_get_current_pid_tgid() >> 32 };
	__u64 one = 1, *v;

	k.kstack = bpf_get_stackid(ctx, &kstacks, 0);
	k.ustack = bpf_get_stackid(ctx, &ustacks, BPF_F_USER_STACK);
	v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	return 0;
}

/* the ring cost alone: one 64-byte record a sample, into one shared ring ... */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} ring SEC(".maps");

/* ... or into the ring of the CPU it runs on */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);        /* resized to the CPUs */
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, 1 << 20);
	});
} rings SEC(".maps");

struct floor_rec {
	__u64 w[8];
};

SEC("perf_event")
int floor_ring(struct bpf_perf_event_data *ctx)
{
	struct floor_rec r = { .w = { 1, bpf_get_current_pid_tgid(), bpf_ktime_get_ns() } };

	bpf_ringbuf_output(&ring, &r, sizeof(r), BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("perf_event")
int floor_ringpc(struct bpf_perf_event_data *ctx)
{
	struct floor_rec r = { .w = { 1, bpf_get_current_pid_tgid(), bpf_ktime_get_ns() } };
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = bpf_map_lookup_elem(&rings, &cpu);

	if (rb)
		bpf_ringbuf_output(rb, &r, sizeof(r), BPF_RB_NO_WAKEUP);
	return 0;
}

#define FLOOR_PF_KTHREAD 0x00200000

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[FLOOR_MAX_STACK]);
} frames SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch_stacks, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0;
	__u64 *f = bpf_map_lookup_elem(&frames, &zero);

	if (!f || (prev->flags & FLOOR_PF_KTHREAD))
		return 0;
	bpf_get_stack(ctx, f, FLOOR_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
	bpf_get_task_stack(prev, f, FLOOR_MAX_STACK * sizeof(__u64), 0);
	return 0;
}

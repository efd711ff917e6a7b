/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The off-CPU programs' view of the scheduler's clock (included by
 * bpf/offcpu.bpf.c): when a thread whose switch-in no program saw came
 * on its CPU, on the recording's clock (bpf_ktime_get_ns).
 */
#ifndef PERFMARK_OFFCPU_CLOCK_BPF_H
#define PERFMARK_OFFCPU_CLOCK_BPF_H

/*
 * per CPU: how far the runqueue's clock lags bpf_ktime_get_ns (the least
 * lag seen lately, and when), for the end of an interval whose switch-in
 * no program saw (off_arrived)
 */
struct off_clk {
	__s64 lag;                      /* now - the runqueue's clock: either sign */
	__u64 at;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_clk);
} off_clk SEC(".maps");

/*
 * The clock of the runqueue t is on (this CPU's: t is switching here),
 * as the scheduler last read it; 0: not known (not a fair task's).
 */
static __always_inline __u64 off_rq_clock(struct task_struct *t)
{
	struct rq *rq;

	if (!bpf_core_field_exists(struct cfs_rq, rq))
		return 0;
	rq = t->se.cfs_rq ? t->se.cfs_rq->rq : NULL;   /* BTF loads, no helper */
	return rq ? rq->clock : 0;
}

/*
 * Note how far this CPU's runqueue clock lags now.  The scheduler reads
 * it early in a switch, or not at all when it read it a moment before,
 * so a lag is the clocks' offset plus that staleness: the least one seen
 * in the last few milliseconds is the closest to the offset (the clocks
 * drift apart by microseconds a second at most).
 */
#define OFF_CLK_KEEP_NS 4000000ull

static __always_inline void off_clk_note(struct task_struct *t, __u64 now)
{
	__u32 zero = 0;
	struct off_clk *k = bpf_map_lookup_elem(&off_clk, &zero);
	__u64 clock = off_rq_clock(t);
	__s64 lag = (__s64)(now - clock);

	if (!k || !clock)
		return;
	if (lag <= k->lag || !k->at || now - k->at > OFF_CLK_KEEP_NS) {
		k->lag = lag;
		k->at = now;
	}
}

/*
 * When did the thread running (t, leaving the CPU now) last come on it?
 * The scheduler keeps that (sched_info.last_arrival) on its runqueue's
 * clock: that plus the clocks' offset, from the least lag noted lately
 * (off_clk_note), else from this switch's (which may be stale, and puts
 * the arrival late).  false: not known (no CONFIG_SCHED_INFO, not a fair
 * task).
 */
static __always_inline bool off_arrived(struct task_struct *t, __u64 now, __u64 *when)
{
	__u32 zero = 0;
	struct off_clk *k;
	__u64 clock, arrival;
	__s64 lag;

	if (!bpf_core_field_exists(t->sched_info))
		return false;
	clock = off_rq_clock(t);
	arrival = t->sched_info.last_arrival;
	if (!clock || !arrival || arrival > clock || clock - arrival > now)
		return false;
	lag = (__s64)(now - clock);
	k = bpf_map_lookup_elem(&off_clk, &zero);
	if (k && k->at && now - k->at <= OFF_CLK_KEEP_NS && k->lag < lag)
		lag = k->lag;
	*when = arrival + (__u64)lag;  /* the runqueue clock's arrival, on bpf_ktime_get_ns */
	return true;
}

#endif

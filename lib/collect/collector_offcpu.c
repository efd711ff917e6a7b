// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A collector's off-CPU time (--off-cpu; bpf/offcpu.bpf.c): the switch and
 * wakeup programs, and the two maps of summed short intervals, drained at
 * every read of the ring that follows new sums: the programs are switched
 * to the other map, and once no CPU is still adding into the one they left
 * (off_busy), each of its entries goes to the sessions as one record
 * (count = the intervals it sums) and leaves the map; then the same the
 * other way, so that a read leaves no sum behind.  Pins from before the
 * second map: the one map is taken as it is (an interval added to an entry
 * as it is taken out is lost).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "perfmark_wire.h"
#include "offcpu_wire.h"
#include "unwind_wire.h"
#include "collector_int.h"
#include "unwind.h"

const char *const offcpu_pin_names[OFF_FDS] = {
	[OFF_AGG0] = "off_agg", [OFF_AGG1] = "off_agg1", [OFF_CTL] = "off_ctl", [OFF_BUSY] = "off_busy",
};

/* entries taken from the map per system call */
#define OFF_BATCH 128
/* for a CPU still adding into the map the programs left, at most */
#define OFF_WAIT_NS 10000000ull
/* a per-CPU value is read 8-byte aligned per CPU: the array is one of these per CPU */
_Static_assert(sizeof(struct pm_off_busy) == COLLECTOR_PERCPU_STRIDE(sizeof(struct pm_off_busy)),
	       "off_busy is read into an array of them: 8-byte steps");
#define OFF_SLOT  (sizeof(struct pm_offcpu) + (2 * PM_MAX_STACK + PM_OFF_WSTACK) * sizeof(uint64_t))

/*
 * The distance from a CPU's runqueue to its preempt count: both per-CPU
 * variables, their offsets in BTF's .data..percpu (0: not found).
 */
static int64_t preempt_count_from_rq(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_var_secinfo *v;
	const struct btf_type *t;
	int64_t pc = -1, rq = -1;
	int id;
	uint16_t i;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0, v = t ? btf_var_secinfos(t) : NULL; t && i < btf_vlen(t); i++, v++) {
		const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);

		if (name && !strcmp(name, "__preempt_count"))
			pc = v->offset;
		else if (name && !strcmp(name, "runqueues"))
			rq = v->offset;
	}
	btf__free(btf);
	return pc >= 0 && rq >= 0 ? pc - rq : 0;
}

/*
 * Are user stacks of waits in a system call taken as the thread leaves the
 * call (bpf/offcpu.bpf.c, off_sys_exit), not at the switch?  Only by frame
 * pointers (bpf_get_stack writes into the thread's own storage).  Not for
 * dwarf (the stack is copied at the switch).  Not for ehframe: the walk
 * keeps its state per CPU (uw_state, bpf/unwind.bpf.c), and sys_exit runs
 * with interrupts on, so a cpu-clock sample walking the same CPU's state
 * mid-walk left a wrong stack (t-offcpu-report: sleep_ms called from
 * burn_cpu); the switch runs with them off.  Not system-wide:
 * off_sys_exit runs at every system call of the machine, and measured on
 * the idle VM (bench-offcpu: 12k calls a second, 440 switches) it cost
 * more (55 ms in 30 s) than the user stacks it saved; for the processes of a command,
 * whose switches are what is recorded, it saves a walk on every short wait
 * (pipe ping-pong, kernel.bpf_stats_enabled: off_switch 3.6 us a run taking
 * the stack, 1.4 us with off_sys_exit's 0.16 us a system call beside it;
 * bench-offcpu prints them).
 * The collection's spec keeps whether it is targeted (normalize(),
 * collector.c): until it did, this was never so.
 */
static bool offcpu_eager(const struct collector *c)
{
	return collector_ustack_mode(&c->spec) != PM_US_FP ||
	       c->spec.target != RECSPEC_TARGET_PIDS;
}

int collector_offcpu_setup(struct collector *c)
{
	bool on = c->spec.off_cpu;

	c->skel->rodata->offcpu_min_ns = c->spec.off_cpu_min_ns;
	c->skel->rodata->offcpu_lazy = on && !offcpu_eager(c);
	if (on)
		c->skel->rodata->pc_from_rq = preempt_count_from_rq();
	/* not asked for: not even verified */
	bpf_program__set_autoload(c->skel->progs.off_switch, on);
	bpf_program__set_autoload(c->skel->progs.off_waking, on);
	/* dwarf copies the stack at the switch: no user frames to wait for */
	bpf_program__set_autoload(c->skel->progs.off_sys_exit, on && !offcpu_eager(c));
	return 0;
}

int collector_offcpu_start(struct collector *c, const int fds[OFF_FDS], char *err, size_t errlen)
{
	uint32_t zero = 0, slot = 0;
	int i;

	memcpy(c->off_fd, fds, sizeof(c->off_fd));
	if (!c->spec.off_cpu)
		return 0;
	if (fds[OFF_AGG0] < 0) {
		snprintf(err, errlen, "the off-cpu map is missing");
		return -ENOENT;
	}
	/* both maps or neither (older pins): the one map alone, taken as it is */
	for (i = OFF_AGG1; i < OFF_FDS; i++)
		if (fds[i] < 0)
			break;
	if (i < OFF_FDS) {
		for (i = OFF_AGG1; i < OFF_FDS; i++)
			if (c->off_fd[i] >= 0)
				close(c->off_fd[i]);
		for (i = OFF_AGG1; i < OFF_FDS; i++)
			c->off_fd[i] = -1;
	} else {
		/* adopted: the map the programs sum into now */
		if (!bpf_map_lookup_elem(fds[OFF_CTL], &zero, &slot))
			c->off_slot = slot & 1;
		c->off_ncpus = libbpf_num_possible_cpus();
		if (c->off_ncpus <= 0)
			return -EINVAL;
		c->off_busy = calloc((size_t)c->off_ncpus, sizeof(*c->off_busy));
		if (!c->off_busy)
			return -ENOMEM;
	}
	c->off_keys = calloc(OFF_BATCH, sizeof(struct pm_off_key));
	c->off_vals = calloc(OFF_BATCH, OFF_SLOT);
	return c->off_keys && c->off_vals ? 0 : -ENOMEM;
}

int collector_offcpu_attach(struct collector *c, char *err, size_t errlen)
{
	struct bpf_program *progs[] = { c->skel->progs.off_switch, c->skel->progs.off_waking,
					c->skel->progs.off_sys_exit };
	size_t i;
	int e;

	if (!c->spec.off_cpu)
		return 0;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (progs[i] == c->skel->progs.off_sys_exit && offcpu_eager(c))
			continue;
		struct bpf_link *l = bpf_program__attach(progs[i]);

		if (!l) {
			e = -errno;
			snprintf(err, errlen, "cannot attach the off-cpu program %s: %s",
				 bpf_program__name(progs[i]), strerror(-e));
			return e ? e : -EINVAL;
		}
		c->links[c->nr_links++] = l;
	}
	return 0;
}

void collector_offcpu_free(struct collector *c)
{
	free(c->off_keys);
	free(c->off_vals);
	free(c->off_busy);
	c->off_keys = c->off_vals = NULL;
	c->off_busy = NULL;
}

/*
 * A record from the ring or the map, before the sessions see it: the
 * unwinder installs its process's tables as for a sample (-a: at the
 * first), so its later stacks are walked from them.
 */
void collector_offcpu_ring(struct collector *c, const void *data, size_t size)
{
	const struct pm_offcpu *o = data;

	if (c->uw && size >= sizeof(*o))
		unwinder__sample(c->uw, o->pid, false);   /* never a copy: fp where no tables */
}

/* every entry of one map of sums: out of it, one record each */
static void take_sums(struct collector *c, int fd)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct pm_off_key in, out;
	bool first = true;
	uint32_t n, i;
	int e;

	for (;;) {
		n = OFF_BATCH;
		e = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, c->off_keys,
						    c->off_vals, &n, &opts);
		if (e && errno != ENOENT)
			n = 0;      /* ENOSPC: a bucket holds more than a batch; the next read */
		for (i = 0; i < n && i < OFF_BATCH; i++) {
			const struct pm_offcpu *o = (const void *)((char *)c->off_vals + i * OFF_SLOT);
			size_t len = sizeof(*o) + ((size_t)o->nr_kstack + o->nr_ustack +
						   o->nr_wkstack + o->nr_wustack) * sizeof(uint64_t);

			if (o->rec_type != PM_REC_OFFCPU || len > OFF_SLOT)
				continue;
			/* a sum is no stack copy: nothing for collector_unwind_ring to do */
			collector_offcpu_ring(c, o, len);
			collector_dispatch_subs(c, o, len);
		}
		if (e)
			return;
		in = out;
		first = false;
	}
}

/*
 * The programs sum into the other map from now on; the one they left is
 * taken once no CPU is reading which (entering) or adding into it, or
 * after OFF_WAIT_NS (a program runs for microseconds).
 */
static bool off_busy(const void *value, uint32_t left)
{
	const struct pm_off_busy *b = value;

	return b->entering || b->in[left];
}

static void switch_and_take(struct collector *c)
{
	uint32_t zero = 0, left = c->off_slot, next = left ^ 1;

	if (bpf_map_update_elem(c->off_fd[OFF_CTL], &zero, &next, BPF_ANY))
		return;     /* still summing into it: the next read */
	c->off_slot = next;
	collector_wait_quiet(c->off_fd[OFF_BUSY], c->off_busy, sizeof(*c->off_busy), c->off_ncpus,
			     off_busy, left, OFF_WAIT_NS);
	take_sums(c, c->off_fd[left ? OFF_AGG1 : OFF_AGG0]);
}

/* the summed intervals: out of the maps, one record each */
void collector_offcpu_drain(struct collector *c)
{
	if (c->off_fd[OFF_AGG0] < 0 || !c->off_vals)
		return;
	/*
	 * Nothing summed since the last drain: the maps are empty, and the
	 * batch walk of their empty buckets (8 us here) is skipped, ten times
	 * a second on an idle machine.  The skeleton's mapping of .bss: no
	 * syscall (adopted: no mapping, always drained).
	 */
	if (c->skel && c->skel->bss) {
		uint64_t merged = __atomic_load_n(&c->skel->bss->offcpu_merged, __ATOMIC_RELAXED);

		if (merged == c->off_drained)
			return;
		c->off_drained = merged;
	}
	if (c->off_fd[OFF_CTL] < 0) {
		take_sums(c, c->off_fd[OFF_AGG0]);
		return;
	}
	/* the map summed into until now, then the one summed into while it was taken */
	switch_and_take(c);
	switch_and_take(c);
}

void collector__offcpu_stats(const struct collector *c, struct collector_offcpu_stats *st)
{
	struct perfmark_bpf__bss bss;
	uint32_t zero = 0;

	memset(st, 0, sizeof(*st));
	if (!c->spec.off_cpu || bpf_map_lookup_elem(c->bss_fd, &zero, &bss))
		return;
	st->samples = bss.offcpu_samples;
	st->merged = bss.offcpu_merged;
	st->lost = bss.offcpu_lost;
	st->unseen = bss.offcpu_unseen;
	st->nowaker = bss.offcpu_nowaker;
}

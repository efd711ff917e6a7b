// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Off-CPU records (bpf/offcpu_wire.h) as samples of the event offcpu-time:
 * time = switch-out, period = ns off CPU, the stack as the thread left,
 * and the payload of lib/format/offcpu_raw.h (state, count, waker, end).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "perfmark_wire.h"
#include "offcpu_wire.h"
#include "unwind_wire.h"
#include "offcpu_raw.h"
#include "perfdata.h"
#include "session-int.h"

_Static_assert(PM_OFF_WSTACK <= PERFMARK_OFFCPU_WAKER_MAX, "the waker's frames must fit the payload");
_Static_assert(PM_OFF_RUNNABLE == PERFMARK_OFFCPU_RUNNABLE && PM_OFF_BLOCKED == PERFMARK_OFFCPU_BLOCKED &&
	       PM_OFF_WAKER_TASK == PERFMARK_OFFCPU_WAKER_TASK &&
	       PM_OFF_WAKER_IRQ == PERFMARK_OFFCPU_WAKER_IRQ,
	       "bpf/offcpu_wire.h and offcpu_raw.h must agree");

/* dwarf: the registers and stack bytes after the kernel frames */
static void off_dwarf(const struct pm_offcpu *o, size_t size, struct perfdata_sample *ds)
{
	size_t off = sizeof(*o) + (size_t)(o->nr_kstack + o->nr_ustack + o->nr_wkstack +
					   o->nr_wustack) * sizeof(uint64_t);
	const struct pm_uregs *u = uregs_at(o, size, off);

	if (!(o->flags & PM_SF_UREGS) || !u || !u->abi || u->size > PM_OFF_USTACK)
		return;
	uregs_fill(u, ds);
	ds->ip = u->regs[8];   /* PERF_REG_X86_IP in PM_UREGS_MASK order */
	ds->misc = PERF_RECORD_MISC_USER;
}

int stage_offcpu(struct session *s, const struct pm_offcpu *o, size_t size)
{
	const uint64_t *st = (const uint64_t *)(o + 1);
	uint64_t *ips = (uint64_t *)s->chain_buf;
	uint64_t rawbuf[(sizeof(struct perfmark_offcpu_raw) + 7) / 8 + PERFMARK_OFFCPU_WAKER_MAX];
	struct perfmark_offcpu_raw raw = { 0 };
	/* the thread, when it left and for how long: the same for every off-CPU sample */
	struct perfdata_sample ds = {
		.id = ID_OFFCPU, .pid = o->pid, .tid = o->tid,
		.time = o->time, .cpu = o->cpu, .period = o->period,
	};
	uint32_t nk = o->nr_kstack, nu = o->nr_ustack, n = 0, i;
	uint32_t nwk = o->nr_wkstack, nwu = o->nr_wustack, nw = 0;
	int e;

	if (size < sizeof(*o) || nk > PM_MAX_STACK || nu > PM_MAX_STACK || nwk + nwu > PM_OFF_WSTACK ||
	    size < sizeof(*o) + (size_t)(nk + nu + nwk + nwu) * sizeof(uint64_t) || !o->count ||
	    (o->state != PM_OFF_RUNNABLE && o->state != PM_OFF_BLOCKED))
		return 0;
	/* the sample's ip: where in user code it left (as perf's offcpu-time), else in the kernel */
	if (nu) {
		ds.ip = st[nk];
		ds.misc = PERF_RECORD_MISC_USER;
	} else if (nk && s->kernel_ok) {
		ds.ip = st[0];
		ds.misc = PERF_RECORD_MISC_KERNEL;
	} else {
		ds.misc = PERF_RECORD_MISC_USER;
	}
	/* RULE (issue 8 case 4): no kernel frames where perf would not show them */
	if (nk && s->kernel_ok) {
		ips[n++] = PERF_CONTEXT_KERNEL;
		for (i = 0; i < nk; i++)
			ips[n++] = st[i];
	}
	if (nu) {
		ips[n++] = PERF_CONTEXT_USER;
		for (i = 0; i < nu; i++)
			ips[n++] = st[nk + i];
	}
	ds.nr_ips = n;
	ds.ips = ips;
	if (s->off_sample_type & SAMPLE_TYPE_DWARF)
		off_dwarf(o, size, &ds);
	raw.version = PERFMARK_OFFCPU_VERSION;
	raw.state = (uint16_t)o->state;
	raw.task_state = o->task_state;
	raw.count = o->count;
	raw.end = o->end;
	raw.runq_ns = o->runq <= o->period ? o->runq : o->period;
	/*
	 * another user's task is not named to a session limited to one user,
	 * nor where it was; the waker's kernel frames only where the thread's are shown
	 */
	if (o->waker_flags & PM_OFF_WAKER_TASK) {
		raw.waker_flags = PERFMARK_OFFCPU_WAKER_TASK;
		if (s->o.uid_filter == (uint32_t)-1 || o->waker_uid == s->o.uid_filter) {
			raw.waker_pid = o->waker_pid;
			raw.waker_tid = o->waker_tid;
			raw.nr_waker_kstack = s->kernel_ok ? nwk : 0;
			raw.nr_waker_ustack = o->waker_pid ? nwu : 0;
		}
	} else if (o->waker_flags & PM_OFF_WAKER_IRQ) {
		raw.waker_flags = PERFMARK_OFFCPU_WAKER_IRQ;
	}
	memcpy(rawbuf, &raw, sizeof(raw));
	for (i = 0; i < raw.nr_waker_kstack; i++)
		memcpy((char *)rawbuf + sizeof(raw) + 8 * nw++, &st[nk + nu + i], 8);
	for (i = 0; i < raw.nr_waker_ustack; i++)
		memcpy((char *)rawbuf + sizeof(raw) + 8 * nw++, &st[nk + nu + nwk + i], 8);
	ds.raw = rawbuf;
	ds.raw_size = (uint32_t)(sizeof(raw) + 8 * nw);
	e = stage_encoded(s, s->off_sample_type, &ds);
	if (e)
		return e;
	s->stats.offcpu++;
	if (o->count > 1) {
		s->stats.offcpu_sums++;
		s->stats.offcpu_summed += o->count;
	}
	return stage_done(s);
}

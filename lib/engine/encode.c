// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Encoding: what the BPF ring delivers (bpf/perfmark_wire.h), drops counted
 * in BPF and synthesized state become perf records in the reorder window,
 * each journaled to the sink as soon as it is encoded.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmark_wire.h"
#include "tracepoint_wire.h"
#include "unwind_wire.h"
#include "offcpu_wire.h"
#include "offcpu_raw.h"
#include "perfdata.h"
#include "rangehist.h"
#include "window.h"
#include "session-int.h"
#include "sinks.h"
#include "uevent.h"

/* marker flags go from the BPF record into the file as they are */
_Static_assert(PM_F_TRUNCATED == PERFMARK_UEVENT_F_TRUNCATED && PM_F_FAULT == PERFMARK_UEVENT_F_FAULT,
	       "PM_F_* (bpf/perfmark_wire.h) must equal PERFMARK_UEVENT_F_* (uevent.h)");

/* --- staging: the reorder window, and the journal ------------------------- */

/* A record the window lets go (a flush, or its cap reached), to the sink. */
int session_out_record(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct session *s = ctx;

	return sink__record(s->sink, time, rec, len);
}

/*
 * At the window's cap (window.h), the oldest half of what it holds is
 * written at once, as a round of its own, and the room asked again: each
 * pass writes at least one record, so this ends.
 */
void *stage_alloc(struct session *s, uint32_t len, uint64_t time)
{
	int e;

	while (!(s->staged = window__alloc(s->ro, len, time)) && window__full(s->ro) && s->sink &&
	       !s->err) {
		e = window__overflow(s->ro, session_out_record, s);
		e = e < 0 ? e : sink__round(s->sink);
		if (e)
			s->err = e;
	}
	s->staged_len = len;
	s->staged_time = time;
	return s->staged;
}

/* The record just staged (and encoded) goes to the sink's journal. */
int stage_done(struct session *s)
{
	return sink__journal(s->sink, s->staged_time, s->staged, s->staged_len);
}

/* --- encoding what the ringbuf delivers ---------------------------------- */

const struct pm_uregs *uregs_at(const void *rec, size_t size, size_t off)
{
	const struct pm_uregs *u = (const void *)((const char *)rec + off);

	if (size < off + sizeof(*u) || u->size > size - off - sizeof(*u))
		return NULL;
	return u;
}

void uregs_fill(const struct pm_uregs *u, struct perfdata_sample *ds)
{
	ds->regs_abi = u->abi;
	ds->nr_regs = PM_UREGS_NR;
	ds->regs = (const uint64_t *)u->regs;
	ds->stack = u + 1;
	ds->stack_size = (uint32_t)u->size;
}

int stage_encoded(struct session *s, uint64_t type, struct perfdata_sample *ds)
{
	size_t len = perfdata_sample_size(type, ds);
	void *rec;

	if (len > SAMPLE_MAX_SIZE) {     /* a record's size is 16 bits: cut the stack's far end */
		ds->stack_size -= (uint32_t)((len - SAMPLE_MAX_SIZE + 7) & ~(size_t)7);
		len = perfdata_sample_size(type, ds);
	}
	rec = stage_alloc(s, len, ds->time);
	if (!rec)
		return -ENOMEM;
	perfdata_encode_sample(rec, type, ds);
	return 0;
}

/* dwarf mode: the registers and stack bytes after the frames, as perf has them */
static void dwarf_fields(const struct pm_sample *ps, size_t size, struct perfdata_sample *ds)
{
	size_t off = sizeof(*ps) + (size_t)(ps->nr_kstack + ps->nr_ustack) * sizeof(uint64_t);
	const struct pm_uregs *u;

	if (!(ps->flags & PM_SF_UREGS))
		return;
	u = uregs_at(ps, size, off);
	if (u)
		uregs_fill(u, ds);
}

/*
 * A tracepoint hit's entry (PM_SF_RAW): after the frames and, with
 * PM_SF_UREGS, the registers and stack copy.  NULL when it is not whole.
 */
static const struct pm_raw *raw_entry(const struct pm_sample *ps, size_t size)
{
	size_t off = sizeof(*ps) + (size_t)(ps->nr_kstack + ps->nr_ustack) * sizeof(uint64_t);
	const struct pm_uregs *u;
	const struct pm_raw *r;

	if (ps->flags & PM_SF_UREGS) {
		u = uregs_at(ps, size, off);
		if (!u)
			return NULL;
		off += sizeof(*u) + u->size;
	}
	r = (const void *)((const char *)ps + off);
	if (size < off + sizeof(*r) || r->size > size - off - sizeof(*r) || r->size < 8 ||
	    r->size > PM_TP_RAW_MAX)
		return NULL;
	return r;
}

int stage_sample(struct session *s, const struct pm_sample *ps, size_t size)
{
	uint64_t *ips = (uint64_t *)s->chain_buf;
	struct perfdata_sample ds = { 0 };
	uint32_t nk = ps->nr_kstack, nu = ps->nr_ustack, n = 0, i;
	uint64_t type = s->sample_type;
	const struct pm_raw *raw;
	int e;

	if (size < sizeof(*ps) || ps->event >= s->nr_ev ||
	    nk > PM_MAX_STACK || nu > PM_MAX_STACK ||
	    size < sizeof(*ps) + (nk + nu) * sizeof(uint64_t))
		return 0;
	/* a tracepoint's hit carries its entry: only for a tracepoint's attr, and only whole */
	if (!!(ps->flags & PM_SF_RAW) != s->ev[ps->event].tracepoint)
		return 0;
	if (ps->flags & PM_SF_RAW) {
		raw = raw_entry(ps, size);
		if (!raw)
			return 0;
		ds.raw = raw->data;
		ds.raw_size = raw->size;
		type |= PERF_SAMPLE_RAW;
	}
	/*
	 * RULE (issue 8 case 4): kernel addresses reach a session only where
	 * perf would show them to its owner.  Where it would not, this is
	 * perf's exclude_kernel: no sample taken in the kernel, no kernel frames.
	 */
	if (!s->kernel_ok && !ps->user_mode)
		return 0;
	ds.id = ps->event + 1;
	ds.ip = ps->ip;
	ds.pid = ps->pid;
	ds.tid = ps->tid;
	ds.time = ps->time;
	ds.cpu = ps->cpu;
	ds.period = ps->period;
	ds.misc = ps->user_mode ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	if (s->o.spec.call_graph != RECSPEC_CG_NONE) {
		/* --max-stack: BPF keeps to it; a program shared or adopted is held to it here */
		uint32_t max = s->o.spec.max_stack, kn = nk < max ? nk : max;
		uint32_t un = nu < max - kn ? nu : max - kn;

		if (kn && s->kernel_ok) {
			ips[n++] = PERF_CONTEXT_KERNEL;
			for (i = 0; i < kn; i++)
				ips[n++] = ps->stack[i];
		}
		if (un) {
			ips[n++] = PERF_CONTEXT_USER;
			for (i = 0; i < un; i++)
				ips[n++] = ps->stack[nk + i];
		}
		/* dwarf: perf's chain holds the kernel part only (exclude_callchain_user) */
		if (!n && !(type & SAMPLE_TYPE_DWARF)) {
			ips[n++] = ps->user_mode ? PERF_CONTEXT_USER : PERF_CONTEXT_KERNEL;
			ips[n++] = ps->ip;
		}
		ds.nr_ips = n;
		ds.ips = ips;
	}
	if (type & SAMPLE_TYPE_DWARF)
		dwarf_fields(ps, size, &ds);
	e = stage_encoded(s, type, &ds);
	if (e)
		return e;
	s->stats.samples++;
	return stage_done(s);
}

/* A clean string (NUL-terminated, no NUL inside) goes out as perfmark:printf. */
static bool is_clean_string(const struct pm_marker *m)
{
	return m->type == PERFMARK_TYPE_STRING && !m->flags && m->size &&
	       m->data[m->size - 1] == '\0' && memchr(m->data, '\0', m->size) == m->data + m->size - 1;
}

/*
 * A marker read again after a restart (PM_X_REDELIVERED) that the daemon
 * before journaled to this session's ring just before it was killed: its
 * encoding is among the last records the ring held (sink__journaled_before).
 */
static bool kept_before(struct session *s, const struct perfdata_sample *ds)
{
	size_t len = perfdata_sample_size(MARKER_SAMPLE_TYPE, ds);
	void *rec;
	bool kept;

	if (!s->sink || !(rec = malloc(len)))
		return false;
	perfdata_encode_sample(rec, MARKER_SAMPLE_TYPE, ds);
	kept = sink__journaled_before(s->sink, rec, len);
	free(rec);
	return kept;
}

int stage_marker(struct session *s, const struct pm_marker *pm, size_t size)
{
	struct perfdata_sample ds;
	struct perfmark_uevent_hdr *h;
	size_t len;
	void *rec;

	if (size < sizeof(*pm) || pm->size > PM_MAX_PAYLOAD || size < sizeof(*pm) + pm->size)
		return 0;
	/* field by field, not "= { 0 }": a rep stos per marker is a tenth of its cost */
	ds.nr_ips = 0;
	ds.ips = NULL;
	ds.regs_abi = 0;
	ds.nr_regs = 0;
	ds.regs = NULL;
	ds.stack_size = 0;
	ds.stack = NULL;
	ds.ip = pm->ip;
	ds.pid = pm->pid;
	ds.tid = pm->tid;
	ds.time = pm->time;
	ds.cpu = pm->cpu;
	ds.period = 1;
	ds.misc = PERF_RECORD_MISC_USER;
	if (is_clean_string(pm)) {
		ds.id = ID_PRINTF;
		ds.raw = pm->data;
		ds.raw_size = pm->size;
	} else {
		/* the uevent header goes just before the payload, in a copy */
		h = (struct perfmark_uevent_hdr *)s->chain_buf;
		h->version = PERFMARK_UEVENT_VERSION;
		h->flags = pm->flags;
		h->type = pm->type;
		h->size = pm->size;
		h->orig_size = pm->orig_size;
		memcpy(h + 1, pm->data, pm->size);
		ds.id = ID_UEVENT;
		ds.raw = h;
		ds.raw_size = sizeof(*h) + pm->size;
	}
	if (__builtin_expect(pm->ext & PM_X_REDELIVERED, 0) && kept_before(s, &ds)) {
		s->stats.repeats++;
		return 0;
	}
	len = perfdata_sample_size(MARKER_SAMPLE_TYPE, &ds);
	rec = stage_alloc(s, len, ds.time);
	if (!rec)
		return -ENOMEM;
	perfdata_encode_sample(rec, MARKER_SAMPLE_TYPE, &ds);
	s->stats.markers++;
	if (s->o.ranges)
		rangehist__marker(s->o.ranges, pm->type, pm->pid, pm->tid, pm->time, pm->data, pm->size);
	if (pm->ext & PM_X_CLAMPED)
		s->stats.clamped++;
	return stage_done(s);
}

/* synthesized state: every record has the synthesis time, s->t0 */
int on_synth(void *ctx, const void *rec, size_t len)
{
	struct session *s = ctx;
	const struct perf_event_header *h = rec;
	void *p;

	if (len < sizeof(*h) + PERFDATA_SAMPLE_ID_SIZE || len != h->size)
		return -EINVAL;
	p = stage_alloc(s, len, s->t0);
	if (!p)
		return -ENOMEM;
	memcpy(p, rec, len);
	s->stats.sideband++;
	return stage_done(s);
}

/* PERF_RECORD_LOST_SAMPLES for drops counted in BPF since the last drain */
int stage_lost(struct session *s, uint64_t lost, uint64_t id, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint64_t lost;
		uint8_t sid[PERFDATA_SAMPLE_ID_SIZE];
	} *r;
	struct perfdata_sample_id sid = { .pid = 0, .tid = 0, .time = time, .cpu = 0, .id = id };

	r = stage_alloc(s, sizeof(*r), time);
	if (!r)
		return -ENOMEM;
	r->h.type = PERF_RECORD_LOST_SAMPLES;
	r->h.misc = 0;
	r->h.size = sizeof(*r);
	r->lost = lost;
	perfdata_encode_sample_id(r->sid, &sid);
	return stage_done(s);
}


/* --- the events, as perf.data describes them ------------------------------ */

/*
 * The event's period is the same in every sample: a period was given, or
 * the event is one of the hrtimer clocks, whose frequency the kernel turns
 * into a fixed period of NSEC_PER_SEC / freq (perf_swevent_init_hrtimer).
 */
static bool fixed_period(const struct perf_event_attr *a)
{
	return !a->freq || (a->type == PERF_TYPE_SOFTWARE && a->sample_freq &&
			    (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK));
}

/* every sampling event's period is the same in all its samples */
bool session_fixed_period(const struct session *s)
{
	for (size_t i = 0; i < s->nr_ev; i++) {
		struct perf_event_attr a;

		collector__sampling_attr(s->c, i, &a);
		if (!fixed_period(&a))
			return false;
	}
	return true;
}

size_t session__events(const struct session *s, struct perfdata_event *evs,
		       uint64_t *ids, size_t max)
{
	static const char *const marker_names[2] = { PERFMARK_EV_PRINTF, PERFMARK_EV_UEVENT };
	size_t n = 0, i;

	for (i = 0; i < s->nr_ev && n < max; i++, n++) {
		struct perf_event_attr *a = &evs[n].attr;

		memset(&evs[n], 0, sizeof(evs[n]));
		collector__sampling_attr(s->c, i, a);
		a->disabled = 0;
		if (s->fixed_period && a->freq) {   /* as the kernel runs it (fixed_period) */
			a->freq = 0;
			a->sample_period = 1000000000ull / a->sample_freq;
		}
		a->sample_type = s->sample_type | (s->ev[i].tracepoint ? PERF_SAMPLE_RAW : 0);
		if (s->sample_type & PERF_SAMPLE_CALLCHAIN)   /* --max-stack, as perf records it */
			a->sample_max_stack = (uint16_t)s->o.spec.max_stack;
		a->sample_id_all = 1;
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		if (s->sample_type & SAMPLE_TYPE_DWARF) {   /* as perf --call-graph dwarf */
			a->sample_regs_user = PM_UREGS_MASK;
			a->sample_stack_user = s->o.spec.stack_size;
			a->exclude_callchain_user = 1;
		}
		if (i == 0) {   /* the sideband is written as this event's */
			a->mmap_data = (s->sample_type & SAMPLE_TYPE_DWARF) != 0;
			a->mmap = 1;
			a->mmap2 = 1;
			a->comm = 1;
			a->comm_exec = 1;
			a->task = 1;
		}
		ids[n] = i + 1;
		evs[n].ids = &ids[n];
		evs[n].nr_ids = 1;
		evs[n].name = s->ev[i].name;
	}
	for (i = 0; s->o.spec.markers && i < 2 && n < max; i++, n++) {
		ids[n] = i ? ID_UEVENT : ID_PRINTF;
		perfdata_event_init(&evs[n], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT,
				    MARKER_SAMPLE_TYPE, marker_names[i], &ids[n], 1);
		evs[n].attr.sample_period = 1;
	}
	/* as perf's --off-cpu: a BPF output event renamed offcpu-time, PERIOD in each sample */
	if (s->o.spec.off_cpu && n < max) {
		ids[n] = ID_OFFCPU;
		perfdata_event_init(&evs[n], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT,
				    s->off_sample_type, PERFMARK_OFFCPU_EVENT, &ids[n], 1);
		evs[n].attr.sample_period = 1;
		if (s->off_sample_type & SAMPLE_TYPE_DWARF) {
			evs[n].attr.sample_regs_user = PM_UREGS_MASK;
			evs[n].attr.sample_stack_user = s->o.spec.stack_size < PM_OFF_USTACK ?
				s->o.spec.stack_size : PM_OFF_USTACK;
			evs[n].attr.exclude_callchain_user = 1;
		}
		n++;
	}
	return n;
}

/* --- the gap sideband: what BPF saw while no daemon read ------------------ */

static size_t put_sid(void *rec, size_t body, uint32_t type, uint16_t misc, uint32_t pid,
		      uint32_t tid, uint64_t time, uint32_t cpu)
{
	struct perf_event_header *h = rec;
	struct perfdata_sample_id sid = { .pid = pid, .tid = tid, .time = time, .cpu = cpu, .id = 1 };
	size_t len = sizeof(*h) + body + PERFDATA_SAMPLE_ID_SIZE;

	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)len;
	perfdata_set_sample_id(rec, len, &sid);
	return len;
}

/* a name padded with NULs to a multiple of 8 at dst; its padded length */
static size_t put_name(char *dst, const char *name, size_t max)
{
	size_t n = strnlen(name, max - 1), pad = (n + 8) & ~(size_t)7;

	memset(dst, 0, pad);
	memcpy(dst, name, n);
	return pad;
}

size_t encode_gap(const void *data, size_t size, void *out, uint32_t *uid)
{
	const struct pm_task *t = data;
	const struct pm_mmap *m = data;
	uint32_t *u = (uint32_t *)((struct perf_event_header *)out + 1);
	size_t body;

	if (t->rec_type == PM_REC_TASK && size >= sizeof(*t)) {
		*uid = t->uid;
		switch (t->kind) {
		case PM_TASK_EXEC:
		case PM_TASK_COMM:
			u[0] = t->pid;
			u[1] = t->tid;
			body = 8 + put_name((char *)(u + 2), t->comm, sizeof(t->comm));
			return put_sid(out, body, PERF_RECORD_COMM,
				       t->kind == PM_TASK_EXEC ? PERF_RECORD_MISC_COMM_EXEC : 0,
				       t->pid, t->tid, t->time, t->cpu);
		case PM_TASK_FORK:
		case PM_TASK_EXIT:
			/* body: pid, ppid, tid, ptid, time */
			u[0] = t->pid;
			u[1] = t->ppid;
			u[2] = t->tid;
			u[3] = t->ptid;
			memcpy(u + 4, &t->time, 8);
			return put_sid(out, 24, t->kind == PM_TASK_FORK ? PERF_RECORD_FORK : PERF_RECORD_EXIT,
				       0, t->pid, t->tid, t->time, t->cpu);
		}
		return 0;
	}
	if (m->rec_type != PM_REC_MMAP || size < sizeof(*m) || !m->path_len ||
	    m->path_len > PM_MAX_PATH || size < sizeof(*m) + m->path_len)
		return 0;
	*uid = m->uid;
	/* body: pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, filename */
	u[0] = m->pid;
	u[1] = m->tid;
	memcpy(u + 2, &m->start, 8);
	memcpy(u + 4, &m->len, 8);
	memcpy(u + 6, &m->pgoff, 8);
	u[8] = m->maj;
	u[9] = m->min;
	memcpy(u + 10, &m->ino, 8);
	memcpy(u + 12, &m->ino_generation, 8);
	u[14] = m->prot;
	u[15] = m->flags;
	body = 64 + put_name((char *)(u + 16), m->path, m->path_len);
	return put_sid(out, body, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, m->pid, m->tid,
		       m->time, m->cpu);
}

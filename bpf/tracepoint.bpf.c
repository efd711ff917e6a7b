// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Tracepoint recording (bpf/tracepoint_wire.h): one program attached to
 * every recorded tracepoint, its cookie the index of the tracepoint's
 * struct pm_tp_cfg.  A hit goes through the union filter of the sessions
 * (the task, as for samples), then the tracepoint's own filter, evaluated
 * on a copy of the entry before anything else is done or written; then the
 * stacks are taken as the sample program takes them, and the sample, its
 * frames and the entry go into the ring in one record.
 *
 * Included by perfmark.bpf.c: the same ring, maps, filter and helpers.
 * Tracing programs do not nest on a CPU (the kernel skips, and counts, a
 * hit while another runs there), so one scratch area per CPU is enough.
 */
#include "tracepoint_wire.h"

/* one per recorded tracepoint, written before the programs are attached */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);                 /* resized before load */
	__type(key, __u32);
	__type(value, struct pm_tp_cfg);
} tp_cfg SEC(".maps");

/* room for a field read at any masked offset, and a string constant past it */
#define TP_RAW_SLACK 64
#define TP_REC_MAX (sizeof(struct pm_sample) + 2 * PM_MAX_STACK * sizeof(__u64) + \
		    sizeof(struct pm_raw) + PM_TP_RAW_MAX)

struct tp_scratch {
	__u8 raw[PM_TP_RAW_MAX + TP_RAW_SLACK];   /* the entry, the filter reads it here */
	__u8 rec[TP_REC_MAX];                      /* the record as it goes into the ring */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tp_scratch);
} tp_scratch SEC(".maps");

/* --- the entry ------------------------------------------------------------ */

/* a u32 of the entry at off (masked into the area) */
static __always_inline __u32 tp_u32(const __u8 *raw, __u32 off)
{
	return *(const __u32 *)(raw + (off & (PM_TP_RAW_MAX - 1)));
}

/*
 * Copy the entry at ctx into raw: its fixed part, then as far as its
 * dynamic arrays reach (their __data_loc words say where, the kernel wrote
 * them); never more than PM_TP_RAW_MAX.  The common fields are rebuilt (see
 * tracepoint_wire.h).  Returns its size, 0 when it cannot be read.
 */
static __always_inline __u32 tp_copy_entry(void *ctx, const struct pm_tp_cfg *tc, __u8 *raw,
					   __u32 tid)
{
	__u32 size = tc->fixed, end, loc, off, i;

	if (size < 8 || size > PM_TP_RAW_MAX)
		return 0;
	if (bpf_probe_read_kernel(raw, size, ctx))
		return 0;
	for (i = 0; i < PM_TP_MAX_DYN; i++) {
		if (i >= tc->nr_dyn)
			break;
		off = tc->dyn[i] & ~PM_TP_DYN_REL;
		if (off + 4 > tc->fixed)
			continue;
		loc = tp_u32(raw, off);
		end = (loc & 0xffff) + (loc >> 16);
		if (tc->dyn[i] & PM_TP_DYN_REL)
			end += off + 4;
		if (end > size)
			size = end;
	}
	if (size > PM_TP_RAW_MAX)
		size = PM_TP_RAW_MAX;
	if (size > tc->fixed) {
		__u32 more = size - tc->fixed, from = tc->fixed;

		barrier_var(more);
		barrier_var(from);
		if (more > PM_TP_RAW_MAX || from > PM_TP_RAW_MAX || more + from > PM_TP_RAW_MAX)
			return 0;
		if (bpf_probe_read_kernel(raw + from, more, (__u8 *)ctx + from))
			return 0;
	}
	*(__u16 *)raw = (__u16)tc->id;   /* common_type */
	raw[2] = 0;                      /* common_flags */
	raw[3] = 0;                      /* common_preempt_count */
	*(__u32 *)(raw + 4) = tid;       /* common_pid */
	return size;
}

/* --- the filter ----------------------------------------------------------- */

struct tpf_run {
	const struct pm_tp_cfg *tc;
	const __u8 *raw;
	__u32 size;          /* bytes of the entry */
	__u32 pc;
	__u32 r;
	/* a string match in progress */
	__u32 s_off, s_len;  /* the field's bytes: raw[s_off, s_off + s_len) */
	const char *pat;
	__u32 pat_len;
};

static __always_inline __u64 tpf_load(const __u8 *raw, __u32 off, __u32 size, bool sgn)
{
	const __u8 *p = raw + (off & (PM_TP_RAW_MAX - 1));

	switch (size) {
	case 1:
		return sgn ? (__u64)(__s64)*(const __s8 *)p : *p;
	case 2:
		return sgn ? (__u64)(__s64)*(const __s16 *)p : *(const __u16 *)p;
	case 4:
		return sgn ? (__u64)(__s64)*(const __s32 *)p : *(const __u32 *)p;
	default:
		return *(const __u64 *)p;
	}
}

static __always_inline __u32 tpf_num(struct tpf_run *st, const struct pm_tp_insn *in)
{
	__u64 v, k = in->val;
	bool sgn = in->flags & PM_TPF_SIGNED;

	if ((__u32)in->off + in->size > st->size)
		return 0;
	v = tpf_load(st->raw, in->off, in->size, sgn);
	switch (in->cmp) {
	case PM_TPF_EQ:
		return v == k;
	case PM_TPF_NE:
		return v != k;
	case PM_TPF_LT:
		return sgn ? (__s64)v < (__s64)k : v < k;
	case PM_TPF_LE:
		return sgn ? (__s64)v <= (__s64)k : v <= k;
	case PM_TPF_GT:
		return sgn ? (__s64)v > (__s64)k : v > k;
	case PM_TPF_GE:
		return sgn ? (__s64)v >= (__s64)k : v >= k;
	case PM_TPF_AND:
		return (v & k) != 0;
	}
	return 0;
}

/* raw[off, off + n) equals pat[0, n), n <= PM_TPF_STR_MAX */
static __always_inline bool tpf_eq(const __u8 *raw, __u32 off, const char *pat, __u32 n)
{
	const __u8 *p = raw + (off & (PM_TP_RAW_MAX - 1));

	for (__u32 i = 0; i < PM_TPF_STR_MAX; i++) {
		if (i >= n)
			break;
		if (p[i] != (__u8)pat[i])
			return false;
	}
	return true;
}

/* bpf_loop: the string's length, up to its first NUL (st->s_len bytes at most) */
static long tpf_strlen_step(__u32 i, void *data)
{
	struct tpf_run *st = data;

	if (i >= st->s_len)
		return 1;
	if (!st->raw[(st->s_off + i) & (PM_TP_RAW_MAX - 1)]) {
		st->s_len = i;
		return 1;
	}
	return 0;
}

/* bpf_loop: does the pattern start at i? */
static long tpf_find_step(__u32 i, void *data)
{
	struct tpf_run *st = data;

	if (i + st->pat_len > st->s_len)
		return 1;
	if (tpf_eq(st->raw, st->s_off + i, st->pat, st->pat_len)) {
		st->r = 1;
		return 1;
	}
	return 0;
}

static __always_inline __u32 tpf_str(struct tpf_run *st, const struct pm_tp_insn *in)
{
	__u32 off = in->off, len = in->size, idx = (__u32)in->val, n = in->str_len, loc, m;

	if (idx >= PM_TPF_MAX_STRS || n > PM_TPF_STR_MAX)
		return 0;
	if (in->flags & PM_TPF_DYN) {
		if (off + 4 > st->size)
			return 0;
		loc = tp_u32(st->raw, off);
		len = loc >> 16;
		off = (in->flags & PM_TPF_REL ? off + 4 : 0) + (loc & 0xffff);
	}
	if (off >= st->size)
		len = 0;
	else if (len > st->size - off)
		len = st->size - off;
	st->s_off = off;
	st->s_len = len;
	st->pat = st->tc->strs[idx];
	st->pat_len = n;
	bpf_loop(PM_TP_RAW_MAX, tpf_strlen_step, st, 0);
	len = st->s_len;
	switch (in->cmp) {
	case PM_TPF_MATCH_FULL:
		m = len == n && tpf_eq(st->raw, off, st->pat, n);
		break;
	case PM_TPF_MATCH_PREFIX:
		m = len >= n && tpf_eq(st->raw, off, st->pat, n);
		break;
	case PM_TPF_MATCH_SUFFIX:
		m = len >= n && tpf_eq(st->raw, off + len - n, st->pat, n);
		break;
	case PM_TPF_MATCH_MIDDLE:
		st->r = 0;
		bpf_loop(PM_TP_RAW_MAX, tpf_find_step, st, 0);
		m = st->r;
		break;
	default:
		m = 0;
	}
	return in->flags & PM_TPF_NEG ? !m : m;
}

static long tpf_step(__u32 i, void *data)
{
	struct tpf_run *st = data;
	const struct pm_tp_insn *in;
	__u32 pc = st->pc;

	if (pc >= st->tc->nr_insns || pc >= PM_TPF_MAX_INSNS)
		return 1;
	in = &st->tc->insn[pc];
	st->pc = pc + 1;
	switch (in->op) {
	case PM_TPF_NUM:
		st->r = tpf_num(st, in);
		break;
	case PM_TPF_STR:
		st->r = tpf_str(st, in);
		break;
	case PM_TPF_NOT:
		st->r = !st->r;
		break;
	case PM_TPF_JF:
		if (!st->r)
			st->pc = (__u32)in->val;
		break;
	case PM_TPF_JT:
		if (st->r)
			st->pc = (__u32)in->val;
		break;
	default:
		st->r = 0;
		return 1;
	}
	return 0;
}

/* the entry passes the tracepoint's filter (none: all pass) */
static __always_inline bool tp_filter(const struct pm_tp_cfg *tc, const __u8 *raw, __u32 size)
{
	struct tpf_run st = { .tc = tc, .raw = raw, .size = size, .r = 1 };

	if (!tc->nr_insns)
		return true;
	bpf_loop(PM_TPF_MAX_INSNS, tpf_step, &st, 0);
	return st.r;
}

/* --- the record ----------------------------------------------------------- */

/* the hit's ip: the registers the kernel left in the entry's first 8 bytes */
static __always_inline __u64 tp_ip(void *ctx)
{
	struct pt_regs *regs = NULL;

	if (bpf_probe_read_kernel(&regs, sizeof(regs), ctx) || !regs)
		return 0;
	return BPF_CORE_READ(regs, ip);
}

static __always_inline void tp_head(struct pm_sample *s, void *ctx, const struct pm_tp_cfg *tc,
				    __u64 id, __u32 uid, __u64 now)
{
	s->rec_type = PM_REC_SAMPLE;
	s->cpu = bpf_get_smp_processor_id();
	s->pid = id >> 32;
	s->tid = (__u32)id;
	s->time = now;
	s->ip = 0;                       /* the first kernel frame, else tp_ip() */
	s->period = 1;
	s->event = tc->event;
	s->user_mode = 0;
	s->uid = uid;
	s->flags = PM_SF_RAW;
	s->nr_kstack = 0;
	s->nr_ustack = 0;
}

/*
 * dwarf mode (and ehframe for a process with no tables yet): registers and
 * stack copy as copy_sample() writes them, then the entry, straight into a
 * reservation of the largest size.
 */
#define TP_COPY_REC (PM_COPY_REC + sizeof(struct pm_raw) + PM_TP_RAW_MAX)

static __always_inline int tp_copy_sample(void *ctx, const struct pm_tp_cfg *tc, const __u8 *raw,
					  __u32 size, __u64 id, __u32 uid, __u64 now)
{
	struct pm_sample *s;
	struct pm_uregs *u;
	struct pm_raw *r;
	__u64 nk, copied = 0;
	__u8 *data;

	s = bpf_ringbuf_reserve(&rb, TP_COPY_REC, 0);
	if (!s) {
		__sync_fetch_and_add(&lost_samples, 1);
		return 0;
	}
	tp_head(s, ctx, tc, id, uid, now);
	nk = kstack_take(ctx, s->stack);
	s->nr_kstack = nk;
	s->ip = nk ? s->stack[0] : tp_ip(ctx);
	u = (struct pm_uregs *)&s->stack[nk];
	u->size = 0;
	if (user_regs(u->regs)) {
		u->abi = PM_UREGS_ABI_64;
		data = (__u8 *)(u + 1);
		copied = ustack_copy(data, u->regs[UREG_SP], ustack_size, PM_MAX_USTACK);
		s->flags |= PM_SF_UREGS;
	} else {
		u->abi = 0;
	}
	u->size = copied;
	barrier_var(copied);
	if (copied > ustack_size || copied > PM_MAX_USTACK)
		copied = 0;
	/* after the copy; with no registers (a kernel thread) right after the frames */
	if (s->flags & PM_SF_UREGS)
		r = (struct pm_raw *)((__u8 *)(u + 1) + copied);
	else
		r = (struct pm_raw *)u;
	barrier_var(size);
	if (size > PM_TP_RAW_MAX)
		size = PM_TP_RAW_MAX;
	r->size = size;
	r->pad = 0;
	if (size)
		bpf_probe_read_kernel(r->data, size, raw);
	bpf_ringbuf_submit(s, rb_flags(now));
	return 0;
}

SEC("tp")
int on_tracepoint(void *ctx)
{
	__u32 zero = 0, idx = (__u32)bpf_get_attach_cookie(ctx), uid, size, tgid;
	struct pm_cfg *gc = bpf_map_lookup_elem(&cfg, &zero);
	struct tp_scratch *sc;
	struct pm_tp_cfg *tc;
	struct pm_sample *s;
	struct pm_raw *r;
	__u64 id, nk = 0, nu = 0, room, now, off;
	long n;

	if (!gc || !gc->tp_on)
		return 0;
	if (!current_ids(&id, false))
		return 0;
	tgid = id >> 32;
	uid = task_owner_uid();
	if (!wanted(tgid, uid))
		return 0;
	tc = bpf_map_lookup_elem(&tp_cfg, &idx);
	sc = bpf_map_lookup_elem(&tp_scratch, &zero);
	if (!tc || !sc)
		return 0;
	size = tp_copy_entry(ctx, tc, sc->raw, (__u32)bpf_get_current_pid_tgid());
	if (!size || !tp_filter(tc, sc->raw, size))
		return 0;
	now = bpf_ktime_get_ns();
	if (want_callchain && ustack_mode == PM_US_DWARF)
		return tp_copy_sample(ctx, tc, sc->raw, size, id, uid, now);
	s = (struct pm_sample *)sc->rec;
	tp_head(s, ctx, tc, id, uid, now);
	if (want_callchain) {
		nk = kstack_take(ctx, s->stack);
		room = ustack_room(nk);
		n = room ? -2 : 0;
		if (room && ustack_mode == PM_US_EHFRAME) {
			/* the unwinder takes no context of its own: any memory of the size will do */
			n = pm_unwind_user((struct bpf_perf_event_data *)sc->raw, tgid,
					   (struct pm_uframes *)&s->stack[nk], room);
			if (n == -1 && bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) <= wakeup_bytes / 2)
				return tp_copy_sample(ctx, tc, sc->raw, size, id, uid, now);
		}
		nu = ustack_take(ctx, &s->stack[nk], room, n);
	}
	s->nr_kstack = nk;
	s->nr_ustack = nu;
	/* the kernel's chain starts at the hit's ip: one read fewer than tp_ip() */
	s->ip = nk ? s->stack[0] : tp_ip(ctx);
	off = sizeof(*s) + (nk + nu) * sizeof(__u64);
	barrier_var(off);
	if (off > sizeof(*s) + 2 * PM_MAX_STACK * sizeof(__u64))
		return 0;
	r = (struct pm_raw *)(sc->rec + off);
	r->size = size;
	r->pad = 0;
	barrier_var(size);
	if (size > PM_TP_RAW_MAX)
		return 0;
	if (bpf_probe_read_kernel(r->data, size, sc->raw))
		return 0;
	off += sizeof(*r) + size;
	barrier_var(off);
	if (off > TP_REC_MAX)
		return 0;
	if (bpf_ringbuf_output(&rb, sc->rec, off, rb_flags(now)))
		__sync_fetch_and_add(&lost_samples, 1);
	return 0;
}

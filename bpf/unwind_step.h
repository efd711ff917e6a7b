/* SPDX-License-Identifier: (LGPL-2.1-or-later OR BSD-2-Clause) */
/*
 * One step of the user-stack unwinder: from a frame's pc, sp and bp and the
 * rule of the table row that covers pc (unwind_wire.h), to its caller's.
 *
 * This is the only copy of the step.  The BPF unwinder (bpf/unwind.bpf.c)
 * walks stacks in the kernel with it, and the recorder walks the stacks it
 * was sent as copies (lib/collect/unwind_table.c) with the same code, so
 * the two cannot drift.  The includer defines, before including:
 *
 *   UW_STEP_READ(ctx, dst, len, addr)  0 when len bytes (8 or 16) of user
 *                                      memory at addr were read into dst
 *   UW_STEP_BARRIER(x)                 keeps the verifier's bound on x
 *                                      (nothing in user space)
 *
 * and has __u32, __s32 and __u64 (vmlinux.h or linux/types.h).
 */
#ifndef PERFMARK_UNWIND_STEP_H
#define PERFMARK_UNWIND_STEP_H

#include "unwind_wire.h"

#ifndef UW_STEP_READ
#error "define UW_STEP_READ(ctx, dst, len, addr) before including unwind_step.h"
#endif

/* a frame pointer further than this above sp is junk */
#define PM_UW_STACK_SPAN (8ull << 20)

struct pm_uw_cursor {
	__u64 pc, sp, bp;
	__u32 exact;     /* pc is where the frame was, not a return address */
	__u32 pad;
};

/* one frame by the frame-pointer convention: [bp] = caller's bp, [bp+8] = return */
static __always_inline int pm_uw_fp_step(struct pm_uw_cursor *c, void *ctx)
{
	__u64 fr[2];

	if (!c->bp)
		return PM_UW_END_OK + 1;
	if (c->bp < c->sp || c->bp - c->sp > PM_UW_STACK_SPAN || (c->bp & 7))
		return PM_UW_END_NO_TABLE + 1;
	if (UW_STEP_READ(ctx, fr, 16, c->bp))
		return PM_UW_END_READ + 1;
	c->sp = c->bp + 16;
	c->bp = fr[0];
	c->pc = fr[1];
	c->exact = 0;
	return c->pc ? 0 : PM_UW_END_OK + 1;
}

/* DWARF x86-64 register number (ax dx cx bx si di bp sp r8..r15) -> perf's order */
static __always_inline __u32 pm_uw_dwarf_to_perf(__u32 r)
{
	if (r == 1 || r == 3)
		return 4 - r;
	return r < 8 ? r : r + 4;
}

/* the interrupted code's rbp, rsp and rip, from the ucontext of a signal frame */
static __always_inline int pm_uw_signal_step(struct pm_uw_cursor *c, void *ctx)
{
	__u64 bp, spip[2];

	if (UW_STEP_READ(ctx, &bp, 8, c->sp + PM_UW_SIGFRAME_RBP) ||
	    UW_STEP_READ(ctx, spip, 16, c->sp + PM_UW_SIGFRAME_RSP))
		return PM_UW_END_READ + 1;
	c->bp = bp;
	c->sp = spip[0];
	c->pc = spip[1];
	c->exact = 1;
	return c->pc ? 0 : PM_UW_END_OK + 1;
}

/*
 * rule: the row's (PM_UW_NONE: the frame pointer); uregs: the sampled
 * frame's registers in perf's order (PM_UREGS_NR of them), read only when
 * first (the frame is the sampled one: no other frame's are known; a flag,
 * not a NULL pointer, so the verifier keeps the pointer's type).  0 to go
 * on, else enum pm_uw_end + 1.
 */
static __always_inline int pm_uw_step(struct pm_uw_cursor *c, __u32 rule, int first, const __u64 *uregs,
				      void *ctx)
{
	__s32 off = PM_UW_OFF(rule), arg = PM_UW_ARG(rule);
	__u64 cfa, v[2];
	__u32 ri;

	switch (PM_UW_TYPE(rule)) {
	case PM_UW_NONE:
		return pm_uw_fp_step(c, ctx);
	case PM_UW_RSP:
		cfa = c->sp + off;
		break;
	case PM_UW_RBP:
		cfa = c->bp + off;
		break;
	case PM_UW_PLT:
		cfa = c->sp + off + ((c->pc & 15) >= (__u32)arg ? 8 : 0);
		arg = 0;
		break;
	case PM_UW_DEREF_RBP:
		if (UW_STEP_READ(ctx, &cfa, 8, c->bp + off))
			return PM_UW_END_READ + 1;
		break;
	case PM_UW_REG:
		if (!first || arg < 0 || arg > 15)   /* only the sampled frame's are known */
			return PM_UW_END_RULE + 1;
		ri = pm_uw_dwarf_to_perf(arg & 15);
		UW_STEP_BARRIER(ri);
		if (ri >= PM_UREGS_NR)
			return PM_UW_END_RULE + 1;
		cfa = uregs[ri] + off;
		arg = 0;
		break;
	case PM_UW_END:
		return PM_UW_END_OK + 1;
	case PM_UW_SIGNAL:
		return pm_uw_signal_step(c, ctx);
	default:
		return PM_UW_END_RULE + 1;
	}
	if (cfa <= c->sp)                      /* a caller's frame is always above */
		return PM_UW_END_RULE + 1;
	if (arg == -2) {
		/* rbp pushed right after the call, as most prologues do: one read */
		if (UW_STEP_READ(ctx, v, 16, cfa - 16))
			return PM_UW_END_READ + 1;
		c->bp = v[0];
		v[0] = v[1];
	} else {
		if (UW_STEP_READ(ctx, v, 8, cfa - 8))
			return PM_UW_END_READ + 1;
		if (arg == PM_UW_RBP_LOST)
			c->bp = 0;
		else if (arg < 0 && UW_STEP_READ(ctx, &c->bp, 8, cfa + (__s64)arg * 8))
			return PM_UW_END_READ + 1;
	}
	c->sp = cfa;
	c->pc = v[0];
	c->exact = 0;
	return v[0] ? 0 : PM_UW_END_OK + 1;
}

#endif

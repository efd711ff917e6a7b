/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user registers of the sampled task, for the BPF programs that need
 * them: the ehframe walk (bpf/unwind.bpf.c) starts from them, dwarf-mode
 * samples (bpf/perfmark.bpf.c) carry them as perf's REGS_USER does.
 */
#ifndef PERFMARK_UREGS_BPF_H
#define PERFMARK_UREGS_BPF_H

/*
 * The registers of a user context from a pt_regs lvalue, in perf's
 * PERF_REG_X86_* order without the segment registers (PM_UREGS_MASK).
 */
#define UW_TAKE_REGS(u, R) do {                                                  \
	(u)[0] = (R).ax;  (u)[1] = (R).bx;  (u)[2] = (R).cx;    (u)[3] = (R).dx;  \
	(u)[4] = (R).si;  (u)[5] = (R).di;  (u)[6] = (R).bp;    (u)[7] = (R).sp;  \
	(u)[8] = (R).ip;  (u)[9] = (R).flags;                                   \
	(u)[10] = *(volatile __u64 *)&(R).cs & 0xffff;    /* whole-word reads */  \
	(u)[11] = *(volatile __u64 *)&(R).ss & 0xffff;                          \
	(u)[12] = (R).r8;  (u)[13] = (R).r9;  (u)[14] = (R).r10; (u)[15] = (R).r11; \
	(u)[16] = (R).r12; (u)[17] = (R).r13; (u)[18] = (R).r14; (u)[19] = (R).r15; \
} while (0)
#define UREG_BP 6
#define UREG_SP 7
#define UREG_IP 8

/*
 * The registers of the user context the sample interrupted, as the kernel
 * saved them on entry (from user mode, the interrupt's own entry saved
 * them there).  False for kernel threads.
 */
static __always_inline bool user_regs(__u64 *u)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *r;

	if (!t->mm)
		return false;
	r = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!r)
		return false;
	UW_TAKE_REGS(u, *r);
	return true;
}

#endif

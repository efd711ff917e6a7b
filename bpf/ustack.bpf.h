/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The copy of a user stack, as perf's STACK_USER carries it, for the three
 * programs that take one: a dwarf-mode sample (bpf/perfmark.bpf.c), a
 * tracepoint hit (bpf/tracepoint.bpf.c) and a thread going off CPU
 * (bpf/offcpu.bpf.c).  One copy, so that the way around a stack that ends
 * sooner than asked is the same for all three.
 */
#ifndef PERFMARK_USTACK_BPF_H
#define PERFMARK_USTACK_BPF_H

/*
 * Up to want bytes (cap at most: a constant, the room the caller has) of the
 * user stack from sp up into data: all at once; where the stack ends sooner,
 * its first page, then page by page up to its last one.  Returns the bytes
 * copied, a multiple of 8 (0 when not even the first page reads).
 */
static __always_inline __u64 ustack_copy(__u8 *data, __u64 sp, __u64 want, __u64 cap)
{
	__u64 len, copied, i;

	barrier_var(want);
	if (want > cap)
		want = cap;
	if (!bpf_probe_read_user(data, want, (void *)sp))
		return want & ~7ull;
	len = 4096 - (sp & 4095);
	if (len > want)
		len = want;
	copied = bpf_probe_read_user(data, len, (void *)sp) ? 0 : len;
	for (i = 0; copied && i < cap / 4096; i++) {
		if (want < 4096 || copied > want - 4096 || copied > cap - 4096 ||
		    bpf_probe_read_user(data + copied, 4096, (void *)(sp + copied)))
			break;
		copied += 4096;
	}
	return copied & ~7ull;
}

/*
 * The user frames of the task running, by frame pointers, from the
 * registers it entered the kernel with: its pc, then each frame's return
 * address, as bpf_get_stack(BPF_F_USER_STACK) gives them, room (at most
 * PM_MAX_STACK) of them into frames.  Unlike the kernel's walk it reads no
 * frame pointer that cannot be the next frame: below the last frame (the
 * stack grows down, so 0, where every chain ends, the outermost frame's
 * by the ABI, is one), misaligned, or more than USTACK_FP_MAX_GAP above
 * it.  The kernel reads through it, and on this VM the fault that read
 * takes, fixed up, cost more than the rest of the walk.  -1: not a 64-bit
 * user context; the caller asks the kernel.
 */
#define USTACK_USER_CS    0x33          /* __USER_CS: a 64-bit task */
#define USTACK_FP_MAX_GAP (8ull << 20)  /* the default stack limit: no frame is larger */

static __always_inline long ustack_fp(__u64 *frames, __u64 room)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct { __u64 next, ret; } f;
	struct pt_regs *r;
	__u64 fp, lo, n = 1;
	__u32 i;

	if (!t->mm)
		return 0;
	r = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!r || (*(volatile __u64 *)&r->cs & 0xffff) != USTACK_USER_CS)
		return -1;
	if (!room)
		return 0;
	frames[0] = r->ip;
	lo = r->sp;
	fp = r->bp;
	for (i = 1; i < PM_MAX_STACK; i++) {
		if (n >= room || fp < lo || (fp & 7) || fp - lo > USTACK_FP_MAX_GAP ||
		    bpf_probe_read_user(&f, sizeof(f), (void *)fp) || !f.ret)
			break;
		frames[i] = f.ret;
		n = i + 1;
		lo = fp + sizeof(f);
		fp = f.next;
	}
	return n;
}

#endif

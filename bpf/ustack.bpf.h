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

#endif

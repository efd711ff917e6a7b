/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libperfmark: the marker API applications link (see include/perfmark.h).
 *
 * Every marker ends in perfmark__probe(type, data, size), a function whose
 * first instruction is a 5-byte nop.  The tracer puts a uprobe on that nop
 * (kernel 6.18 turns a uprobe on a nop5 into a call instead of an int3 trap)
 * and reads the arguments from rdi/rsi/rdx.  The uprobe's ref_ctr_offset
 * points at perfmark_uevent_semaphore, which the kernel raises in every
 * process while a probe is attached: untraced calls load it, see zero and
 * return.
 *
 * The probe is also described by a standard USDT note (.note.stapsdt,
 * provider "perfmark", name "uevent", args "-4@%edi 8@%rsi -4@%edx") plus
 * .stapsdt.base, laid out as <sys/sdt.h> does, so USDT tools find it and
 * daemon/usdt.c can locate it by name.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfmark.h"

#define PM_EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#if !defined(__x86_64__)
# error "libperfmark: the probe site is written for x86-64"
#endif

/*
 * The USDT semaphore.  Named as <sys/sdt.h> names it for provider perfmark,
 * probe uevent, and kept in ".probes" (allocated, written, with file
 * contents) so the kernel can find it by file offset.  Exported so USDT
 * tools and tests can look it up; the library itself reads it through a
 * hidden alias so that a copy relocation in an executable can never
 * redirect our reads away from the word the kernel increments.
 */
PM_EXPORT __attribute__((section(".probes"), used))
volatile unsigned short perfmark_uevent_semaphore = 0;
extern volatile unsigned short perfmark__sema
	__attribute__((alias("perfmark_uevent_semaphore"), visibility("hidden")));

/* The probe site: defined in assembly below. */
__attribute__((visibility("hidden")))
void perfmark__probe(uint32_t type, const void *data, uint32_t size);

/*
 * nop5 first, then ret: nothing the compiler emits can come before the
 * nop.  The note's pc is label 990, the nop itself.  The note section is not
 * allocated, so the linker writes the link-time addresses of the probe and
 * of the semaphore into it; readers correct them with .stapsdt.base.
 */
__asm__(
	"	.pushsection .text.perfmark__probe,\"ax\",@progbits\n"
	"	.globl perfmark__probe\n"
	"	.hidden perfmark__probe\n"
	"	.type perfmark__probe,@function\n"
	"	.p2align 4\n"
	"perfmark__probe:\n"
	"990:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"   /* nopl 0x0(%rax,%rax,1) */
	"	ret\n"
	"	.size perfmark__probe, .-perfmark__probe\n"
	"	.popsection\n"
	"	.pushsection .note.stapsdt,\"\",\"note\"\n"
	"	.balign 4\n"
	"	.4byte 992f-991f, 994f-993f, 3\n"      /* namesz, descsz, NT_STAPSDT */
	"991:	.asciz \"stapsdt\"\n"
	"992:	.balign 4\n"
	"993:	.8byte 990b\n"                         /* pc */
	"	.8byte _.stapsdt.base\n"                /* base, for prelink fixups */
	"	.8byte perfmark_uevent_semaphore\n"     /* semaphore */
	"	.asciz \"perfmark\"\n"
	"	.asciz \"uevent\"\n"
	"	.asciz \"-4@%edi 8@%rsi -4@%edx\"\n"
	"994:	.balign 4\n"
	"	.popsection\n"
	"	.ifndef _.stapsdt.base\n"
	"	.pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat\n"
	"	.weak _.stapsdt.base\n"
	"	.hidden _.stapsdt.base\n"
	"_.stapsdt.base:\n"
	"	.space 1\n"
	"	.size _.stapsdt.base, 1\n"
	"	.popsection\n"
	"	.endif\n");

static int fire(uint32_t type, const void *data, uint32_t size)
{
	perfmark__probe(type, data, size);
	return size > PERFMARK_MAX_PAYLOAD ? -E2BIG : 0;
}

PM_EXPORT bool perfmark_enabled(void)
{
	return perfmark__sema != 0;
}

PM_EXPORT int perfmark_emit(uint32_t type, const void *data, uint32_t size)
{
	if (likely(perfmark__sema == 0))
		return 0;
	if (!data && size)
		return -EINVAL;
	return fire(type, data, size);
}

/* Kept out of line so the untraced path has no 4 KiB frame to set up. */
static __attribute__((noinline, cold)) int printf_traced(const char *fmt, va_list ap)
{
	char buf[PERFMARK_MAX_PAYLOAD + 1];
	int n;

	if (!fmt)
		return -EINVAL;
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return -EINVAL;
	/* strlen + 1, or the would-be length + 1 so the tracer flags truncation */
	return fire(PERFMARK_TYPE_STRING, buf, (uint32_t)n + 1);
}

/*
 * perf_printf: a variadic C function saves the argument registers in its
 * prologue, before any test.  To keep the untraced call at a load and a
 * branch, its entry is a few instructions of assembly that test the
 * semaphore and tail-jump, all argument registers (and %al) intact, to the
 * C function that formats.
 */
__attribute__((visibility("hidden"), used))
int perfmark__printf_traced(const char *fmt, ...);

int perfmark__printf_traced(const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = printf_traced(fmt, ap);
	va_end(ap);
	return err;
}

#ifdef __CET__
# define PM_ENDBR "	endbr64\n"
#else
# define PM_ENDBR ""
#endif

__asm__(
	"	.pushsection .text\n"
	"	.globl perf_printf\n"
	"	.type perf_printf,@function\n"
	"	.p2align 4\n"
	"perf_printf:\n"
	PM_ENDBR
	"	cmpw $0, perfmark__sema(%rip)\n"
	"	jne perfmark__printf_traced\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"	.size perf_printf, .-perf_printf\n"
	"	.popsection\n");

/*
 * Fixed-size head (value, address...) followed by a name with its NUL, in a
 * PERFMARK_MAX_PAYLOAD stack buffer.  A name that does not fit is cut and
 * the full would-be size is passed, so the tracer flags the truncation.
 */
static __attribute__((noinline, cold))
void emit_named(uint32_t type, const void *head, size_t head_len, const char *name)
{
	char buf[PERFMARK_MAX_PAYLOAD];
	size_t len, room = sizeof(buf) - head_len;
	uint64_t total;

	if (!name)
		name = "";
	len = strlen(name) + 1;
	if (head_len)
		memcpy(buf, head, head_len);
	memcpy(buf + head_len, name, len < room ? len : room);
	total = head_len + len;
	if (total > UINT32_MAX)
		total = UINT32_MAX;
	fire(type, buf, (uint32_t)total);
}

PM_EXPORT void perfmark_range_begin(const char *name)
{
	if (likely(perfmark__sema == 0))
		return;
	emit_named(PERFMARK_TYPE_RANGE_BEGIN, NULL, 0, name);
}

PM_EXPORT void perfmark_range_end(const char *name)
{
	if (likely(perfmark__sema == 0))
		return;
	emit_named(PERFMARK_TYPE_RANGE_END, NULL, 0, name);
}

PM_EXPORT void perfmark_counter(const char *name, int64_t value)
{
	if (likely(perfmark__sema == 0))
		return;
	emit_named(PERFMARK_TYPE_COUNTER, &value, sizeof(value), name);
}

PM_EXPORT void perfmark_jit_code(const void *addr, uint64_t size, const char *name)
{
	uint64_t head[2] = { (uint64_t)(uintptr_t)addr, size };

	if (likely(perfmark__sema == 0))
		return;
	emit_named(PERFMARK_TYPE_JIT_CODE, head, sizeof(head), name);
}

/*
 * fork() and the optimised probe site.  Once the kernel has optimised the
 * uprobe, the nop5 holds "call <[uprobes-trampoline]>".  Kernel 6.18 does
 * not copy the trampoline mapping into a forked child, but the patched code
 * page is copied: a child that emits a marker would call into nothing and
 * die with SIGSEGV.  So, in the child, when the site is such a call and its
 * target is not mapped, put back what the kernel itself installs before it
 * optimises: an int3 on top of the nop5.  The kernel handles that breakpoint
 * as the same uprobe (and may optimise it again, with a trampoline of the
 * child's own).  Only async-signal-safe system calls are used here.
 */
static void atfork_child(void)
{
	static const unsigned char int3_nop5[5] = { 0xcc, 0x1f, 0x44, 0x00, 0x00 };
	volatile unsigned char *site = (volatile unsigned char *)(uintptr_t)perfmark__probe;
	long pagesz = sysconf(_SC_PAGESIZE);
	uintptr_t target, page;
	unsigned char vec;
	int32_t rel;

	if (site[0] != 0xe8 || pagesz <= 0)
		return;
	memcpy(&rel, (const void *)(uintptr_t)(site + 1), sizeof(rel));
	target = (uintptr_t)site + 5 + (intptr_t)rel;
	if (mincore((void *)(target & ~((uintptr_t)pagesz - 1)), 1, &vec) == 0 || errno != ENOMEM)
		return;                         /* the trampoline is there */
	page = (uintptr_t)site & ~((uintptr_t)pagesz - 1);
	if (mprotect((void *)page, (size_t)pagesz, PROT_READ | PROT_WRITE | PROT_EXEC))
		return;
	for (int i = 4; i >= 0; i--)            /* the trap byte last */
		site[i] = int3_nop5[i];
	mprotect((void *)page, (size_t)pagesz, PROT_READ | PROT_EXEC);
}

static __attribute__((constructor)) void perfmark_init(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

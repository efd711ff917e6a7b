/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libperfmark: the marker API applications link (see include/perfmark.h).
 *
 * Untraced, every call is one 32-bit load of the two USDT semaphores and a
 * branch.  Traced, a marker takes one of two lanes:
 *
 *  - the fast lane (fastlane.c), while a recorder with it listens (the
 *    semaphore of perfmark:register is raised): the marker is written into
 *    this thread's ring in shared memory, no trap and no system call;
 *  - the trap lane: a uprobe on perfmark:trap, whose BPF program copies the
 *    marker into the recorder's ring buffer.  It carries the markers of a
 *    process until a recorder has attached to its rings, and those a full
 *    ring cannot take.
 *
 * Independently, while a USDT tool (bpftrace, ...) holds perfmark:uevent,
 * every marker also fires that probe, with the arguments it always had.
 *
 * The probe sites are one-byte nops.  Linux 6.18 optimises a uprobe on a
 * five-byte nop into a call to a trampoline page that a child made without
 * fork()'s atfork handlers (raw clone(), _Fork(), or a process whose MDWE
 * refuses the repair) does not have: its first marker crashed it.  A uprobe
 * on a one-byte nop stays an int3 that the kernel emulates: it costs more
 * per hit (measured in bench/), but no child of any kind can crash on it,
 * and the fast lane keeps traced markers off the trap anyway.
 *
 * Each site is described by a standard USDT note (.note.stapsdt, provider
 * "perfmark", laid out as <sys/sdt.h> does), so recorders find every copy of
 * libperfmark (shared, static, vendored) by its notes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perfmark.h"
#include "internal.h"

#define PM_EXPORT __attribute__((visibility("default")))

#define PM_SEMA_DEF(name)						\
	"	.globl " #name "\n"					\
	"	.type " #name ",@object\n"				\
	"	.size " #name ",2\n"					\
	#name ":\n"							\
	"	.2byte 0\n"

#if !defined(__x86_64__)
# error "libperfmark: the probe sites are written for x86-64"
#endif

/*
 * The semaphores, named as <sys/sdt.h> names them, in ".probes" (allocated,
 * written, with file contents) so the kernel finds them by file offset:
 *
 *   perfmark__semas[0]  uevent | register0 | register1 | register2  (16 bits each)
 *   perfmark__semas[1]  trapall
 *
 * Linux keeps a semaphore at 1 while any uprobe sits on its site, however
 * many: it cannot count recorders.  So each recorder with the fast lane
 * takes a register site of its own (lib/collect/collector_markers.c picks
 * a free one): the process knows exactly which recorders must have joined
 * its area before its rings may take markers.  A recorder that finds no
 * free site raises trapall instead: then every marker takes the trap lane,
 * which every recorder reads.  Exported for USDT tools and tests; the
 * library reads them through the hidden perfmark__semas so that a copy
 * relocation in an executable can never redirect its reads away from the
 * words the kernel increments.
 */
__asm__(
	"	.pushsection .probes,\"aw\",@progbits\n"
	"	.balign 8\n"
	"	.globl perfmark__semas\n"
	"	.hidden perfmark__semas\n"
	"	.type perfmark__semas,@object\n"
	"	.size perfmark__semas,16\n"
	"perfmark__semas:\n"
	PM_SEMA_DEF(perfmark_uevent_semaphore)
	PM_SEMA_DEF(perfmark_register0_semaphore)
	PM_SEMA_DEF(perfmark_register1_semaphore)
	PM_SEMA_DEF(perfmark_register2_semaphore)
	PM_SEMA_DEF(perfmark_trapall_semaphore)
	"	.2byte 0, 0, 0\n"
	"	.popsection\n");

/* One probe site: a hidden function whose first byte is a nop (label 990). */
#define PM_SITE(fn)							\
	"	.p2align 4\n"						\
	"	.globl " #fn "\n"					\
	"	.hidden " #fn "\n"					\
	"	.type " #fn ",@function\n"				\
	#fn ":\n"							\
	"990:	nop\n"							\
	"	ret\n"							\
	"	.size " #fn ", .-" #fn "\n"

/*
 * Its note: pc, base, semaphore (0: none), provider, name, arguments.  The
 * note section is not allocated, so the linker writes link-time addresses;
 * readers correct them with .stapsdt.base.
 */
#define PM_NOTE(name, sema, args)					\
	"	.pushsection .note.stapsdt,\"\",\"note\"\n"		\
	"	.balign 4\n"						\
	"	.4byte 992f-991f, 994f-993f, 3\n"			\
	"991:	.asciz \"stapsdt\"\n"					\
	"992:	.balign 4\n"						\
	"993:	.8byte 990b\n"						\
	"	.8byte _.stapsdt.base\n"				\
	"	.8byte " sema "\n"					\
	"	.asciz \"perfmark\"\n"					\
	"	.asciz \"" name "\"\n"					\
	"	.asciz \"" args "\"\n"					\
	"994:	.balign 4\n"						\
	"	.popsection\n"

__asm__(
	"	.pushsection .text.perfmark__probes,\"ax\",@progbits\n"
	PM_SITE(perfmark__uevent)
	"	.popsection\n"
	PM_NOTE("uevent", "perfmark_uevent_semaphore", "-4@%edi 8@%rsi -4@%edx")
	"	.pushsection .text.perfmark__probes,\"ax\",@progbits\n"
	PM_SITE(perfmark__trap)
	"	.popsection\n"
	PM_NOTE("trap", "0", "-4@%edi 8@%rsi -4@%edx 8@%rcx 8@%r8")
	/*
	 * The register sled: one nop per recorder site and trapall's, each
	 * its own probe (the kernel wants one semaphore per site); one call
	 * runs them all, so every recorder hears the offer.
	 */
	"	.pushsection .text.perfmark__probes,\"ax\",@progbits\n"
	"	.p2align 4\n"
	"	.globl perfmark__register\n"
	"	.hidden perfmark__register\n"
	"	.type perfmark__register,@function\n"
	"perfmark__register:\n"
	"990:	nop\n"
	"	.popsection\n"
	PM_NOTE("register0", "perfmark_register0_semaphore", "8@%rdi")
	"	.pushsection .text.perfmark__probes,\"ax\",@progbits\n"
	"990:	nop\n"
	"	.popsection\n"
	PM_NOTE("register1", "perfmark_register1_semaphore", "8@%rdi")
	"	.pushsection .text.perfmark__probes,\"ax\",@progbits\n"
	"990:	nop\n"
	"	.popsection\n"
	PM_NOTE("register2", "perfmark_register2_semaphore", "8@%rdi")
	"	.pushsection .text.perfmark__probes,\"ax\",@progbits\n"
	"990:	nop\n"
	"	ret\n"
	"	.size perfmark__register, .-perfmark__register\n"
	"	.popsection\n"
	PM_NOTE("trapall", "perfmark_trapall_semaphore", "8@%rdi")
	"	.ifndef _.stapsdt.base\n"
	"	.pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat\n"
	"	.weak _.stapsdt.base\n"
	"	.hidden _.stapsdt.base\n"
	"_.stapsdt.base:\n"
	"	.space 1\n"
	"	.size _.stapsdt.base, 1\n"
	"	.popsection\n"
	"	.endif\n");

/* A traced marker, down the lanes the semaphores ask for. */
static __attribute__((noinline)) int traced(const struct pm_marker_in *m)
{
	uint64_t s = perfmark__semas[0];
	uint32_t then = PM_THEN_NONE;
	int why;

	if ((PM_SEMA_SITES(s) || perfmark__semas[1]) &&
	    (why = pm_fast_emit(m, s, perfmark__semas[1], &then)))
		perfmark__trap(m->type, m->data, m->size, m->ip, PM_TRAP_TAG | (uint64_t)why);
	/* the area's offer after the trap, which takes the marker's time */
	if (unlikely(then != PM_THEN_NONE))
		pm_fast_then(then, s);
	if (PM_SEMA_UEVENT(s))
		perfmark__uevent(m->type, m->data, m->size);
	return m->size > PERFMARK_MAX_PAYLOAD ? -E2BIG : 0;
}

/* anything listening: one load and a branch for each half */
#define UNTRACED() likely((perfmark__semas[0] | perfmark__semas[1]) == 0)

PM_EXPORT bool perfmark_enabled(void)
{
	return !UNTRACED();
}

PM_EXPORT int perfmark_emit(uint32_t type, const void *data, uint32_t size)
{
	struct pm_marker_in m;

	if (UNTRACED())
		return 0;
	if (!data && size)
		return -EINVAL;
	m.type = type;
	m.size = size;
	m.data = data;
	m.ip = (uint64_t)(uintptr_t)__builtin_return_address(0);
	m.own = false;
	return traced(&m);
}

/*
 * Kept out of line so the untraced path has no 4 KiB frame to set up.  ap
 * goes to pm_format, again (the same arguments, from a va_start of their
 * own) to vsnprintf when pm_format declines.
 */
static __attribute__((noinline, cold))
int printf_traced(uint64_t ip, const char *fmt, va_list *ap, va_list *again)
{
	char buf[PERFMARK_MAX_PAYLOAD + 1];
	struct pm_marker_in m;
	int n;

	if (!fmt)
		return -EINVAL;
	n = pm_format(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		n = vsnprintf(buf, sizeof(buf), fmt, *again);
	if (n < 0)
		return -EINVAL;
	/* strlen + 1, or the would-be length + 1 so the truncation is flagged */
	m.type = PERFMARK_TYPE_STRING;
	m.size = (uint32_t)n + 1;
	m.data = buf;
	m.ip = ip;
	m.own = true;
	return traced(&m);
}

/*
 * perf_printf: a variadic C function saves the argument registers in its
 * prologue, before any test.  To keep the untraced call at a load and a
 * branch, its entry is a few instructions of assembly that test the
 * semaphores and tail-jump, all argument registers (and %al) intact, to the
 * C function that formats (whose return address is then perf_printf's
 * caller).
 */
__attribute__((visibility("hidden"), used))
int perfmark__printf_traced(const char *fmt, ...);

int perfmark__printf_traced(const char *fmt, ...)
{
	va_list ap, again;
	int err;

	va_start(ap, fmt);
	va_start(again, fmt);
	err = printf_traced((uint64_t)(uintptr_t)__builtin_return_address(0), fmt, &ap, &again);
	va_end(again);
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
	/* r11: neither an argument nor %al, the vector count of a variadic call */
	"	movq perfmark__semas(%rip), %r11\n"
	"	orq perfmark__semas+8(%rip), %r11\n"
	"	jne perfmark__printf_traced\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"	.size perf_printf, .-perf_printf\n"
	"	.popsection\n");

/*
 * Fixed-size head (value, address...) followed by a name with its NUL, in a
 * PERFMARK_MAX_PAYLOAD stack buffer.  A name that does not fit is cut and
 * the full would-be size is passed, so the truncation is flagged.
 */
static __attribute__((noinline, cold))
void emit_named(uint64_t ip, uint32_t type, const void *head, size_t head_len, const char *name)
{
	char buf[PERFMARK_MAX_PAYLOAD];
	size_t len, room = sizeof(buf) - head_len;
	struct pm_marker_in m;
	uint64_t total;

	if (!name)
		name = "";
	len = strlen(name) + 1;
	if (head_len)
		memcpy(buf, head, head_len);
	memcpy(buf + head_len, name, len < room ? len : room);
	total = head_len + len;
	m.type = type;
	m.size = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	m.data = buf;
	m.ip = ip;
	m.own = true;
	traced(&m);
}

#define CALLER() ((uint64_t)(uintptr_t)__builtin_return_address(0))

PM_EXPORT void perfmark_range_begin(const char *name)
{
	if (UNTRACED())
		return;
	emit_named(CALLER(), PERFMARK_TYPE_RANGE_BEGIN, NULL, 0, name);
}

PM_EXPORT void perfmark_range_end(const char *name)
{
	if (UNTRACED())
		return;
	emit_named(CALLER(), PERFMARK_TYPE_RANGE_END, NULL, 0, name);
}

PM_EXPORT void perfmark_counter(const char *name, int64_t value)
{
	if (UNTRACED())
		return;
	emit_named(CALLER(), PERFMARK_TYPE_COUNTER, &value, sizeof(value), name);
}

PM_EXPORT void perfmark_jit_code(const void *addr, uint64_t size, const char *name)
{
	uint64_t head[2] = { (uint64_t)(uintptr_t)addr, size };

	if (UNTRACED())
		return;
	emit_named(CALLER(), PERFMARK_TYPE_JIT_CODE, head, sizeof(head), name);
}

static __attribute__((constructor)) void perfmark_init(void)
{
	pm_fast_init();
	pm_fast_offer_early();
}

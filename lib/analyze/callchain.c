// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sample call chains: see callchain.h. */
#include "callchain.h"
#include "perfread.h"
#include "unwind_dwarf.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>

/* --call-graph dwarf samples: unwound here, one unwinder for the process */
static struct dwarf_unwinder *dwarf;

/*
 * At exit: the unwinder goes, and if it refused files' CFI (hostile, over
 * the budgets), one line says so, for whichever command read the samples.
 */
static void dwarf_free(void)
{
	uint64_t r[4];

	dwarf_unwinder__refused(dwarf, r);
	if (r[0] + r[1] + r[2] + r[3])
		fprintf(stderr, "perfmark: %" PRIu64 " files' CFI refused for --call-graph dwarf (%" PRIu64
			" too large, %" PRIu64 " too much work, %" PRIu64 " too many rows, %" PRIu64
			" hostile rules): their frames unwound by frame pointer\n",
			r[0] + r[1] + r[2] + r[3], r[0], r[1], r[2], r[3]);
	dwarf_unwinder__free(dwarf);
	dwarf = NULL;
}

/* the user frames of a sample with registers and a stack copy, after n kernel ones */
static size_t dwarf_frames(struct symbolizer *sym, const struct perfread_sample *s,
			   struct callchain_ip *ips, size_t n, size_t max)
{
	uint64_t pcs[CALLCHAIN_MAX];
	size_t k;

	if (!sym || !s->event || n >= max)
		return n;
	if (!dwarf) {
		if (dwarf_unwinder__new(&dwarf))
			return n;
		atexit(dwarf_free);     /* before the sanitizer's leak check runs */
	}
	k = dwarf_unwinder__unwind(dwarf, sym, &s->event->attr, s, pcs,
				   max - n < CALLCHAIN_MAX ? max - n : CALLCHAIN_MAX);
	for (size_t i = 0; i < k; i++)
		ips[n++] = (struct callchain_ip){ pcs[i], false };
	return n;
}

static bool cpumode_kernel(uint16_t misc)
{
	uint16_t m = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL;
}

size_t callchain__get(struct symbolizer *sym, const struct perfread *r,
		      const struct perfread_sample *s, struct callchain_ip *ips, size_t max)
{
	bool kernel = cpumode_kernel(s->misc);
	size_t n = 0;

	(void)r;
	if (!max)
		return 0;
	if (s->regs_abi && s->stack_size) {    /* perf's dwarf mode: the kernel part, then ours */
		for (uint32_t i = 0; i < s->nr_ips && n < max; i++)
			if (s->ips[i] < (uint64_t)PERF_CONTEXT_MAX)
				ips[n++] = (struct callchain_ip){ s->ips[i], true };
		n = dwarf_frames(sym, s, ips, n, max);
		if (n)
			return n;
	}
	if (!s->nr_ips) {
		ips[0] = (struct callchain_ip){ s->ip, kernel };
		return 1;
	}
	for (uint32_t i = 0; i < s->nr_ips && n < max; i++) {
		uint64_t ip = s->ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL || ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL)
				kernel = true;
			else if (ip == (uint64_t)PERF_CONTEXT_USER || ip == (uint64_t)PERF_CONTEXT_GUEST_USER)
				kernel = false;
			continue;
		}
		ips[n++] = (struct callchain_ip){ ip, kernel };
	}
	if (!n)
		ips[n++] = (struct callchain_ip){ s->ip, cpumode_kernel(s->misc) };
	return n;
}

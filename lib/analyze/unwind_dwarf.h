/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * User stacks of `--call-graph dwarf` samples (PERF_SAMPLE_REGS_USER +
 * PERF_SAMPLE_STACK_USER), unwound after the fact with libdw's unwinder
 * (dwfl_attach_state + dwfl_getthread_frames): the registers start it,
 * memory reads come from the sample's stack copy, the CFI from the files
 * the symbolizer's maps name.  One Dwfl per process, kept while its
 * mappings stay the same; modules are reported as the walk reaches them.
 */
#ifndef PERFMARK_UNWIND_DWARF_H
#define PERFMARK_UNWIND_DWARF_H

#include <stddef.h>
#include <stdint.h>

struct dwarf_unwinder;
struct perfread_sample;
struct perf_event_attr;
struct symbolizer;

int dwarf_unwinder__new(struct dwarf_unwinder **out);
void dwarf_unwinder__free(struct dwarf_unwinder *u);
/*
 * The user frames of s (which carries REGS_USER and STACK_USER under attr),
 * leaf first: the interrupted pc, then return addresses.  sym: the maps of
 * s->pid at the sample's time.  Returns how many were written (0: the
 * sample has no user registers or stack).
 */
size_t dwarf_unwinder__unwind(struct dwarf_unwinder *u, struct symbolizer *sym,
			      const struct perf_event_attr *attr,
			      const struct perfread_sample *s, uint64_t *pcs, size_t max);
/*
 * Files whose CFI was refused (over lib/collect/unwind_table.h's budgets;
 * their frames are unwound by frame pointer), by enum unwind_refusal.
 */
void dwarf_unwinder__refused(const struct dwarf_unwinder *u, uint64_t refused[4]);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --filter EXPR of a tracepoint, compiled into the small program the BPF
 * side runs on each hit's entry before anything is written
 * (bpf/tracepoint_wire.h: struct pm_tp_insn, bpf/tracepoint.bpf.c).
 *
 * Why in BPF and not the kernel's filter: PERF_EVENT_IOC_SET_FILTER sets
 * the filter of a perf event, which the kernel applies when it writes the
 * hit into that event's buffer; a BPF program on the tracepoint runs
 * before that (perf_trace_run_bpf_submit), on every hit, whatever the
 * event's filter.  The filter has to be in the program.
 *
 * The syntax is ftrace's (Documentation/trace/events.rst, "Event
 * filtering"), its common cases:
 *
 *   expr  := expr || expr | expr && expr | ! expr | ( expr ) | FIELD OP VALUE
 *   OP    := == != < <= > >= &      numbers (& : the field has any of VALUE's bits)
 *          | == != ~                strings (~ : a glob: "x", "x*", "*x", "*x*")
 *   VALUE := 123 | -5 | 0x1f | "text" | 'text' | word
 *
 * && binds tighter than ||.  FIELD is any field of the tracepoint's format,
 * the common ones too (common_pid).  Fields are checked against the format:
 * an expression this cannot evaluate exactly (an unknown field, an array,
 * a string compared with <, a glob with ? or [...], a pointer compared as a
 * string) is refused with one line, never passed as "all".
 *
 * Bounds (client input, parsed by root perfmarkd): at most
 * TPFILTER_LEN_MAX bytes, TPFILTER_DEPTH_MAX nested ( and !, the program's
 * PM_TPF_MAX_INSNS steps and PM_TPF_MAX_STRS strings of PM_TPF_STR_MAX
 * bytes.  Time is linear in the expression.
 */
#ifndef PERFMARK_TPFILTER_H
#define PERFMARK_TPFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracepoint_wire.h"

#define TPFILTER_LEN_MAX   1023
#define TPFILTER_DEPTH_MAX 16

struct tpformat;

/*
 * Compile expr against the format into out's insn[], nr_insns and strs[]
 * (nothing else of out is touched).  0, or -EINVAL with one line in err
 * that says what and where; -ENOMEM.
 */
int tpfilter_compile(const char *expr, const struct tpformat *f, struct pm_tp_cfg *out,
		     char *err, size_t errlen);

/*
 * The program's result on an entry of size bytes, as the BPF side computes
 * it: the reference the unit tests and the fuzz target hold BPF's to.
 */
bool tpfilter_eval(const struct pm_tp_cfg *c, const uint8_t *entry, size_t size);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The call chain of one sample, leaf first, each address with the context
 * (kernel or user) it is to be symbolized in.  This is the one place where
 * report, flamegraph and export get stacks from: a new way to unwind
 * (e.g. `--call-graph dwarf` register + stack copies) extends callchain__get()
 * and every command follows.
 */
#ifndef PERFMARK_CALLCHAIN_H
#define PERFMARK_CALLCHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfread;
struct perfread_sample;
struct symbolizer;

#define CALLCHAIN_MAX 512

struct callchain_ip {
	uint64_t ip;
	bool kernel;
};

/*
 * Fill ips (up to max) for sample s, leaf first; returns how many.  A sample
 * without PERF_SAMPLE_CALLCHAIN gives its ip alone.  sym holds the maps of
 * s->pid as of the sample's time (sideband is fed in time order), for an
 * unwinder that needs the files behind the addresses.
 */
size_t callchain__get(struct symbolizer *sym, const struct perfread *r,
		      const struct perfread_sample *s, struct callchain_ip *ips, size_t max);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared library of prog-filter (t-report-filters.sh): the second of
 * the workload's three files (the program, this, libc).
 */
#include <stdint.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t lib_sink;

/* n steps of a generator, in this file */
NOINLINE void pmf_lib_work(uint64_t n)
{
	uint64_t x = lib_sink;

	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull + i;
	lib_sink = x;
}

/* next to nothing, called through the program's PLT (pmf_step@plt) */
NOINLINE uint64_t pmf_step(uint64_t x)
{
	return x * 3 + 1;
}

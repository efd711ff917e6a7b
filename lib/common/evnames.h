/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf's names of the hardware and software events, one table for every
 * stage: what -e accepts (evspec.c), the names written for attrs without
 * one (evlist.c) and those printed for a recording's events (script).
 */
#ifndef PERFMARK_EVNAMES_H
#define PERFMARK_EVNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evname {
	const char *name;    /* perf's: "cycles", "cpu-clock", ... */
	const char *alias;   /* another spelling -e takes ("cpu-cycles"), or NULL */
	uint32_t type;       /* PERF_TYPE_HARDWARE / PERF_TYPE_SOFTWARE */
	uint64_t config;
	bool record;         /* perfmark record -e samples it */
};

/* the name of (type, config), NULL when the table has none */
const char *evname_of(uint32_t type, uint64_t config);
/* the row named name[0..len) (or so aliased), NULL when none */
const struct evname *evname_find(const char *name, size_t len);

#endif

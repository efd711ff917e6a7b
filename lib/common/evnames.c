// SPDX-License-Identifier: LGPL-2.1-or-later
/* The event names: see evnames.h. */
#include <linux/perf_event.h>
#include <string.h>

#include "evnames.h"

#define HW(cfg, n, a, rec) [PERF_COUNT_HW_##cfg] = { n, a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##cfg, rec }
#define SW(cfg, n, a, rec) [PERF_COUNT_SW_##cfg] = { n, a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##cfg, rec }

/* indexed by config */
static const struct evname hw[] = {
	HW(CPU_CYCLES, "cycles", "cpu-cycles", true),
	HW(INSTRUCTIONS, "instructions", NULL, true),
	HW(CACHE_REFERENCES, "cache-references", NULL, false),
	HW(CACHE_MISSES, "cache-misses", NULL, true),
	HW(BRANCH_INSTRUCTIONS, "branches", NULL, false),
	HW(BRANCH_MISSES, "branch-misses", NULL, true),
	HW(BUS_CYCLES, "bus-cycles", NULL, false),
};

static const struct evname sw[] = {
	SW(CPU_CLOCK, "cpu-clock", NULL, true),
	SW(TASK_CLOCK, "task-clock", NULL, true),
	SW(PAGE_FAULTS, "page-faults", "faults", true),
	SW(CONTEXT_SWITCHES, "context-switches", NULL, false),
	SW(CPU_MIGRATIONS, "cpu-migrations", NULL, false),
	SW(PAGE_FAULTS_MIN, "minor-faults", NULL, false),
	SW(PAGE_FAULTS_MAJ, "major-faults", NULL, false),
	SW(ALIGNMENT_FAULTS, "alignment-faults", NULL, false),
	SW(EMULATION_FAULTS, "emulation-faults", NULL, false),
	SW(DUMMY, "dummy", NULL, false),
	SW(BPF_OUTPUT, "bpf-output", NULL, false),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *evname_of(uint32_t type, uint64_t config)
{
	if (type == PERF_TYPE_HARDWARE && config < N(hw))
		return hw[config].name;
	if (type == PERF_TYPE_SOFTWARE && config < N(sw))
		return sw[config].name;
	return NULL;
}

static bool named(const char *s, const char *name, size_t len)
{
	return s && strlen(s) == len && !memcmp(s, name, len);
}

const struct evname *evname_find(const char *name, size_t len)
{
	static const struct { const struct evname *t; size_t n; } tables[] = {
		{ hw, N(hw) }, { sw, N(sw) },
	};

	for (size_t t = 0; t < N(tables); t++)
		for (size_t i = 0; i < tables[t].n; i++)
			if (named(tables[t].t[i].name, name, len) || named(tables[t].t[i].alias, name, len))
				return &tables[t].t[i];
	return NULL;
}

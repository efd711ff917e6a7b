/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the unit tests tests/test-*.c. */
#ifndef PERFMARK_TEST_UTIL_H
#define PERFMARK_TEST_UTIL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The address of kernel symbol `want` in /proc/kallsyms (its first entry).
 * False when it is not there or shows as 0 (kptr_restrict, not root). */
static inline bool kallsyms_lookup(const char *want, uint64_t *addr)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t a;
		char t, name[256];

		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &t, name) == 3 && a &&
		    !strcmp(name, want)) {
			*addr = a;
			found = true;
		}
	}
	fclose(f);
	return found;
}

#endif

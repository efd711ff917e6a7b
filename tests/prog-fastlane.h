/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For the test programs that watch their own fast lane (prog-first.c,
 * prog-children.c): the area libperfmark mapped in this process.
 */
#ifndef PERFMARK_TESTS_PROG_FASTLANE_H
#define PERFMARK_TESTS_PROG_FASTLANE_H

#include <stdio.h>
#include <string.h>

#include "fastlane_wire.h"

/* this process's fast-lane area, found in its own maps (NULL: none) */
static inline const struct pm_fl_hdr *own_area(void)
{
	char line[512];
	void *found = NULL;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long start;

		if (strstr(line, "/memfd:perfmark") && sscanf(line, "%lx-", &start) == 1)
			found = (void *)start;
	}
	fclose(f);
	return found;
}

#endif

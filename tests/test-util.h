/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the unit tests tests/test-*.c. */
#ifndef PERFMARK_TEST_UTIL_H
#define PERFMARK_TEST_UTIL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * A case that cannot run here: the reason is printed as "skipped: ..." and
 * cmocka marks the case skipped; tests/run.sh counts it with its reason.
 * Use it only where the machine truly lacks something, never to go green.
 */
#define skip_because(...) do { \
		printf("skipped: " __VA_ARGS__); \
		printf("\n"); \
		skip(); \
	} while (0)

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

/* A private directory for a test: its path in dir, an fd on it in *dfd. */
static inline int test_tmpdir(char *dir, size_t len, const char *name, int *dfd)
{
	snprintf(dir, len, "/tmp/%s.XXXXXX", name);
	if (!mkdtemp(dir))
		return -1;
	*dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *dfd < 0 ? -1 : 0;
}

static inline int test_tmpdir_remove(const char *dir, int dfd)
{
	char cmd[256];

	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif

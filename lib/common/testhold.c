// SPDX-License-Identifier: LGPL-2.1-or-later
/* Places where the tests hold us (testhold.h). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testhold.h"

/* PREFIX.WHAT into path; false when unset or too long */
static bool hold_path(const char *what, char *path, size_t size)
{
	const char *p = getenv("PERFMARK_TEST_HOLD");

	return p && *p && snprintf(path, size, "%s.%s", p, what) < (int)size;
}

bool test_hold_armed(const char *what)
{
	char path[PATH_MAX];

	return hold_path(what, path, sizeof(path)) && !access(path, F_OK);
}

void test_hold_wait(const char *what, bool say_held)
{
	char path[PATH_MAX], held[PATH_MAX + 8];
	int fd;

	if (!hold_path(what, path, sizeof(path)) || access(path, F_OK))
		return;
	if (say_held) {
		snprintf(held, sizeof(held), "%s.held", path);
		fd = open(held, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	while (!access(path, F_OK))
		usleep(10000);
}

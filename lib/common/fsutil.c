// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fsutil.h"

int fsutil_mkdir_p(const char *dir, mode_t parents, mode_t last)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, parents) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, last) && errno != EEXIST)
		return -errno;
	return 0;
}

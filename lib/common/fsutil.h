/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small file system helpers (0 or a negative errno); writing to a client's fd: fdout.h */
#ifndef PERFMARK_FSUTIL_H
#define PERFMARK_FSUTIL_H

#include <sys/types.h>

/* mkdir -p: missing parents made with mode parents, dir itself with mode last */
int fsutil_mkdir_p(const char *dir, mode_t parents, mode_t last);

#endif

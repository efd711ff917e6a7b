// SPDX-License-Identifier: LGPL-2.1-or-later
/* The daemon's state (paths, store, sessions, connections) and its log. */
#include <stdarg.h>
#include <stdio.h>

#include "perfmarkd.h"

struct daemon D = { .lfd = -1, .ring_dfd = -1 };

void logmsg(const char *fmt, ...)
{
	va_list ap;

	fputs("perfmarkd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

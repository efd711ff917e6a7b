/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers' way to fail: one line (no "perfmark: " prefix) into the
 * caller's err buffer, and -EINVAL.  err may be NULL.
 */
#ifndef PERFMARK_ERRLINE_H
#define PERFMARK_ERRLINE_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 3, 4)))
static inline int errline(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

#endif

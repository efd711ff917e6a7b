/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers' way to fail: one line (no "perfmark: " prefix) into the
 * caller's err buffer, and -EINVAL (errline) or the caller's code
 * (errline_code).  err may be NULL.
 */
#ifndef PERFMARK_ERRLINE_H
#define PERFMARK_ERRLINE_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 4, 0)))
static inline int verrline_code(char *err, size_t errlen, int code, const char *fmt, va_list ap)
{
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	return code;
}

/* the line, and code (a negative errno) for the caller to return */
__attribute__((format(printf, 4, 5)))
static inline int errline_code(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = verrline_code(err, errlen, code, fmt, ap);
	va_end(ap);
	return code;
}

__attribute__((format(printf, 3, 4)))
static inline int errline(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int code;

	va_start(ap, fmt);
	code = verrline_code(err, errlen, -EINVAL, fmt, ap);
	va_end(ap);
	return code;
}

#endif

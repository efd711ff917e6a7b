/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recording's tracepoint format, checked before libtraceevent reads it
 * (tpcheck.c says why and what).  text (len bytes, no NUL inside) is
 * changed in place when its print fmt is dropped.  Returns 0 (as it is),
 * 1 (its print fmt dropped: print the fields as name=value), -1 (not a
 * format the kernel writes: leave it out).
 */
#ifndef PERFMARK_TPCHECK_H
#define PERFMARK_TPCHECK_H

#include <stdbool.h>
#include <stddef.h>

int tpcheck_format(char *text, size_t len);

/* formats about to be parsed in this process */
struct tpcheck_fmt {
	const char *sys;
	char *text;          /* NUL-terminated */
	size_t len;
	bool bad;            /* left out */
};
/*
 * Parse f[0..n) (those not bad) in a child process; those it does not come
 * through (libtraceevent crashed on them) are marked bad.  One fork when
 * all is well; one per format, and one more, when not.
 */
void tpcheck_isolate(struct tpcheck_fmt *f, size_t n);

#endif

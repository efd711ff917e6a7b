/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The name in a marker's payload (a range's begin or end, a counter, JIT
 * code), read the same way by every command.
 *
 * RULE (issue 18 case 12): a name is the payload's bytes up to its first
 * NUL, or all of them when there is none.  The recorder keeps at most
 * PERFMARK_MAX_PAYLOAD bytes of a marker, so a longer name arrives cut and
 * without its NUL (flagged truncated); it is still a name, the same at its
 * range's begin and end.  Requiring the NUL dropped such ranges and
 * counters from report without a word.
 */
#ifndef PERFMARK_MARKER_H
#define PERFMARK_MARKER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The name at d (n bytes) and its length in *len; NULL when there are no bytes. */
static inline const char *marker_name(const uint8_t *d, size_t n, size_t *len)
{
	const uint8_t *nul;

	if (!d || !n)
		return NULL;
	nul = memchr(d, '\0', n);
	*len = nul ? (size_t)(nul - d) : n;
	return (const char *)d;
}

#endif

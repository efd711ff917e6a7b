/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Growing an array: grow(&p, &cap, need, sizeof(*p)) makes room for need
 * elements, doubling from `first` (at least need); 0 or -ENOMEM, p and cap
 * unchanged on failure.
 */
#ifndef PERFMARK_GROW_H
#define PERFMARK_GROW_H

#include <errno.h>
#include <stdlib.h>

static inline int grow_to(void *pp, size_t *cap, size_t need, size_t elem, size_t first)
{
	void **p = pp, *np;
	size_t n = *cap ? *cap : first;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	np = realloc(*p, n * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

#define grow(pp, cap, need, elem) grow_to((pp), (cap), (need), (elem), 16)

#endif

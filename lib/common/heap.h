/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A binary min-heap of indexes, for merging sorted runs: h[0..n) hold
 * indexes into the caller's runs, ordered by less(ctx, x, y) ("run x's next
 * item comes before run y's").  heap_build() orders h[0..n); heap_sift(h,
 * n, i, less, ctx) moves h[i] down to its place: after taking or replacing
 * h[0], sift from 0.  Static inline, so a constant comparator is inlined
 * at each use.
 */
#ifndef PERFMARK_HEAP_H
#define PERFMARK_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef bool (*heap_less_fn)(const void *ctx, uint32_t x, uint32_t y);

static inline void heap_sift(uint32_t *h, size_t n, size_t i, heap_less_fn less, const void *ctx)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t t;

		if (l < n && less(ctx, h[l], h[m]))
			m = l;
		if (l + 1 < n && less(ctx, h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static inline void heap_build(uint32_t *h, size_t n, heap_less_fn less, const void *ctx)
{
	for (size_t i = n / 2; i-- > 0;)
		heap_sift(h, n, i, less, ctx);
}

#endif

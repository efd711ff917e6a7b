// SPDX-License-Identifier: LGPL-2.1-or-later
/* The reorder window.  See window.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "window.h"

struct staged {
	uint64_t time;
	uint64_t seq;
	uint32_t off, len;
};

struct window {
	char *buf;
	size_t len, cap;
	char *spare;               /* the previous buffer, reused: no page faults per flush */
	size_t spare_cap;
	struct staged *idx, *tmp;      /* tmp: merge scratch, cap_idx entries */
	size_t n, cap_idx;
	uint64_t seq;
	uint64_t flushed;          /* the highest cutoff so far */
	uint64_t max1, max2;       /* max time written through the last round, the one before */
	uint64_t late, late_unordered;
};

int window__new(struct window **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void window__free(struct window *o)
{
	if (!o)
		return;
	free(o->buf);
	free(o->spare);
	free(o->idx);
	free(o->tmp);
	free(o);
}

void *window__alloc(struct window *o, uint32_t len, uint64_t time)
{
	struct staged *e;
	size_t cap = o->cap_idx;

	if (grow_to(&o->buf, &o->cap, o->len + len, 1, 1 << 20) ||
	    grow_to(&o->idx, &cap, o->n + 1, sizeof(*o->idx), 16384) ||
	    grow_to(&o->tmp, &o->cap_idx, o->n + 1, sizeof(*o->tmp), 16384))
		return NULL;
	e = &o->idx[o->n++];
	e->time = time;
	e->seq = o->seq++;
	e->off = o->len;
	e->len = len;
	o->len += len;
	return o->buf + e->off;
}

const void *window__last(const struct window *o, uint64_t *time, size_t *len)
{
	const struct staged *e = &o->idx[o->n - 1];

	*time = e->time;
	*len = e->len;
	return o->buf + e->off;
}

static bool before(const struct staged *x, const struct staged *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/*
 * Sort by (time, arrival): a natural merge sort.  Records come in sorted
 * runs (a CPU's buffer, a thread's batch), so this is O(n log runs): one
 * pass when everything already is in order.
 */
static void sort_staged(struct window *o)
{
	struct staged *a = o->idx, *b = o->tmp, *t;
	size_t n = o->n, i;

	for (i = 1; i < n && !before(&a[i], &a[i - 1]); i++)
		;
	if (i == n)
		return;
	for (;;) {
		size_t out = 0, runs = 0;

		i = 0;
		while (i < n) {
			size_t m = i + 1, e;

			while (m < n && !before(&a[m], &a[m - 1]))
				m++;
			e = m + 1;
			while (e < n && !before(&a[e], &a[e - 1]))
				e++;
			if (m >= n) {            /* a last run with no partner */
				memcpy(b + out, a + i, (n - i) * sizeof(*a));
				out += n - i;
				runs++;
				break;
			}
			if (e > n)
				e = n;
			{
				size_t p = i, q = m;

				while (p < m && q < e)
					b[out++] = before(&a[q], &a[p]) ? a[q++] : a[p++];
				while (p < m)
					b[out++] = a[p++];
				while (q < e)
					b[out++] = a[q++];
			}
			runs++;
			i = e;
		}
		if (runs <= 1) {
			if (b != o->idx)             /* the result is in b */
				memcpy(o->idx, b, n * sizeof(*b));
			return;
		}
		t = a;
		a = b;
		b = t;
	}
}

/* keep idx[from..n), compacted at the start of a new buffer */
static int keep_rest(struct window *o, size_t from)
{
	size_t len = 0, keep = 0, i, nb_cap;
	char *nb;

	if (from == o->n) {
		o->n = 0;
		o->len = 0;
		return 0;
	}
	if (o->spare_cap < o->cap) {
		free(o->spare);
		o->spare = malloc(o->cap);
		o->spare_cap = o->spare ? o->cap : 0;
	}
	nb = o->spare;
	nb_cap = o->spare_cap;
	if (!nb)
		return -ENOMEM;
	for (i = from; i < o->n; i++, keep++) {
		struct staged *x = &o->idx[i];

		memcpy(nb + len, o->buf + x->off, x->len);
		x->off = (uint32_t)len;
		len += x->len;
		o->idx[keep] = *x;
	}
	o->spare = o->buf;
	o->spare_cap = o->cap;
	o->buf = nb;
	o->cap = nb_cap;
	o->len = len;
	o->n = keep;
	return 0;
}

int window__flush(struct window *o, uint64_t cutoff, window_out_fn out, void *ctx)
{
	uint64_t max = o->max1;
	size_t i;
	int e = 0;

	if (o->n > 1)
		sort_staged(o);
	for (i = 0; i < o->n; i++) {
		const struct staged *x = &o->idx[i];

		if (x->time > cutoff)
			break;
		e = out(ctx, x->time, o->buf + x->off, x->len);
		if (e)
			break;
		if (x->time < o->flushed) {       /* the window had passed it: it keeps its time */
			o->late++;
			if (x->time < o->max2)
				o->late_unordered++;
		}
		if (x->time > max)
			max = x->time;
	}
	if (i) {                 /* a round perf counts */
		o->max2 = o->max1;
		o->max1 = max;
	}
	if (!e && cutoff > o->flushed)
		o->flushed = cutoff;
	if (keep_rest(o, i) && !e)
		e = -ENOMEM;
	return e ? e : i > 0;
}

uint64_t window__flushed(const struct window *o)
{
	return o->flushed;
}

void window__stats(const struct window *o, struct window_stats *st)
{
	st->held = o->n;
	st->late = o->late;
	st->late_unordered = o->late_unordered;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* The reorder window.  See window.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "heap.h"
#include "window.h"

/*
 * Records live in blocks of BLOCK_SIZE bytes, aligned to their size so a
 * record's block is found from its address.  A block goes back to a free
 * list once every record in it has gone out: nothing is copied to keep
 * the records younger than a cutoff, and at a steady rate the same blocks
 * (and their pages) serve drain after drain.
 */
#define BLOCK_SIZE  BIGMEM_PAGE  /* one huge page where the kernel gives them (bigmem.h) */
#define BLOCK_HDR   64u
#define MIN_SPARE   8            /* free blocks kept, at least */

struct block {
	struct block *next;        /* free list */
	uint32_t used;             /* bytes given out, from BLOCK_HDR */
	uint32_t live;             /* records in it not out yet */
};

_Static_assert(sizeof(struct block) <= BLOCK_HDR, "block header");
_Static_assert(WINDOW_MAX_REC + BLOCK_HDR <= BLOCK_SIZE, "a record fits a block");

/* seq: arrival order among the records held (renumbered at each flush) */
struct staged {
	uint64_t time;
	char *rec;
	uint32_t seq, len;
};

struct window {
	struct block *cur;         /* being filled (NULL: none yet) */
	struct block *free;        /* blocks with nothing in them */
	size_t nr_free, nr_blocks; /* free ones, all of them */
	size_t min_free;           /* fewest free since the last flush */
	struct staged *idx, *tmp;      /* tmp: merge scratch, cap_idx entries */
	size_t n, cap_idx;
	uint32_t seq;
	uint64_t flushed;          /* the highest cutoff so far */
	uint64_t max1, max2;       /* max time written through the last round, the one before */
	uint64_t late, late_unordered;
	uint64_t cap;              /* bytes of blocks and index held, at most (window.h) */
	uint64_t overflow;
	bool full;                 /* the last alloc was refused for the cap */
};

int window__new(struct window **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->cap = WINDOW_MAX_BYTES;
	return 0;
}

void window__set_cap(struct window *o, uint64_t bytes)
{
	o->cap = bytes < WINDOW_MIN_BYTES ? WINDOW_MIN_BYTES : bytes;
}

/* memory held: blocks in use (the one being filled too) and both index arrays */
static uint64_t held_bytes(const struct window *o)
{
	return (uint64_t)(o->nr_blocks - o->nr_free) * BLOCK_SIZE +
	       (uint64_t)o->cap_idx * 2 * sizeof(struct staged);
}

bool window__full(const struct window *o)
{
	return o->full;
}

static struct block *block_of(const char *rec)
{
	return (struct block *)(void *)((uintptr_t)rec & ~(uintptr_t)(BLOCK_SIZE - 1));
}

/* an index array of cap entries: malloc's below a huge page, bigmem's from one up */
static bool idx_big(size_t cap)
{
	return cap * sizeof(struct staged) >= BIGMEM_PAGE;
}

static void idx_free(struct staged *p, size_t cap)
{
	if (idx_big(cap))
		bigmem_free(p, cap * sizeof(*p));
	else
		free(p);
}

void window__free(struct window *o)
{
	struct block *b, *next;

	if (!o)
		return;
	for (b = o->free; b; b = next) {
		next = b->next;
		bigmem_free(b, BLOCK_SIZE);
	}
	/* blocks still holding records: each is found from one of them */
	for (size_t i = 0; i < o->n; i++) {
		b = block_of(o->idx[i].rec);
		if (b != o->cur && !--b->live)
			bigmem_free(b, BLOCK_SIZE);
	}
	bigmem_free(o->cur, BLOCK_SIZE);
	idx_free(o->idx, o->cap_idx);
	idx_free(o->tmp, o->cap_idx);
	free(o);
}

/* a record's bytes are out: its block is free once its last one is */
static void put_rec(struct window *o, char *rec)
{
	struct block *b = block_of(rec);

	if (--b->live || b == o->cur)
		return;
	b->next = o->free;
	o->free = b;
	o->nr_free++;
}

static struct block *new_block(struct window *o)
{
	struct block *b = o->free;

	if (b) {
		o->free = b->next;
		if (--o->nr_free < o->min_free)
			o->min_free = o->nr_free;
	} else {
		b = bigmem_alloc(BLOCK_SIZE);
		if (!b)
			return NULL;
		o->nr_blocks++;
	}
	b->next = NULL;
	b->used = BLOCK_HDR;
	b->live = 0;
	return b;
}

/*
 * Both index arrays doubled (from 16384 entries) to hold need, the records'
 * entries kept (tmp is scratch).  Once they are a huge page or more they
 * come from bigmem: a burst that grew them to 2^20 entries took 12 k page
 * faults writing them for the first time.  0, or -ENOMEM with both as they
 * were.
 */
static int grow_idx(struct window *o, size_t need)
{
	size_t cap = o->cap_idx ? o->cap_idx : 16384, bytes;
	struct staged *idx, *tmp;

	while (cap < need)
		cap *= 2;
	bytes = cap * sizeof(*idx);
	idx = idx_big(cap) ? bigmem_alloc(bytes) : malloc(bytes);
	tmp = idx_big(cap) ? bigmem_alloc(bytes) : malloc(bytes);
	if (!idx || !tmp) {
		idx_free(idx, cap);
		idx_free(tmp, cap);
		return -ENOMEM;
	}
	if (o->n)
		memcpy(idx, o->idx, o->n * sizeof(*idx));
	idx_free(o->idx, o->cap_idx);
	idx_free(o->tmp, o->cap_idx);
	o->idx = idx;
	o->tmp = tmp;
	o->cap_idx = cap;
	return 0;
}

void *window__alloc(struct window *o, uint32_t len, uint64_t time)
{
	struct staged *e;
	uint32_t need = (len + 7) & ~7u;
	uint64_t more = 0;
	char *rec;

	o->full = false;
	if (len > WINDOW_MAX_REC)
		return NULL;
	/* what this record adds: a block, the index doubled (none while it is empty) */
	if (!o->cur || o->cur->used + need > BLOCK_SIZE)
		more += BLOCK_SIZE;
	if (o->n + 1 > o->cap_idx)
		more += (uint64_t)(o->cap_idx ? o->cap_idx : 16384) * 2 * sizeof(*o->idx);
	if (more && o->n && held_bytes(o) + more > o->cap) {
		o->full = true;
		return NULL;
	}
	if (o->n + 1 > o->cap_idx && grow_idx(o, o->n + 1))
		return NULL;
	if (!o->cur || o->cur->used + need > BLOCK_SIZE) {
		struct block *b = new_block(o);

		if (!b)
			return NULL;
		if (o->cur && !o->cur->live) {         /* nothing of it held: spare */
			o->cur->next = o->free;
			o->free = o->cur;
			o->nr_free++;
		}
		o->cur = b;
	}
	rec = (char *)o->cur + o->cur->used;
	o->cur->used += need;
	o->cur->live++;
	e = &o->idx[o->n++];
	e->time = time;
	e->rec = rec;
	e->seq = o->seq++;
	e->len = len;
	return rec;
}

static bool before(const struct staged *x, const struct staged *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

#define MERGE_WAYS 64

struct run {
	size_t at, end;
};

/* the runs of a merge: heap entries are run indexes, by their head record */
struct runs {
	const struct staged *a;
	const struct run *r;
};

/* (time, seq) is unique: no ties */
static bool head_before(const void *ctx, uint32_t x, uint32_t y)
{
	const struct runs *rs = ctx;

	return before(&rs->a[rs->r[x].at], &rs->a[rs->r[y].at]);
}

/* the nr runs of a, merged into b in one pass */
static void merge_runs(const struct staged *a, struct staged *b, struct run *r, size_t nr)
{
	const struct runs rs = { a, r };
	uint32_t h[MERGE_WAYS];
	size_t n = nr, out = 0;

	for (size_t i = 0; i < nr; i++)
		h[i] = (uint32_t)i;
	heap_build(h, n, head_before, &rs);
	while (n) {
		struct run *x = &r[h[0]];

		b[out++] = a[x->at++];
		if (x->at == x->end)
			h[0] = h[--n];
		heap_sift(h, n, 0, head_before, &rs);
	}
}

/*
 * Sort by (time, arrival).  Records come in sorted runs (those held from
 * the last flush, a CPU's buffer, a thread's ring), so: up to MERGE_WAYS
 * runs are merged in one pass through a heap of their heads (each record
 * moved once), more by a natural merge sort, O(n log runs).
 */
static void sort_staged(struct window *o)
{
	struct staged *a = o->idx, *b = o->tmp, *t;
	struct run runs[MERGE_WAYS];
	size_t n = o->n, i, nr = 0;

	for (i = 0; i < n && nr < MERGE_WAYS; nr++) {
		runs[nr].at = i;
		for (i++; i < n && !before(&a[i], &a[i - 1]); i++)
			;
		runs[nr].end = i;
	}
	if (nr == 1)
		return;
	if (i == n) {
		merge_runs(a, b, runs, nr);
		o->idx = b;             /* the same capacity: swap */
		o->tmp = a;
		return;
	}
	for (;;) {
		size_t out = 0, nruns = 0;

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
				nruns++;
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
			nruns++;
			i = e;
		}
		if (nruns <= 1) {
			o->idx = b;     /* the result is in b: swap (the same capacity) */
			o->tmp = a;
			return;
		}
		t = a;
		a = b;
		b = t;
	}
}

/*
 * What went out gives its room back; idx[from..n) moves to the start and
 * is numbered again in order (the seqs stay small, ties keep arrival order).
 */
static void keep_rest(struct window *o, size_t from)
{
	size_t i;

	for (i = 0; i < from; i++)
		put_rec(o, o->idx[i].rec);
	for (i = from; i < o->n; i++) {
		o->idx[i - from] = o->idx[i];
		o->idx[i - from].seq = (uint32_t)(i - from);
	}
	o->n -= from;
	o->seq = (uint32_t)o->n;
	if (o->cur && !o->cur->live)
		o->cur->used = BLOCK_HDR;            /* all out: fill it again from the start */
	/*
	 * Spare blocks no alloc needed since the last flush: half of them go
	 * (a burst's surplus fades); the rest, and the ones that were used,
	 * are kept, so a steady rate reuses the same blocks and pages.
	 */
	for (size_t k = o->min_free > MIN_SPARE ? (o->min_free - MIN_SPARE) / 2 : 0; k; k--) {
		struct block *b = o->free;

		o->free = b->next;
		o->nr_free--;
		o->nr_blocks--;
		bigmem_free(b, BLOCK_SIZE);
	}
	o->min_free = o->nr_free;
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
		e = out(ctx, x->time, x->rec, x->len);
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
	keep_rest(o, i);
	return e ? e : i > 0;
}

int window__overflow(struct window *o, window_out_fn out, void *ctx)
{
	uint64_t total = 0, bytes = 0;
	size_t i, before = o->n;
	int e;

	if (!o->n)
		return 0;
	if (o->n > 1)
		sort_staged(o);
	for (i = 0; i < o->n; i++)
		total += o->idx[i].len;
	for (i = 0; i < o->n && bytes < (total + 1) / 2; i++)
		bytes += o->idx[i].len;
	e = window__flush(o, o->idx[i - 1].time, out, ctx);
	o->overflow += before - o->n;
	return e;
}

int window__foreach(const struct window *o, window_out_fn out, void *ctx)
{
	size_t i;
	int e = 0;

	for (i = 0; !e && i < o->n; i++)
		e = out(ctx, o->idx[i].time, o->idx[i].rec, o->idx[i].len);
	return e;
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
	st->overflow = o->overflow;
	st->bytes = held_bytes(o);
}

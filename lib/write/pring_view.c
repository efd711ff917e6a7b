// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading a persistent ring in time order, from a thread of its own while
 * the writer goes on (pring.h: views).
 *
 * The writer evicts old frames before it overwrites their bytes, and stores
 * the new tail first (a release fence after it, pring.c evict()).  A view
 * is [tail, head) at the moment it was taken: the frames there were
 * complete then.  The reader copies a frame, then (acquire fence) loads
 * the tail: while the tail has not passed the frame's position, no byte of
 * it was overwritten before the copy, so the copy is the frame.  A frame
 * the tail passed is left out (counted); a walk the tail overtook goes on
 * from the tail, which is always a frame's start.
 *
 * The sideband is compacted in place (into the other half, switched over,
 * and the old half rewritten by the next compaction), so it is copied
 * when the view is taken; it is a small part of the ring (sinks.c sizes it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pring-int.h"

struct pring_view {
	const struct pring_hdr *h;   /* the tail the writer publishes */
	const uint8_t *data;
	uint64_t ds, tail, head;
	uint64_t frames;             /* data frames in [tail, head) */
	uint8_t *sb;                 /* copy of the active half's frames */
	uint64_t sb_len;
	uint8_t *buf;                /* one data frame copied */
	size_t buf_cap;
};

int pring__view(const struct pring *r, struct pring_view **out)
{
	struct pring_view *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->h = r->h;
	v->data = r->data;
	v->ds = r->data_size;
	v->tail = r->tail;
	v->head = r->head;
	v->frames = r->frames;
	v->sb_len = r->sb_len;
	if (v->sb_len) {
		v->sb = malloc(v->sb_len);
		if (!v->sb) {
			free(v);
			return -ENOMEM;
		}
		memcpy(v->sb, r->sb[r->h->sb_active & 1], v->sb_len);
	}
	*out = v;
	return 0;
}

void pring_view__free(struct pring_view *v)
{
	if (!v)
		return;
	free(v->sb);
	free(v->buf);
	free(v);
}

/* the tail now, after the reads before it (a seqlock's read side) */
static uint64_t tail_after_copy(const struct pring_view *v)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&v->h->tail, __ATOMIC_RELAXED);
}

struct ent {
	uint64_t time;
	uint64_t ref;          /* bit 63: data (absolute pos); else sideband offset */
};
#define REF_DATA (1ull << 63)

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

struct index {
	struct ent *v;
	size_t n, cap;
};

static int index_add(struct index *ix, uint64_t time, uint64_t ref)
{
	if (grow_to(&ix->v, &ix->cap, ix->n + 1, sizeof(*ix->v), 4096))
		return -ENOMEM;
	ix->v[ix->n].time = time;
	ix->v[ix->n++].ref = ref;
	return 0;
}

static int index_sideband(const struct pring_view *v, uint64_t until, struct index *ix)
{
	uint64_t pos;
	int e = 0;

	for (pos = 0; pos + FRAME_HDR <= v->sb_len && !e;) {
		const struct frame *f = (const void *)(v->sb + pos);

		if (f->size < FRAME_HDR || f->size > v->sb_len - pos)
			break;
		if (f->time <= until)
			e = index_add(ix, f->time, pos);
		pos += f->size;
	}
	return e;
}

/* the data frames of the view still there, by position */
static int index_data(const struct pring_view *v, uint64_t until, struct index *ix,
		      uint64_t *later)
{
	uint64_t ds = v->ds, pos, t;
	int e = 0;

	for (pos = v->tail; ds && pos < v->head && !e;) {
		uint64_t off = pos % ds, rem = ds - off;
		struct frame f;

		if (rem < FRAME_HDR) {
			pos += rem;
			continue;
		}
		memcpy(&f, v->data + off, sizeof(f));
		t = tail_after_copy(v);
		if (t > pos) {            /* overtaken: go on from the oldest frame left */
			pos = t;
			continue;
		}
		if (f.pos != pos || f.size < FRAME_HDR || (f.size & 7) || f.size > rem)
			break;            /* not the writer's: nothing after it is either */
		if (f.kind == FK_DATA && f.time <= until)
			e = index_add(ix, f.time, pos | REF_DATA);
		else if (f.kind == FK_DATA)
			(*later)++;
		pos += f.size;
	}
	return e;
}

/* the data frame at pos into v->buf: 0, 1 when evicted meanwhile, or -ENOMEM */
static int copy_frame(struct pring_view *v, uint64_t pos)
{
	uint64_t off = pos % v->ds;
	struct frame f;

	memcpy(&f, v->data + off, sizeof(f));
	if (f.size < FRAME_HDR || f.size > v->ds - off)
		return 1;                 /* overwritten: it was fine when indexed */
	if (grow_to(&v->buf, &v->buf_cap, f.size, 1, 4096))
		return -ENOMEM;
	memcpy(v->buf, v->data + off, f.size);
	if (tail_after_copy(v) > pos)
		return 1;
	memcpy(&f, v->buf, sizeof(f));
	return f.pos == pos && f.size >= FRAME_HDR ? 0 : 1;
}

int pring_view__sorted(struct pring_view *v, uint64_t until, pring_cb cb, void *ctx,
		       uint64_t *evicted)
{
	struct index ix = { 0 };
	uint64_t later = 0, copied = 0;
	size_t i;
	int e;

	e = index_sideband(v, until, &ix);
	if (!e)
		e = index_data(v, until, &ix, &later);
	if (!e && ix.n > 1)
		qsort(ix.v, ix.n, sizeof(*ix.v), ent_cmp);
	for (i = 0; i < ix.n && !e; i++) {
		const struct frame *f;

		if (ix.v[i].ref & REF_DATA) {
			e = copy_frame(v, ix.v[i].ref & ~REF_DATA);
			if (e) {
				e = e > 0 ? 0 : e;
				continue;
			}
			f = (const void *)v->buf;
			copied++;
		} else {
			f = (const void *)(v->sb + ix.v[i].ref);
		}
		e = cb(ctx, f->time, f + 1, f->size - FRAME_HDR);
	}
	free(ix.v);
	/* what the view held and was not handed on (those the walk skipped too) */
	if (evicted)
		*evicted = !e && v->frames > copied + later ? v->frames - copied - later : 0;
	return e;
}

int pring__sorted(const struct pring *r, uint64_t until, pring_cb cb, void *ctx)
{
	struct pring_view *v;
	int e = pring__view(r, &v);

	if (e)
		return e;
	e = pring_view__sorted(v, until, cb, ctx, NULL);
	pring_view__free(v);
	return e;
}

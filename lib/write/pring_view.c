// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading a persistent ring in time order, from a thread of its own while
 * the writer goes on (pring.h: views).
 *
 * A view is [tail, head) at the moment it was taken: the frames there were
 * complete then.  While a view is open the writer, about to evict one of
 * its frames, first keeps a copy of it for the view (pring_view_keep, under
 * the view's lock), then stores the new tail (a release fence after it,
 * pring.c evict()), then overwrites.  The reader copies a frame from the
 * ring, then (acquire fence) loads the tail: while the tail has not passed
 * the frame's position, no byte of it was overwritten before the copy, so
 * the copy is the frame; once it has, the kept copy is.  A snapshot so
 * holds what the ring held when it was asked for, however fast the ring
 * turns over while it is written (a 64 MiB ring of whole stacks turns in
 * about a second); what it costs is the memory of the frames kept, at most
 * the view's size, only while the writer overtakes the reader.
 *
 * The sideband is compacted in place (into the other half, switched over,
 * and the old half rewritten by the next compaction), so it is copied
 * when the view is taken; it is a small part of the ring (sinks.c sizes it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pring-int.h"

struct pring_view {
	struct pring *r;             /* the ring it reads, which keeps frames for it */
	struct pring_view *next;     /* the ring's open views */
	const struct pring_hdr *h;   /* the tail the writer publishes */
	const uint8_t *data;
	uint64_t ds, tail, head;
	uint64_t frames;             /* data frames in [tail, head) */
	uint8_t *sb;                 /* copy of the active half's frames */
	uint64_t sb_len;
	uint8_t *buf;                /* one data frame copied */
	size_t buf_cap;
	/* frames the writer evicted while the view was open, in position order */
	pthread_mutex_t lock;
	struct kept { uint64_t pos, off; } *kept;
	size_t nkept, kcap;
	uint8_t *kbuf;
	size_t klen, kbcap;
	uint64_t unkept;             /* could not be kept (no memory) */
	bool done;                   /* read: the writer keeps nothing more for it */
};

int pring__view(struct pring *r, struct pring_view **out)
{
	struct pring_view *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->r = r;
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
	pthread_mutex_init(&v->lock, NULL);
	v->next = r->views;
	r->views = v;
	*out = v;
	return 0;
}

void pring_view__free(struct pring_view *v)
{
	struct pring_view **pp;

	if (!v)
		return;
	for (pp = &v->r->views; *pp; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			break;
		}
	pthread_mutex_destroy(&v->lock);
	free(v->kept);
	free(v->kbuf);
	free(v->sb);
	free(v->buf);
	free(v);
}

/* a copy of the frame f at pos for v (under its lock) */
static void keep_one(struct pring_view *v, uint64_t pos, const struct frame *f, size_t len)
{
	if (v->done)
		return;
	if (grow_to(&v->kept, &v->kcap, v->nkept + 1, sizeof(*v->kept), 1024) ||
	    grow_to(&v->kbuf, &v->kbcap, v->klen + len, 1, 1 << 20)) {
		v->unkept++;
		return;
	}
	memcpy(v->kbuf + v->klen, f, len);
	v->kept[v->nkept].pos = pos;
	v->kept[v->nkept++].off = v->klen;
	v->klen += len;
}

/* The writer evicts the frame f at pos: the views that hold it keep a copy (a pad: its header). */
void pring_view_keep(struct pring *r, uint64_t pos, const struct frame *f)
{
	size_t len = f->kind == FK_DATA ? f->size : FRAME_HDR;

	for (struct pring_view *v = r->views; v; v = v->next) {
		if (pos < v->tail || pos >= v->head)
			continue;
		pthread_mutex_lock(&v->lock);
		keep_one(v, pos, f, len);
		pthread_mutex_unlock(&v->lock);
	}
}

/* the kept copy of the frame at pos: up to cap bytes of it into dst; its size, or 0 */
static uint32_t kept_frame(struct pring_view *v, uint64_t pos, void *dst, size_t cap)
{
	size_t lo = 0, hi, mid;
	uint32_t size = 0;

	/* the tail seen past pos was stored (release) after the frame was kept */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	pthread_mutex_lock(&v->lock);
	hi = v->nkept;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v->kept[mid].pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < v->nkept && v->kept[lo].pos == pos) {
		const struct frame *f = (const void *)(v->kbuf + v->kept[lo].off);
		size_t have = f->kind == FK_DATA ? f->size : FRAME_HDR;

		size = f->size;
		memcpy(dst, f, have < cap ? have : cap);
	}
	pthread_mutex_unlock(&v->lock);
	return size;
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

/* the data frames of the view, by position (from the ring, or kept when evicted) */
static int index_data(struct pring_view *v, uint64_t since, uint64_t until, struct index *ix,
		      uint64_t *later)
{
	uint64_t ds = v->ds, pos;
	int e = 0;

	for (pos = v->tail; ds && pos < v->head && !e;) {
		uint64_t off = pos % ds, rem = ds - off;
		struct frame f;

		if (rem < FRAME_HDR) {
			pos += rem;
			continue;
		}
		memcpy(&f, v->data + off, sizeof(f));
		if (tail_after_copy(v) > pos && !kept_frame(v, pos, &f, sizeof(f)))
			break;            /* evicted and not kept (no memory): the rest is lost */
		if (f.pos != pos || f.size < FRAME_HDR || (f.size & 7) || f.size > rem)
			break;            /* not the writer's: nothing after it is either */
		if (f.kind == FK_DATA && f.time <= until && f.time >= since)
			e = index_add(ix, f.time, pos | REF_DATA);
		else if (f.kind == FK_DATA)
			(*later)++;       /* left out on purpose, not lost */
		pos += f.size;
	}
	return e;
}

/* the data frame at pos into v->buf (from the ring, or kept): 0, 1 when lost, or -ENOMEM */
static int copy_frame(struct pring_view *v, uint64_t pos)
{
	uint64_t off = pos % v->ds;
	struct frame f;
	uint32_t size;

	memcpy(&f, v->data + off, sizeof(f));
	if (f.size >= FRAME_HDR && f.size <= v->ds - off) {
		if (grow_to(&v->buf, &v->buf_cap, f.size, 1, 4096))
			return -ENOMEM;
		memcpy(v->buf, v->data + off, f.size);
		if (tail_after_copy(v) <= pos) {
			memcpy(&f, v->buf, sizeof(f));
			return f.pos == pos && f.size >= FRAME_HDR ? 0 : 1;
		}
	} else if (tail_after_copy(v) <= pos) {
		return 1;                 /* cannot be: it was a frame when indexed */
	}
	/* evicted meanwhile: the copy the writer kept */
	size = kept_frame(v, pos, &f, sizeof(f));
	if (!size)
		return 1;
	if (grow_to(&v->buf, &v->buf_cap, size, 1, 4096))
		return -ENOMEM;
	kept_frame(v, pos, v->buf, size);
	return 0;
}

int pring_view__sorted(struct pring_view *v, uint64_t until, pring_cb cb, void *ctx,
		       uint64_t *evicted)
{
	return pring_view__sorted_span(v, 0, until, cb, ctx, evicted);
}

int pring_view__sorted_span(struct pring_view *v, uint64_t since, uint64_t until, pring_cb cb,
			    void *ctx, uint64_t *evicted)
{
	struct index ix = { 0 };
	uint64_t later = 0, copied = 0;
	size_t i;
	int e;

	e = index_sideband(v, until, &ix);
	if (!e)
		e = index_data(v, since, until, &ix, &later);
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
	/* read: what the writer kept is no longer needed, nor is more */
	pthread_mutex_lock(&v->lock);
	v->done = true;
	free(v->kept);
	free(v->kbuf);
	v->kept = NULL;
	v->kbuf = NULL;
	v->nkept = v->kcap = v->klen = v->kbcap = 0;
	pthread_mutex_unlock(&v->lock);
	/* what the view held and was not handed on (those the walk skipped too) */
	if (evicted)
		*evicted = !e && v->frames > copied + later ? v->frames - copied - later : 0;
	return e;
}

int pring__sorted(struct pring *r, uint64_t until, pring_cb cb, void *ctx)
{
	struct pring_view *v;
	int e = pring__view(r, &v);

	if (e)
		return e;
	e = pring_view__sorted(v, until, cb, ctx, NULL);
	pring_view__free(v);
	return e;
}

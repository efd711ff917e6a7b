// SPDX-License-Identifier: LGPL-2.1-or-later
/* Per-round re-sorting of perf.data records: see reorder.h. */
#include "reorder.h"
#include "perfdata.h"
#include "perfread.h"
#include "table.h"
#include "grow.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>


struct ro_entry {
	uint64_t time, seq;
	size_t off;
};

struct ro_buf {
	uint8_t *bytes;
	size_t len, cap;
};

struct reorder {
	const struct perfread *r;
	reorder_fn fn;
	void *ctx;
	struct ro_buf buf;         /* the records, in file order */
	struct ro_entry *ents;
	size_t n, cap;
	uint64_t seq;
	uint64_t max_time;      /* latest time seen so far */
	uint64_t flush_limit;   /* latest time at the previous round's end */
	bool any_round;
};

/* perfread decodes sample times and sample_id trailers; records without one sort first. */
uint64_t reorder__time(const struct perfread *r, const struct perf_event_header *rec)
{
	struct perfread_sample_id sid;

	if (perfread__sample_id(r, rec, &sid) < 0 || !sid.have_time)
		return 0;
	return sid.time;
}

int reorder__new(struct reorder **out, const struct perfread *r, reorder_fn fn, void *ctx)
{
	struct reorder *ro = calloc(1, sizeof(*ro));

	if (!ro)
		return -ENOMEM;
	ro->r = r;
	ro->fn = fn;
	ro->ctx = ctx;
	*out = ro;
	return 0;
}

static int buf_put(struct ro_buf *b, const void *p, size_t size, size_t *off)
{
	size_t len = (size + 7) & ~(size_t)7;

	if (grow_to(&b->bytes, &b->cap, b->len + len, 1, 4u << 20))
		return -ENOMEM;
	memcpy(b->bytes + b->len, p, size);
	*off = b->len;
	b->len += len;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ro_entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int off_cmp(const void *a, const void *b)
{
	const struct ro_entry *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Hand out every buffered record with time <= limit; keep the rest, moved
 * to the front of the buffer in file order (each moves down or stays, so
 * one buffer does: a second one to copy them into doubled the memory of a
 * file whose rounds are large).
 */
static int flush(struct reorder *ro, uint64_t limit)
{
	size_t i, keep, len = 0;
	int err;

	if (ro->n)
		qsort(ro->ents, ro->n, sizeof(*ro->ents), ent_cmp);
	for (i = 0; i < ro->n && ro->ents[i].time <= limit; i++) {
		err = ro->fn(ro->ctx, (const void *)(ro->buf.bytes + ro->ents[i].off));
		if (err < 0)
			return err;
	}
	keep = ro->n - i;
	if (keep && i)
		memmove(ro->ents, ro->ents + i, keep * sizeof(*ro->ents));
	if (keep)
		qsort(ro->ents, keep, sizeof(*ro->ents), off_cmp);
	for (size_t k = 0; k < keep; k++) {
		const struct perf_event_header *h = (const void *)(ro->buf.bytes + ro->ents[k].off);
		size_t size = ((size_t)h->size + 7) & ~(size_t)7;

		if (ro->ents[k].off != len)
			memmove(ro->buf.bytes + len, h, size);
		ro->ents[k].off = len;
		len += size;
	}
	ro->n = keep;
	ro->buf.len = len;
	return 0;
}

int reorder__add(struct reorder *ro, const struct perf_event_header *rec)
{
	struct ro_entry e;

	if (rec->type == PERFDATA_RECORD_FINISHED_ROUND) {
		int err = ro->any_round ? flush(ro, ro->flush_limit) : 0;

		ro->any_round = true;
		ro->flush_limit = ro->max_time;
		return err;
	}
	if (grow_to(&ro->ents, &ro->cap, ro->n + 1, sizeof(*ro->ents), 65536))
		return -ENOMEM;
	e.time = reorder__time(ro->r, rec);
	e.seq = ro->seq++;
	if (buf_put(&ro->buf, rec, rec->size, &e.off) < 0)
		return -ENOMEM;
	if (e.time > ro->max_time)
		ro->max_time = e.time;
	ro->ents[ro->n++] = e;
	return 0;
}

int reorder__finish(struct reorder *ro)
{
	return flush(ro, UINT64_MAX);
}

void reorder__free(struct reorder *ro)
{
	if (!ro)
		return;
	free(ro->buf.bytes);
	free(ro->ents);
	free(ro);
}

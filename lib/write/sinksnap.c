// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A snapshot (sinks.h): a ring's or a file sink's history as one perf.data,
 * and the caller's records after it, for `session snapshot`, a live
 * reader's start (readers.c) and the HTTP listener's time-bounded profiles
 * (since).  A ring's is taken in two steps: a view of the ring in the
 * writer's thread (sink__snapshot_begin), written in any one thread
 * (sink_snap__write) while the sink goes on.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata.h"
#include "pring.h"
#include "sink-int.h"

struct sink_snap {
	const struct sink *s;
	struct pring_view *v;
	uint64_t since, until, evicted;   /* data frames older than since are left out */
	void *tail;                  /* the caller's records after the ring's */
	size_t tail_len;
};

/* records of the caller's after what the sink holds (tail: complete records, 8-aligned) */
static int add_tail(struct perfdata_writer *w, const void *tail, size_t len)
{
	const char *p = tail;
	size_t off = 0;
	int e = 0;

	while (!e && off + sizeof(struct perf_event_header) <= len) {
		const struct perf_event_header *h = (const void *)(p + off);

		if (h->size < sizeof(*h) || (h->size & 7) || h->size > len - off)
			return -EINVAL;
		e = perfdata_writer__add(w, h, h->size);
		off += h->size;
	}
	return e ? e : perfdata_writer__round(w);
}

static int snapshot_begin(struct sink *s, uint64_t since, uint64_t until, const void *tail,
			  size_t tail_len, struct sink_snap **out)
{
	struct sink_snap *sn;
	int e;

	*out = NULL;
	if (s->o.kind != SINK_RING)
		return -EOPNOTSUPP;
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return -ENOMEM;
	if (tail_len && !(sn->tail = malloc(tail_len))) {
		free(sn);
		return -ENOMEM;
	}
	if (tail_len)
		memcpy(sn->tail, tail, tail_len);
	sn->tail_len = tail_len;
	e = pring__view(s->pr, &sn->v);
	if (e) {
		free(sn->tail);
		free(sn);
		return e;
	}
	sn->s = s;
	sn->since = since;
	sn->until = until;
	*out = sn;
	return 0;
}

int sink__snapshot_begin(struct sink *s, uint64_t until, const void *tail, size_t tail_len,
			 struct sink_snap **out)
{
	return snapshot_begin(s, 0, until, tail, tail_len, out);
}

int sink_snap__write(struct sink_snap *sn, int fd, bool pipe)
{
	struct perfdata_writer *w = NULL;
	int e;

	/* only what never changes after sink__new is read of the sink here */
	e = sink_new_writer(sn->s, fd, pipe, pipe ? 0 : sn->s->o.zstd_level, &w);
	if (e)
		return e;
	e = sink_copy_view(sn->s, sn->v, w, sn->since, sn->until, &sn->evicted);
	if (!e && sn->tail_len)
		e = add_tail(w, sn->tail, sn->tail_len);
	if (!e)
		e = perfdata_writer__finish(w);
	perfdata_writer__free(w);
	return e;
}

uint64_t sink_snap__evicted(const struct sink_snap *sn)
{
	return sn->evicted;
}

void sink_snap__free(struct sink_snap *sn)
{
	if (!sn)
		return;
	pring_view__free(sn->v);
	free(sn->tail);
	free(sn);
}

static int snapshot(struct sink *s, int fd, bool pipe, uint64_t since, uint64_t until,
		    const void *tail, size_t tail_len)
{
	struct perfdata_writer *w = NULL;
	struct sink_snap *sn;
	int e;

	if (s->o.kind == SINK_RING) {
		e = snapshot_begin(s, since, until, tail, tail_len, &sn);
		if (!e)
			e = sink_snap__write(sn, fd, pipe);
		sink_snap__free(sn);
		return e;
	}
	if (s->o.kind == SINK_PERFDATA)
		return -EOPNOTSUPP;
	e = sink_new_writer(s, fd, pipe, pipe ? 0 : s->o.zstd_level, &w);
	if (e)
		return e;
	e = file_snapshot(s, w);
	if (!e && tail_len)
		e = add_tail(w, tail, tail_len);
	if (!e)
		e = perfdata_writer__finish(w);
	perfdata_writer__free(w);
	return e;
}

int sink__snapshot(struct sink *s, int fd, bool pipe, uint64_t until)
{
	return sink__snapshot_tail(s, fd, pipe, until, NULL, 0);
}

int sink__snapshot_tail(struct sink *s, int fd, bool pipe, uint64_t until, const void *tail,
			size_t tail_len)
{
	return snapshot(s, fd, pipe, 0, until, tail, tail_len);
}

int sink__snapshot_span(struct sink *s, int fd, bool pipe, uint64_t since, uint64_t until)
{
	return snapshot(s, fd, pipe, since, until, NULL, 0);
}

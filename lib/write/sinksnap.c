// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A snapshot (sinks.h): a ring's or a file sink's history as one perf.data,
 * and the caller's records after it, for `session snapshot` and a live
 * reader's start (readers.c).
 */
#include <errno.h>
#include <linux/perf_event.h>

#include "perfdata.h"
#include "sink-int.h"

static int snapshot(struct sink *s, int fd, bool pipe, uint64_t since, uint64_t until,
		    const void *tail, size_t tail_len);

int sink__snapshot(struct sink *s, int fd, bool pipe, uint64_t until)
{
	return sink__snapshot_tail(s, fd, pipe, until, NULL, 0);
}

int sink__snapshot_span(struct sink *s, int fd, bool pipe, uint64_t since, uint64_t until)
{
	return snapshot(s, fd, pipe, since, until, NULL, 0);
}

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

int sink__snapshot_tail(struct sink *s, int fd, bool pipe, uint64_t until, const void *tail,
			size_t tail_len)
{
	return snapshot(s, fd, pipe, 0, until, tail, tail_len);
}

static int snapshot(struct sink *s, int fd, bool pipe, uint64_t since, uint64_t until,
		    const void *tail, size_t tail_len)
{
	struct perfdata_writer *w = NULL;
	int e;

	if (s->o.kind == SINK_PERFDATA)
		return -EOPNOTSUPP;
	e = sink_new_writer(s, fd, pipe, pipe ? 0 : s->o.zstd_level, &w);
	if (e)
		return e;
	if (s->o.kind == SINK_RING)
		e = sink_copy_ring(s, w, since, until);
	else
		e = file_snapshot(s, w);
	if (!e && tail_len)
		e = add_tail(w, tail, tail_len);
	if (!e)
		e = perfdata_writer__finish(w);
	perfdata_writer__free(w);
	return e;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Records out of a sink into another perf.data (sink-int.h): a writer with
 * the sink's events, the kept sideband, the ring in time order.  At the
 * bottom of the sinks: it calls no other file of them.
 */
#include <linux/perf_event.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "perfdata.h"
#include "pring.h"
#include "sink-int.h"

#define SNAP_ROUND_BYTES (4u << 20)

bool sink_rec_ok(const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;

	return len >= sizeof(*h) && !(len & 7) && h->size == len;
}

int sink_new_writer(const struct sink *s, int fd, bool pipe, int zstd, struct perfdata_writer **w)
{
	struct perfdata_writer_opts wo = {
		.resume = s->o.kind == SINK_PERFDATA && s->o.resume && fd == s->o.fd,
		.fd = fd,
		.pipe = pipe,
		.zstd_level = zstd,
		.argc = s->o.kind == SINK_PERFDATA ? s->o.argc : 0,
		.argv = s->o.kind == SINK_PERFDATA ? s->o.argv : NULL,
		.clock_ref_mono_ns = clock_mono_ns(),
		.clock_ref_real_ns = clock_ns(CLOCK_REALTIME),
	};

	return perfdata_writer__new(w, &wo, s->evs, s->nr_evs);
}

struct copy {
	const struct sink *s;
	struct perfdata_writer *w;
	size_t since;
	uint64_t from;          /* samples older are left out (the sideband never) */
};

/*
 * A record a session writes: the kinds of perf records perfmark makes, a
 * sample of one of the sink's events.  What a damaged ring holds besides is
 * left out of snapshots (perf stops at the first record it cannot parse).
 */
static bool rec_known(const struct sink *s, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	uint64_t id;
	size_t i;

	if (!sink_rec_ok(rec, len))
		return false;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_LOST:
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_LOST_SAMPLES:
		return len >= sizeof(*h) + 8 + PERFDATA_SAMPLE_ID_SIZE;
	case PERF_RECORD_SAMPLE:
		if (len < sizeof(*h) + sizeof(id))   /* PERF_SAMPLE_IDENTIFIER comes first */
			return false;
		memcpy(&id, h + 1, sizeof(id));
		for (i = 0; i < s->nr_evs; i++)
			for (uint32_t j = 0; j < s->evs[i].nr_ids; j++)
				if (s->evs[i].ids[j] == id)
					return true;
		return false;
	default:
		return false;
	}
}

static int copy_one(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct copy *c = ctx;
	int e;

	if (!rec_known(c->s, rec, len))       /* a damaged ring: skip what is not a record */
		return 0;
	if (time < c->from && ((const struct perf_event_header *)rec)->type == PERF_RECORD_SAMPLE)
		return 0;
	e = perfdata_writer__add(c->w, rec, len);
	c->since += len;
	if (!e && c->since >= SNAP_ROUND_BYTES) {
		e = perfdata_writer__round(c->w);
		c->since = 0;
	}
	return e;
}

int sink_copy_kept_sideband(struct sink *s, struct perfdata_writer *w)
{
	struct copy c = { .s = s, .w = w };

	return pring__foreach(s->pr, true, copy_one, &c);
}

int sink_copy_view(const struct sink *s, struct pring_view *v, struct perfdata_writer *w,
		   uint64_t since, uint64_t until, uint64_t *evicted)
{
	struct copy c = { .s = s, .w = w, .from = since };

	return pring_view__sorted_span(v, since, until, copy_one, &c, evicted);
}

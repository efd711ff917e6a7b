// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A running session handed over to another output (session.h,
 * session__handover): the persistent-events seed's PERF_EVENT_IOC_DETACH
 * for a whole recording.  The collector and its subscription stay as they
 * are; only where the records go changes, between two drains.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "session-int.h"
#include "sinks.h"
#include "synth.h"
#include "window.h"

/* state synthesized for the new output: straight into it, before any record */
struct resynth {
	struct sink *k;
	uint64_t time;
	uint64_t n;
	int err;
};

static int resynth_one(void *ctx, const void *rec, size_t len)
{
	struct resynth *r = ctx;
	int e = sink__journal(r->k, r->time, rec, len);

	if (!e)
		e = sink__record(r->k, r->time, rec, len);
	if (e && !r->err)
		r->err = e;
	r->n++;
	return 0;   /* one record refused does not stop the rest */
}

/* what the window holds: the new output's, counted as its own (they were the old one's) */
struct held {
	struct sink *k;
	uint64_t samples, markers;
};

/* what the window holds, journaled to the new sink (a ring keeps its records there) */
static int journal_held(void *ctx, uint64_t time, const void *rec, size_t len)
{
	const struct perf_event_header *hd = rec;
	struct held *h = ctx;
	uint64_t id;

	/* every sample starts with its PERF_SAMPLE_IDENTIFIER (SAMPLE_TYPE_BASE, MARKER_SAMPLE_TYPE) */
	if (len >= sizeof(*hd) + sizeof(id) && hd->type == PERF_RECORD_SAMPLE) {
		memcpy(&id, (const char *)rec + sizeof(*hd), sizeof(id));
		if (id == ID_PRINTF || id == ID_UEVENT)
			h->markers++;
		else
			h->samples++;
	}
	return sink__journal(h->k, time, rec, len);
}

static void resynth(struct session *s, struct resynth *r)
{
	struct synth_opts so = {
		.id = 1, .time = r->time, .uid_filter = s->o.uid_filter,
		.data_maps = (s->sample_type & SAMPLE_TYPE_DWARF) != 0,
	};
	size_t i;

	if (s->kernel_ok)
		synth_kernel(&so, resynth_one, r);
	if (s->o.spec.target == RECSPEC_TARGET_ALL) {
		synth_all(&so, resynth_one, r);
		return;
	}
	/* the targets and the children found so far (those gone are skipped) */
	for (i = 0; i < s->tg.pids.cap; i++)
		if (s->tg.pids.slots[i])
			synth_process((pid_t)s->tg.pids.slots[i], &so, resynth_one, r);
}

int session__handover(struct session *s, const struct session_handover *h,
		      struct session_stats *final, int *old_err, char *err, size_t errlen)
{
	struct resynth r = { .k = h->sink, .time = s->t0 };
	struct held held = { .k = h->sink };
	int e;

	err[0] = '\0';
	*old_err = 0;
	if (!s->started || s->stopped || !h->sink) {
		snprintf(err, errlen, "the recording is not running");
		return -EINVAL;
	}
	if (h->pin_dir) {
		e = collector__pin(s->c, h->pin_dir);
		if (e) {
			snprintf(err, errlen, "cannot pin under %s: %s", h->pin_dir, strerror(-e));
			collector__unpin(h->pin_dir);
			return e;
		}
		s->o.pin_dir = h->pin_dir;
	}
	/* the old output: everything up to the moment, then finished */
	*old_err = session__flush(s, h->until);
	if (s->own_sink) {
		e = sink__close(s->sink);
		if (!*old_err)
			*old_err = e;
	}
	session__stats(s, final);
	if (s->own_sink)
		sink__free(s->sink);
	s->own_sink = false;
	/* the new one: what was the old one's is not carried over */
	s->sink = s->o.sink = h->sink;
	s->o.out_fd = -1;
	s->o.pipe = false;
	s->o.argc = 0;
	s->o.argv = NULL;
	s->o.notice = h->notice;
	s->o.notice_ctx = h->notice_ctx;
	s->err = 0;
	memset(&s->stats, 0, sizeof(s->stats));
	resynth(s, &r);
	s->stats.sideband = r.n;
	e = window__foreach(s->ro, journal_held, &held);
	/* staged after `until`: read, but not in the finished file */
	final->samples -= held.samples < final->samples ? held.samples : final->samples;
	final->markers -= held.markers < final->markers ? held.markers : final->markers;
	s->stats.samples = held.samples;
	s->stats.markers = held.markers;
	if (!e)
		e = sink__round(h->sink);
	if (!e)
		e = r.err;
	if (e)
		s->err = e;    /* the new output failed already: the next drain says so */
	return 0;
}

const struct recspec *session__spec(const struct session *s)
{
	return &s->o.spec;
}

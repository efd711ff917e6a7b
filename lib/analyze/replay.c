// SPDX-License-Identifier: LGPL-2.1-or-later
/* A recording in time order, markers decoded: see replay.h. */
#include "replay.h"
#include "filter.h"
#include "perfdata.h"
#include "perfread.h"
#include "reorder.h"
#include "symbolize.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct replay {
	struct perfread *r;
	struct symbolizer *sym;
	struct marker_pairs *pairs;
	struct filter *filter;
	const struct replay_ops *ops;
	void *ctx;
	char err[256];
};

static int fail(struct replay *rp, int err, const char *why)
{
	snprintf(rp->err, sizeof(rp->err), "%s", why && *why ? why : strerror(-err));
	return err;
}

int replay__open(struct replay **out, int fd, const struct perfread_opts *opts)
{
	struct replay *rp = calloc(1, sizeof(*rp));
	int r;

	*out = rp;
	if (!rp)
		return -ENOMEM;
	r = perfread__open_opts(&rp->r, fd, opts);
	if (r < 0)
		return fail(rp, r, rp->r ? perfread__error(rp->r) : NULL);
	r = symbolizer__new(&rp->sym);
	if (r < 0)
		return fail(rp, r, NULL);
	return 0;
}

int replay__set_filter(struct replay *rp, struct filter *f)
{
	uint64_t first = 0, last = 0;
	bool known = perfread__sample_time(rp->r, &first, &last);
	int r = filter__set_span(f, known, first, last, rp->err, sizeof(rp->err));

	if (r < 0)
		return r;
	rp->filter = f;
	return 0;
}

static bool cpumode_kernel(uint16_t misc)
{
	uint16_t m = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL;
}

/* What the filter says of a sample (a marker: is_marker, and no leaf frame to match). */
static enum filter_verdict verdict(struct replay *rp, const struct perfread_sample *s,
				   bool is_marker)
{
	const struct filter *f = rp->filter;
	struct symbolizer_loc loc;
	char buf[SYMBOLIZER_FRAME_NAME_MAX];

	bool task;

	if (!f)
		return FILTER_KEEP;
	task = filter__task(f, s->pid, s->tid, symbolizer__comm(rp->sym, s->tid));
	/* outside --cpu/--time a sample is dropped, hidden or not (as perf does); a
	 * marker of a hidden thread stays hidden: its ranges are not paired */
	if (!filter__where(f, s->cpu, s->time))
		return is_marker && !task ? FILTER_HIDE : FILTER_DROP;
	if (!task)
		return FILTER_HIDE;
	if (is_marker || !filter__wants_leaf(f))
		return FILTER_KEEP;
	symbolizer__lookup(rp->sym, s->pid, s->ip, cpumode_kernel(s->misc), &loc);
	return filter__leaf(f, loc.dso, symbolizer_loc__frame(&loc, buf, sizeof(buf))) ?
	       FILTER_KEEP : FILTER_HIDE;
}

/* JIT code names the addresses of its samples from its moment on. */
static void add_jit(struct replay *rp, uint32_t pid, const struct marker *m)
{
	char buf[PERFMARK_MAX_PAYLOAD + 1];
	size_t len = m->text_len < PERFMARK_MAX_PAYLOAD ? m->text_len : PERFMARK_MAX_PAYLOAD;

	memcpy(buf, m->text, len);
	buf[len] = '\0';
	symbolizer__add_jit(rp->sym, pid, m->code_addr, m->code_size, buf);
}

static int on_marker(struct replay *rp, const struct perfread_sample *s, enum marker_event ev)
{
	struct replay_marker rm = { .pair = { .id = MARKER_NO_RANGE, .parent = MARKER_NO_RANGE } };
	const struct marker *m = &rm.m;
	enum filter_verdict v = verdict(rp, s, true);
	int err;

	if (v == FILTER_HIDE)
		return 0;   /* another thread's: its ranges are not paired either */
	rm.outside = v == FILTER_DROP;
	marker__decode(&rm.m, ev, s->raw, s->raw_size);
	if (m->state == MARKER_OK && m->text) {
		switch (m->type) {
		case PERFMARK_TYPE_RANGE_BEGIN:
			err = marker_pairs__begin(rp->pairs, s->tid, m->text, m->text_len, s->time,
						  &rm.pair);
			if (err < 0)
				return err;
			break;
		case PERFMARK_TYPE_RANGE_END:
			marker_pairs__end(rp->pairs, s->tid, m->text, m->text_len, s->time, &rm.pair);
			break;
		case PERFMARK_TYPE_JIT_CODE:
			add_jit(rp, s->pid, m);
			break;
		default:
			break;
		}
	}
	return rp->ops->marker ? rp->ops->marker(rp->ctx, s, &rm) : 0;
}

static int on_lost(struct replay *rp, const struct perf_event_header *rec)
{
	size_t off = rec->type == PERF_RECORD_LOST ? 16 : 8;   /* after id, or the header */
	uint64_t n;

	if (rec->size < off + 8 || !rp->ops->lost)
		return 0;
	memcpy(&n, (const uint8_t *)rec + off, 8);
	return rp->ops->lost(rp->ctx, rec, n);
}

static int on_record(void *ctx, const struct perf_event_header *rec)
{
	struct replay *rp = ctx;
	const struct replay_ops *ops = rp->ops;
	struct perfread_sample s;
	enum marker_event ev;
	int err;

	switch (rec->type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		err = on_lost(rp, rec);
		break;
	case PERF_RECORD_SAMPLE:
		if (perfread__parse_sample(rp->r, rec, &s) < 0)
			return 0;   /* malformed sample: skipped, as perf does */
		ev = marker__event(s.event ? s.event->name : NULL);
		if (ev != MARKER_NOT) {
			err = on_marker(rp, &s, ev);
			break;
		}
		switch (verdict(rp, &s, false)) {
		case FILTER_KEEP:
			err = ops->sample ? ops->sample(rp->ctx, &s) : 0;
			break;
		case FILTER_HIDE:
			err = ops->hidden ? ops->hidden(rp->ctx, &s) : 0;
			break;
		default:
			err = ops->dropped ? ops->dropped(rp->ctx, &s) : 0;
			break;
		}
		break;
	default:
		symbolizer__record(rp->sym, rec);
		err = ops->sideband ? ops->sideband(rp->ctx, rec) : 0;
		break;
	}
	return err;
}

/* Records into the reorder until the end, a read error, or a callback's error. */
static int feed(struct replay *rp, struct reorder *ro, bool *read_err)
{
	const struct perf_event_header *rec;
	int r;

	while ((r = perfread__next(rp->r, &rec)) > 0) {
		/* FINISHED_ROUND too: reorder sorts per round */
		if (!perfread_for_samples(rec->type) && rec->type != PERFDATA_RECORD_FINISHED_ROUND)
			continue;
		r = reorder__add(ro, rec);
		if (r < 0)
			return r;
	}
	*read_err = r < 0;
	return r;
}

int replay__run(struct replay *rp, const struct replay_ops *ops, void *ctx)
{
	static const struct replay_ops none;
	struct reorder *ro = NULL;
	bool read_err = false;
	int r, fin;

	rp->ops = ops ? ops : &none;
	rp->ctx = ctx;
	if (marker_pairs__new(&rp->pairs) < 0 || reorder__new(&ro, rp->r, on_record, rp) < 0) {
		marker_pairs__free(rp->pairs);
		rp->pairs = NULL;
		return fail(rp, -ENOMEM, "out of memory");
	}
	r = feed(rp, ro, &read_err);
	if (r == 0 || read_err) {
		/* what was read is handed out, also before a read error */
		fin = reorder__finish(ro);
		if (r == 0)
			r = fin;
	}
	if (read_err && strcmp(perfread__error(rp->r), "no error"))
		fail(rp, r, perfread__error(rp->r));
	else if (r < 0)
		fail(rp, r, NULL);
	reorder__free(ro);
	/* the ranges open now are only the run's */
	marker_pairs__free(rp->pairs);
	rp->pairs = NULL;
	return r;
}

const char *replay__error(const struct replay *rp)
{
	return rp && rp->err[0] ? rp->err : "out of memory";
}

struct perfread *replay__reader(const struct replay *rp)
{
	return rp->r;
}

struct symbolizer *replay__symbolizer(const struct replay *rp)
{
	return rp->sym;
}

uint32_t replay__range(const struct replay *rp, uint32_t tid)
{
	return rp->pairs ? marker_pairs__top(rp->pairs, tid) : MARKER_NO_RANGE;
}

void replay__free(struct replay *rp)
{
	if (!rp)
		return;
	marker_pairs__free(rp->pairs);
	symbolizer__free(rp->sym);
	perfread__free(rp->r);
	free(rp);
}

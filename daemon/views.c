// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The JSON a client sees: a named session as `session list` and `session
 * show` print it (the document of sessdef.h with what is live added), the
 * statistics of a recording, and the replies' frame (ok, or one error line).
 */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perfmarkd.h"
#include "proto.h"
#include "sinks.h"

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

/* the sink's usage, beside its definition */
static void sink_usage(struct json_object *o, const struct sink_stats *ks)
{
	if (ks->kind == SINK_RING) {
		add_u64(o, "used", ks->used);
		add_u64(o, "evicted", ks->evicted);
		add_u64(o, "torn", ks->torn);        /* records torn by a crash, dropped */
	} else {
		if (ks->current[0])
			json_object_object_add(o, "current", json_object_new_string(ks->current));
		add_u64(o, "current_bytes", ks->used);
		add_u64(o, "files", ks->files);
	}
	add_u64(o, "sideband_bytes", ks->sideband_bytes);
	add_u64(o, "sideband_dropped", ks->sideband_dropped);   /* found no room, even compacted */
}

const char *dsess_state(const struct dsess *d)
{
	if (d->tk || d->adopting)
		return "starting";   /* its ring or its fast lane's areas taken over (takeover.c) */
	if (d->run.s)
		return "running";
	return d->def.error ? "error" : "stopped";
}

/* requests parked until the session is free (clients.c) */
static uint64_t waiting(const struct dsess *d)
{
	const struct client *c;
	uint64_t n = 0;

	for (c = D.clients; c; c = c->next)
		n += c->parked_on == d;
	return n;
}

struct json_object *session_info(const struct dsess *d)
{
	struct json_object *o = sessdef_to_json(&d->def, true), *sink, *x;
	struct sink_stats ks;

	memset(&ks, 0, sizeof(ks));
	ks.kind = d->def.sink == SESSDEF_SINK_RING ? SINK_RING : SINK_FILE;
	if (d->sink)
		sink__stats(d->sink, &ks);
	json_object_object_add(o, "state", json_object_new_string(dsess_state(d)));
	add_u64(o, "samples", d->run.st.samples);
	add_u64(o, "markers", d->run.st.markers);
	add_u64(o, "lost", d->run.st.lost_samples + d->run.st.lost_markers);
	/* arrived after the window had passed their time (written with it) */
	add_u64(o, "late", d->run.st.late);
	add_u64(o, "late_unordered", d->run.st.late_unordered);
	if (d->def.spec.off_cpu) {   /* off-CPU samples, those summing shorter intervals, intervals lost */
		add_u64(o, "offcpu", d->run.st.offcpu);
		add_u64(o, "offcpu_sums", d->run.st.offcpu_sums);
		add_u64(o, "offcpu_summed", d->run.st.offcpu_summed);
		add_u64(o, "offcpu_lost", d->run.st.offcpu_lost);
		add_u64(o, "offcpu_unseen", d->run.st.offcpu_unseen);
		add_u64(o, "offcpu_nowaker", d->run.st.offcpu_nowaker);
	}
	/* written before their reorder delay (the window was at its cap); its memory now */
	add_u64(o, "overflow", d->run.st.overflow);
	add_u64(o, "window_bytes", d->run.st.window_bytes);
	/* marker times a traced process wrote outside what the recorder saw, clamped */
	add_u64(o, "clamped", d->run.st.clamped);
	/* markers read again after a restart that the ring had kept before the kill: dropped */
	add_u64(o, "repeats", d->run.st.repeats);
	add_u64(o, "fastlane_corrupt", d->run.st.fl_corrupt);   /* areas given up */
	add_u64(o, "fastlane_offers_lost", d->run.st.offers_lost);   /* offers the BPF ring dropped */
	/* markers by lane: the fast lane's, the trap lane's by why (all sessions on the same events) */
	json_object_object_add(o, "lanes", collector_lanes_json(d->run.st.fast_markers,
								d->run.st.trap_markers));
	/* /tmp/perf-PID.map lines of JIT code markers (all sessions on the same events) */
	add_u64(o, "jit_lines", d->run.st.jit_lines);
	add_u64(o, "jit_missed", d->run.st.jit_missed);
	add_u64(o, "jit_refused", d->run.st.jit_refused);
	add_u64(o, "bytes", ks.kind == SINK_RING ? ks.used : ks.bytes);
	add_u64(o, "readers", ks.readers);
	add_u64(o, "snapshots_running", (uint64_t)d->busy);   /* being written (jobs.c) */
	add_u64(o, "requests_waiting", waiting(d));          /* for the session to be free */
	add_u64(o, "reader_lost", ks.reader_lost);
	json_object_object_add(o, "takeover", takeover_json(d));
	json_object_object_add(o, "pin_dir", json_object_new_string(d->pin));
	if ((x = counts__json(d)))    /* --count: totals and rates */
		json_object_object_add(o, "counts", x);
	if (d->run.st.unwind.cap)   /* --call-graph ehframe: tables, their cap, stacks that ended early */
		json_object_object_add(o, "unwind", collector_unwind_stats_json(&d->run.st.unwind));
	if (d->run.st.agg.seconds)  /* --aggregate: stacks written, the samples they stand for, lost */
		json_object_object_add(o, "aggregated", collector_agg_stats_json(&d->run.st.agg));
	if (json_object_object_get_ex(o, "sink", &sink))
		sink_usage(sink, &ks);
	return o;
}

void stats_json(struct json_object *o, const struct session_stats *st)
{
	struct json_object *x = json_object_new_object();

	add_u64(x, "samples", st->samples);
	add_u64(x, "markers", st->markers);
	add_u64(x, "lost_samples", st->lost_samples);
	add_u64(x, "lost_markers", st->lost_markers);
	add_u64(x, "bytes", st->bytes);
	add_u64(x, "raw_bytes", st->raw_bytes);
	if (st->offcpu || st->offcpu_lost) {
		add_u64(x, "offcpu", st->offcpu);
		add_u64(x, "offcpu_sums", st->offcpu_sums);
		add_u64(x, "offcpu_summed", st->offcpu_summed);
		add_u64(x, "offcpu_lost", st->offcpu_lost);
		add_u64(x, "offcpu_unseen", st->offcpu_unseen);
		add_u64(x, "offcpu_nowaker", st->offcpu_nowaker);
	}
	add_u64(x, "late", st->late);
	add_u64(x, "late_unordered", st->late_unordered);
	add_u64(x, "overflow", st->overflow);
	add_u64(x, "clamped", st->clamped);
	add_u64(x, "repeats", st->repeats);
	add_u64(x, "fastlane_corrupt", st->fl_corrupt);
	add_u64(x, "fastlane_offers_lost", st->offers_lost);
	add_u64(x, "jit_lines", st->jit_lines);
	add_u64(x, "jit_missed", st->jit_missed);
	add_u64(x, "jit_refused", st->jit_refused);
	json_object_object_add(x, "lanes", collector_lanes_json(st->fast_markers, st->trap_markers));
	add_u64(x, "sampler_runs", st->sampler_runs);
	add_u64(x, "sampler_ns", st->sampler_ns);
	if (st->unwind.cap)
		json_object_object_add(x, "unwind", collector_unwind_stats_json(&st->unwind));
	if (st->agg.seconds)
		json_object_object_add(x, "aggregated", collector_agg_stats_json(&st->agg));
	json_object_object_add(o, "stats", x);
}

/* --- replies ------------------------------------------------------------------ */

struct json_object *reply_ok(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

struct json_object *reply_err(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(buf));
	return o;
}

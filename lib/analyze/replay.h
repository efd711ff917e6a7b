/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recording replayed in time order: the one way the commands that read
 * a recording (script, and report, flamegraph and export through
 * profile.h) read it.
 *
 * replay__run() reads a perf.data file or stream once, re-sorts its
 * records per FINISHED_ROUND as perf does (reorder.h) and hands each out in
 * time order:
 *
 *   sideband (COMM, MMAP, FORK, ...)  to the symbolizer, then ops->sideband
 *   LOST, LOST_SAMPLES                ops->lost, with the count
 *   a marker (perfmark:printf/uevent) decoded (marker.h); JIT code named to
 *                                     the symbolizer; a range begin or end
 *                                     paired on its thread; then ops->marker
 *   any other sample                  ops->sample
 *
 * so that a sample is symbolized with the maps and JIT code of its moment,
 * and every command sees the same markers and the same ranges.  A sample
 * that does not parse is skipped, as perf does.
 *
 * With a filter (replay__set_filter, filter.h) the replay is where perf's
 * filters apply, once for every command: a sample outside --cpu/--time is
 * not handed out (only to ops->dropped, which counts it nowhere), one of
 * another command, process, thread, file or symbol
 * goes to ops->hidden (counted in totals, not shown); a marker of a thread
 * the filter hides is neither paired nor handed out, one outside --cpu or
 * --time is paired and handed out marked outside.
 *
 * Memory: about two rounds of records (reorder.h), the symbolizer's maps,
 * and the ranges open at once (marker.h); never the whole input.
 */
#ifndef PERFMARK_REPLAY_H
#define PERFMARK_REPLAY_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "marker.h"

struct filter;
struct perfread;
struct perfread_opts;
struct perfread_sample;
struct symbolizer;
struct replay;

struct replay_marker {
	struct marker m;
	/* a range begin or end: its pairing (marker.h); pair.id MARKER_NO_RANGE: none */
	struct marker_pair pair;
	bool outside;   /* outside the filter's --cpu or --time (its range still pairs) */
};

/* Each may be NULL; a negative return stops the replay with that error. */
struct replay_ops {
	int (*sample)(void *ctx, const struct perfread_sample *s);
	int (*marker)(void *ctx, const struct perfread_sample *s, const struct replay_marker *rm);
	int (*lost)(void *ctx, const struct perf_event_header *rec, uint64_t lost);
	int (*sideband)(void *ctx, const struct perf_event_header *rec);
	/* a sample the filter hides (FILTER_HIDE) */
	int (*hidden)(void *ctx, const struct perfread_sample *s);
	/* a sample outside --cpu or --time (FILTER_DROP): counted nowhere, but its event exists */
	int (*dropped)(void *ctx, const struct perfread_sample *s);
};

/*
 * Open the recording on fd (a regular file or a pipe), opts NULL for the
 * reader's default bounds.  On failure, *out is set when memory allowed,
 * for replay__error(); free it either way.
 */
int replay__open(struct replay **out, int fd, const struct perfread_opts *opts);
/*
 * Read to the end.  0 or a negative errno: a callback's, or a read error,
 * after what was read before it was handed out in order.
 */
int replay__run(struct replay *rp, const struct replay_ops *ops, void *ctx);
/*
 * Apply f (kept by the caller, alive until the run ends) from now on;
 * resolves its percentages of time against the file's header.  0, or
 * -EINVAL when f asks for what this input cannot give (replay__error()).
 */
int replay__set_filter(struct replay *rp, struct filter *f);
/* Why open or run failed, one line. */
const char *replay__error(const struct replay *rp);

struct perfread *replay__reader(const struct replay *rp);
struct symbolizer *replay__symbolizer(const struct replay *rp);
/* During the run: the innermost range open on tid (its pair id), or MARKER_NO_RANGE. */
uint32_t replay__range(const struct replay *rp, uint32_t tid);

void replay__free(struct replay *rp);

#endif

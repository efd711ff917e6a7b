// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The session engine.  See session.h for the life cycle.
 *
 * Records reach the engine from two places: the BPF ringbuf (samples and
 * markers, already in perfmark's wire format, see bpf/perfmark_wire.h) and
 * the perf buffers of one dummy event per CPU that the kernel fills with
 * COMM, MMAP2, FORK and EXIT sideband.  Each record is encoded as a perf
 * record into a staging area, with its time beside it, and journaled to the
 * sink at once.  Each drain sorts the staging area by time and hands to the
 * sink, as one round, what is older than the cutoff (the drain time minus
 * the reorder window, or a request's own moment); the rest waits for the
 * next round.  A late record keeps its time (see session.h).
 *
 * Here: the life cycle (new, start, drains, stop, free) and the counts.
 * Which records are the session's (its targets, its user, the sideband
 * that follows them) is targets.c's; how each is encoded, encode.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "perfmark_wire.h"
#include "offcpu_wire.h"
#include "unwind_wire.h"
#include "offcpu_raw.h"
#include "uevent.h"
#include "collector.h"
#include "perfdata.h"
#include "window.h"
#include "session-int.h"
#include "grow.h"
#include "sinks.h"
#include "synth.h"

uint64_t session__clock(void)
{
	return clock_mono_ns();
}

/* --- life cycle ------------------------------------------------------------ */

/*
 * The reorder window's cap (window.h): WINDOW_MAX_BYTES, or
 * $PERFMARK_REORDER_MAX_MB (4 to 65536; anything else is ignored).
 */
static uint64_t reorder_cap(void)
{
	const char *v = getenv("PERFMARK_REORDER_MAX_MB");
	char *end;
	unsigned long mb;

	if (!v || !*v)
		return WINDOW_MAX_BYTES;
	errno = 0;
	mb = strtoul(v, &end, 10);
	if (errno || *end || mb < 4 || mb > 65536)
		return WINDOW_MAX_BYTES;
	return (uint64_t)mb << 20;
}

static struct session *session_alloc(const struct session_opts *opts)
{
	struct session *s = calloc(1, sizeof(*s));
	size_t i;

	if (!s)
		return NULL;
	s->o = *opts;
	s->kernel_ok = opts->uid_filter == (uint32_t)-1 || synth_kernel_visible_to_users();
	s->t0 = session__clock();
	s->sample_type = SAMPLE_TYPE_BASE | (opts->spec.call_graph != RECSPEC_CG_NONE ? PERF_SAMPLE_CALLCHAIN : 0);
	if (opts->spec.call_graph == RECSPEC_CG_DWARF)
		s->sample_type |= SAMPLE_TYPE_DWARF;
	s->off_sample_type = OFFCPU_SAMPLE_TYPE | (s->sample_type & SAMPLE_TYPE_DWARF);
	s->chain_buf = malloc(sizeof(uint64_t) * (2 * PM_MAX_STACK + 4) + PM_MAX_PAYLOAD + 64);
	if (!s->chain_buf || window__new(&s->ro)) {
		free(s->chain_buf);
		free(s);
		return NULL;
	}
	window__set_cap(s->ro, reorder_cap());
	for (i = 0; i < opts->spec.nr_pids; i++)
		pidset_add(&s->tg.pids, opts->spec.pids[i]);
	s->sub.on_ring = targets_on_ring;
	s->sub.on_sideband = targets_on_sideband;
	s->sub.ctx = s;
	s->sub.all = opts->spec.target == RECSPEC_TARGET_ALL;
	s->sub.uid = opts->uid_filter;
	return s;
}

/* Join the collector: filter, pids, resolved events, pins. */
static int session_join(struct session *s, char *err, size_t errlen)
{
	const struct evspec *ev;
	size_t i;
	int e;

	ev = collector__events(s->c, &s->nr_ev);
	memcpy(s->ev, ev, s->nr_ev * sizeof(s->ev[0]));
	/* --aggregate: a sample's period is the sum of those it stands for, never fixed */
	s->fixed_period = !s->o.spec.aggregate && session_fixed_period(s);
	if (s->fixed_period)
		s->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
	e = collector__subscribe(s->c, &s->sub);
	if (e) {
		snprintf(err, errlen, "too many sessions on the same events");
		return e;
	}
	for (i = 0; i < s->o.spec.nr_pids; i++)
		collector__add_pid(s->c, s->o.spec.pids[i]);
	return 0;
}

int session__new(struct session **out, const struct session_opts *opts,
		 char *err, size_t errlen)
{
	struct session *s;
	uint64_t ls, lm;
	int e;

	*out = NULL;
	err[0] = '\0';
	e = tpconfig_allowed(&opts->spec, opts->uid_filter, err, errlen);
	s = e ? NULL : session_alloc(opts);
	if (!s)
		return e ? e : -ENOMEM;
	e = collector__get(&s->c, &opts->spec, opts->pin_dir || opts->pinnable, opts->notice,
			   opts->notice_ctx, err, errlen);
	if (e)
		goto fail;
	/* drops counted before this session existed are not its own */
	collector__lost(s->c, &ls, &lm);
	s->lost_samples_seen = ls;
	s->lost_markers_seen = lm;
	/* nor its counts: a collector kept from an earlier recording, or shared */
	collector__marker_stats(s->c, &s->ms0);
	collector__sampler_stats(s->c, &s->runs0, &s->run_ns0);
	e = session_join(s, err, errlen);
	if (e)
		goto fail;
	if (opts->pin_dir) {
		e = collector__pin(s->c, opts->pin_dir);
		if (e) {
			snprintf(err, errlen, "cannot pin under %s: %s", opts->pin_dir, strerror(-e));
			collector__unpin(opts->pin_dir);
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	session__free(s);
	return e ? e : -EINVAL;
}

int session__adopt(struct session **out, const struct session_opts *opts,
		   char *err, size_t errlen)
{
	struct session *s;
	int e;

	*out = NULL;
	err[0] = '\0';
	if (!opts->pin_dir || !opts->spec.nr_events)
		return -EINVAL;
	s = session_alloc(opts);
	if (!s)
		return -ENOMEM;
	s->t0 = 0;          /* synthesized state goes before the backlog */
	s->redo_watch = true;
	e = collector__adopt(&s->c, &opts->spec, opts->pin_dir, err, errlen);
	if (e)
		goto fail;
	/* what was dropped while nobody drained is reported (lost_*_seen = 0) */
	e = session_join(s, err, errlen);
	if (e)
		goto fail;
	/* the descendants the pinned programs followed, before and while no daemon ran */
	targets_adopt(s);
	*out = s;
	return 0;
fail:
	session__free(s);
	return e ? e : -EINVAL;
}

bool session__adopt_step(struct session *s, unsigned budget)
{
	return s->c && collector__adopt_step(s->c, budget);
}

bool session__adopting(const struct session *s, struct session_adopt_stats *st)
{
	struct collector_adopt_stats cs = { 0 };
	bool on = s->c && collector__adopting(s->c, &cs);

	if (st)
		*st = (struct session_adopt_stats){ .kept = cs.kept, .rejoined = cs.rejoined,
						    .procs = cs.procs, .steps = cs.steps,
						    .redo = cs.redo };
	return on;
}

int session__unpin(const char *dir)
{
	return collector__unpin(dir);
}

int session__add_cmd(struct session *s, pid_t pid)
{
	s->held_cmd = pid;
	return targets_add(s, pid, true);
}

int session__watch_file(struct session *s, const char *path)
{
	return collector__watch_file(s->c, path);
}

int session__watch_fd(struct session *s, int fd, const char *name)
{
	return collector__watch_fd(s->c, fd, name);
}

int session__add_pid(struct session *s, pid_t pid)
{
	return targets_add(s, pid, false);
}

void session__set_output(struct session *s, int fd, bool pipe)
{
	s->o.out_fd = fd;
	s->o.pipe = pipe;
}

void session__set_sink(struct session *s, struct sink *k)
{
	s->o.sink = k;
}

/* No sink given: a perf.data on out_fd, as `perfmark record` writes it. */
static int build_sink(struct session *s)
{
	struct perfdata_event evs[SESSION_MAX_EVENTS];
	uint64_t ids[SESSION_MAX_EVENTS];
	struct sink_opts ko = {
		.kind = SINK_PERFDATA,
		.events = evs,
		.fd = s->o.out_fd,
		.pipe = s->o.pipe,
		.zstd_level = s->o.spec.zstd_level,
		.argc = s->o.argc,
		.argv = s->o.argv,
	};
	int e;

	ko.nr_events = session__events(s, evs, ids, SESSION_MAX_EVENTS);
	e = sink__new(&s->sink, &ko, NULL);
	s->own_sink = !e;
	return e;
}

int session__start(struct session *s, char *err, size_t errlen)
{
	struct synth_opts so = {
		.id = 1, .time = s->t0, .uid_filter = s->o.uid_filter,
		.data_maps = (s->sample_type & SAMPLE_TYPE_DWARF) != 0,   /* as perf's mmap_data */
	};
	struct synth_opts held = so;
	size_t i;
	int e;

	err[0] = '\0';
	s->sink = s->o.sink;
	e = s->sink ? 0 : build_sink(s);
	if (e) {
		snprintf(err, errlen, "cannot write the output header: %s", strerror(-e));
		return e;
	}
	if (s->kernel_ok)
		synth_kernel(&so, on_synth, s);
	if (s->o.spec.target == RECSPEC_TARGET_ALL) {
		synth_all(&so, on_synth, s);
	} else {
		/* the targets, and (taken over) their descendants found in the pinned target set */
		held.comm_only = true;   /* its exec writes its maps */
		for (i = 0; i < s->tg.pids.cap; i++)
			if (s->tg.pids.slots[i])
				synth_process((pid_t)s->tg.pids.slots[i],
					      (pid_t)s->tg.pids.slots[i] == s->held_cmd ? &held : &so,
					      on_synth, s);
	}
	s->started = true;
	collector__activate(s->c, &s->sub, true);
	return 0;
}

void session__boost(void)
{
	collector__boost_thread();
}

int session__fds(const struct session *s, int *fds, size_t max)
{
	return collector__fds(s->c, fds, max);
}

/* The staged records up to cutoff go to the sink in time order, as one round. */
static int flush_staged(struct session *s, uint64_t cutoff)
{
	int e = window__flush(s->ro, cutoff, session_out_record, s);

	return e < 0 ? e : sink__round(s->sink);
}

/*
 * force: flush to cutoff whatever; else a drain soon after the last flush
 * (the fast lane asked for it: a busy thread's batch is waiting) only
 * stages what was read.  Every flush goes over all the records held, so
 * flushing at every batch would sort and move the same records again and
 * again; staging them at once keeps the fast lane's buffers small.
 */
static int drain(struct session *s, uint64_t cutoff, uint64_t now, bool force, int batches)
{
	uint64_t ls, lm, lost_time;
	int e;

	if (s->err)
		return s->err;
	if (!s->started)
		return 0;
	/*
	 * Fast-lane areas still being taken back hold older records: nothing
	 * is read meanwhile (the rings hold it, as while no daemon ran), so
	 * it comes in time order and no drain sorts a growing window again.
	 */
	if (!force && collector__adopting(s->c, NULL))
		return 0;
	/* --aggregate: a forced drain ends the interval (the stop's takes the last counts) */
	if (force)
		collector__agg_flush(s->c);
	/* a forced drain takes everything there was; else a batch (the loop comes back for more) */
	for (int i = 1; collector__consume(s->c) && force && i < batches; i++)
		;
	/* after a restart: what the sink kept before is asked about until nothing read may repeat it */
	if (s->redo_watch) {
		struct collector_adopt_stats cs = { 0 };

		collector__adopting(s->c, &cs);
		if (!cs.redo) {
			s->redo_watch = false;
			if (s->sink)
				sink__forget_before(s->sink);
		}
	}
	/* stack copies waiting for a table being built: a forced drain takes them as they are */
	if (force)
		collector__settle(s->c, cutoff, cutoff == UINT64_MAX);
	targets_recheck_held(s);
	collector__lost(s->c, &ls, &lm);
	/* drops happened since the last drain: after what is already written */
	lost_time = now - SESSION_REORDER_NS;
	if (lost_time < window__flushed(s->ro))
		lost_time = window__flushed(s->ro);
	if (ls > s->lost_samples_seen) {
		stage_lost(s, ls - s->lost_samples_seen, 1, lost_time);
		s->lost_samples_seen = ls;
	}
	if (lm > s->lost_markers_seen && s->o.spec.markers) {
		stage_lost(s, lm - s->lost_markers_seen, ID_UEVENT, lost_time);
		s->lost_markers_seen = lm;
	}
	if (!force && !s->err && now - s->flushed_at < SESSION_DRAIN_MS * 1000000ull / 2)
		return 0;
	s->flushed_at = now;
	/* else the window goes no further than the oldest copy waiting: in order when it comes */
	if (!force && collector__held_since(s->c) <= cutoff)
		cutoff = collector__held_since(s->c) - 1;
	e = s->err ? s->err : flush_staged(s, cutoff);
	if (e)
		s->err = e;
	return e;
}

int session__drain(struct session *s)
{
	uint64_t now = session__clock();

	return drain(s, now - SESSION_REORDER_NS, now, false, 1);
}

int session__flush(struct session *s, uint64_t until)
{
	return drain(s, until, session__clock(), true, COLLECTOR_ALL_BATCHES);
}

uint64_t session__activity(const struct session *s)
{
	return s->c ? collector__activity(s->c) : 0;
}

bool session__consume(struct session *s)
{
	if (s->err || !s->started || s->stopped)
		return false;
	return collector__consume(s->c);
}

int session__flush_read(struct session *s, uint64_t until)
{
	return drain(s, until, session__clock(), true, 1);
}

int session__stop(struct session *s)
{
	int e;

	if (s->stopped)
		return s->err;
	e = drain(s, UINT64_MAX, session__clock() + SESSION_REORDER_NS, true, COLLECTOR_ALL_BATCHES);
	collector__activate(s->c, &s->sub, false);
	s->stopped = true;
	if (s->own_sink) {
		int f = sink__close(s->sink);

		if (!e)
			e = f;
	}
	if (e)
		s->err = e;
	return e;
}

void session__stats(const struct session *s, struct session_stats *st)
{
	struct sink_stats ks = { 0 };
	struct window_stats rs;

	*st = s->stats;
	window__stats(s->ro, &rs);
	st->late = rs.late;
	st->late_unordered = rs.late_unordered;
	st->overflow = rs.overflow;
	st->window_bytes = rs.bytes;
	st->lost_samples = s->lost_samples_seen;
	st->lost_markers = s->lost_markers_seen;
	if (s->sink)
		sink__stats(s->sink, &ks);
	st->bytes = ks.bytes;
	st->raw_bytes = ks.raw_bytes;
	if (s->c) {
		struct collector_offcpu_stats os;
		struct collector_marker_stats ms;

		collector__unwind_stats(s->c, &st->unwind);
		collector__offcpu_stats(s->c, &os);
		st->offcpu_lost = os.lost;
		st->offcpu_unseen = os.unseen;
		st->offcpu_nowaker = os.nowaker;
		st->offcpu_bpf = os.samples + os.merged;
		collector__agg_stats(s->c, &st->agg);
		collector__marker_stats(s->c, &ms);
		st->jit_lines = ms.jit_lines - s->ms0.jit_lines;
		st->jit_missed = ms.jit_missed - s->ms0.jit_missed;
		st->jit_refused = ms.jit_refused - s->ms0.jit_refused;
		st->fl_corrupt = ms.fl_corrupt - s->ms0.fl_corrupt;
		st->offers_lost = ms.offers_lost - s->ms0.offers_lost;
		st->fast_markers = ms.fast - s->ms0.fast;
		for (size_t i = 0; i < COLLECTOR_TRAP_WHYS; i++)
			st->trap_markers[i] = ms.trap[i] - s->ms0.trap[i];
		collector__sampler_stats(s->c, &st->sampler_runs, &st->sampler_ns);
		st->sampler_runs -= s->runs0;
		st->sampler_ns -= s->run_ns0;
	}
}

const char *session__event_name(const struct session *s, size_t i)
{
	return i < s->nr_ev ? s->ev[i].name : NULL;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	if (s->c) {
		collector__unsubscribe(s->c, &s->sub);
		collector__put(s->c);
	}
	if (s->own_sink)
		sink__free(s->sink);
	window__free(s->ro);
	targets_free(&s->tg);
	free(s->chain_buf);
	free(s);
}

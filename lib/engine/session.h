/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The session engine: BPF programs on perf events and on libperfmark's
 * probe site, the sideband events, a reorder window, and a perf.data writer.
 * Hosted in-process by `perfmark record` and, many at once, by perfmarkd.
 *
 *   session__new()      load BPF, open (disabled) events; nothing written yet
 *   session__add_pid()  add a target process (PIDS mode), e.g. a CMD child
 *   session__start()    synthesize existing state, write the header, enable
 *   session__drain()    move what the ring holds into the file (one round)
 *   session__stop()     disable, final drain, finish the file
 *
 * The caller drives the loop: poll session__fds() plus its own timer (every
 * SESSION_DRAIN_MS) and call session__drain().
 *
 * Records go to one sink (sinks.h), always with their time: each one as
 * soon as it is read (sink__journal), then in time order (sink__record),
 * each drain a round.  The reorder window holds back what is younger than
 * SESSION_REORDER_NS; session__flush() lets a request have everything up to
 * its own moment.  A record that still arrives after the window has passed
 * its time keeps its true timestamp and is counted (stats.late): it is
 * written in time order within the next round, where perf 6.1 still orders
 * it (perf flushes at each FINISHED_ROUND only what is older than the
 * previous round's maximum); one older than that (stats.late_unordered)
 * perf reports as an "out of order event" and delivers late.
 */
#ifndef PERFMARK_SESSION_H
#define PERFMARK_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "collector.h"
#include "recspec.h"

#define SESSION_DRAIN_MS 100
#define SESSION_REORDER_NS (50ull * 1000 * 1000)
/* attrs a session writes at most: its events, the two markers', offcpu-time */
#define SESSION_MAX_EVENTS (RECSPEC_MAX_EVENTS + 3)

struct session_opts {
	struct recspec spec;       /* what to record (events, rate, targets, ...) */
	uint32_t uid_filter;       /* (uint32_t)-1: any */
	/*
	 * Where records go: sink (not freed; see session__events), or, when
	 * NULL, a perfdata sink made by session__start on out_fd (closed by
	 * session__stop).
	 */
	struct sink *sink;
	int out_fd;                /* perf.data destination (not closed) */
	bool pipe;                 /* pipe mode */
	int argc;                  /* recorded in the CMDLINE feature */
	char *const *argv;
	/*
	 * perfmarkd: pin links and maps under this directory so collection
	 * goes on while the daemon is down (see session__adopt).
	 */
	const char *pin_dir;
	/*
	 * May be pinned later (session__handover with a pin_dir: perfmarkd's
	 * `session keep` of an anonymous recording): its collector loads the
	 * gap sideband's programs as a pinned one does (collector__get).
	 */
	bool pinnable;
	/*
	 * perfmarkd's /metrics: every range begin and end encoded goes here too
	 * (rangehist.h; not freed, drained on the same thread).  NULL: none.
	 */
	struct rangehist *ranges;
	/* notices ("cycles not supported, falling back to cpu-clock") */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
};

struct session_stats {
	uint64_t samples, markers;
	uint64_t lost_samples, lost_markers;
	uint64_t bytes, raw_bytes;
	uint64_t sideband;
	uint64_t late;             /* arrived after the window had passed their time */
	uint64_t late_unordered;   /* ... so late that perf 6.1 cannot order them */
	/* --off-cpu: offcpu-time samples, those that sum short intervals, and the intervals they sum */
	uint64_t offcpu, offcpu_sums, offcpu_summed;
	uint64_t offcpu_lost;      /* intervals the collector (shared) could not keep */
	uint64_t offcpu_unseen;    /* intervals (of the collector) timed from the scheduler's arrival time */
	uint64_t offcpu_nowaker;   /* intervals (of the collector) blocked, their wakeup seen by no program */
	uint64_t offcpu_bpf;       /* intervals the collector's programs wrote or summed (all its sessions') */
	uint64_t overflow;         /* written before their reorder delay: the window was full */
	uint64_t window_bytes;     /* the reorder window's memory now */
	uint64_t clamped;          /* marker times outside what the recorder saw, clamped */
	uint64_t repeats;          /* markers read again after a restart, kept before it: dropped */
	/* /tmp/perf-PID.map lines for JIT code markers, of the collector (shared) */
	uint64_t jit_lines, jit_missed, jit_refused;
	uint64_t fl_corrupt;       /* fast-lane areas given up (of the collector) */
	uint64_t offers_lost;      /* fast-lane offers the BPF ring dropped (of the collector) */
	/* --call-graph ehframe, of the collector (shared): unwind.cap is 0 otherwise */
	struct collector_unwind_stats unwind;
	/* --aggregate, of the collector (shared): all 0 otherwise */
	struct collector_agg_stats agg;
	/* the sampling program's runs and ns (kernel.bpf_stats_enabled), of the collector */
	uint64_t sampler_runs, sampler_ns;
	/* markers by lane, of the collector: fast, and the trap lane's by why */
	uint64_t fast_markers, trap_markers[COLLECTOR_TRAP_WHYS];
};

struct session;
struct sink;
struct rangehist;
struct perfdata_event;

/* err: one line, no "perfmark: " prefix.  Returns 0 or negative errno. */
int session__new(struct session **out, const struct session_opts *opts,
		 char *err, size_t errlen);
int session__add_pid(struct session *s, pid_t pid);
/* a command held before its exec: recorded from the exec on (its children too) */
int session__add_cmd(struct session *s, pid_t pid);
/*
 * The recorder's own user names a file that will run (CMD): markers of a
 * libperfmark linked into it are recorded from its first instruction.
 */
int session__watch_file(struct session *s, const char *path);
/* the same for a file a client passed open for reading (perfmarkd: CMD's executable) */
int session__watch_fd(struct session *s, int fd, const char *name);
/* where session__start() writes (overrides opts.out_fd / opts.pipe, or opts.sink) */
void session__set_output(struct session *s, int fd, bool pipe);
void session__set_sink(struct session *s, struct sink *k);
int session__start(struct session *s, char *err, size_t errlen);
/* The calling thread (the one that drains): collector__boost_thread() */
void session__boost(void);
/* fds that become readable when the ring fills up or the fast lane holds a batch (POLLIN) */
int session__fds(const struct session *s, int *fds, size_t max);
/* returns 0, or the writer's sticky negative errno (EPIPE, ENOSPC, ...) */
int session__drain(struct session *s);
/*
 * Up to the moment: read what the BPF side holds, then write everything
 * with time <= until (a CLOCK_MONOTONIC reading, e.g. when a request came)
 * as one round.  Same returns as session__drain.
 */
int session__flush(struct session *s, uint64_t until);
/*
 * The same in steps, for a caller that serves others in between: each
 * session__consume() reads one batch (journalled, not yet written in
 * order) and says whether more waits; session__flush_read() then writes
 * everything up to until from what was read, plus at most one batch more.
 * COLLECTOR_ALL_BATCHES consumes take what session__flush() would have.
 */
bool session__consume(struct session *s);
/* records read so far (collector__activity): an idle session's stays put */
uint64_t session__activity(const struct session *s);
int session__flush_read(struct session *s, uint64_t until);
/* now on the records' clock (CLOCK_MONOTONIC, ns) */
uint64_t session__clock(void);
int session__stop(struct session *s);
void session__stats(const struct session *s, struct session_stats *st);
/* the event names actually used, after any fallback ("cpu-clock") */
const char *session__event_name(const struct session *s, size_t i);
/*
 * Free.  A pinned session (opts.pin_dir) stays attached through its pins;
 * session__unpin() is what ends it.
 */
void session__free(struct session *s);

/*
 * Take over a session pinned by an earlier daemon under opts->pin_dir: its
 * BPF programs kept running and its ring kept filling.  Nothing is attached
 * again.  opts->spec.events must be the events as resolved at creation
 * (session__event_name).  -ENOENT when nothing is pinned there.
 */
int session__adopt(struct session **out, const struct session_opts *opts,
		   char *err, size_t errlen);
/*
 * An adopted session takes the fast lane's areas back a slice at a time
 * (collector__adopt_step: budget areas or processes a call), so that the
 * daemon's loop answers and pings the watchdog between slices; false once
 * all are in.  Until then a drain reads nothing (records still to come
 * from areas not taken back yet are older; the rings hold what comes), a
 * forced flush reads and writes everything as always.  adopting: still at it, and how far.
 */
struct session_adopt_stats {
	uint64_t kept, rejoined, procs, steps;
	uint64_t redo;     /* markers still to read that the daemon before may have handed on */
};
bool session__adopt_step(struct session *s, unsigned budget);
bool session__adopting(const struct session *s, struct session_adopt_stats *st);
/* Remove the pins under dir (detaches what only the pins kept alive). */
int session__unpin(const char *dir);

/*
 * Hand a running session over to another output (handover.c; perfmarkd
 * keeps a `perfmark record` as a named session).  The collection is not
 * touched: no event, program or ring is opened or closed.  In order:
 *   - pin_dir (when set): the collection is pinned there (it outlives the
 *     process from now on); on failure nothing has changed;
 *   - everything read up to `until` goes to the current output as a last
 *     round, and that output is finished (features written);
 *   - from then on records go to sink (not freed; session__events tells
 *     its events), which first gets the targets' state (COMM, MMAP2, ...
 *     as of now, stamped with the session's start so they come before
 *     anything it will hold) and what the reorder window still holds.
 * Every record read goes to exactly one of the two outputs.  final: the
 * finished output's counts (its samples, markers, bytes); the session
 * counts afresh from here.  *old_err: that output's error (0: complete).
 * Returns 0, or -errno with err when nothing was done.
 */
struct session_handover {
	struct sink *sink;
	uint64_t until;                  /* session__clock() of the request */
	const char *pin_dir;             /* kept by the caller while the session lives */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
};
int session__handover(struct session *s, const struct session_handover *h,
		      struct session_stats *final, int *old_err, char *err, size_t errlen);
/* what the session records, its targets so far included (a CMD, -p) */
const struct recspec *session__spec(const struct session *s);

/*
 * The events as they appear in perf.data (attrs with ids and names), for
 * sinks that write their own files; ids[] receives the id storage and must
 * hold max entries.  Returns the number of events.
 */
size_t session__events(const struct session *s, struct perfdata_event *evs,
		       uint64_t *ids, size_t max);

#endif

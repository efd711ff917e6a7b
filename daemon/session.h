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
 */
#ifndef PERFMARK_SESSION_H
#define PERFMARK_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "evspec.h"

#define SESSION_DRAIN_MS 100
#define SESSION_MAX_PIDS 64

enum session_target {
	SESSION_TARGET_ALL,    /* -a: every process */
	SESSION_TARGET_PIDS,   /* -p / -- CMD: these processes and their children */
};

struct session_opts {
	struct evspec events[EVSPEC_MAX];
	size_t nr_events;          /* 0: "cycles" */
	uint64_t freq;             /* -F; used when period == 0 */
	uint64_t period;           /* -c */
	bool callchain;            /* -g */
	bool markers;              /* collect libperfmark markers */
	enum session_target target;
	pid_t pids[SESSION_MAX_PIDS];
	size_t nr_pids;
	uint32_t uid_filter;       /* (uint32_t)-1: any */
	size_t ringbuf_size;       /* bytes, power of two; 0: default */
	int out_fd;                /* perf.data destination (not closed) */
	bool pipe;                 /* pipe mode */
	int zstd_level;            /* 0: off */
	int argc;                  /* recorded in the CMDLINE feature */
	char *const *argv;
	/*
	 * Where records go.  Without a sink, a perf.data writer on out_fd.
	 * With one, every record (time ordered) goes to sink->record and each
	 * drain ends with sink->round; no writer is made.
	 */
	const struct session_sink_ops *sink;
	void *sink_ctx;
	/*
	 * perfmarkd: pin links and maps under this directory so collection
	 * goes on while the daemon is down (see session__adopt).
	 */
	const char *pin_dir;
	/* notices ("cycles not supported, falling back to cpu-clock") */
	void (*notice)(void *ctx, const char *msg);
	void *notice_ctx;
};

struct session_stats {
	uint64_t samples, markers;
	uint64_t lost_samples, lost_markers;
	uint64_t bytes, raw_bytes;
	uint64_t sideband;
};

struct session;
struct perfdata_event;

struct session_sink_ops {
	int (*record)(void *ctx, const void *rec, size_t len);
	int (*round)(void *ctx);
};

/* err: one line, no "perfmark: " prefix.  Returns 0 or negative errno. */
int session__new(struct session **out, const struct session_opts *opts,
		 char *err, size_t errlen);
int session__add_pid(struct session *s, pid_t pid);
/* a command held before its exec: recorded from the exec on (its children too) */
int session__add_cmd(struct session *s, pid_t pid);
/* where session__start() writes (overrides opts.out_fd / opts.pipe) */
void session__set_output(struct session *s, int fd, bool pipe);
int session__start(struct session *s, char *err, size_t errlen);
/* fds that become readable when the ring fills up (poll for POLLIN) */
int session__fds(const struct session *s, int *fds, size_t max);
/* returns 0, or the writer's sticky negative errno (EPIPE, ENOSPC, ...) */
int session__drain(struct session *s);
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
 * again.  opts->events must be the events as resolved at creation
 * (session__event_name).  -ENOENT when nothing is pinned there.
 */
int session__adopt(struct session **out, const struct session_opts *opts,
		   char *err, size_t errlen);
/* Remove the pins under dir (detaches what only the pins kept alive). */
int session__unpin(const char *dir);

/*
 * The events as they appear in perf.data (attrs with ids and names), for
 * sinks that write their own files; ids[] receives the id storage and must
 * hold max entries.  Returns the number of events.
 */
size_t session__events(const struct session *s, struct perfdata_event *evs,
		       uint64_t *ids, size_t max);

/* Paths of libperfmark.so candidates to attach markers to (for messages). */
size_t session__marker_libs(const struct session *s, const char **paths, size_t max);

#endif

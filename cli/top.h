/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark top: a live view of the hottest functions (and, with markers,
 * of the ranges' rates and p99s), refreshed every interval.
 *
 *   top_model.c  what is shown: samples aggregated per (command, DSO,
 *                function), decayed each interval as perf top does; ranges'
 *                completions and their latest durations
 *   top_src.c    where the samples come from: a pipe-mode perf.data stream
 *                replayed (lib/analyze/replay.h) in a reader thread, written
 *                either by an in-process session's perfdata sink into a pipe,
 *                or by perfmarkd into the pipe `session attach` is given
 *   top_term.c   the terminal: raw mode, the alternate screen, keys, and
 *                the frame drawn (escape_term for every name)
 *   top.c        options and the loop (timers, signals, keys)
 *
 * The reader thread only adds to the model (under its mutex); the loop
 * takes a view of it once per interval, or when a key changes the view.
 */
#ifndef PERFMARK_CLI_TOP_H
#define PERFMARK_CLI_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "table.h"

struct perfread;
struct perfread_sample;
struct perf_event_header;
struct symbolizer;
struct top_model;

#define TOP_NAME_MAX 256          /* bytes of a name kept in a view row */
#define TOP_VIEW_ROWS 512         /* rows a view holds at most */
#define TOP_VIEW_RANGES 16        /* ranges a view holds at most */
#define TOP_MAX_ENTRIES 200000    /* (command, function) rows the model keeps */
#define TOP_MAX_RANGES 256        /* range names the model keeps */
#define TOP_RANGE_KEEP 1024       /* latest durations kept per range, for p50/p99 */

enum top_sort { TOP_SORT_SELF, TOP_SORT_TOTAL };

struct top_model_opts {
	bool children;            /* -g: a function's total counts the samples under it */
	const char *event;        /* the sampling event shown; NULL: the first sampled */
	uint64_t since;           /* samples and ranges older than this are not counted */
};

/* which rows a view shows */
struct top_query {
	enum top_sort sort;
	uint32_t comm, dso;       /* zoom: a string id, or TABLE_NONE for all */
	size_t max_rows;
};

struct top_row {
	uint32_t comm, dso;       /* string ids (for a zoom) */
	double self, total;       /* percent of the view's period */
	char comm_s[64], dso_s[TOP_NAME_MAX], sym_s[TOP_NAME_MAX];
};

struct top_range {
	char name[TOP_NAME_MAX];
	double rate;              /* completions a second, over the last interval; < 0: none ended yet */
	uint64_t count;           /* completions since top started */
	uint64_t p50_ns, p99_ns, max_ns;   /* of the latest TOP_RANGE_KEEP */
	uint32_t kept;
};

struct top_view {
	char event[64];
	char zoom_comm[64], zoom_dso[TOP_NAME_MAX];
	uint64_t samples;         /* in the last interval */
	uint64_t total_samples, lost, refused;
	bool children;
	struct top_row rows[TOP_VIEW_ROWS];
	size_t nr_rows;
	size_t more;              /* rows left out (past max_rows) */
	struct top_range ranges[TOP_VIEW_RANGES];
	size_t nr_ranges;
};

int top_model__new(struct top_model **out, const struct top_model_opts *o);
void top_model__free(struct top_model *m);

/* the reader thread: each returns 0 or -ENOMEM */
int top_model__sample(struct top_model *m, struct symbolizer *sym, const struct perfread *r,
		      const struct perfread_sample *s);
int top_model__range_end(struct top_model *m, const char *name, size_t len, uint64_t time,
			 uint64_t duration);
void top_model__sideband(struct top_model *m, struct symbolizer *sym,
			 const struct perf_event_header *rec);
void top_model__lost(struct top_model *m, uint64_t n);

/* the loop: a view of what the model holds now (nothing changes) */
void top_model__view(struct top_model *m, const struct top_query *q, struct top_view *v);
/* the interval ends: weights decay, the rates' window starts again */
void top_model__tick(struct top_model *m, double secs);

/* --- the source: top_src.c --- */

struct top_src;

/*
 * In-process: a session recording spec (recspec.h) whose records go
 * through a perfdata sink into a pipe; the reader thread replays the pipe
 * into m.  err gets one line.
 */
struct recspec;
int top_src__local(struct top_src **out, const struct recspec *spec, int argc, char **argv,
		   struct top_model *m, char *err, size_t errlen);
/* A named session of perfmarkd: `session attach` into a pipe, replayed the same way. */
int top_src__session(struct top_src **out, const char *name, struct top_model *m,
		     char *err, size_t errlen);
/* fds the loop waits on (the session's ring, the end of the stream) */
size_t top_src__fds(const struct top_src *t, int *fds, size_t max);
/* a drain tick, or one of its fds readable.  0, or 1 when the source ended (why()) */
int top_src__step(struct top_src *t, int ready_fd);
const char *top_src__why(const struct top_src *t);
/* the sampling event in-process (after any fallback), or NULL */
const char *top_src__event(const struct top_src *t);
/* a notice of the recorder ("falling back to cpu-clock"), or NULL */
const char *top_src__notice(const struct top_src *t);
/*
 * Stop recording, end the reader thread.  false when it did not end in
 * time: it is left running and the model must not be freed.
 */
bool top_src__free(struct top_src *t);

/* --- the terminal: top_term.c --- */

struct top_term;

enum top_key { TOP_KEY_NONE, TOP_KEY_QUIT, TOP_KEY_SORT, TOP_KEY_COMM, TOP_KEY_DSO,
	       TOP_KEY_UNZOOM, TOP_KEY_UP, TOP_KEY_DOWN, TOP_KEY_GONE };

/* The terminal on fds 0/1 taken over (raw mode, alternate screen, cursor hidden). */
int top_term__open(struct top_term **out);
/* Give it back as it was; safe to call twice and with NULL. */
void top_term__close(struct top_term *t);
/* rows and columns now */
void top_term__size(struct top_term *t, int *rows, int *cols);
/* The keys read from fd 0 (ready): one at a time into keys, returns how many. */
size_t top_term__keys(struct top_term *t, enum top_key *keys, size_t max);
/* Draw v; cursor is the selected row (clamped).  -EIO when the terminal is gone. */
int top_term__draw(struct top_term *t, const struct top_view *v, const char *status,
		   size_t *cursor);
/* One frame as plain text on f (stdout not a terminal, or --stdio). */
void top_print_frame(FILE *f, const struct top_view *v, const char *status, int width);

#endif

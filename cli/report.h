/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark report, shared by its files:
 *   report.c       options, the command, functions per command (the
 *                  default), --by-marker
 *   report_offcpu.c  --by-marker's off-CPU time: wall, on CPU, blocked,
 *                  runqueue, and the blocking stacks of each range
 *   report_hist.c  rows by perf's sort keys (--sort comm,dso,sym) and call
 *                  graphs (-g caller|callee), text and JSON
 * Every name goes through lib/common/escape.h (term() and jstr() here).
 */
#ifndef PERFMARK_CLI_REPORT_H
#define PERFMARK_CLI_REPORT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "hist.h"

struct report_opts {
	const char *input;
	const char *event;
	const char *range;
	bool by_marker, json;
	enum fnsort sort;           /* the default view's order: self or total */
	const char *keys_arg;       /* --sort KEYS as given, NULL: the default view */
	const char *tp_keys;        /* --sort by a tracepoint's fields (report_tp.c), or NULL */
	char tp_bad[64];            /* its first key that is not one of perf's */
	struct hist_keys keys;
	bool no_children;           /* --no-children: self only, sorted by it */
	bool graph, callee;         /* -g caller|callee */
	double graph_min;           /* -g's threshold, percent */
	double percent_limit;       /* --percent-limit */
	size_t max_rows;            /* --max-rows, 0: all */
	bool relative;              /* --percentage relative */
};

/* What the percentages are of, and what a view shows of a recording */
struct report_view {
	const struct profile *p;
	const struct report_opts *o;
	sample_pred keep;           /* --range, or NULL */
	void *keep_ctx;
	uint64_t extra;             /* added to the total of the samples shown: those the
				     * filters hid (--percentage absolute) */
	uint64_t whole;             /* the period percentages are of (each view sets it) */
	bool children;              /* the recording has stacks and --no-children was not given */
};

double report_pct(uint64_t part, uint64_t whole);
/* A name on the terminal, and padded to width columns (< 0: to the left) */
void report_term(const char *s);
void report_term_pad(const char *s, int width);
/* A name in the JSON, and a percentage with the two decimals the text shows */
struct json_object *report_jstr(const char *s);
struct json_object *report_jpct(double v);
/* --by-marker with off-CPU time (report_offcpu.c): the table and stacks, a range's JSON */
void report_text_offcpu(const struct profile *p, const struct rangestats *rs, const char *only);
void report_json_offcpu(const struct profile *p, const struct rangestats *rs,
			const struct rangestat *r, struct json_object *o);
/*
 * A range's counts and times into o, under the names --by-marker's JSON
 * gives them (report and diff print the same fields the same way)
 */
void report_json_rangestat(struct json_object *o, const struct rangestat *r);
/* The short name of a frame's file ("libc.so.6"), "[unknown]" when none */
const char *report_frame_dso(const struct profile *p, uint32_t frame);
/* The line saying what the filters hid, when they hid something */
void report_text_hidden(const struct report_view *v);

/* report_hist.c: 0, or 1 after the error line */
int report_keys(const struct report_view *v, struct json_object *doc);
int report_graph(const struct report_view *v, struct json_object *doc);

#endif

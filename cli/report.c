// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark report [-i FILE|-] [-e EVENT] [--by-marker] [--range NAME] [--sort self|total] [--json]
 * perfmark report [-i FILE|-] [-e TRACEPOINT] --sort KEY[,KEY...] [--json]   (report_tp.c)
 *
 * The profile of a recording as text or one JSON document (perfmark(1)):
 * top functions by self and total samples per command, or with --by-marker
 * one row per range name (durations, samples inside, their top functions)
 * and the counters.  Percentages are of the sampling event's period, as
 * perf report weighs them.  A recording of several sampling events is
 * analysed one event at a time (-e; the first by default), and the text
 * names the others.  Every name is written through lib/common/escape.h:
 * escape_term in the text, escape_json_object in the JSON (a recording's
 * names can hold terminal escapes and bytes that are not UTF-8).
 */
#include <stddef.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "analysis.h"
#include "commands.h"
#include "opts.h"
#include "escape.h"
#include "report_tp.h"

#define TEXT_TOP_FUNCTIONS 25   /* per command in text; --json has all */
#define TEXT_TOP_RANGE_FNS 5

struct report_opts {
	const char *input;
	const char *event;
	const char *range;
	bool by_marker, json;
	enum fnsort sort;
	const char *keys;       /* --sort KEY,...: a tracepoint's hits by keys (report_tp.c) */
};

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A name on the terminal */
static void term(const char *s)
{
	escape_term(stdout, s, strlen(s), 0);
}

/* A name in the JSON */
static struct json_object *jstr(const char *s)
{
	return escape_json_object(s, strlen(s));
}

/* A percentage with the two decimals the text shows. */
static struct json_object *jpct(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2f", v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

/* ---- events --------------------------------------------------------------------- */

/* The other sampling events of the recording, and how to see them. */
static void other_events(const struct profile *p)
{
	size_t n, shown = 0;
	const struct profile_event *ev = profile__events(p, &n);

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(ev[i].name, profile__event_name(p)))
			continue;
		fputs(shown++ ? ", " : "# also sampled: ", stdout);
		term(ev[i].name);
		printf(" (%" PRIu64 " samples)", ev[i].samples);
	}
	if (shown)
		printf("; see them with -e NAME\n");
}

static struct json_object *json_events(const struct profile *p)
{
	struct json_object *arr = json_object_new_array();
	size_t n;
	const struct profile_event *ev = profile__events(p, &n);

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", jstr(ev[i].name));
		json_object_object_add(o, "samples", json_object_new_uint64(ev[i].samples));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* ---- functions ------------------------------------------------------------------ */

static void text_functions(const struct profile *p, const struct fnstats *fs, const char *title)
{
	size_t i = 0;

	fputs("# ", stdout);
	term(title);
	printf(": %" PRIu64 " samples of ", fs->total_samples);
	term(profile__event_name(p));
	printf(" (percentages of the period, as perf report weighs samples)\n");
	other_events(p);
	if (profile__lost(p))
		printf("# lost: %" PRIu64 " records the recorder could not keep\n", profile__lost(p));
	while (i < fs->n) {
		uint32_t comm = fs->v[i].comm;
		uint64_t samples = 0, period = 0;
		size_t j, shown = 0;

		for (j = i; j < fs->n && fs->v[j].comm == comm; j++) {
			samples += fs->v[j].self_samples;
			period += fs->v[j].self;
		}
		putchar('\n');
		term(profile__str(p, comm));
		printf(": %" PRIu64 " samples, %.2f%%\n", samples, pct(period, fs->total_period));
		printf("    Self    Total   Samples  Function\n");
		for (; i < j; i++) {
			const struct fnstat *f = &fs->v[i];

			if (shown++ == TEXT_TOP_FUNCTIONS) {
				printf("   (%zu more)\n", j - i);
				i = j;
				break;
			}
			printf(" %6.2f%%  %6.2f%%  %8" PRIu64 "  ", pct(f->self, fs->total_period),
			       pct(f->total, fs->total_period), f->self_samples);
			term(profile__str(p, f->name));
			putchar('\n');
		}
	}
}

static struct json_object *json_function(const struct profile *p, const struct fnstat *f,
					 uint64_t whole)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", jstr(profile__str(p, f->name)));
	json_object_object_add(o, "self_pct", jpct(pct(f->self, whole)));
	json_object_object_add(o, "total_pct", jpct(pct(f->total, whole)));
	json_object_object_add(o, "self_samples", json_object_new_uint64(f->self_samples));
	json_object_object_add(o, "total_samples", json_object_new_uint64(f->total_samples));
	json_object_object_add(o, "self_period", json_object_new_uint64(f->self));
	json_object_object_add(o, "total_period", json_object_new_uint64(f->total));
	return o;
}

static struct json_object *json_commands(const struct profile *p, const struct fnstats *fs)
{
	struct json_object *arr = json_object_new_array(), *cmd = NULL, *fns = NULL;
	uint64_t samples = 0, period = 0;

	for (size_t i = 0; i <= fs->n; i++) {
		if (cmd && (i == fs->n || fs->v[i].comm != fs->v[i - 1].comm)) {
			json_object_object_add(cmd, "samples", json_object_new_uint64(samples));
			json_object_object_add(cmd, "pct", jpct(pct(period, fs->total_period)));
			json_object_object_add(cmd, "functions", fns);
			json_object_array_add(arr, cmd);
			cmd = NULL;
		}
		if (i == fs->n)
			break;
		if (!cmd) {
			cmd = json_object_new_object();
			fns = json_object_new_array();
			samples = period = 0;
			json_object_object_add(cmd, "comm", jstr(profile__str(p, fs->v[i].comm)));
		}
		samples += fs->v[i].self_samples;
		period += fs->v[i].self;
		json_object_array_add(fns, json_function(p, &fs->v[i], fs->total_period));
	}
	return arr;
}

/* ---- ranges and counters ----------------------------------------------------------- */

static void text_ranges(const struct profile *p, const struct rangestats *rs, const char *only)
{
	char b[6][32];

	fputs("# marker ranges: durations, and the ", stdout);
	term(profile__event_name(p));
	fputs(" samples inside them on the same thread\n", stdout);
	printf("# samples: self = the range is the innermost one, total = nested ranges included\n");
	if (profile__lost(p))
		printf("# lost: %" PRIu64 " records the recorder could not keep: ranges may be open "
		       "or missing\n", profile__lost(p));
	putchar('\n');
	printf("%-20s %6s %5s %11s %11s %11s %11s %11s %8s %8s\n", "RANGE", "COUNT", "OPEN",
	       "TOTAL", "MEAN", "P50", "P99", "MAX", "SELF", "TOTAL");
	for (size_t k = 0; k < rs->n; k++) {
		const struct rangestat *r = &rs->v[k];

		if (only && strcmp(only, profile__str(p, r->name)))
			continue;
		escape_term_pad(stdout, profile__str(p, r->name), -20);
		printf(" %6" PRIu64 " %5" PRIu64 " %11s %11s %11s %11s %11s %8" PRIu64 " %8" PRIu64 "\n",
		       r->count, r->open,
		       pm_fmt_ns(r->total_ns, b[0], 32), pm_fmt_ns(r->mean_ns, b[1], 32),
		       pm_fmt_ns(r->p50_ns, b[2], 32), pm_fmt_ns(r->p99_ns, b[3], 32),
		       pm_fmt_ns(r->max_ns, b[4], 32), r->self_samples, r->total_samples);
	}
	for (size_t k = 0; k < rs->n; k++) {
		const struct rangestat *r = &rs->v[k];

		if (only && strcmp(only, profile__str(p, r->name)))
			continue;
		putchar('\n');
		term(profile__str(p, r->name));
		printf(": top functions of its %" PRIu64 " self samples\n", r->self_samples);
		for (size_t i = 0; i < r->nfns && i < TEXT_TOP_RANGE_FNS; i++) {
			printf("  %6.2f%%  %8" PRIu64 "  ", pct(r->fns[i].self, r->self_period),
			       r->fns[i].self_samples);
			term(profile__str(p, r->fns[i].name));
			putchar('\n');
		}
	}
}

static void text_counters(const struct profile *p)
{
	size_t n;
	const struct profile_counter *c = profile__counters(p, &n);

	if (!n)
		return;
	printf("\n%-20s %10s %14s %14s %14s\n", "COUNTER", "COUNT", "MIN", "MAX", "LAST");
	for (size_t i = 0; i < n; i++) {
		escape_term_pad(stdout, profile__str(p, c[i].name), -20);
		printf(" %10" PRIu64 " %14" PRId64 " %14" PRId64 " %14" PRId64 "\n",
		       c[i].count, c[i].min, c[i].max, c[i].last);
	}
}

static struct json_object *json_ranges(const struct profile *p, const struct rangestats *rs,
				       const char *only)
{
	struct json_object *arr = json_object_new_array();

	for (size_t k = 0; k < rs->n; k++) {
		const struct rangestat *r = &rs->v[k];
		struct json_object *o, *fns;

		if (only && strcmp(only, profile__str(p, r->name)))
			continue;
		o = json_object_new_object();
		fns = json_object_new_array();
		json_object_object_add(o, "name", jstr(profile__str(p, r->name)));
#define U(k, v) json_object_object_add(o, k, json_object_new_uint64(v))
		U("count", r->count);
		U("open", r->open);
		U("total_ns", r->total_ns);
		U("mean_ns", r->mean_ns);
		U("min_ns", r->min_ns);
		U("p50_ns", r->p50_ns);
		U("p99_ns", r->p99_ns);
		U("max_ns", r->max_ns);
		U("self_samples", r->self_samples);
		U("total_samples", r->total_samples);
#undef U
		for (size_t i = 0; i < r->nfns; i++) {
			struct json_object *f = json_object_new_object();

			json_object_object_add(f, "name", jstr(profile__str(p, r->fns[i].name)));
			json_object_object_add(f, "self_pct", jpct(pct(r->fns[i].self, r->self_period)));
			json_object_object_add(f, "samples", json_object_new_uint64(r->fns[i].self_samples));
			json_object_array_add(fns, f);
		}
		json_object_object_add(o, "functions", fns);
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *json_counters(const struct profile *p)
{
	struct json_object *arr = json_object_new_array();
	size_t n;
	const struct profile_counter *c = profile__counters(p, &n);

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", jstr(profile__str(p, c[i].name)));
		json_object_object_add(o, "count", json_object_new_uint64(c[i].count));
		json_object_object_add(o, "min", json_object_new_int64(c[i].min));
		json_object_object_add(o, "max", json_object_new_int64(c[i].max));
		json_object_object_add(o, "last", json_object_new_int64(c[i].last));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* ---- command ----------------------------------------------------------------------- */

static int set_sort(void *ctx, const struct opt *opt, const char *arg)
{
	struct report_opts *o = ctx;

	if (!strcmp(arg, "self"))
		o->sort = FNSORT_SELF;
	else if (!strcmp(arg, "total"))
		o->sort = FNSORT_TOTAL;
	else
		o->keys = arg;          /* comm, pid, tid, cpu, fields: checked against the recording */
	return 0;
}

static const struct opt report_table[] = {
	OPT_INPUT(struct report_opts, input),
	OPT_EVENT(struct report_opts, event),
	{ .name = "by-marker",
	  .help = "per marker range: count, durations (total, mean, p50, "
	    "p99, max) and the functions sampled inside it",
	  .def = "functions by samples", .set = opt_set_true,
	  .off = offsetof(struct report_opts, by_marker) },
	{ .name = "range", .arg = "NAME",
	  .help = "only this range (its samples, or its row with --by-marker)", .def = "every range",
	  .set = opt_set_str, .off = offsetof(struct report_opts, range) },
	{ .name = "sort", .arg = "self|total|KEY,...",
	  .help = "order functions by their own samples or with callees; or count a tracepoint's "
	    "hits by KEYs: comm, pid, tid, cpu, its fields (-e picks the tracepoint)",
	  .def = "self", .set = set_sort },
	{ .name = "json", .help = "the same as one JSON document", .set = opt_set_true,
	  .off = offsetof(struct report_opts, json) },
	{ 0 },
};

const struct opts_cmd report_cmd = {
	.name = "report",
	.brief = "functions by samples, or durations per marker range",
	.about = "Summarise a recording: the functions sampled, or per marker range.",
	.in_order = true,
	.tables = { report_table },
};

/* 0: go on; 1: --help printed; -1 after the error line */
static int parse_args(int argc, char **argv, struct report_opts *o)
{
	void *ctx[] = { o };
	int e;

	o->input = "perf.data";
	e = opts_parse(&report_cmd, ctx, argc, argv);
	if (e)
		return e == OPTS_HELP ? 1 : -1;
	if (optind < argc)
		return -pm_err("unexpected argument '%s'", argv[optind]);
	return 0;
}

static int report_functions(const struct profile *p, const struct report_opts *o,
			    struct json_object *doc)
{
	struct range_pred_ctx rc = { 0 };
	struct weights w;
	struct fnstats fs;
	char title[300];
	uint32_t id;
	int r;

	if (o->range && pm_range_id(p, o->input, o->range, &id))
		return 1;
	if (o->range && range_pred__init(&rc, p, id) < 0)
		return pm_err("out of memory");
	r = weights__build(&w, p, o->range ? aggregate__in_range : NULL, &rc);
	range_pred__free(&rc);
	if (r < 0)
		return pm_err("out of memory");
	if (fnstats__build(&fs, p, &w, true) < 0) {
		weights__free(&w);
		return pm_err("out of memory");
	}
	fnstats__sort(&fs, p, o->sort);
	if (doc) {
		json_object_object_add(doc, "samples", json_object_new_uint64(fs.total_samples));
		json_object_object_add(doc, "period", json_object_new_uint64(fs.total_period));
		json_object_object_add(doc, "commands", json_commands(p, &fs));
	} else {
		snprintf(title, sizeof(title), "%s%s%s, sorted by %s",
			 o->range ? "inside range " : "all samples", o->range ? o->range : "", "",
			 o->sort == FNSORT_SELF ? "self" : "total");
		text_functions(p, &fs, title);
	}
	fnstats__free(&fs);
	weights__free(&w);
	return 0;
}

static int report_markers(const struct profile *p, const struct report_opts *o,
			  struct json_object *doc)
{
	struct rangestats rs;
	size_t nr;
	uint32_t id;

	profile__ranges(p, &nr);
	if (!nr)
		return pm_err("%s: no marker ranges in this recording (ranges come from "
			      "perfmark_range_begin/end)", pm_input_name(o->input));
	if (o->range && pm_range_id(p, o->input, o->range, &id))
		return 1;
	if (rangestats__build(&rs, p) < 0)
		return pm_err("out of memory");
	if (doc) {
		json_object_object_add(doc, "ranges", json_ranges(p, &rs, o->range));
		json_object_object_add(doc, "counters", json_counters(p));
	} else {
		text_ranges(p, &rs, o->range);
		text_counters(p);
	}
	rangestats__free(&rs);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct profile_opts po = { 0 };
	struct profile *p = NULL;
	struct json_object *doc = NULL;
	int r;

	r = parse_args(argc, argv, &o);
	if (r)
		return r > 0 ? 0 : 1;
	if (o.keys)
		return report_tp(o.input, o.event, o.keys, o.json);
	po.event = o.event;
	if (pm_load(o.input, &po, &p))
		return 1;
	if (o.json) {
		doc = json_object_new_object();
		json_object_object_add(doc, "input", jstr(o.input));
		json_object_object_add(doc, "event", jstr(profile__event_name(p)));
		json_object_object_add(doc, "events", json_events(p));
		json_object_object_add(doc, "sort",
				       json_object_new_string(o.sort == FNSORT_SELF ? "self" : "total"));
		json_object_object_add(doc, "range", o.range ? jstr(o.range) : NULL);
		json_object_object_add(doc, "lost", json_object_new_uint64(profile__lost(p)));
	}
	r = o.by_marker ? report_markers(p, &o, doc) : report_functions(p, &o, doc);
	if (!r && doc)
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	profile__free(p);
	if (!r)
		r = pm_output_close(stdout, NULL);
	return r;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark report [-i FILE|-] [-e EVENT] [--by-marker] [--range NAME]
 *                 [--sort self|total|KEY,...] [-g caller|callee[,MIN]] [--no-children]
 *                 [--percent-limit PCT] [--max-rows N] [--percentage relative|absolute]
 *                 [perf's filters: --comm --pid --tid --dso --sym --cpu --time] [--json]
 * perfmark report [-i FILE|-] [-e TRACEPOINT] --sort KEY[,KEY...] [--json]   (report_tp.c)
 *
 * The profile of a recording as text or one JSON document (perfmark(1)):
 * functions by self and total samples per command, with the file each is
 * in; rows by perf's sort keys (--sort comm,dso,sym: report_hist.c); a call
 * graph (-g: report_hist.c); or with --by-marker one row per range name
 * (durations, samples inside, their top functions) and the counters, and
 * with off-CPU time in the recording, where each range's wall time went (on
 * CPU, blocked, waiting for a CPU) and the stacks it blocked in most.
 * Percentages are of the sampling event's period, as perf report weighs
 * them, and of every sample the filters hid too unless --percentage
 * relative (perf report's default, absolute).  A recording of several
 * sampling events is analysed one event at a time (-e; the first by
 * default), and the text names the others.  No row is left out unless
 * --percent-limit or --max-rows asks, and then a line says how many.
 * Every name is written through lib/common/escape.h: escape_term in the
 * text, escape_json_object in the JSON (a recording's names can hold
 * terminal escapes and bytes that are not UTF-8).
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "analysis.h"
#include "commands.h"
#include "filteropts.h"
#include "opts.h"
#include "escape.h"
#include "report.h"
#include "symbolize.h"
#include "report_tp.h"

#define TEXT_TOP_RANGE_FNS 5    /* per range with --by-marker, unless --max-rows */

double report_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void report_term(const char *s)
{
	escape_term(stdout, s, strlen(s), 0);
}

void report_term_pad(const char *s, int width)
{
	escape_term_pad(stdout, s, width);
}

struct json_object *report_jstr(const char *s)
{
	return escape_json_object(s, strlen(s));
}

struct json_object *report_jpct(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2f", v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

const char *report_frame_dso(const struct profile *p, uint32_t frame)
{
	size_t nf, nm;
	const struct profile_frame *fv = profile__frames(p, &nf);
	const struct profile_mapping *mv = profile__mappings(p, &nm);

	if (frame == PROFILE_NONE || fv[frame].mapping == PROFILE_NONE)
		return "[unknown]";
	return symbolizer_dso_short(profile__str(p, mv[fv[frame].mapping].file));
}

void report_text_hidden(const struct report_view *v)
{
	uint64_t n = profile__hidden_samples(v->p);

	if (!n || v->o->range)
		return;
	printf("# hidden by --comm, --pid, --tid, --dso or --sym: %" PRIu64 " samples; percentages "
	       "are of %s\n", n, v->o->relative ? "those shown (--percentage relative)" :
	       "all of them, as perf report's (--percentage absolute)");
}

static double pct(uint64_t part, uint64_t whole)
{
	return report_pct(part, whole);
}

/* A name on the terminal */
static void term(const char *s)
{
	report_term(s);
}

/* A name in the JSON */
static struct json_object *jstr(const char *s)
{
	return report_jstr(s);
}

static struct json_object *jpct(double v)
{
	return report_jpct(v);
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

/* Rows shown of n, after --percent-limit (on the sort column) and --max-rows */
struct cut {
	size_t shown, under_limit, over_max;
};

static bool under_limit(const struct report_view *v, const struct hist_row *r, bool by_total)
{
	return v->o->percent_limit > 0 &&
	       report_pct(by_total ? r->children : r->self, v->whole) < v->o->percent_limit;
}

static void text_cut(const struct report_view *v, const struct cut *c)
{
	if (c->under_limit)
		printf("   (%zu more under %g%%: --percent-limit)\n", c->under_limit, v->o->percent_limit);
	if (c->over_max)
		printf("   (%zu more: --max-rows %zu)\n", c->over_max, v->o->max_rows);
}

/* The rows of one command: [i, j) */
static void text_command(const struct report_view *v, const struct hist *h, size_t i, size_t j,
			 int dso_w)
{
	const struct profile *p = v->p;
	bool by_total = v->o->sort == FNSORT_TOTAL;
	uint64_t samples = 0, period = 0;
	struct cut c = { 0 };

	for (size_t k = i; k < j; k++) {
		samples += h->v[k].self_samples;
		period += h->v[k].self;
	}
	putchar('\n');
	report_term(profile__str(p, h->v[i].v[HIST_COMM]));
	printf(": %" PRIu64 " samples, %.2f%%\n", samples, report_pct(period, v->whole));
	printf("    Self    Total   Samples  ");
	report_term_pad("Shared Object", -dso_w);
	printf("  Function\n");
	for (; i < j; i++) {
		const struct hist_row *r = &h->v[i];

		if (under_limit(v, r, by_total)) {
			c.under_limit++;
			continue;
		}
		if (v->o->max_rows && c.shown == v->o->max_rows) {
			c.over_max++;
			continue;
		}
		c.shown++;
		printf(" %6.2f%%  %6.2f%%  %8" PRIu64 "  ", report_pct(r->self, v->whole),
		       report_pct(r->children, v->whole), r->self_samples);
		report_term_pad(report_frame_dso(p, r->v[HIST_SYM]), -dso_w);
		fputs("  ", stdout);
		report_term(profile__str(p, profile__frames(p, &(size_t){ 0 })[r->v[HIST_SYM]].name));
		putchar('\n');
	}
	text_cut(v, &c);
}

static void text_functions(const struct report_view *v, const struct hist *h, const char *title)
{
	const struct profile *p = v->p;
	int dso_w = (int)strlen("Shared Object");

	fputs("# ", stdout);
	report_term(title);
	printf(": %" PRIu64 " samples of ", h->total_samples);
	report_term(profile__event_name(p));
	printf(" (percentages of the period, as perf report weighs samples)\n");
	report_text_hidden(v);
	other_events(p);
	if (profile__lost(p))
		printf("# lost: %" PRIu64 " records the recorder could not keep\n", profile__lost(p));
	for (size_t i = 0; i < h->n; i++) {
		const char *d = report_frame_dso(p, h->v[i].v[HIST_SYM]);
		int w = (int)escape_term(NULL, d, strlen(d), 0);

		dso_w = w > dso_w ? w : dso_w;
	}
	for (size_t i = 0, j; i < h->n; i = j) {
		for (j = i; j < h->n && h->v[j].v[HIST_COMM] == h->v[i].v[HIST_COMM]; j++)
			;
		text_command(v, h, i, j, dso_w);
	}
}

static struct json_object *json_function(const struct report_view *v, const struct hist_row *r)
{
	const struct profile *p = v->p;
	struct json_object *o = json_object_new_object();
	size_t nf;
	const struct profile_frame *fv = profile__frames(p, &nf);

	json_object_object_add(o, "name", report_jstr(profile__str(p, fv[r->v[HIST_SYM]].name)));
	json_object_object_add(o, "dso", report_jstr(report_frame_dso(p, r->v[HIST_SYM])));
	json_object_object_add(o, "self_pct", report_jpct(report_pct(r->self, v->whole)));
	json_object_object_add(o, "total_pct", report_jpct(report_pct(r->children, v->whole)));
	json_object_object_add(o, "self_samples", json_object_new_uint64(r->self_samples));
	json_object_object_add(o, "total_samples", json_object_new_uint64(r->children_samples));
	json_object_object_add(o, "self_period", json_object_new_uint64(r->self));
	json_object_object_add(o, "total_period", json_object_new_uint64(r->children));
	return o;
}

static struct json_object *json_commands(const struct report_view *v, const struct hist *h)
{
	struct json_object *arr = json_object_new_array(), *cmd = NULL, *fns = NULL;
	bool by_total = v->o->sort == FNSORT_TOTAL;
	uint64_t samples = 0, period = 0;
	size_t shown = 0;

	for (size_t i = 0; i <= h->n; i++) {
		if (cmd && (i == h->n || h->v[i].v[HIST_COMM] != h->v[i - 1].v[HIST_COMM])) {
			json_object_object_add(cmd, "samples", json_object_new_uint64(samples));
			json_object_object_add(cmd, "pct", report_jpct(report_pct(period, v->whole)));
			json_object_object_add(cmd, "functions", fns);
			json_object_array_add(arr, cmd);
			cmd = NULL;
		}
		if (i == h->n)
			break;
		if (!cmd) {
			cmd = json_object_new_object();
			fns = json_object_new_array();
			samples = period = 0;
			shown = 0;
			json_object_object_add(cmd, "comm",
					       report_jstr(profile__str(v->p, h->v[i].v[HIST_COMM])));
		}
		samples += h->v[i].self_samples;
		period += h->v[i].self;
		if (under_limit(v, &h->v[i], by_total) || (v->o->max_rows && shown == v->o->max_rows))
			continue;
		shown++;
		json_object_array_add(fns, json_function(v, &h->v[i]));
	}
	return arr;
}

/* ---- ranges and counters ----------------------------------------------------------- */

/* top: the functions shown per range */
static void text_ranges(const struct profile *p, const struct rangestats *rs, const char *only,
			size_t top)
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
		for (size_t i = 0; i < r->nfns && i < top; i++) {
			printf("  %6.2f%%  %8" PRIu64 "  ", pct(r->fns[i].self, r->self_period),
			       r->fns[i].self_samples);
			term(profile__str(p, r->fns[i].name));
			putchar('\n');
		}
		if (r->nfns > top)   /* no silent cut */
			printf("   (%zu more: --max-rows N shows N)\n", r->nfns - top);
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

void report_json_rangestat(struct json_object *o, const struct rangestat *r)
{
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
		report_json_rangestat(o, r);
		for (size_t i = 0; i < r->nfns; i++) {
			struct json_object *f = json_object_new_object();

			json_object_object_add(f, "name", jstr(profile__str(p, r->fns[i].name)));
			json_object_object_add(f, "self_pct", jpct(pct(r->fns[i].self, r->self_period)));
			json_object_object_add(f, "samples", json_object_new_uint64(r->fns[i].self_samples));
			json_object_array_add(fns, f);
		}
		json_object_object_add(o, "functions", fns);
		if (rs->offcpu)
			report_json_offcpu(p, rs, r, o);
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
	char bad[64];

	o->keys_arg = o->tp_keys = NULL;
	if (!strcmp(arg, "self")) {
		o->sort = FNSORT_SELF;
	} else if (!strcmp(arg, "total")) {
		o->sort = FNSORT_TOTAL;
	} else if (hist_keys__parse(&o->keys, arg, bad, sizeof(bad)) == 0) {
		o->keys_arg = arg;
	} else if (bad[0] && strspn(bad, "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(bad)) {
		o->tp_keys = arg;   /* a tracepoint's field: -e must name one (parse_args) */
		snprintf(o->tp_bad, sizeof(o->tp_bad), "%s", bad);
	} else {
		return pm_err("bad --sort '%s': '%s' is not a key (self, total, or a list of "
			      "comm, pid, tid, cpu, dso, sym; a tracepoint's fields with -e "
			      "SUBSYS:NAME)", arg, bad);
	}
	return 0;
}

/* perf's -g: "caller", "callee", a threshold in percent, in any order ("graph,0.5,caller") */
static int set_graph(void *ctx, const struct opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	const char *s = arg;

	o->graph = true;
	do {
		size_t len = strcspn(s, ",");
		char tok[32], *end;
		double v;

		snprintf(tok, sizeof(tok), "%.*s", (int)(len < sizeof(tok) ? len : sizeof(tok) - 1), s);
		if (len >= sizeof(tok))
			return pm_err("bad -g '%s'", arg);
		if (!strcmp(tok, "caller") || !strcmp(tok, "callee")) {
			o->callee = !strcmp(tok, "callee");
		} else if (!strcmp(tok, "graph") || !strcmp(tok, "function") || !strcmp(tok, "percent")) {
			/* perf's defaults, the only ones here */
		} else {
			v = strtod(tok, &end);
			if (end == tok || *end || !(v >= 0 && v <= 100))
				return pm_err("bad -g '%s' (caller or callee, and a threshold in "
					      "percent: -g caller,0.5)", arg);
			o->graph_min = v;
		}
		s += len;
	} while (*s++ == ',');
	return 0;
}

static int set_percent_limit(void *ctx, const struct opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || (*end && strcmp(end, "%")) || !(v >= 0 && v <= 100))
		return pm_err("bad --percent-limit '%s' (a percentage, 0 to 100)", arg);
	o->percent_limit = v;
	return 0;
}

static int set_max_rows(void *ctx, const struct opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *end || arg[0] == '-' || errno || v > 1000000000)
		return pm_err("bad --max-rows '%s'", arg);
	o->max_rows = (size_t)v;
	return 0;
}

static int set_percentage(void *ctx, const struct opt *opt, const char *arg)
{
	struct report_opts *o = ctx;

	if (strcmp(arg, "relative") && strcmp(arg, "absolute"))
		return pm_err("bad --percentage '%s' (relative or absolute)", arg);
	o->relative = !strcmp(arg, "relative");
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
	{ .flag = 's', .name = "sort", .arg = "self|total|KEY,...",
	  .help = "order each command's functions by their own samples or with what they "
	    "call; or rows by perf's keys, as perf report --sort: comm, pid, tid, cpu, "
	    "dso, sym (comm,dso,sym); or a tracepoint's hits by comm, pid, tid, cpu and "
	    "its fields (-e picks the tracepoint)", .def = "self", .set = set_sort },
	{ .flag = 'g', .name = "call-graph", .arg = "caller|callee[,MIN]",
	  .help = "the call graph, as perf report -g: from each command down (caller) or from "
	    "each function up (callee), with children and self; paths under MIN percent left out",
	  .def = "caller,0.5 when given", .set = set_graph },
	{ .name = "no-children", .help = "with --sort KEYS: self only, sorted by it (perf "
	    "report --no-children)", .def = "children where the recording has stacks",
	  .set = opt_set_true, .off = offsetof(struct report_opts, no_children) },
	{ .name = "percent-limit", .arg = "PCT",
	  .help = "leave out rows under PCT percent (a line says how many)", .def = "0",
	  .set = set_percent_limit },
	{ .name = "max-rows", .arg = "N",
	  .help = "at most N rows per command, or in all with --sort KEYS, or functions per "
	    "range with --by-marker (a line says how many more)",
	  .def = "every row; 5 functions per range", .set = set_max_rows },
	{ .name = "percentage", .arg = "relative|absolute",
	  .help = "percentages of every sample (absolute, as perf report) or only of those the "
	    "filters kept", .def = "absolute", .set = set_percentage },
	{ .name = "json", .help = "the same as one JSON document", .set = opt_set_true,
	  .off = offsetof(struct report_opts, json) },
	{ 0 },
};

const struct opts_cmd report_cmd = {
	.name = "report",
	.brief = "functions by samples, rows by sort keys, call graphs, or durations per "
		 "marker range",
	.about = "Summarise a recording: the functions sampled, rows by perf's sort keys, "
		 "the call graph, or per marker range.",
	.in_order = true,
	.tables = { report_table, pm_filter_table },
};

/* 0: go on; 1: --help printed; -1 after the error line */
static int parse_args(int argc, char **argv, struct report_opts *o, struct pm_filters *pf)
{
	void *ctx[] = { o, pf };
	int e;

	o->input = "perf.data";
	o->graph_min = 0.5;
	e = opts_parse(&report_cmd, ctx, argc, argv);
	if (e)
		return e == OPTS_HELP ? 1 : -1;
	if (optind < argc)
		return -pm_err("unexpected argument '%s'", argv[optind]);
	if (o->by_marker && (o->graph || o->keys_arg || o->tp_keys))
		return -pm_err("--by-marker takes neither -g nor --sort KEYS");
	if (o->graph && (o->keys_arg || o->tp_keys))
		return -pm_err("-g and --sort KEYS are two views: give one");
	/*
	 * A key that is none of perf's is a tracepoint's field: it needs -e
	 * naming the tracepoint (SUBSYS:NAME), so that a typo fails here,
	 * before the input is opened, and not as a field the recording lacks.
	 */
	if (o->tp_keys && !(o->event && strchr(o->event, ':')))
		return -pm_err("bad --sort '%s': '%s' is not a key (self, total, or a list of comm, "
			       "pid, tid, cpu, dso, sym; a tracepoint's fields with -e SUBSYS:NAME)",
			       o->tp_keys, o->tp_bad);
	if (o->tp_keys && (pf->f || o->range || o->no_children || o->percent_limit > 0 ||
			   o->max_rows || o->relative))
		return -pm_err("--sort by a tracepoint's hits takes only -i, -e and --json");
	return 0;
}

/* Does any sample have a stack (two frames or more)? */
static bool has_stacks(const struct profile *p)
{
	size_t nn;
	const struct profile_node *nodes = profile__nodes(p, &nn);

	/* a node whose parent is a frame, not the command */
	for (size_t i = 1; i < nn; i++)
		if (nodes[i].parent && nodes[nodes[i].parent].parent)
			return true;
	return false;
}

/* The default view: each command's functions, self and total */
static int report_functions(const struct report_view *v, struct json_object *doc)
{
	const struct report_opts *o = v->o;
	struct hist_keys keys = { .k = { HIST_COMM, HIST_SYM }, .n = 2,
				  .has = { [HIST_COMM] = true, [HIST_SYM] = true } };
	struct report_view view = *v;
	struct hist h;
	char title[300];

	if (hist__build(&h, v->p, &keys, v->keep, v->keep_ctx) < 0)
		return pm_err("out of memory");
	hist__sort(&h, v->p, &keys, o->sort == FNSORT_TOTAL, true);
	view.whole = h.total_period + v->extra;
	if (doc) {
		json_object_object_add(doc, "samples", json_object_new_uint64(h.total_samples));
		json_object_object_add(doc, "period", json_object_new_uint64(h.total_period));
		json_object_object_add(doc, "commands", json_commands(&view, &h));
	} else {
		snprintf(title, sizeof(title), "%s%s, sorted by %s",
			 o->range ? "inside range " : "all samples", o->range ? o->range : "",
			 o->sort == FNSORT_SELF ? "self" : "total");
		text_functions(&view, &h, title);
	}
	hist__free(&h);
	return 0;
}

/* The view of every kind but --by-marker: --range's selection and what percentages are of */
static int report_samples(const struct profile *p, const struct report_opts *o,
			  struct json_object *doc)
{
	struct range_pred_ctx rc = { 0 };
	struct report_view v = { .p = p, .o = o };
	uint32_t id;
	int r;

	if (o->range && pm_range_id(p, o->input, o->range, &id))
		return 1;
	if (o->range && range_pred__init(&rc, p, id) < 0)
		return pm_err("out of memory");
	if (o->range) {
		v.keep = aggregate__in_range;
		v.keep_ctx = &rc;
	}
	/* added to the samples shown: those the filters hid (inside a range they are not known) */
	v.extra = o->relative || o->range ? 0 : profile__hidden_period(p);
	v.children = has_stacks(p) && !o->no_children;
	if (doc) {
		json_object_object_add(doc, "hidden_samples",
				       json_object_new_uint64(profile__hidden_samples(p)));
		json_object_object_add(doc, "percentage",
				       json_object_new_string(o->relative ? "relative" : "absolute"));
	}
	if (o->graph)
		r = report_graph(&v, doc);
	else if (o->keys_arg)
		r = report_keys(&v, doc);
	else
		r = report_functions(&v, doc);
	range_pred__free(&rc);
	return r;
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
		text_ranges(p, &rs, o->range, o->max_rows ? o->max_rows : TEXT_TOP_RANGE_FNS);
		if (rs.offcpu)
			report_text_offcpu(p, &rs, o->range);
		text_counters(p);
	}
	rangestats__free(&rs);
	return 0;
}

static const char *sort_name(const struct report_opts *o)
{
	if (o->keys_arg)
		return o->keys_arg;
	return o->sort == FNSORT_SELF ? "self" : "total";
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct profile_opts po = { 0 };
	struct pm_filters pf = { 0 };
	struct profile *p = NULL;
	struct json_object *doc = NULL;
	int r;

	r = parse_args(argc, argv, &o, &pf);
	if (r) {
		pm_filters__free(&pf);
		return r > 0 ? 0 : 1;
	}
	if (o.tp_keys)
		return report_tp(o.input, o.event, o.tp_keys, o.json);
	po.event = o.event;
	po.filter = pf.f;
	if (pm_load(o.input, &po, &p)) {
		pm_filters__free(&pf);
		return 1;
	}
	if (o.json) {
		doc = json_object_new_object();
		json_object_object_add(doc, "input", jstr(o.input));
		json_object_object_add(doc, "event", jstr(profile__event_name(p)));
		json_object_object_add(doc, "events", json_events(p));
		json_object_object_add(doc, "sort", jstr(sort_name(&o)));
		json_object_object_add(doc, "range", o.range ? jstr(o.range) : NULL);
		json_object_object_add(doc, "lost", json_object_new_uint64(profile__lost(p)));
	}
	r = o.by_marker ? report_markers(p, &o, doc) : report_samples(p, &o, doc);
	if (!r && doc)
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	profile__free(p);
	pm_filters__free(&pf);
	if (!r)
		r = pm_output_close(stdout, NULL);
	return r;
}

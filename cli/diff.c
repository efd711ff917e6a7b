// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark diff BASE NEW [-e EVENT] [--by-marker [--range NAME]] [--json]
 *
 * Two recordings compared, the question "render's p99 went from 16 ms to
 * 24 ms: what grew":
 *
 *   functions    as perf diff gives them: each function's self share of its
 *                file's period (Baseline, BASE's), and NEW's minus it
 *                (Delta), a function being its shared object and symbol in
 *                both files (a frame without a symbol: DSO+0xOFFSET,
 *                symbolizer__frame_name, one per address as perf keys it);
 *                sorted by |Delta|, as perf diff sorts
 *   --by-marker  per marker range name: count, mean, p50 and p99 in each
 *                file and their change, and the functions whose share of
 *                the samples inside that range (at any depth: nested ranges
 *                included) grew most, with the CPU time per range they
 *                stand for when the event counts nanoseconds
 *
 * Both files are analysed for the same sampling event (-e, else BASE's
 * first).  Every name goes through lib/common/escape.h: escape_term in the
 * text, escape_json_object in the JSON.  The functions inside ranges are
 * worked out for at most DIFF_MAX_RANGE_NAMES names, one pass over the
 * samples each (a file may hold any number of names): past that, their
 * durations alone, and the text says so.
 */
#include <stddef.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "analysis.h"
#include "commands.h"
#include "opts.h"
#include "report.h"
#include "escape.h"
#include "grow.h"
#include "symbolize.h"
#include "table.h"

#define TEXT_RANGE_FNS 5
#define DIFF_MAX_RANGE_NAMES 64

struct diff_opts {
	const char *event, *range;
	bool by_marker, json;
};

/* A function as perf diff pairs them: its shared object (base name) and symbol */
struct dfn {
	uint32_t dso, name;         /* ids in dtab.strs */
	uint64_t period[2];         /* in BASE, in NEW */
};

struct dtab {
	struct strtab strs;
	struct idmap ids;           /* dso << 32 | name -> index in v */
	struct dfn *v;
	size_t n, cap;
	uint64_t total[2];          /* the period of every sample counted, per file */
};

static void dtab_free(struct dtab *t)
{
	strtab__free(&t->strs);
	idmap__free(&t->ids);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static struct dfn *dtab_get(struct dtab *t, const char *dso, const char *name)
{
	uint32_t d = strtab__intern(&t->strs, dso, strlen(dso));
	uint32_t n = strtab__intern(&t->strs, name, strlen(name)), i;
	uint64_t key = (uint64_t)d << 32 | n;

	if (d == TABLE_NONE || n == TABLE_NONE)
		return NULL;
	i = idmap__get(&t->ids, key);
	if (i != TABLE_NONE)
		return &t->v[i];
	if (grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)) || idmap__put(&t->ids, key, (uint32_t)t->n) < 0)
		return NULL;
	t->v[t->n] = (struct dfn){ .dso = d, .name = n };
	return &t->v[t->n++];
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* Every sample of p that keep takes (NULL: all), its leaf's function counted for side */
static int dtab_add(struct dtab *t, int side, const struct profile *p, sample_pred keep, void *ctx)
{
	size_t ns, na, nl, nf, nm;
	const struct profile_sample *sv = profile__samples(p, &ns);
	const struct profile_anode *an = profile__anodes(p, &na);
	const struct profile_loc *lv = profile__locs(p, &nl);
	const struct profile_frame *fv = profile__frames(p, &nf);
	const struct profile_mapping *mv = profile__mappings(p, &nm);
	char buf[SYMBOLIZER_FRAME_NAME_MAX];

	for (size_t i = 0; i < ns; i++) {
		const struct profile_loc *l = &lv[an[sv[i].anode].loc];
		const struct profile_frame *f = &fv[l->frame];
		const char *file, *name;
		struct dfn *d;

		if (keep && !keep(p, &sv[i], ctx))
			continue;
		t->total[side] += sv[i].period;
		if (f->kind == PROFILE_FRAME_COMM)
			continue;       /* no stack at all */
		file = profile__str(p, mv[f->mapping].file);
		name = symbolizer__frame_name(profile__str(p, f->name),
					      strcmp(file, "[unknown]") ? file : NULL,
					      l->offset + l->call, buf, sizeof(buf));
		d = dtab_get(t, base_name(file), name);
		if (!d)
			return -ENOMEM;
		d->period[side] += sv[i].period;
	}
	return 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static double delta_of(const struct dtab *t, const struct dfn *f)
{
	return pct(f->period[1], t->total[1]) - pct(f->period[0], t->total[0]);
}

static const struct dtab *sort_t;

/* perf diff's order: |Delta| first, then the baseline */
static int by_abs_delta(const void *a, const void *b)
{
	const struct dfn *x = a, *y = b;
	double dx = delta_of(sort_t, x), dy = delta_of(sort_t, y);

	dx = dx < 0 ? -dx : dx;
	dy = dy < 0 ? -dy : dy;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->period[0] != y->period[0])
		return x->period[0] > y->period[0] ? -1 : 1;
	return strcmp(strtab__str(&sort_t->strs, x->name), strtab__str(&sort_t->strs, y->name));
}

/* grew most first */
static int by_delta(const void *a, const void *b)
{
	const struct dfn *x = a, *y = b;
	double dx = delta_of(sort_t, x), dy = delta_of(sort_t, y);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(strtab__str(&sort_t->strs, x->name), strtab__str(&sort_t->strs, y->name));
}

static void dtab_sort(struct dtab *t, int (*cmp)(const void *, const void *))
{
	sort_t = t;
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp);
	idmap__clear(&t->ids);  /* the indexes moved */
}

/* ---- output helpers ------------------------------------------------------------ */

static void term(const char *s)
{
	escape_term(stdout, s, strlen(s), 0);
}

static struct json_object *jstr(const char *s)
{
	return escape_json_object(s, strlen(s));
}

static struct json_object *jnum(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2f", v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

/* a signed duration: "+8.03 ms" */
static const char *fmt_dns(int64_t ns, char *buf, size_t size)
{
	if (size < 2)
		return "";
	buf[0] = ns < 0 ? '-' : '+';
	pm_fmt_ns(ns < 0 ? (uint64_t)-ns : (uint64_t)ns, buf + 1, size - 1);
	return buf;
}

static double rel(uint64_t base, uint64_t now)
{
	return base ? 100.0 * ((double)now - (double)base) / (double)base : 0.0;
}

/* ---- functions ----------------------------------------------------------------- */

static void text_functions(const struct dtab *t)
{
	printf("\n Baseline     Delta  %-20s  Symbol\n", "Shared Object");
	for (size_t i = 0; i < t->n; i++) {
		const struct dfn *f = &t->v[i];

		if (f->period[0])
			printf(" %7.2f%%  ", pct(f->period[0], t->total[0]));
		else
			printf(" %8s  ", "");
		printf("%+7.2f%%  ", delta_of(t, f));
		escape_term_pad(stdout, strtab__str(&t->strs, f->dso), -20);
		fputs("  ", stdout);
		term(strtab__str(&t->strs, f->name));
		putchar('\n');
	}
}

static struct json_object *json_function(const struct dtab *t, const struct dfn *f, bool period)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "dso", jstr(strtab__str(&t->strs, f->dso)));
	json_object_object_add(o, "name", jstr(strtab__str(&t->strs, f->name)));
	json_object_object_add(o, "base_pct", jnum(pct(f->period[0], t->total[0])));
	json_object_object_add(o, "new_pct", jnum(pct(f->period[1], t->total[1])));
	json_object_object_add(o, "delta_pct", jnum(delta_of(t, f)));
	if (period) {
		json_object_object_add(o, "base_period", json_object_new_uint64(f->period[0]));
		json_object_object_add(o, "new_period", json_object_new_uint64(f->period[1]));
	}
	return o;
}

static int diff_functions(const struct profile *p[2], struct json_object *doc)
{
	struct dtab t = { 0 };
	struct json_object *arr;

	if (dtab_add(&t, 0, p[0], NULL, NULL) < 0 || dtab_add(&t, 1, p[1], NULL, NULL) < 0) {
		dtab_free(&t);
		return pm_err("out of memory");
	}
	dtab_sort(&t, by_abs_delta);
	if (doc) {
		arr = json_object_new_array();
		for (size_t i = 0; i < t.n; i++)
			json_object_array_add(arr, json_function(&t, &t.v[i], true));
		json_object_object_add(doc, "base_period", json_object_new_uint64(t.total[0]));
		json_object_object_add(doc, "new_period", json_object_new_uint64(t.total[1]));
		json_object_object_add(doc, "functions", arr);
	} else {
		printf("# functions: self %% of each file's period; Baseline: BASE's, Delta: NEW's "
		       "minus BASE's (as perf diff pairs and sorts them)\n");
		text_functions(&t);
	}
	dtab_free(&t);
	return 0;
}

/* ---- ranges -------------------------------------------------------------------- */

/* One range name in both files (either may lack it) */
struct drange {
	const char *name;
	const struct rangestat *r[2];
	uint32_t id[2];             /* its string id in each profile, PROFILE_NONE */
};

static const struct rangestat *find_range(const struct profile *p, const struct rangestats *rs,
					  const char *name)
{
	for (size_t k = 0; k < rs->n; k++)
		if (!strcmp(profile__str(p, rs->v[k].name), name))
			return &rs->v[k];
	return NULL;
}

/* The functions inside range d in each file; 1 when not worked out (past the cap) */
static int range_functions(const struct profile *p[2], const struct drange *d, struct dtab *t,
			   size_t *analysed)
{
	if (*analysed == DIFF_MAX_RANGE_NAMES)
		return 1;
	++*analysed;
	for (int s = 0; s < 2; s++) {
		struct range_pred_ctx rc = { 0 };
		int r;

		if (!d->r[s])
			continue;
		if (range_pred__init(&rc, p[s], d->r[s]->name) < 0)
			return -ENOMEM;
		r = dtab_add(t, s, p[s], aggregate__in_range, &rc);
		range_pred__free(&rc);
		if (r < 0)
			return r;
	}
	dtab_sort(t, by_delta);
	return 0;
}

/* the CPU time a function stands for per range instance (the event counts ns) */
static uint64_t per_range(const struct rangestat *r, uint64_t period)
{
	uint64_t n = r ? r->count + r->open : 0;

	return n ? period / n : 0;
}

static void text_stat(const char *what, const struct drange *d, size_t off)
{
	char b[3][32];
	uint64_t v[2];

	for (int s = 0; s < 2; s++)
		v[s] = d->r[s] ? *(const uint64_t *)((const char *)d->r[s] + off) : 0;
	printf("  %-6s %12s %12s", what, d->r[0] ? pm_fmt_ns(v[0], b[0], 32) : "-",
	       d->r[1] ? pm_fmt_ns(v[1], b[1], 32) : "-");
	if (d->r[0] && d->r[1])
		printf(" %12s %+8.1f%%", fmt_dns((int64_t)v[1] - (int64_t)v[0], b[2], 32), rel(v[0], v[1]));
	putchar('\n');
}

static void text_range(const struct drange *d, const struct dtab *t, int fns, bool ns)
{
	char b[2][32];

	putchar('\n');
	term(d->name);
	printf(": %" PRIu64 " -> %" PRIu64 " ranges\n", d->r[0] ? d->r[0]->count : 0,
	       d->r[1] ? d->r[1]->count : 0);
	printf("  %-6s %12s %12s %12s\n", "", "BASE", "NEW", "CHANGE");
	text_stat("mean", d, offsetof(struct rangestat, mean_ns));
	text_stat("p50", d, offsetof(struct rangestat, p50_ns));
	text_stat("p99", d, offsetof(struct rangestat, p99_ns));
	text_stat("max", d, offsetof(struct rangestat, max_ns));
	if (fns == 1) {
		printf("  (functions not worked out: past %d range names)\n", DIFF_MAX_RANGE_NAMES);
		return;
	}
	if (!t->n)
		return;
	fputs("  the functions whose share of the samples inside ", stdout);
	term(d->name);
	printf(" grew most:\n    %7s %7s %8s  %-25s  %s\n", "BASE", "NEW", "CHANGE",
	       ns ? "CPU PER RANGE" : "", "FUNCTION");
	for (size_t i = 0; i < t->n && i < TEXT_RANGE_FNS; i++) {
		const struct dfn *f = &t->v[i];
		char cpu[64] = "";

		if (ns)
			snprintf(cpu, sizeof(cpu), "%s -> %s",
				 pm_fmt_ns(per_range(d->r[0], f->period[0]), b[0], 32),
				 pm_fmt_ns(per_range(d->r[1], f->period[1]), b[1], 32));
		printf("    %6.2f%% %6.2f%% %+8.2f  %-25s  ", pct(f->period[0], t->total[0]),
		       pct(f->period[1], t->total[1]), delta_of(t, f), cpu);
		term(strtab__str(&t->strs, f->name));
		fputs(" (", stdout);
		term(strtab__str(&t->strs, f->dso));
		fputs(")\n", stdout);
	}
	if (t->n > TEXT_RANGE_FNS)
		printf("    (%zu more: --json lists them all)\n", t->n - TEXT_RANGE_FNS);
}

static struct json_object *json_stat(const struct rangestat *r)
{
	struct json_object *o;

	if (!r)
		return NULL;
	o = json_object_new_object();
	report_json_rangestat(o, r);
	return o;
}

static struct json_object *json_range(const struct drange *d, const struct dtab *t, int fns,
				      bool ns)
{
	struct json_object *o = json_object_new_object(), *ch, *arr;

	json_object_object_add(o, "name", jstr(d->name));
	json_object_object_add(o, "base", json_stat(d->r[0]));
	json_object_object_add(o, "new", json_stat(d->r[1]));
	if (d->r[0] && d->r[1]) {
		ch = json_object_new_object();
#define D(k, f) do { \
		json_object_object_add(ch, k "_ns", json_object_new_int64((int64_t)d->r[1]->f - \
									 (int64_t)d->r[0]->f)); \
		json_object_object_add(ch, k "_pct", jnum(rel(d->r[0]->f, d->r[1]->f))); \
	} while (0)
		json_object_object_add(ch, "count", json_object_new_int64((int64_t)d->r[1]->count -
									  (int64_t)d->r[0]->count));
		D("mean", mean_ns);
		D("p50", p50_ns);
		D("p99", p99_ns);
		D("max", max_ns);
#undef D
		json_object_object_add(o, "change", ch);
	}
	if (fns == 1) {
		json_object_object_add(o, "functions", NULL);
		return o;
	}
	arr = json_object_new_array();
	for (size_t i = 0; i < t->n; i++) {
		struct json_object *f = json_function(t, &t->v[i], false);

		if (ns) {
			json_object_object_add(f, "base_ns_per_range",
					       json_object_new_uint64(per_range(d->r[0], t->v[i].period[0])));
			json_object_object_add(f, "new_ns_per_range",
					       json_object_new_uint64(per_range(d->r[1], t->v[i].period[1])));
		}
		json_object_array_add(arr, f);
	}
	json_object_object_add(o, "functions", arr);
	return o;
}

static int diff_one_range(const struct profile *p[2], const struct drange *d, size_t *analysed,
			  bool ns, struct json_object *arr)
{
	struct dtab t = { 0 };
	int fns = range_functions(p, d, &t, analysed);

	if (fns < 0) {
		dtab_free(&t);
		return pm_err("out of memory");
	}
	if (arr)
		json_object_array_add(arr, json_range(d, &t, fns, ns));
	else
		text_range(d, &t, fns, ns);
	dtab_free(&t);
	return 0;
}

/* Before anything is printed: the recordings have ranges, and one named only if asked */
static int ranges_check(const struct profile *p[2], const char *in[2], const char *only)
{
	bool any = false;

	for (int s = 0; s < 2; s++) {
		size_t n;
		const struct profile_range *v = profile__ranges(p[s], &n);

		any = any || n;
		for (size_t k = 0; only && k < n; k++)
			if (!strcmp(profile__str(p[s], v[k].name), only))
				return 0;
	}
	if (!any)
		return pm_err("%s, %s: no marker ranges in either recording (ranges come from "
			      "perfmark_range_begin/end)", pm_input_name(in[0]), pm_input_name(in[1]));
	if (only)
		return pm_err("%s, %s: no range named '%s'", pm_input_name(in[0]),
			      pm_input_name(in[1]), only);
	return 0;
}

static int diff_ranges(const struct profile *p[2], const char *only, struct json_object *doc)
{
	struct rangestats rs[2] = { 0 };
	struct json_object *arr = doc ? json_object_new_array() : NULL;
	bool ns = !strcmp(profile__event_name(p[0]), "cpu-clock") ||
		  !strcmp(profile__event_name(p[0]), "task-clock");
	size_t analysed = 0;
	int r = 0;

	if (rangestats__build(&rs[0], p[0]) < 0 || rangestats__build(&rs[1], p[1]) < 0) {
		rangestats__free(&rs[0]);
		json_object_put(arr);
		return pm_err("out of memory");
	}
	if (!doc)
		printf("# marker ranges: durations in BASE and NEW, and the %s samples inside them "
		       "(nested ranges included)\n", profile__event_name(p[0]));
	/* BASE's names in its order, then those only NEW has */
	for (int s = 0; s < 2 && !r; s++) {
		for (size_t k = 0; k < rs[s].n && !r; k++) {
			struct drange d = { .name = profile__str(p[s], rs[s].v[k].name) };

			if (only && strcmp(only, d.name))
				continue;
			d.r[0] = s == 0 ? &rs[0].v[k] : find_range(p[0], &rs[0], d.name);
			d.r[1] = s == 1 ? &rs[1].v[k] : find_range(p[1], &rs[1], d.name);
			if (s == 1 && d.r[0])
				continue;
			r = diff_one_range(p, &d, &analysed, ns, arr);
		}
	}
	if (doc)
		json_object_object_add(doc, "ranges", arr);
	rangestats__free(&rs[0]);
	rangestats__free(&rs[1]);
	return r;
}

/* ---- command ----------------------------------------------------------------------- */

static const struct opt diff_table[] = {
	{ .flag = 'e', .name = "event", .arg = "EVENT",
	  .help = "which sampling event's samples, the same in both recordings",
	  .def = "BASE's first that has samples", .set = opt_set_str,
	  .off = offsetof(struct diff_opts, event) },
	{ .name = "by-marker",
	  .help = "per marker range: count, mean, p50 and p99 in each file and their change, "
	    "with the functions whose share of the samples inside it grew most",
	  .def = "functions", .set = opt_set_true, .off = offsetof(struct diff_opts, by_marker) },
	{ .name = "range", .arg = "NAME", .help = "only this range (with --by-marker)",
	  .def = "every range", .set = opt_set_str, .off = offsetof(struct diff_opts, range) },
	{ .name = "json", .help = "the same as one JSON document", .set = opt_set_true,
	  .off = offsetof(struct diff_opts, json) },
	{ 0 },
};

const struct opts_cmd diff_cmd = {
	.name = "diff",
	.args = "BASE NEW",
	.brief = "compare two recordings: functions, or marker ranges",
	.about = "Compare two recordings (BASE and NEW, perf.data files or - for one on stdin): "
		 "each function's share as perf diff gives it, or with --by-marker each marker "
		 "range's durations and the functions that grew inside it.",
	.tables = { diff_table },
};

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { 0 };
	struct profile_opts po = { .keep_addrs = true };
	const struct profile *cp[2];
	struct profile *p[2] = { NULL, NULL };
	struct json_object *doc = NULL;
	const char *in[2];
	size_t ns[2];
	void *ctx[] = { &o };
	int r;

	r = opts_parse(&diff_cmd, ctx, argc, argv);
	if (r)
		return r == OPTS_HELP ? 0 : 1;
	if (argc - optind != 2)
		return pm_err("diff takes two recordings, BASE and NEW (%d given)", argc - optind);
	in[0] = argv[optind];
	in[1] = argv[optind + 1];
	if (!strcmp(in[0], "-") && !strcmp(in[1], "-"))
		return pm_err("only one of BASE and NEW can be read from stdin");
	if (o.range && !o.by_marker)
		return pm_err("--range NAME goes with --by-marker");
	po.event = o.event;
	if (pm_load(in[0], &po, &p[0]))
		return 1;
	po.event = profile__event_name(p[0]);   /* the same event in both */
	if (pm_load(in[1], &po, &p[1])) {
		profile__free(p[0]);
		return 1;
	}
	cp[0] = p[0];
	cp[1] = p[1];
	profile__samples(p[0], &ns[0]);
	profile__samples(p[1], &ns[1]);
	if (o.by_marker && ranges_check(cp, in, o.range)) {
		profile__free(p[0]);
		profile__free(p[1]);
		return 1;
	}
	if (o.json) {
		doc = json_object_new_object();
		json_object_object_add(doc, "base", jstr(in[0]));
		json_object_object_add(doc, "new", jstr(in[1]));
		json_object_object_add(doc, "event", jstr(profile__event_name(p[0])));
		json_object_object_add(doc, "base_samples", json_object_new_uint64(ns[0]));
		json_object_object_add(doc, "new_samples", json_object_new_uint64(ns[1]));
	} else {
		fputs("# perfmark diff: BASE ", stdout);
		term(pm_input_name(in[0]));
		fputs(" -> NEW ", stdout);
		term(pm_input_name(in[1]));
		printf(": %zu -> %zu samples of ", ns[0], ns[1]);
		term(profile__event_name(p[0]));
		putchar('\n');
	}
	r = o.by_marker ? diff_ranges(cp, o.range, doc) : diff_functions(cp, doc);
	if (!r && doc)
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	profile__free(p[0]);
	profile__free(p[1]);
	if (!r)
		r = pm_output_close(stdout, NULL);
	return r;
}

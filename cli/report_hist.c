// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * report's rows by perf's sort keys (--sort comm,dso,sym: hist.h) and its
 * call graphs (-g caller|callee: calltree.h), as text and JSON; see
 * report.h.  Children and self are counted as perf report --children
 * counts them; percentages are of report_view.whole.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "commands.h"
#include "escape.h"
#include "report.h"
#include "symbolize.h"

#define GRAPH_MAX_INDENT 64     /* levels indented; deeper ones say their depth */

static const char *const key_header[HIST_NR_KEYS] = {
	[HIST_COMM] = "Command", [HIST_PID] = "Pid", [HIST_TID] = "Tid", [HIST_CPU] = "CPU",
	[HIST_DSO] = "Shared Object", [HIST_SYM] = "Symbol",
};

static const char *frame_name(const struct profile *p, uint32_t f)
{
	size_t nf;

	return f == PROFILE_NONE ? "[unknown]" : profile__str(p, profile__frames(p, &nf)[f].name);
}

static const char *mapping_name(const struct profile *p, uint32_t m)
{
	size_t nm;

	return m == PROFILE_NONE ? "[unknown]" :
	       symbolizer_dso_short(profile__str(p, profile__mappings(p, &nm)[m].file));
}

/* A key's value of a row as text (numbers in buf) */
static const char *key_text(const struct profile *p, const struct hist_row *r, enum hist_key k,
			    char *buf, size_t size)
{
	switch (k) {
	case HIST_COMM:
		return profile__str(p, r->v[k]);
	case HIST_DSO:
		return mapping_name(p, r->v[k]);
	case HIST_SYM:
		return frame_name(p, r->v[k]);
	default:
		snprintf(buf, size, "%u", r->v[k]);
		return buf;
	}
}

static size_t width(const char *s)
{
	return escape_term(NULL, s, strlen(s), 0);
}

/* ---- --sort KEYS ------------------------------------------------------------------- */

struct rows_cut {
	size_t under_limit, over_max;
};

/* Is row i left out, by --percent-limit or --max-rows (shown: rows shown so far)? */
static bool row_cut(const struct report_view *v, const struct hist_row *r, size_t shown,
		    struct rows_cut *c)
{
	if (!v->children && !r->self_samples)
		return true;    /* only a caller: not a row without children (as perf) */
	if (v->o->percent_limit > 0 &&
	    report_pct(v->children ? r->children : r->self, v->whole) < v->o->percent_limit) {
		c->under_limit++;
		return true;
	}
	if (v->o->max_rows && shown >= v->o->max_rows) {
		c->over_max++;
		return true;
	}
	return false;
}

static void text_keys(const struct report_view *v, const struct hist *h)
{
	const struct report_opts *o = v->o;
	const struct profile *p = v->p;
	size_t w[HIST_MAX_KEYS], shown = 0;
	struct rows_cut c = { 0 };
	char buf[32];

	printf("# %" PRIu64 " samples of ", h->total_samples);
	report_term(profile__event_name(p));
	printf(" by %s, sorted by %s (percentages of the period, as perf report weighs samples)\n",
	       o->keys_arg, v->children ? "children" : "self");
	report_text_hidden(v);
	for (size_t k = 0; k < o->keys.n; k++) {
		w[k] = strlen(key_header[o->keys.k[k]]);
		for (size_t i = 0; i < h->n; i++) {
			size_t n = width(key_text(p, &h->v[i], o->keys.k[k], buf, sizeof(buf)));

			w[k] = n > w[k] ? n : w[k];
		}
	}
	printf("%s   Samples", v->children ? "# Children      Self" : "#     Self");
	for (size_t k = 0; k < o->keys.n; k++) {
		fputs("  ", stdout);
		report_term_pad(key_header[o->keys.k[k]], k + 1 < o->keys.n ? -(int)w[k] : 0);
	}
	putchar('\n');
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_row *r = &h->v[i];

		if (row_cut(v, r, shown, &c))
			continue;
		shown++;
		if (v->children)
			printf(" %8.2f%%", report_pct(r->children, v->whole));
		printf(" %8.2f%%  %8" PRIu64, report_pct(r->self, v->whole), r->self_samples);
		for (size_t k = 0; k < o->keys.n; k++) {
			fputs("  ", stdout);
			report_term_pad(key_text(p, r, o->keys.k[k], buf, sizeof(buf)),
					k + 1 < o->keys.n ? -(int)w[k] : 0);
		}
		putchar('\n');
	}
	if (c.under_limit)
		printf("# %zu more rows under %g%% (--percent-limit)\n", c.under_limit, o->percent_limit);
	if (c.over_max)
		printf("# %zu more rows (--max-rows %zu)\n", c.over_max, o->max_rows);
}

static struct json_object *json_keys(const struct report_view *v, const struct hist *h)
{
	const struct profile *p = v->p;
	const struct report_opts *o = v->o;
	struct json_object *rows = json_object_new_array();
	struct rows_cut c = { 0 };
	size_t shown = 0, nm;
	const struct profile_mapping *mv = profile__mappings(p, &nm);
	char buf[32];

	for (size_t i = 0; i < h->n; i++) {
		const struct hist_row *r = &h->v[i];
		struct json_object *row;

		if (row_cut(v, r, shown, &c))
			continue;
		shown++;
		row = json_object_new_object();
		for (size_t k = 0; k < o->keys.n; k++) {
			enum hist_key key = o->keys.k[k];

			if (key == HIST_PID || key == HIST_TID || key == HIST_CPU)
				json_object_object_add(row, hist_key__name(key),
						       json_object_new_int64(r->v[key]));
			else
				json_object_object_add(row, hist_key__name(key),
						       report_jstr(key_text(p, r, key, buf, sizeof(buf))));
			if (key == HIST_DSO && r->v[key] != PROFILE_NONE)
				json_object_object_add(row, "dso_path",
						       report_jstr(profile__str(p, mv[r->v[key]].file)));
		}
		json_object_object_add(row, "children_pct", report_jpct(report_pct(r->children, v->whole)));
		json_object_object_add(row, "self_pct", report_jpct(report_pct(r->self, v->whole)));
		json_object_object_add(row, "children_samples", json_object_new_uint64(r->children_samples));
		json_object_object_add(row, "self_samples", json_object_new_uint64(r->self_samples));
		json_object_object_add(row, "children_period", json_object_new_uint64(r->children));
		json_object_object_add(row, "self_period", json_object_new_uint64(r->self));
		json_object_array_add(rows, row);
	}
	return rows;
}

int report_keys(const struct report_view *v0, struct json_object *doc)
{
	struct report_view v = *v0;
	struct json_object *keys;
	struct hist h;

	if (hist__build(&h, v.p, &v.o->keys, v.keep, v.keep_ctx) < 0)
		return pm_err("out of memory");
	hist__sort(&h, v.p, &v.o->keys, v.children, false);
	v.whole = h.total_period + v.extra;
	if (doc) {
		keys = json_object_new_array();
		for (size_t k = 0; k < v.o->keys.n; k++)
			json_object_array_add(keys, json_object_new_string(hist_key__name(v.o->keys.k[k])));
		json_object_object_add(doc, "keys", keys);
		json_object_object_add(doc, "children", json_object_new_boolean(v.children));
		json_object_object_add(doc, "samples", json_object_new_uint64(h.total_samples));
		json_object_object_add(doc, "period", json_object_new_uint64(h.total_period));
		json_object_object_add(doc, "rows", json_keys(&v, &h));
	} else {
		text_keys(&v, &h);
	}
	hist__free(&h);
	return 0;
}

/* ---- -g caller|callee --------------------------------------------------------------- */

struct graph {
	const struct report_view *v;
	const struct calltree *t;
	double min;                 /* percent */
	size_t dso_w;
	uint64_t left_out;          /* paths under min */
};

static bool graph_shown(struct graph *g, uint32_t n)
{
	return report_pct(g->t->v[n].total, g->v->whole) >= g->min;
}

static const char *node_dso(const struct graph *g, uint32_t n)
{
	size_t nf;
	const struct profile_frame *fv = profile__frames(g->v->p, &nf);
	uint32_t f = g->t->v[n].frame;

	return fv[f].kind == PROFILE_FRAME_COMM ? "" : mapping_name(g->v->p, fv[f].mapping);
}

static void graph_width(struct graph *g, uint32_t n)
{
	for (uint32_t c = g->t->v[n].first; c != PROFILE_NONE; c = g->t->v[c].next) {
		size_t w;

		if (!graph_shown(g, c))
			continue;
		w = width(node_dso(g, c));
		g->dso_w = w > g->dso_w ? w : g->dso_w;
		graph_width(g, c);
	}
}

static void graph_text(struct graph *g, uint32_t n, unsigned depth)
{
	for (uint32_t c = g->t->v[n].first; c != PROFILE_NONE; c = g->t->v[c].next) {
		const struct calltree_node *x = &g->t->v[c];

		if (!graph_shown(g, c)) {
			g->left_out++;
			continue;
		}
		printf(" %8.2f%% %8.2f%%  %8" PRIu64 "  ", report_pct(x->total, g->v->whole),
		       report_pct(x->self, g->v->whole), x->self_samples);
		report_term_pad(node_dso(g, c), -(int)g->dso_w);
		printf("  %*s", 2 * (depth < GRAPH_MAX_INDENT ? depth : GRAPH_MAX_INDENT), "");
		if (depth >= GRAPH_MAX_INDENT)
			printf("[%u] ", depth);
		report_term(frame_name(g->v->p, x->frame));
		putchar('\n');
		graph_text(g, c, depth + 1);
	}
}

static struct json_object *graph_json(struct graph *g, uint32_t n)
{
	struct json_object *arr = json_object_new_array();

	for (uint32_t c = g->t->v[n].first; c != PROFILE_NONE; c = g->t->v[c].next) {
		const struct calltree_node *x = &g->t->v[c];
		struct json_object *o, *kids;

		if (!graph_shown(g, c)) {
			g->left_out++;
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "name", report_jstr(frame_name(g->v->p, x->frame)));
		json_object_object_add(o, "dso", report_jstr(node_dso(g, c)));
		json_object_object_add(o, "children_pct", report_jpct(report_pct(x->total, g->v->whole)));
		json_object_object_add(o, "self_pct", report_jpct(report_pct(x->self, g->v->whole)));
		json_object_object_add(o, "children_samples", json_object_new_uint64(x->total_samples));
		json_object_object_add(o, "self_samples", json_object_new_uint64(x->self_samples));
		json_object_object_add(o, "children_period", json_object_new_uint64(x->total));
		json_object_object_add(o, "self_period", json_object_new_uint64(x->self));
		kids = graph_json(g, c);
		if (json_object_array_length(kids))
			json_object_object_add(o, "nodes", kids);
		else
			json_object_put(kids);
		json_object_array_add(arr, o);
	}
	return arr;
}

int report_graph(const struct report_view *v0, struct json_object *doc)
{
	struct report_view v = *v0;
	const char *order = v.o->callee ? "callee" : "caller";
	struct calltree t;
	struct graph g = { .v = &v, .t = &t, .min = v.o->graph_min };
	struct json_object *o;

	if (calltree__build(&t, v.p, v.o->callee, v.keep, v.keep_ctx) < 0)
		return pm_err("out of memory");
	v.whole = t.total_period + v.extra;
	if (doc) {
		o = json_object_new_object();
		json_object_object_add(o, "order", json_object_new_string(order));
		json_object_object_add(o, "min_pct", json_object_new_double(g.min));
		json_object_object_add(o, "nodes", graph_json(&g, 0));
		json_object_object_add(o, "left_out", json_object_new_uint64(g.left_out));
		json_object_object_add(doc, "samples", json_object_new_uint64(t.total_samples));
		json_object_object_add(doc, "period", json_object_new_uint64(t.total_period));
		json_object_object_add(doc, "graph", o);
		calltree__free(&t);
		return 0;
	}
	printf("# call graph (-g %s): %" PRIu64 " samples of ", order, t.total_samples);
	report_term(profile__event_name(v.p));
	printf(" (percentages of the period, as perf report weighs samples)\n");
	if (v.o->callee)
		printf("# from each function up to its callers; Children: the samples whose stack "
		       "begins with this path, Self: a function's own, at the first level\n");
	else
		printf("# from each command down to what it calls; Children: the samples in this "
		       "function or what it called on this path, Self: in the function itself\n");
	report_text_hidden(&v);
	g.dso_w = strlen("Shared Object");
	graph_width(&g, 0);
	printf("# Children      Self   Samples  ");
	report_term_pad("Shared Object", -(int)g.dso_w);
	printf("  Call path\n");
	graph_text(&g, 0, 0);
	if (g.left_out)
		printf("# %" PRIu64 " call paths under %g%% left out (-g %s,0 shows every one)\n",
		       g.left_out, g.min, order);
	calltree__free(&t);
	return 0;
}

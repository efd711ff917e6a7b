// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark flamegraph [-i FILE|-] [-o FILE.svg|FILE.html] [-e EVENT] [--range NAME]
 *                     [perf's filters: --comm --pid --tid --dso --sym --cpu --time]
 *
 * HTML (the default, and FILE.html or .htm; another name is an error, not a
 * page under a name that says otherwise): one self-contained
 * page, its CSS and JS (cli/flamegraph/) embedded in this binary, the data
 * as JSON in <script id="pm-data">:
 *
 *   title, event, range    strings (range: --range NAME or null)
 *   start, end             0 and the recording's length in µs
 *   names                  strings; frames: [name index, kind] pairs
 *                          (kind 0 command, 1 kernel, 2 user)
 *   nodes                  [parent, frame] pairs, node 0 the root (parent -1);
 *                          a parent always comes before its children
 *   threads                [{tid, pid, comm}]
 *   samples                [time µs, thread index, node] triples
 *   weights                null, or (-e offcpu-time) each sample's µs off the CPU:
 *                          the graph is weighed by them
 *   ranges                 [thread, name index, start µs, end µs, depth, open]
 *   states                 off-CPU intervals (--off-cpu), drawn under each
 *                          thread's ranges: [thread, start µs, wakeup µs,
 *                          end µs, state letter's code]; blocked from start to
 *                          wakeup, then runnable; the thread runs between them
 *                          (threads[].first and .last, µs: where it was seen)
 *
 * SVG (-o FILE.svg): the flame graph alone, one <g> per frame with a
 * <title> (samples and %, or time off the CPU for -e offcpu-time) for
 * hover and its label, cut to fit its box as
 * FlameGraph cuts them, so that it reads without JavaScript; the script
 * adds click to zoom and a search button.  Both draw at most a screen's
 * rows (the HTML: what fits its window; the SVG: SVG_MAX_ROWS), root
 * included; frames with deeper ones are dashed, and a click on one zooms
 * there, the view moved up to its subtree.
 *
 * Every name goes through lib/common/escape.h: JSON inside the page's
 * <script> element, XML in the SVG (issue 18: an event name held a
 * <script> that ran when the SVG was opened).
 */
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "analysis.h"
#include "commands.h"
#include "opts.h"
#include "escape.h"
#include "offcpu.h"
#include "filteropts.h"
#include "flamegraph-assets.h"

#define SVG_WIDTH 1200
#define SVG_ROW 17
#define SVG_CHAR 6.5         /* px per character of the labels (svg.js sizes them alike) */
#define SVG_MIN_LABEL 30     /* px: narrower frames have no label */
#define SVG_HEAD 40          /* px above the frames: the title, search, and notes */
/*
 * Rows drawn at most: the graph, root and all, fits 800 px (a 900 px
 * screen less a browser's bars; the height once followed the deepest
 * stack: one 127-frame sample left the first screen blank).  Deeper frames
 * are in the file, hidden until a click on a dashed frame zooms there
 * (svg.js).
 */
#define SVG_MAX_ROWS 44

struct fg_opts {
	const char *input, *output, *range;
};

/* ---- HTML ----------------------------------------------------------------------- */

static void json_key_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\":", key);
	if (s)
		escape_json_html(f, s, strlen(s));
	else
		fputs("null", f);
	fputs(",\n", f);
}

static void html_data(const struct profile *p, const struct fg_opts *o, FILE *f,
		      sample_pred keep, void *ctx)
{
	size_t nn, nf, nt, ns, nr;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	const struct profile_frame *frames = profile__frames(p, &nf);
	const struct profile_thread *tv = profile__threads(p, &nt);
	const struct profile_sample *sv = profile__samples(p, &ns);
	const struct profile_range *rv = profile__ranges(p, &nr);
	const struct strtab *st = profile__strings(p);
	size_t no;
	const struct profile_offcpu *ov = profile__offcpus(p, &no);
	uint64_t t0 = profile__start(p);
	bool by_period = offcpu__event(profile__event_name(p));
	char title[512];

	snprintf(title, sizeof(title), "%s: %s", pm_input_name(o->input), profile__event_name(p));
	fputs("{", f);
	json_key_str(f, "title", title);
	json_key_str(f, "event", profile__event_name(p));
	json_key_str(f, "range", o->range);
	fputs("\"start\":0,\"end\":", f);
	pm_json_us(f, profile__end(p) - t0);
	fputs(",\n\"names\":[", f);
	for (uint32_t i = 0; i < st->n; i++) {
		const char *s = strtab__str(st, i);

		fputs(i ? ",\n" : "", f);
		escape_json_html(f, s, strlen(s));
	}
	fputs("],\n\"frames\":[", f);
	for (size_t i = 0; i < nf; i++)
		fprintf(f, "%s%u,%u", i ? "," : "", frames[i].name, frames[i].kind);
	fputs("],\n\"nodes\":[-1,-1", f);
	for (size_t i = 1; i < nn; i++)
		fprintf(f, ",%u,%u", nodes[i].parent, nodes[i].frame);
	fputs("],\n\"threads\":[", f);
	for (size_t i = 0; i < nt; i++) {
		const char *c = profile__str(p, tv[i].comm);

		fprintf(f, "%s{\"tid\":%u,\"pid\":%u,\"comm\":", i ? ",\n" : "", tv[i].tid, tv[i].pid);
		escape_json_html(f, c, strlen(c));
		fputs(",\"first\":", f);
		pm_json_us(f, tv[i].first >= t0 && tv[i].first != UINT64_MAX ? tv[i].first - t0 : 0);
		fputs(",\"last\":", f);
		pm_json_us(f, tv[i].last >= t0 ? tv[i].last - t0 : 0);
		fputs("}", f);
	}
	fputs("],\n\"samples\":[", f);
	for (size_t i = 0, k = 0; i < ns; i++) {
		if (keep && !keep(p, &sv[i], ctx))
			continue;
		fputs(k++ ? "," : "", f);
		pm_json_us(f, sv[i].time - t0);
		fprintf(f, ",%u,%u", sv[i].thread, sv[i].node);
	}
	fputs("],\n\"weights\":", f);
	if (by_period) {
		for (size_t i = 0, k = 0; i < ns; i++) {
			if (keep && !keep(p, &sv[i], ctx))
				continue;
			fputs(k++ ? "," : "[", f);
			pm_json_us(f, sv[i].period);
		}
		fputs(ns ? "]" : "[]", f);
	} else {
		fputs("null", f);
	}
	fputs(",\n\"states\":[", f);
	for (size_t i = 0, k = 0; i < no; i++) {
		const struct profile_offcpu *o = &ov[i];

		if (o->count != 1 || o->time < t0)
			continue;   /* a sum of shorter intervals is no one interval */
		fputs(k++ ? ",\n" : "", f);
		fprintf(f, "%u,", o->thread);
		pm_json_us(f, o->time - t0);
		putc(',', f);
		pm_json_us(f, o->time - t0 + o->period - o->runq);
		putc(',', f);
		pm_json_us(f, o->time - t0 + o->period);
		fprintf(f, ",%u", (unsigned char)o->state);
	}
	fputs("],\n\"ranges\":[", f);
	for (size_t i = 0; i < nr; i++) {
		fprintf(f, "%s%u,%u,", i ? ",\n" : "", rv[i].thread, rv[i].name);
		pm_json_us(f, rv[i].start - t0);
		putc(',', f);
		pm_json_us(f, rv[i].end - t0);
		fprintf(f, ",%u,%d", rv[i].depth, rv[i].open);
	}
	fputs("]}", f);
}

static void write_html(const struct profile *p, const struct fg_opts *o, FILE *f,
		       sample_pred keep, void *ctx)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>perfmark flame graph</title>\n<style>\n", f);
	fputs(fg_css, f);
	fputs("</style></head>\n<body><div id=\"app\"></div>\n"
	      "<script id=\"pm-data\" type=\"application/json\">", f);
	html_data(p, o, f, keep, ctx);
	fputs("</script>\n<script>\n", f);
	fputs(fg_js, f);
	fputs("</script></body></html>\n", f);
}

/* ---- SVG ------------------------------------------------------------------------ */

struct svg_ctx {
	const struct profile *p;
	const struct weights *w;
	bool by_period;         /* -e offcpu-time: widths are time off the CPU */
	uint64_t whole;         /* the total count, or period */
	uint64_t *total;        /* per node, children included */
	uint32_t **kids;        /* per node */
	size_t *nkids;
	FILE *f;
	int height, rows;       /* rows drawn before any zoom */
};

static unsigned name_hash(const char *s)
{
	unsigned h = 0;

	while (*s)
		h = h * 31 + (unsigned char)*s++;
	return h;
}

/* A frame's label: as much of the name as fits w px, ".." where it is cut */
static void svg_label(FILE *f, const char *name, double w)
{
	size_t len = strlen(name), max = w < SVG_MIN_LABEL ? 0 : (size_t)((w - 6) / SVG_CHAR);

	if (escape_utf8_cut(name, len, max, NULL) == len) {
		escape_xml(f, name, len);
		return;
	}
	escape_xml(f, name, escape_utf8_cut(name, len, max > 2 ? max - 2 : 0, NULL));
	if (max)
		fputs("..", f);
}

static void svg_node(struct svg_ctx *c, uint32_t n, double x, int depth)
{
	size_t nf;
	const struct profile_frame *fr = &profile__frames(c->p, &nf)[profile__nodes(c->p, &nf)[n].frame];
	const char *name = profile__str(c->p, fr->name);
	double w = (double)c->total[n] / (double)c->whole * SVG_WIDTH;
	char b[32];
	unsigned v = name_hash(name) % 100;
	int y = c->height - (depth + 1) * SVG_ROW;

	bool more = false;

	if (w < 0.3)
		return;
	for (size_t k = 0; k < c->nkids[n] && depth == c->rows - 1; k++)
		more |= (double)c->total[c->kids[n][k]] / (double)c->whole * SVG_WIDTH >= 0.3;
	fprintf(c->f, "<g class=\"f%s\"><title>", depth >= c->rows ? " deep" : more ? " more" : "");
	escape_xml(c->f, name, strlen(name));
	if (c->by_period)
		fprintf(c->f, " (%s off CPU", pm_fmt_ns(c->total[n], b, sizeof(b)));
	else
		fprintf(c->f, " (%" PRIu64 " samples", c->total[n]);
	fprintf(c->f, ", %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
		"height=\"%d\" fill=\"rgb(%u,%u,%u)\"/><text x=\"%.2f\" y=\"%d\">",
		100.0 * (double)c->total[n] / (double)c->whole, x, y,
		w > 0.5 ? w - 0.5 : w, SVG_ROW - 1,
		fr->kind == PROFILE_FRAME_COMM ? 180 : 205 + v / 2,
		fr->kind == PROFILE_FRAME_COMM ? 180 : fr->kind == PROFILE_FRAME_KERNEL ? 110 + v / 2 : 90 + v,
		fr->kind == PROFILE_FRAME_COMM ? 190 : 40 + v / 3, x + 3, y + SVG_ROW - 5);
	svg_label(c->f, name, w);
	fputs("</text></g>\n", c->f);
	for (size_t k = 0; k < c->nkids[n]; k++) {
		uint32_t ch = c->kids[n][k];

		svg_node(c, ch, x, depth + 1);
		x += (double)c->total[ch] / (double)c->whole * SVG_WIDTH;
	}
}

static int write_svg(const struct profile *p, FILE *f, const struct weights *w)
{
	size_t nn;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	struct svg_ctx c = { .p = p, .w = w, .f = f,
			     .by_period = offcpu__event(profile__event_name(p)) };
	char b[32];
	int maxdepth = 0, err = -1;
	int *depth = calloc(nn ? nn : 1, sizeof(*depth));
	uint32_t *store = malloc((nn ? nn : 1) * sizeof(*store));

	c.total = calloc(nn ? nn : 1, sizeof(*c.total));
	c.kids = calloc(nn ? nn : 1, sizeof(*c.kids));
	c.nkids = calloc(nn ? nn : 1, sizeof(*c.nkids));
	if (!depth || !store || !c.total || !c.kids || !c.nkids)
		goto out;
	c.whole = c.by_period ? w->total_period : w->total_count;
	for (size_t n = 0; n < nn; n++)
		c.total[n] = c.by_period ? w->period[n] : w->count[n];
	for (size_t n = nn; n-- > 1;)
		c.total[nodes[n].parent] += c.total[n];
	for (size_t n = 1; n < nn; n++) {
		depth[n] = depth[nodes[n].parent] + 1;
		if ((double)c.total[n] * SVG_WIDTH >= 0.3 * (double)c.whole && depth[n] > maxdepth)
			maxdepth = depth[n];
		c.nkids[nodes[n].parent]++;
	}
	/* children lists, in node order, carved out of one array */
	for (size_t n = 0, at = 0; n < nn; n++) {
		c.kids[n] = store + at;
		at += c.nkids[n];
		c.nkids[n] = 0;
	}
	for (size_t n = 1; n < nn; n++)
		c.kids[nodes[n].parent][c.nkids[nodes[n].parent]++] = (uint32_t)n;
	c.rows = maxdepth < SVG_MAX_ROWS ? maxdepth : SVG_MAX_ROWS;
	c.height = c.rows * SVG_ROW + SVG_HEAD;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" onload=\"pmInit(evt)\">\n<style>\n%s</style>\n"
		"<text x=\"4\" y=\"14\" class=\"hdr\">perfmark flame graph: ",
		SVG_WIDTH, c.height, SVG_WIDTH, c.height, fg_svg_css);
	if (c.by_period)
		fprintf(f, "%s off CPU, ", pm_fmt_ns(c.whole, b, sizeof(b)));
	else
		fprintf(f, "%" PRIu64 " samples of ", w->total_count);
	escape_xml(f, profile__event_name(p), strlen(profile__event_name(p)));
	fprintf(f, " (click: zoom, double-click: reset)</text>\n"
		"<text x=\"%d\" y=\"14\" class=\"hdr btn\" id=\"search\">Search</text>\n"
		"<text x=\"%d\" y=\"30\" class=\"hdr\" id=\"matched\"></text>\n",
		SVG_WIDTH - 60, SVG_WIDTH - 200);
	if (maxdepth > c.rows)
		fprintf(f, "<text x=\"4\" y=\"30\" class=\"hdr\" id=\"deeper\">%d of %d levels shown: "
			"click a dashed frame to see deeper</text>\n", c.rows, maxdepth);
	if (c.whole)
		for (size_t k = 0, x = 0; k < c.nkids[0]; k++) {
			svg_node(&c, c.kids[0][k], (double)x, 0);
			x += (size_t)((double)c.total[c.kids[0][k]] / (double)c.whole * SVG_WIDTH);
		}
	fprintf(f, "<script><![CDATA[\n%s]]></script>\n</svg>\n", fg_svg_js);
	err = 0;
out:
	free(depth);
	free(store);
	free(c.total);
	free(c.kids);
	free(c.nkids);
	return err ? pm_err("out of memory") : 0;
}

/* ---- command ----------------------------------------------------------------------- */

static const struct opt fg_table[] = {
	OPT_INPUT(struct fg_opts, input),
	{ .flag = 'o', .name = "output", .arg = "FILE.svg|FILE.html",
	  .help = "where it goes: an SVG for FILE.svg, an interactive HTML page for FILE.html "
	    "(or .htm); any other name is an error",
	  .def = "stdout, HTML", .set = opt_set_str, .off = offsetof(struct fg_opts, output) },
	{ .name = "range", .arg = "NAME", .help = "only the samples inside this marker range",
	  .def = "every sample", .set = opt_set_str, .off = offsetof(struct fg_opts, range) },
	{ 0 },
};
static const struct opt fg_event_table[] = {
	OPT_EVENT(struct profile_opts, event),
	{ 0 },
};

const struct opts_cmd flamegraph_cmd = {
	.name = "flamegraph",
	.brief = "a flame graph, as an interactive HTML page or an SVG",
	.about = "Draw a recording's call stacks as a flame graph.",
	.in_order = true,
	.tables = { fg_table, fg_event_table, pm_filter_table },
};

static bool ends_with(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);

	return n > e && !strcasecmp(path + n - e, ext);
}

/* What -o writes: 1 SVG, 0 HTML (also stdout), -1 a name neither says (after the error) */
static int output_kind(const char *path)
{
	if (!path || !strcmp(path, "-") || ends_with(path, ".html") || ends_with(path, ".htm"))
		return 0;
	if (ends_with(path, ".svg"))
		return 1;
	pm_err("%s: unknown output type: FILE.svg for an SVG, FILE.html for the page", path);
	return -1;
}

int cmd_flamegraph(int argc, char **argv)
{
	struct fg_opts o = { .input = "perf.data" };
	struct profile_opts po = { 0 };
	struct range_pred_ctx rc = { 0 };
	uint32_t id;
	struct profile *p = NULL;
	struct weights w = { 0 };
	FILE *out = NULL;
	struct pm_filters pf = { 0 };
	void *ctx[] = { &o, &po, &pf };
	int r = 1, svg;

	r = opts_parse(&flamegraph_cmd, ctx, argc, argv);
	if (r) {
		pm_filters__free(&pf);
		return r == OPTS_HELP ? 0 : 1;
	}
	r = 1;
	if (optind < argc) {
		pm_err("unexpected argument '%s'", argv[optind]);
		goto out;
	}
	svg = output_kind(o.output);
	if (svg < 0)
		goto out;
	po.filter = pf.f;
	if (pm_load(o.input, &po, &p))
		goto out;
	if (o.range && pm_range_id(p, o.input, o.range, &id))
		goto out;
	if ((o.range && range_pred__init(&rc, p, id) < 0) ||
	    weights__build(&w, p, o.range ? aggregate__in_range : NULL, &rc) < 0) {
		pm_err("out of memory");
		goto out;
	}
	if (!w.total_count) {
		pm_err("%s: no samples%s%s", pm_input_name(o.input), o.range ? " inside range " : "",
		       o.range ? o.range : "");
		goto out;
	}
	out = pm_output(o.output);
	if (!out)
		goto out;
	if (svg)
		r = write_svg(p, out, &w);
	else
		write_html(p, &o, out, o.range ? aggregate__in_range : NULL, &rc), r = 0;
	r = pm_output_close(out, o.output) || r;
out:
	range_pred__free(&rc);
	weights__free(&w);
	profile__free(p);
	pm_filters__free(&pf);
	return r;
}

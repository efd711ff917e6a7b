// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark export [-i FILE|-] [-e EVENT] --format chrome|pprof|collapsed [-o FILE]
 *                 [perf's filters: --comm --pid --tid --dso --sym --cpu --time]
 *
 *   collapsed  Brendan Gregg's folded stacks: "comm;outer;...;leaf COUNT"
 *              (of -e offcpu-time, COUNT is nanoseconds off the CPU)
 *   chrome     Trace Event JSON (Perfetto UI, chrome://tracing, speedscope):
 *              process/thread names (M), ranges as complete slices (X, open
 *              ones flagged in args), counters (C), strings and application
 *              markers as instant events (i) with their payload in args, and
 *              the samples of each thread as a sampled profile (Profile +
 *              ProfileChunk).  ts and dur in µs, the nanoseconds kept as
 *              fractions (the profile's own times are whole µs).  With
 *              off-CPU time: each interval a thread spent off the CPU as a
 *              slice on it ("blocked (S)", then "runnable" from its wakeup
 *              on; cat "offcpu"), and in its profile an "(idle)" sample
 *              where it left, so that viewers that draw a sample until the
 *              next one (speedscope, Perfetto's profile track) draw no
 *              stack while it slept.
 *   pprof      gzip'd profile.proto (pprof.c)
 *
 * Names go through lib/common/escape.h: escape_json for chrome, escape_term
 * for the collapsed stacks (text, often read on a terminal).
 */
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "pprof.h"
#include "commands.h"
#include "opts.h"
#include "escape.h"
#include "filteropts.h"
#include "marker.h"
#include "offcpu.h"

/* ---- collapsed ------------------------------------------------------------------ */

int pm_export_collapsed(const struct profile *p, FILE *out)
{
	size_t nn, nf, ns;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	const struct profile_frame *frames = profile__frames(p, &nf);
	const struct profile_sample *sv = profile__samples(p, &ns);
	uint64_t *count = calloc(nn ? nn : 1, sizeof(*count));
	uint32_t path[4096];
	/* off-CPU samples are weighed by the time they stand for */
	bool by_period = offcpu__event(profile__event_name(p));

	if (!count)
		return pm_err("out of memory");
	for (size_t i = 0; i < ns; i++)
		count[sv[i].node] += by_period ? sv[i].period : 1;
	for (size_t i = 1; i < nn; i++) {
		size_t depth = 0;

		if (!count[i])
			continue;
		for (uint32_t k = (uint32_t)i; k && depth < 4096; k = nodes[k].parent)
			path[depth++] = frames[nodes[k].frame].name;
		while (depth--) {
			const char *s = profile__str(p, path[depth]);

			/* ';' separates frames: escaped in names, as controls are */
			escape_term(out, s, strlen(s), ESC_TERM_FOLDED);
			putc(depth ? ';' : ' ', out);
		}
		fprintf(out, "%" PRIu64 "\n", count[i]);
	}
	free(count);
	return 0;
}

/* ---- chrome --------------------------------------------------------------------- */

static void ev_head(FILE *f, bool *first, const char *ph, const char *cat,
		    const struct profile_thread *t)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = false;
	fprintf(f, "{\"ph\":\"%s\",\"cat\":\"%s\",\"pid\":%u,\"tid\":%u", ph, cat, t->pid, t->tid);
}

static void ev_name(FILE *f, const char *s, size_t n)
{
	fputs(",\"name\":", f);
	escape_json(f, s, n);
}

static void ev_ts(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":", key);
	pm_json_us(f, ns);
}

/*
 * Off-CPU intervals as slices of their thread: blocked (its state letter)
 * up to its wakeup, then runnable (waiting for a CPU); a preempted one is
 * runnable all along.  Sums of shorter intervals are no interval: left out.
 */
static void chrome_offcpu(const struct profile *p, FILE *f, bool *first)
{
	size_t no, nt;
	const struct profile_offcpu *ov = profile__offcpus(p, &no);
	const struct profile_thread *tv = profile__threads(p, &nt);

	for (size_t i = 0; i < no; i++) {
		const struct profile_offcpu *o = &ov[i];
		uint64_t blocked = o->runnable ? 0 : o->period - o->runq;

		if (o->count != 1)
			continue;
		if (blocked) {
			ev_head(f, first, "X", "offcpu", &tv[o->thread]);
			fprintf(f, ",\"name\":\"blocked (%c)\"", o->state);
			ev_ts(f, "ts", o->time);
			ev_ts(f, "dur", blocked);
			if (o->waker & PERFMARK_OFFCPU_WAKER_IRQ)
				fputs(",\"args\":{\"woken by\":\"an interrupt\"}", f);
			else if (o->waker_tid)
				fprintf(f, ",\"args\":{\"woken by\":%u}", o->waker_tid);
			fputs("}", f);
		}
		if (o->runq) {
			ev_head(f, first, "X", "offcpu", &tv[o->thread]);
			fputs(",\"name\":\"runnable (waiting for a CPU)\"", f);
			ev_ts(f, "ts", o->time + blocked);
			ev_ts(f, "dur", o->runq);
			fputs("}", f);
		}
	}
}

static void chrome_names(const struct profile *p, FILE *f, bool *first)
{
	size_t nt;
	const struct profile_thread *tv = profile__threads(p, &nt);

	for (size_t i = 0; i < nt; i++) {
		const char *comm = profile__str(p, tv[i].comm);

		if (tv[i].tid == tv[i].pid) {
			ev_head(f, first, "M", "__metadata", &tv[i]);
			fputs(",\"name\":\"process_name\",\"args\":{\"name\":", f);
			escape_json(f, comm, strlen(comm));
			fputs("}}", f);
		}
		ev_head(f, first, "M", "__metadata", &tv[i]);
		fputs(",\"name\":\"thread_name\",\"args\":{\"name\":", f);
		escape_json(f, comm, strlen(comm));
		fputs("}}", f);
	}
}

static void chrome_ranges(const struct profile *p, FILE *f, bool *first)
{
	size_t nr, nt;
	const struct profile_range *rv = profile__ranges(p, &nr);
	const struct profile_thread *tv = profile__threads(p, &nt);

	for (size_t i = 0; i < nr; i++) {
		const char *name = profile__str(p, rv[i].name);

		ev_head(f, first, "X", "range", &tv[rv[i].thread]);
		ev_name(f, name, strlen(name));
		ev_ts(f, "ts", rv[i].start);
		ev_ts(f, "dur", rv[i].end - rv[i].start);
		fprintf(f, ",\"args\":{\"depth\":%u%s}}", rv[i].depth, rv[i].open ? ",\"open\":true" : "");
	}
}

/* A kept marker: counters as counter events, others as instant events. */
static void chrome_mark(FILE *f, bool *first, const struct profile_thread *t,
			const struct profile_mark *pm, const uint8_t *data)
{
	struct marker m;

	marker__decode_payload(&m, pm->type, pm->flags, data ? data + pm->off : NULL, pm->len);
	if (m.type == PERFMARK_TYPE_RANGE_BEGIN || m.type == PERFMARK_TYPE_RANGE_END)
		return;     /* slices */
	if (m.type == PERFMARK_TYPE_COUNTER) {
		if (!m.has_value || !m.text)
			return; /* not a counter profile.c kept */
		ev_head(f, first, "C", "counter", t);
		ev_name(f, m.text, m.text_len);
		ev_ts(f, "ts", pm->time);
		fputs(",\"args\":{", f);
		escape_json(f, m.text, m.text_len);
		fprintf(f, ":%" PRId64 "}}", m.value);
		return;
	}
	ev_head(f, first, "i", "marker", t);
	ev_ts(f, "ts", pm->time);
	fputs(",\"s\":\"t\"", f);
	if (m.type == PERFMARK_TYPE_STRING) {
		ev_name(f, m.text, escape_utf8_cut(m.text, m.text_len, 80, NULL));
		fputs(",\"args\":{\"text\":", f);
		escape_json(f, m.text, m.text_len);
	} else {
		fprintf(f, ",\"name\":\"marker type %u\",\"args\":{\"data\":\"", m.type);
		for (size_t k = 0; k < m.len; k++)
			fprintf(f, "%02x", m.data[k]);
		putc('"', f);
	}
	fprintf(f, ",\"type\":%u%s}}", m.type,
		m.flags & PERFMARK_UEVENT_F_TRUNCATED ? ",\"truncated\":true" : "");
}

static void chrome_marks(const struct profile *p, FILE *f, bool *first)
{
	size_t nm, nt;
	const struct profile_mark *mv = profile__marks(p, &nm);
	const struct profile_thread *tv = profile__threads(p, &nt);
	const uint8_t *data = profile__mark_data(p);

	for (size_t i = 0; i < nm; i++)
		chrome_mark(f, first, &tv[mv[i].thread], &mv[i], data);
}

/* A sample's place in its thread's profile: by time, then as read */
struct by_key {
	uint32_t thread;
	uint64_t time;
	size_t i;
};

static int by_key_cmp(const void *a, const void *b)
{
	const struct by_key *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * Sample indexes grouped by thread, in time order: by[at[t] .. at[t + 1]).
 * The samples come in the order they were read, and late samples (README:
 * they keep their true time) come after later ones: their time deltas
 * wrapped to 18446744073709551615 before (issue 18 case 8).  With idle,
 * the times each thread left the CPU are among them, as ns + the off-CPU
 * interval's index (sums of shorter ones left out: they are no one time).
 */
static int by_thread(const struct profile *p, bool idle, size_t **by, size_t **at)
{
	size_t ns, nt, no, n = 0;
	const struct profile_sample *sv = profile__samples(p, &ns);
	const struct profile_offcpu *ov = profile__offcpus(p, &no);
	struct by_key *k = malloc((ns + no + 1) * sizeof(*k));

	profile__threads(p, &nt);
	*by = malloc((ns + no + 1) * sizeof(**by));
	*at = calloc(nt + 1, sizeof(**at));
	if (!k || !*by || !*at) {
		free(k);
		return -1;
	}
	for (size_t i = 0; i < ns; i++) {
		k[n++] = (struct by_key){ .thread = sv[i].thread, .time = sv[i].time, .i = i };
		(*at)[sv[i].thread + 1]++;
	}
	for (size_t i = 0; idle && i < no; i++) {
		if (ov[i].count != 1)
			continue;
		k[n++] = (struct by_key){ .thread = ov[i].thread, .time = ov[i].time, .i = ns + i };
		(*at)[ov[i].thread + 1]++;
	}
	if (n)
		qsort(k, n, sizeof(*k), by_key_cmp);
	for (size_t t = 1; t <= nt; t++)
		(*at)[t] += (*at)[t - 1];
	for (size_t i = 0; i < n; i++)
		(*by)[i] = k[i].i;
	free(k);
	return 0;
}

/* The node id in a thread's profile: comm frames fold into the root (id 1). */
static uint32_t chrome_node(const struct profile_node *nodes, uint32_t k)
{
	return k == 0 || nodes[k].parent == 0 ? 1 : k + 1;
}

/* idle: the "(idle)" node (id nn + 1), which viewers draw as nothing */
static void chrome_nodes(const struct profile *p, FILE *f, const uint32_t *stamp, uint32_t mark,
			 bool idle)
{
	size_t nn, nf, nm;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	const struct profile_frame *frames = profile__frames(p, &nf);
	const struct profile_mapping *maps = profile__mappings(p, &nm);

	fputs(",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[{\"id\":1,\"callFrame\":"
	      "{\"functionName\":\"(root)\",\"url\":\"\"}}", f);
	if (idle)
		fprintf(f, ",\n{\"id\":%zu,\"parent\":1,\"callFrame\":{\"functionName\":\"(idle)\","
			"\"url\":\"\"}}", nn + 1);
	for (size_t k = 1; k < nn; k++) {
		const struct profile_frame *fr = &frames[nodes[k].frame];
		const char *name, *file;

		if (stamp[k] != mark || fr->kind == PROFILE_FRAME_COMM)
			continue;
		name = profile__str(p, fr->name);
		file = profile__str(p, maps[fr->mapping].file);
		fprintf(f, ",\n{\"id\":%zu,\"parent\":%u,\"callFrame\":{\"functionName\":", k + 1,
			chrome_node(nodes, nodes[k].parent));
		escape_json(f, name, strlen(name));
		fputs(",\"url\":", f);
		escape_json(f, file, strlen(file));
		fputs("}}", f);
	}
}

/*
 * One sampled profile per thread: the call-tree nodes its samples use, then
 * its samples as node ids and time deltas (the first from startTime).
 * startTime and the deltas are whole microseconds, as Chrome writes them
 * (Perfetto's importer reads them as integers); each delta is taken between
 * truncated absolute times, so they add up without drift.
 */
static int chrome_profiles(const struct profile *p, FILE *f, bool *first)
{
	size_t nn, ns, nt, no, *by = NULL, *at = NULL;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	const struct profile_sample *sv = profile__samples(p, &ns);
	const struct profile_thread *tv = profile__threads(p, &nt);
	const struct profile_offcpu *ov = profile__offcpus(p, &no);
	uint32_t *stamp = calloc(nn ? nn : 1, sizeof(*stamp));
	/* the samples are of the time on CPU: where a thread left it, it is idle */
	bool idle = no && !offcpu__event(profile__event_name(p));
	/* the time of an entry of by[]: a sample's, or when a thread left the CPU */
#define AT(j) ((j) < ns ? sv[(j)].time : ov[(j) - ns].time)

	if (!stamp || by_thread(p, idle, &by, &at) < 0) {
		free(stamp);
		free(by);
		free(at);
		return pm_err("out of memory");
	}
	for (size_t t = 0; t < nt; t++) {
		size_t lo = at[t], hi = at[t + 1];
		uint64_t prev;

		bool has_idle = false;

		if (lo == hi)
			continue;
		prev = AT(by[lo]);
		for (size_t i = lo; i < hi; i++) {
			if (by[i] >= ns) {
				has_idle = true;
				continue;
			}
			for (uint32_t k = sv[by[i]].node; k && stamp[k] != t + 1; k = nodes[k].parent)
				stamp[k] = (uint32_t)t + 1;
		}
		ev_head(f, first, "P", "profile", &tv[t]);
		fprintf(f, ",\"name\":\"Profile\",\"id\":\"0x%zx\"", t + 1);
		ev_ts(f, "ts", prev);
		fprintf(f, ",\"args\":{\"data\":{\"startTime\":%" PRIu64 "}}}", prev / 1000);
		ev_head(f, first, "P", "profile", &tv[t]);
		fprintf(f, ",\"name\":\"ProfileChunk\",\"id\":\"0x%zx\"", t + 1);
		ev_ts(f, "ts", prev);
		chrome_nodes(p, f, stamp, (uint32_t)t + 1, has_idle);
		fputs("],\"samples\":[", f);
		for (size_t i = lo; i < hi; i++)
			fprintf(f, "%s%zu", i > lo ? "," : "",
				by[i] >= ns ? nn + 1 : (size_t)chrome_node(nodes, sv[by[i]].node));
		fputs("]},\"timeDeltas\":[", f);
		for (size_t i = lo; i < hi; i++) {
			fprintf(f, "%s%" PRIu64, i > lo ? "," : "", AT(by[i]) / 1000 - prev / 1000);
			prev = AT(by[i]);
		}
		fputs("]}}}", f);
	}
	free(stamp);
	free(by);
	free(at);
	return 0;
#undef AT
}

int pm_export_chrome(const struct profile *p, FILE *f)
{
	bool first = true;
	int r;

	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"perfmark " PERFMARK_VERSION
	      "\"},\"traceEvents\":[", f);
	chrome_names(p, f, &first);
	chrome_ranges(p, f, &first);
	chrome_offcpu(p, f, &first);
	chrome_marks(p, f, &first);
	r = chrome_profiles(p, f, &first);
	fputs("\n]}\n", f);
	return r;
}

/* ---- command ----------------------------------------------------------------------- */

/* What the source lines could not be read from, when a file was refused */
static void pprof_src_notice(const struct srcline_stats *st)
{
	uint64_t refused = st->refused_elf + st->refused_size + st->refused_alt;

	if (refused)
		pm_notice("pprof: no source lines from %llu files (%llu ELF files malformed or over budget, "
			  "%llu DWARF over budget, %llu supplementary DWARF not found)",
			  (unsigned long long)refused, (unsigned long long)st->refused_elf,
			  (unsigned long long)st->refused_size, (unsigned long long)st->refused_alt);
	if (st->refused_units)
		pm_notice("pprof: no source lines for the code of %llu compile units: their line "
			  "programs are over budget", (unsigned long long)st->refused_units);
	if (st->work_out)
		pm_notice("pprof: %llu files' inlined frames cut short: over the DWARF work budget",
			  (unsigned long long)st->work_out);
}

/* the writer is lib/analyze/pprof.c's, shared with perfmarkd; export adds source lines */
int pm_export_pprof(const struct profile *p, FILE *out)
{
	struct srcline_stats st = { 0 };
	struct pprof_opts o = { .lines = true, .src = &st };
	int e = pprof__write(p, &o, out);

	pprof_src_notice(&st);
	return e ? pm_err("pprof: %s", strerror(-e)) : 0;
}

static const struct format {
	const char *name;
	int (*fn)(const struct profile *p, FILE *out);
	bool marks;     /* needs every marker kept */
	bool addrs;     /* needs every frame's address */
} formats[] = {
	{ "chrome", pm_export_chrome, true, false },
	{ "pprof", pm_export_pprof, false, true },
	{ "collapsed", pm_export_collapsed, false, false },
	{ NULL, NULL, false, false },
};

struct export_args {
	const char *input, *output, *format;
	int argc;
	char **argv;
};

static const struct opt export_table[] = {
	OPT_INPUT(struct export_args, input),
	{ .flag = 'o', .name = "output", .arg = "FILE", .help = "where it goes", .def = "stdout",
	  .set = opt_set_str, .off = offsetof(struct export_args, output) },
	{ .flag = 'f', .name = "format", .arg = "chrome|pprof|collapsed",
	  .help = "chrome: Trace Event JSON (Perfetto, "
	    "speedscope); pprof: gzip'd profile.proto (go tool pprof); collapsed: folded stacks",
	  .set = opt_set_str, .off = offsetof(struct export_args, format), .required = true },
	{ 0 },
};
static const struct opt export_event_table[] = {
	OPT_EVENT(struct profile_opts, event),
	{ 0 },
};

const struct opts_cmd export_cmd = {
	.name = "export",
	.brief = "convert for other viewers: chrome, pprof, collapsed",
	.about = "Convert a recording for other viewers.",
	.in_order = true,
	.tables = { export_table, export_event_table, pm_filter_table },
};

/* The command once its options are parsed */
static int export_run(const struct export_args *args, struct profile_opts *po, struct filter *f)
{
	const struct format *fm;
	struct profile *p = NULL;
	FILE *out;
	int r;

	if (optind < args->argc)
		return pm_err("unexpected argument '%s'", args->argv[optind]);
	if (!args->format)
		return pm_err("--format is required (chrome, pprof or collapsed)");
	for (fm = formats; fm->name && strcmp(fm->name, args->format); fm++)
		;
	if (!fm->name)
		return pm_err("unknown format '%s' (chrome, pprof or collapsed)", args->format);
	po->keep_marks = fm->marks;
	po->keep_addrs = fm->addrs;
	po->filter = f;
	if (pm_load(args->input, po, &p))
		return 1;
	out = pm_output(args->output);
	if (!out) {
		profile__free(p);
		return 1;
	}
	r = fm->fn(p, out);
	profile__free(p);
	if (out != stdout || !r)
		r = pm_output_close(out, args->output) || r;
	return r;
}

int cmd_export(int argc, char **argv)
{
	struct profile_opts po = { 0 };
	struct export_args args = { .input = "perf.data", .argc = argc, .argv = argv };
	struct pm_filters pf = { 0 };
	void *ctx[] = { &args, &po, &pf };
	int r;

	r = opts_parse(&export_cmd, ctx, argc, argv);
	if (r) {
		pm_filters__free(&pf);
		return r == OPTS_HELP ? 0 : 1;
	}
	r = export_run(&args, &po, pf.f);
	pm_filters__free(&pf);
	return r;
}

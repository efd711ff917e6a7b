// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The loop's side of the HTTP jobs (http.c): which sessions HTTP sees,
 * the /metrics text, and the snapshot a pprof request encodes.
 *
 * /metrics is Prometheus's text exposition format 0.0.4: per exposed
 * session the figures `session show --json` has (samples, markers, lost,
 * late, bytes, ring use, readers, unwind table memory), the range duration
 * histograms the session accumulated while draining (lib/engine/rangehist.h:
 * no file is read per scrape), and the daemon's own CPU and memory.  Every
 * label value goes through escape_prom().  A histogram lists only the
 * bounds around its filled buckets (and +Inf): 210 fine buckets per label
 * set would be most of a scrape, and a bound once listed stays listed
 * (counts only grow), so a series never comes and goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "escape.h"
#include "perfmarkd.h"
#include "rangehist.h"
#include "sinks.h"

const char *http_sessions;    /* --http-sessions NAME,...; NULL: root's sessions */

/*
 * The histograms of one scrape stop at this many bytes of text (a label
 * set lists up to 212 lines; 1000 sets in each of 80 sessions would be
 * gigabytes), the stop counted in perfmark_http_metrics_truncated_total.
 */
#define METRICS_MAX_BYTES (32u << 20)
static uint64_t truncated;

bool http__exposed(const struct dsess *d)
{
	const char *p = http_sessions;
	size_t n = strlen(d->def.name);

	if (!p)
		return d->def.owner == 0;
	while (*p) {
		size_t l = strcspn(p, ",");

		if (l == n && !memcmp(p, d->def.name, n))
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

/* --- /metrics -------------------------------------------------------------- */

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void sess_label(FILE *f, const struct dsess *d)
{
	fputs("session=\"", f);
	escape_prom(f, d->def.name, strlen(d->def.name));
	fputc('"', f);
}

/* one line per exposed session: name{session="..."} value */
struct col {
	const char *name, *type, *help;
	uint64_t (*get)(const struct dsess *d, const struct sink_stats *ks);
};

static uint64_t g_up(const struct dsess *d, const struct sink_stats *ks) { return d->run.s != NULL; }
static uint64_t g_samples(const struct dsess *d, const struct sink_stats *ks) { return d->run.st.samples; }
static uint64_t g_markers(const struct dsess *d, const struct sink_stats *ks) { return d->run.st.markers; }
static uint64_t g_lost(const struct dsess *d, const struct sink_stats *ks)
{
	return d->run.st.lost_samples + d->run.st.lost_markers;
}
static uint64_t g_late(const struct dsess *d, const struct sink_stats *ks) { return d->run.st.late; }
static uint64_t g_bytes(const struct dsess *d, const struct sink_stats *ks)
{
	return ks->kind == SINK_RING ? ks->used : ks->bytes;
}
static uint64_t g_ring_used(const struct dsess *d, const struct sink_stats *ks) { return ks->used; }
static uint64_t g_ring_cap(const struct dsess *d, const struct sink_stats *ks) { return ks->capacity; }
static uint64_t g_evicted(const struct dsess *d, const struct sink_stats *ks) { return ks->evicted; }
static uint64_t g_readers(const struct dsess *d, const struct sink_stats *ks) { return ks->readers; }
static uint64_t g_unwind(const struct dsess *d, const struct sink_stats *ks)
{
	return d->run.st.unwind.table_bytes;
}
static uint64_t g_unwind_pool(const struct dsess *d, const struct sink_stats *ks)
{
	return d->run.st.unwind.pool_bytes;
}

static const struct col cols[] = {
	{ "perfmark_session_running", "gauge", "1 while the session collects", g_up },
	{ "perfmark_samples_total", "counter", "samples written", g_samples },
	{ "perfmark_markers_total", "counter", "markers written", g_markers },
	{ "perfmark_lost_total", "counter", "samples and markers lost (rings full)", g_lost },
	{ "perfmark_late_total", "counter", "records that arrived after the reorder window", g_late },
	{ "perfmark_session_bytes", "gauge", "bytes the ring holds, or bytes written to files", g_bytes },
	{ "perfmark_ring_used_bytes", "gauge", "bytes of records the ring holds", g_ring_used },
	{ "perfmark_ring_capacity_bytes", "gauge", "the ring's size", g_ring_cap },
	{ "perfmark_ring_evicted_total", "counter", "records the ring pushed out for newer ones", g_evicted },
	{ "perfmark_readers", "gauge", "live readers attached", g_readers },
	{ "perfmark_unwind_table_bytes", "gauge", "unwind table rows loaded (--call-graph ehframe)", g_unwind },
	{ "perfmark_unwind_pool_bytes", "gauge", "BPF memory holding unwind tables", g_unwind_pool },
};

static void histogram(FILE *f, const struct dsess *d, const struct rangehist_set *st)
{
	uint64_t cum = 0;

	for (size_t i = 0; i < RANGEHIST_BUCKETS; i++) {
		bool last = i == RANGEHIST_BUCKETS - 1;

		cum += st->buckets[i];
		if (!last && !st->buckets[i] && !st->buckets[i + 1])
			continue;
		fputs("perfmark_range_duration_seconds_bucket{", f);
		sess_label(f, d);
		fputs(",range=\"", f);
		escape_prom(f, st->name, st->name_len);
		fputs("\",comm=\"", f);
		escape_prom(f, st->comm, strlen(st->comm));
		if (last)
			fprintf(f, "\",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
		else
			fprintf(f, "\",le=\"%.10g\"} %llu\n", (double)rangehist__bound(i) / 1e9,
				(unsigned long long)cum);
	}
	for (int k = 0; k < 2; k++) {
		fprintf(f, "perfmark_range_duration_seconds_%s{", k ? "count" : "sum");
		sess_label(f, d);
		fputs(",range=\"", f);
		escape_prom(f, st->name, st->name_len);
		fputs("\",comm=\"", f);
		escape_prom(f, st->comm, strlen(st->comm));
		if (k)
			fprintf(f, "\"} %llu\n", (unsigned long long)st->count);
		else
			fprintf(f, "\"} %.9f\n", (double)st->sum_ns / 1e9);
	}
}

static void totals(FILE *f, const char *name, const char *type, const char *text, int which)
{
	struct rangehist_totals t;
	const struct dsess *d;

	help(f, name, type, text);
	for (d = D.sessions; d; d = d->next) {
		if (!d->ranges || !http__exposed(d))
			continue;
		rangehist__totals(d->ranges, &t);
		fprintf(f, "%s{", name);
		sess_label(f, d);
		fprintf(f, "} %llu\n", (unsigned long long)(which == 0 ? t.sets : which == 1 ? t.overflow : t.unpaired));
	}
}

static void ranges(FILE *f)
{
	struct rangehist_set st;
	const struct dsess *d;

	help(f, "perfmark_range_duration_seconds", "histogram",
	     "durations of marker ranges (begin to end on one thread), by range name and process");
	for (d = D.sessions; d; d = d->next)
		if (d->ranges && http__exposed(d))
			for (size_t i = 0; i < rangehist__nr_sets(d->ranges); i++) {
				if (ftell(f) > (long)METRICS_MAX_BYTES) {
					truncated++;
					goto out;
				}
				rangehist__set(d->ranges, i, &st);
				histogram(f, d, &st);
			}
out:
	help(f, "perfmark_counter_value", "gauge", "the last value of a counter marker (perfmark_counter)");
	for (d = D.sessions; d; d = d->next)
		if (d->ranges && http__exposed(d))
			for (size_t i = 0; i < rangehist__nr_counters(d->ranges); i++) {
				struct rangehist_counter c;

				rangehist__counter(d->ranges, i, &c);
				fputs("perfmark_counter_value{", f);
				sess_label(f, d);
				fputs(",counter=\"", f);
				escape_prom(f, c.name, c.name_len);
				fputs("\",comm=\"", f);
				escape_prom(f, c.comm, strlen(c.comm));
				fprintf(f, "\"} %lld\n", (long long)c.value);
			}
	totals(f, "perfmark_range_label_sets", "gauge", "distinct (range, comm) and (counter, comm) label sets held", 0);
	totals(f, "perfmark_range_overflow_total", "counter",
	       "ranges not counted: their label set was beyond the cap", 1);
	totals(f, "perfmark_range_unpaired_total", "counter",
	       "range begins forgotten (nested too deep, too many threads)", 2);
}

static void process(FILE *f)
{
	struct rusage ru;
	unsigned long long size = 0, rss = 0;
	FILE *sm = fopen("/proc/self/statm", "re");

	getrusage(RUSAGE_SELF, &ru);
	if (sm) {
		if (fscanf(sm, "%llu %llu", &size, &rss) != 2)
			rss = 0;
		fclose(sm);
	}
	help(f, "process_cpu_seconds_total", "counter", "perfmarkd's user and system CPU time");
	fprintf(f, "process_cpu_seconds_total %.6f\n",
		(double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	help(f, "process_resident_memory_bytes", "gauge", "perfmarkd's resident memory");
	fprintf(f, "process_resident_memory_bytes %llu\n", rss * (unsigned long long)sysconf(_SC_PAGESIZE));
	help(f, "perfmark_http_responses_total", "counter", "HTTP responses by status class");
	for (int c = 2; c <= 5; c++)
		fprintf(f, "perfmark_http_responses_total{code=\"%dxx\"} %lu\n", c,
			atomic_load(&http_counters.by_class[c]));
	help(f, "perfmark_http_busy_total", "counter", "requests refused with 503: too many in flight");
	fprintf(f, "perfmark_http_busy_total %lu\n", atomic_load(&http_counters.refused_busy));
	help(f, "perfmark_http_cut_total", "counter",
	     "connections cut while sending a request's headers: too slow, or the oldest at the limit");
	fprintf(f, "perfmark_http_cut_total %lu\n", atomic_load(&http_counters.cut_slow));
	help(f, "perfmark_http_metrics_truncated_total", "counter",
	     "scrapes whose range histograms stopped at the size cap");
	fprintf(f, "perfmark_http_metrics_truncated_total %llu\n", (unsigned long long)truncated);
	help(f, "perfmark_http_in_flight", "gauge", "HTTP requests being served, this one included");
	fprintf(f, "perfmark_http_in_flight{path=\"/metrics\"} %d\n", atomic_load(&http_counters.metrics_inflight));
	fprintf(f, "perfmark_http_in_flight{path=\"/debug/pprof/profile\"} %d\n",
		atomic_load(&http_counters.pprof_inflight));
}

static void metrics(struct http_job *j)
{
	size_t len = 0;
	FILE *f = open_memstream(&j->body, &len);
	const struct dsess *d;

	if (!f) {
		j->status = 500;
		snprintf(j->err, sizeof(j->err), "out of memory");
		return;
	}
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		help(f, cols[c].name, cols[c].type, cols[c].help);
		for (d = D.sessions; d; d = d->next) {
			struct sink_stats ks;

			if (!http__exposed(d))
				continue;
			memset(&ks, 0, sizeof(ks));
			ks.kind = d->def.sink == SESSDEF_SINK_RING ? SINK_RING : SINK_FILE;
			if (d->sink)
				sink__stats(d->sink, &ks);
			fprintf(f, "%s{", cols[c].name);
			sess_label(f, d);
			fprintf(f, "} %llu\n", (unsigned long long)cols[c].get(d, &ks));
		}
	}
	ranges(f);
	process(f);
	if (fclose(f)) {
		j->status = 500;
		snprintf(j->err, sizeof(j->err), "out of memory");
		return;
	}
	j->len = len;
	j->status = 200;
	j->ctype = "text/plain; version=0.0.4; charset=utf-8";
}

/* --- pprof: a snapshot of the span asked for --------------------------------- */

static struct dsess *pick(struct http_job *j)
{
	struct dsess *d, *only = NULL;
	size_t n = 0;

	if (j->session[0]) {
		d = sessions__find(j->session);
		return d && http__exposed(d) ? d : NULL;
	}
	for (d = D.sessions; d; d = d->next)
		if (http__exposed(d)) {
			only = d;
			n++;
		}
	return n == 1 ? only : NULL;
}

static void pprof_snapshot(struct http_job *j)
{
	struct dsess *d = pick(j);
	bool ring, second = j->status == HTTP_STATUS_WAIT;
	uint64_t now;
	int e, fd;

	j->status = 404;
	if (!d) {
		if (!j->session[0])
			j->status = 400;
		snprintf(j->err, sizeof(j->err), "%s", j->session[0] ? "no such session" :
			 "several sessions (or none) exposed: ask for one with session=NAME");
		return;
	}
	ring = d->def.sink == SESSDEF_SINK_RING;
	if (!d->sink || (!ring && !d->run.s)) {
		snprintf(j->err, sizeof(j->err), "the session holds nothing to profile");
		return;
	}
	now = session__clock();
	if (!ring && !second) {
		/* no ring: what comes in the next N seconds */
		j->since = now;
		j->status = HTTP_STATUS_WAIT;
		return;
	}
	if (d->run.s)
		run__flush(&d->run, now);   /* everything up to this moment */
	if (!d->sink)
		return;
	if (ring)
		j->since = now > (uint64_t)j->seconds * 1000000000ull ? now - (uint64_t)j->seconds * 1000000000ull : 0;
	fd = memfd_create("perfmark-http", MFD_CLOEXEC);
	if (fd < 0) {
		j->status = 500;
		snprintf(j->err, sizeof(j->err), "memfd: %s", strerror(errno));
		return;
	}
	e = ring ? sink__snapshot_span(d->sink, fd, false, j->since, now)
		 : sink__snapshot(d->sink, fd, false, now);
	if (e) {
		close(fd);
		j->status = 500;
		snprintf(j->err, sizeof(j->err), "snapshot: %s", strerror(-e));
		return;
	}
	j->fd = fd;
	j->status = 200;
}

void http__serve(struct http_job *j)
{
	if (j->kind == HTTP_JOB_METRICS)
		metrics(j);
	else
		pprof_snapshot(j);
}

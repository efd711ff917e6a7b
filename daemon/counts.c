// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A session's counters (`session create --counters EVENTS`, issue 20): the
 * events counted as `perfmark stat` counts them (lib/collect/counting.c),
 * on the session's targets, from each start of its collection to its end.
 * `session show` gives each one's total, scaled as perf stat scales a
 * multiplexed counter, and its rate over the time counted.
 *
 * Counters cannot be limited to one user's processes, so a session that
 * counts system-wide is root's; a member counts only the processes of
 * theirs the session names (-p, checked at create like its samples).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <linux/perf_event.h>

#include "counting.h"
#include "perfdata.h"
#include "perfmarkd.h"

/* clocks count nanoseconds; perf stat shows them in msec */
static bool is_clock(const struct evspec *e)
{
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_TASK_CLOCK || e->config == PERF_COUNT_SW_CPU_CLOCK);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *counts__check(const struct client *c, const struct sessdef *def, char *buf, size_t len)
{
	if (!def->nr_count || c->root || def->spec.target != RECSPEC_TARGET_ALL)
		return NULL;
	snprintf(buf, len, "--counters with -a is root's: counters cannot be limited to your processes "
		 "(count with -p PID)");
	return buf;
}

int counts__start(struct dsess *d, char *err, size_t errlen)
{
	struct counting_opts o = { 0 };
	pid_t pids[RECSPEC_MAX_PIDS];
	size_t i;
	int e;

	counts__stop(d);
	memset(d->count_val, 0, sizeof(d->count_val));
	if (!d->def.nr_count)
		return 0;
	o.events = d->def.count;
	o.nr_events = d->def.nr_count;
	if (d->def.spec.target == RECSPEC_TARGET_ALL) {
		o.target = COUNTING_CPUS;
	} else {
		for (i = 0; i < d->def.spec.nr_pids && i < RECSPEC_MAX_PIDS; i++)
			pids[i] = d->def.spec.pids[i];
		o.target = COUNTING_THREADS;
		o.pids = pids;
		o.nr_pids = i;
	}
	e = counting__open(&d->counts, &o, err, errlen);
	if (!e)
		e = counting__enable(d->counts);
	if (e) {
		if (!err[0])
			snprintf(err, errlen, "cannot count: %s", strerror(-e));
		counting__close(d->counts);
		d->counts = NULL;
		return e;
	}
	for (i = 0; i < d->def.nr_count; i++)
		d->count_sup[i] = counting__supported(d->counts, i);
	d->count_t0 = mono_ns();
	d->count_t1 = 0;
	return 0;
}

void counts__stop(struct dsess *d)
{
	if (!d->counts)
		return;
	counting__disable(d->counts);
	if (!counting__read(d->counts, d->count_val))
		d->count_t1 = mono_ns();
	counting__close(d->counts);
	d->counts = NULL;
}

struct json_object *counts__json(const struct dsess *d)
{
	struct counting_value v[SESSDEF_MAX_COUNT];
	struct json_object *a, *x;
	uint64_t t1 = d->count_t1;
	double secs;
	size_t i;

	if (!d->def.nr_count)
		return NULL;
	/* running: the values now; stopped: as they ended */
	memcpy(v, d->count_val, sizeof(v));
	if (d->counts && !counting__read(d->counts, v))
		t1 = mono_ns();
	secs = t1 > d->count_t0 ? (double)(t1 - d->count_t0) / 1e9 : 0;
	a = json_object_new_array();
	for (i = 0; i < d->def.nr_count; i++) {
		struct counting_result r = counting_scale(&v[i], d->count_sup[i]);
		bool clock = is_clock(&d->def.count[i]);

		if (clock)
			r.value /= 1e6;

		x = json_object_new_object();
		json_object_object_add(x, "event", json_object_new_string(d->def.count[i].name));
		json_object_object_add(x, "counted", json_object_new_boolean(r.state == COUNTING_COUNTED));
		json_object_object_add(x, "value", json_object_new_double(r.value));
		json_object_object_add(x, "unit", json_object_new_string(clock ? "msec" : ""));
		json_object_object_add(x, "raw", json_object_new_int64((int64_t)v[i].val));
		json_object_object_add(x, "enabled_ns",
				       json_object_new_int64((int64_t)v[i].enabled));
		json_object_object_add(x, "running_ns",
				       json_object_new_int64((int64_t)v[i].running));
		json_object_object_add(x, "pct_running", json_object_new_double(r.pct_running));
		json_object_object_add(x, "scaled", json_object_new_boolean(r.scaled));
		json_object_object_add(x, "rate", json_object_new_double(secs > 0 ? r.value / secs : 0));
		json_object_array_add(a, x);
	}
	x = json_object_new_object();
	json_object_object_add(x, "seconds", json_object_new_double(secs));
	json_object_object_add(x, "counters", a);
	return x;
}

/* --- the counters in snapshots, as perf stat record writes them --------------- */

/* perf's user record types for counting data (perf.data format, not the kernel's) */
#define REC_THREAD_MAP  73
#define REC_CPU_MAP     74
#define REC_STAT_CONFIG 75
#define REC_STAT        76
#define REC_STAT_ROUND  77
#define STAT_ROUND_FINAL 1
/* STAT_CONFIG's terms: aggregation (1: global), interval (0: none), scale (1: yes) */
#define STAT_TERM_AGGR_MODE 0
#define STAT_TERM_INTERVAL  1
#define STAT_TERM_SCALE     2
#define COUNT_ID_BASE   1000   /* after the session's own ids (session.c: 1.., 100, 101) */

size_t counts__events(const struct dsess *d, struct perfdata_event *evs, uint64_t *ids, size_t max)
{
	size_t i;

	for (i = 0; i < d->def.nr_count && i < max; i++) {
		ids[i] = COUNT_ID_BASE + i;
		perfdata_event_init(&evs[i], d->def.count[i].type, d->def.count[i].config,
				    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				    PERF_SAMPLE_CPU, d->def.count[i].name, &ids[i], 1);
		evs[i].attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		evs[i].attr.inherit = 1;
	}
	return i;
}

static void put(char *buf, size_t *off, const void *p, size_t len)
{
	memcpy(buf + *off, p, len);
	*off += len;
}

static void put_hdr(char *buf, size_t *off, uint32_t type, uint16_t size)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };

	put(buf, off, &h, sizeof(h));
}

static void put_u64(char *buf, size_t *off, uint64_t v)
{
	put(buf, off, &v, sizeof(v));
}

size_t counts__records(const struct dsess *d, char *buf, size_t cap)
{
	struct counting_value v[SESSDEF_MAX_COUNT];
	static const char comm[16] = "";
	uint64_t t1 = d->count_t1;
	size_t off = 0, i;
	uint16_t u16;
	uint32_t u32;

	if (!d->def.nr_count || cap < COUNTS_RECORDS_MAX)
		return 0;
	memcpy(v, d->count_val, sizeof(v));
	if (d->counts && !counting__read(d->counts, v))
		t1 = mono_ns();
	/* one "thread" and one "cpu" (-1: any): the session's totals */
	put_hdr(buf, &off, REC_THREAD_MAP, 8 + 8 + 8 + 16);
	put_u64(buf, &off, 1);
	put_u64(buf, &off, (uint64_t)-1);
	put(buf, &off, comm, sizeof(comm));
	put_hdr(buf, &off, REC_CPU_MAP, 16);
	u16 = 0;                       /* a list of cpus */
	put(buf, &off, &u16, 2);
	u16 = 1;
	put(buf, &off, &u16, 2);
	u16 = 0xffff;                  /* -1 */
	put(buf, &off, &u16, 2);
	u16 = 0;
	put(buf, &off, &u16, 2);
	put_hdr(buf, &off, REC_STAT_CONFIG, 8 + 8 + 3 * 16);
	put_u64(buf, &off, 3);
	put_u64(buf, &off, STAT_TERM_AGGR_MODE);
	put_u64(buf, &off, 1);
	put_u64(buf, &off, STAT_TERM_INTERVAL);
	put_u64(buf, &off, 0);
	put_u64(buf, &off, STAT_TERM_SCALE);
	put_u64(buf, &off, 1);
	for (i = 0; i < d->def.nr_count; i++) {
		put_hdr(buf, &off, REC_STAT, 8 + 8 + 8 + 24);
		put_u64(buf, &off, COUNT_ID_BASE + i);
		u32 = (uint32_t)-1;        /* cpu */
		put(buf, &off, &u32, 4);
		u32 = 0;                   /* thread: the map's first */
		put(buf, &off, &u32, 4);
		put_u64(buf, &off, v[i].val);
		put_u64(buf, &off, v[i].enabled);
		put_u64(buf, &off, v[i].running);
	}
	put_hdr(buf, &off, REC_STAT_ROUND, 8 + 16);
	put_u64(buf, &off, STAT_ROUND_FINAL);
	put_u64(buf, &off, t1 > d->count_t0 ? t1 - d->count_t0 : 0);
	return off;
}

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

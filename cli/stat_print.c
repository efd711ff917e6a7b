// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark stat's output, in perf stat's layout and units: clocks in msec
 * with "CPUs utilized", other events per second of the clock, "<not
 * counted>" and "<not supported>", the running percentage of a
 * multiplexed counter.  See stat.h.
 */
#include <json-c/json.h>
#include <linux/perf_event.h>
#include <math.h>
#include <string.h>

#include "stat.h"

#define NAME_W 32     /* perf's event-name column */
#define UNIT_W 23     /* ... and its metric unit's */

static bool is_clock(const struct evspec *e)
{
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_TASK_CLOCK || e->config == PERF_COUNT_SW_CPU_CLOCK);
}

static bool is_hw(const struct evspec *e, uint64_t config)
{
	return e->type == PERF_TYPE_HARDWARE && e->config == config;
}

/* the first counted event that is(e), or -1 */
static double first(const struct stat_events *e, const struct counting_result *r,
		    bool (*is)(const struct evspec *, uint64_t), uint64_t arg)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		if (r[i].state == COUNTING_COUNTED && is(&e->ev[i], arg))
			return r[i].value;
	return -1;
}

static bool is_clock_arg(const struct evspec *e, uint64_t unused)
{
	(void)unused;
	return is_clock(e);
}

void stat_metric(const struct stat_events *e, const struct counting_result *r, size_t i,
		 uint64_t elapsed_ns, struct stat_metric *m)
{
	const struct evspec *ev = &e->ev[i];
	double v = r[i].value, clock_ns = first(e, r, is_clock_arg, 0), base;

	memset(m, 0, sizeof(*m));
	if (r[i].state != COUNTING_COUNTED)
		return;
	if (is_clock(ev)) {
		if (!elapsed_ns)
			return;
		*m = (struct stat_metric){ .have = true, .value = v / (double)elapsed_ns,
					   .unit = "CPUs utilized" };
		return;
	}
	if (is_hw(ev, PERF_COUNT_HW_INSTRUCTIONS) &&
	    (base = first(e, r, is_hw, PERF_COUNT_HW_CPU_CYCLES)) > 0) {
		*m = (struct stat_metric){ .have = true, .value = v / base, .unit = "insn per cycle" };
		return;
	}
	if (is_hw(ev, PERF_COUNT_HW_BRANCH_MISSES) &&
	    (base = first(e, r, is_hw, PERF_COUNT_HW_BRANCH_INSTRUCTIONS)) > 0) {
		*m = (struct stat_metric){ .have = true, .value = 100.0 * v / base,
					   .unit = "of all branches", .percent = true };
		return;
	}
	if (clock_ns <= 0)
		return;
	if (is_hw(ev, PERF_COUNT_HW_CPU_CYCLES)) {
		*m = (struct stat_metric){ .have = true, .value = v / clock_ns, .unit = "GHz" };
		return;
	}
	/* per second of the clock, scaled as perf does: K/sec past 1e3, M past 1e6, G past 1e9 */
	m->have = true;
	m->value = 1e9 * v / clock_ns;
	m->unit = m->unit_buf;
	snprintf(m->unit_buf, sizeof(m->unit_buf), "/sec");
	if (m->value > 1e9)
		m->value /= 1e9, snprintf(m->unit_buf, sizeof(m->unit_buf), "G/sec");
	else if (m->value > 1e6)
		m->value /= 1e6, snprintf(m->unit_buf, sizeof(m->unit_buf), "M/sec");
	else if (m->value > 1e3)
		m->value /= 1e3, snprintf(m->unit_buf, sizeof(m->unit_buf), "K/sec");
}

static const char *state_text(enum counting_state s)
{
	return s == COUNTING_NOT_SUPPORTED ? "<not supported>" : "<not counted>";
}

static void interval_prefix(struct stat_out *o, int64_t interval_ns)
{
	if (interval_ns < 0)
		return;
	fprintf(o->f, "%6llu.%09llu%s", (unsigned long long)(interval_ns / 1000000000),
		(unsigned long long)(interval_ns % 1000000000), o->sep ? o->sep : " ");
}

static void text_line(struct stat_out *o, const struct evspec *ev, const struct counting_result *r,
		      const struct stat_metric *m, int64_t interval_ns)
{
	bool clock = is_clock(ev);

	interval_prefix(o, interval_ns);
	if (r->state != COUNTING_COUNTED)
		fprintf(o->f, "%18s", state_text(r->state));
	else if (clock)
		fprintf(o->f, "%18.2f", r->value / 1e6);
	else
		fprintf(o->f, "%18.0f", r->value);
	fprintf(o->f, " %-4s %-*s", clock ? "msec" : "", NAME_W, ev->name);
	if (m->have && m->percent)
		fprintf(o->f, " # %7.2f%% %-*s", m->value, UNIT_W, m->unit);
	else if (m->have)
		fprintf(o->f, " # %8.3f %-*s", m->value, UNIT_W, m->unit);
	else
		fprintf(o->f, "%*s", r->state == COUNTING_COUNTED ? 35 : 28, "");
	if (r->scaled)
		fprintf(o->f, "  (%.2f%%)", r->pct_running);
	fputc('\n', o->f);
}

static void csv_line(struct stat_out *o, const struct evspec *ev, const struct counting_result *r,
		     const struct counting_value *v, const struct stat_metric *m, int64_t interval_ns)
{
	const char *s = o->sep;
	bool clock = is_clock(ev);

	interval_prefix(o, interval_ns);
	if (r->state != COUNTING_COUNTED)
		fputs(state_text(r->state), o->f);
	else if (clock)
		fprintf(o->f, "%.2f", r->value / 1e6);
	else
		fprintf(o->f, "%.0f", r->value);
	fprintf(o->f, "%s%s%s%s%s%llu%s%.2f%s", s, clock ? "msec" : "", s, ev->name, s,
		(unsigned long long)(r->state == COUNTING_COUNTED ? v->running : 0), s,
		r->pct_running, s);
	if (m->have)
		fprintf(o->f, "%.3f%s%s\n", m->value, s, m->unit);
	else
		fprintf(o->f, "%s\n", s);
}

/* a number with a fixed spelling in json-c's output */
static struct json_object *num(double v, const char *fmt)
{
	char buf[64];

	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof(buf), fmt, v);
	return json_object_new_double_s(v, buf);
}

static void json_line(struct stat_out *o, const struct evspec *ev, const struct counting_result *r,
		      const struct counting_value *v, const struct stat_metric *m, int64_t interval_ns)
{
	struct json_object *j = json_object_new_object();
	char buf[64];

	if (!j)
		return;
	if (interval_ns >= 0)
		json_object_object_add(j, "interval", num((double)interval_ns / 1e9, "%.9f"));
	if (r->state != COUNTING_COUNTED)
		snprintf(buf, sizeof(buf), "%s", state_text(r->state));
	else
		snprintf(buf, sizeof(buf), "%f", is_clock(ev) ? r->value / 1e6 : r->value);
	json_object_object_add(j, "counter-value", json_object_new_string(buf));
	json_object_object_add(j, "unit", json_object_new_string(is_clock(ev) ? "msec" : ""));
	json_object_object_add(j, "event", json_object_new_string(ev->name));
	json_object_object_add(j, "event-runtime", json_object_new_int64(
		(int64_t)(r->state == COUNTING_COUNTED ? v->running : 0)));
	json_object_object_add(j, "pcnt-running", num(r->pct_running, "%.2f"));
	if (m->have) {
		json_object_object_add(j, "metric-value", num(m->value, "%f"));
		json_object_object_add(j, "metric-unit", json_object_new_string(m->unit));
	}
	fprintf(o->f, "%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

void stat_print_counts(struct stat_out *o, const struct stat_events *e, const struct counting_value *v,
		       uint64_t elapsed_ns, int64_t interval_ns)
{
	struct counting_result r[EVSPEC_MAX];
	struct stat_metric m;
	size_t i, n = e->n < EVSPEC_MAX ? e->n : EVSPEC_MAX;

	for (i = 0; i < n; i++)
		r[i] = counting_scale(&v[i], e->supported[i]);
	/* perf's header over the text intervals, again every 25 */
	if (interval_ns >= 0 && !o->sep && !o->json && o->intervals++ % 25 == 0)
		fprintf(o->f, "#           time             counts unit events\n");
	for (i = 0; i < n; i++) {
		stat_metric(e, r, i, elapsed_ns, &m);
		if (o->json)
			json_line(o, &e->ev[i], &r[i], &v[i], &m, interval_ns);
		else if (o->sep)
			csv_line(o, &e->ev[i], &r[i], &v[i], &m, interval_ns);
		else
			text_line(o, &e->ev[i], &r[i], &m, interval_ns);
	}
	fflush(o->f);
}

void stat_print_head(struct stat_out *o, const char *target)
{
	if (o->sep || o->json)
		return;
	fprintf(o->f, "\n Performance counter stats for %s:\n\n", target);
}

void stat_print_tail(struct stat_out *o, uint64_t elapsed_ns, int64_t user_ns, int64_t sys_ns)
{
	if (o->sep || o->json)
		return;
	fprintf(o->f, "\n%18.9f seconds time elapsed\n\n", (double)elapsed_ns / 1e9);
	if (user_ns >= 0)
		fprintf(o->f, "%18.9f seconds user\n%18.9f seconds sys\n\n",
			(double)user_ns / 1e9, (double)sys_ns / 1e9);
	fflush(o->f);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* struct recspec: defaults, checks, JSON.  See recspec.h. */
#include <errno.h>
#include <json-c/json.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errline.h"
#include "jsonf.h"
#include "perfmark_wire.h"
#include "recspec.h"

/* BPF's buffers hold PM_MAX_STACK frames of each part: the most --max-stack may ask */
_Static_assert(RECSPEC_MAX_STACK == PM_MAX_STACK, "--max-stack's bound is BPF's");

void recspec_init(struct recspec *r)
{
	memset(r, 0, sizeof(*r));
	r->freq = RECSPEC_FREQ_DEFAULT;
	r->call_graph = RECSPEC_CG_NONE;
	r->stack_size = RECSPEC_STACK_DEFAULT;
	r->max_stack = RECSPEC_MAX_STACK;
	r->markers = true;
	r->target = RECSPEC_TARGET_ALL;
	r->off_cpu_min_ns = RECSPEC_OFFCPU_MIN_DEFAULT;
}

int recspec_validate(const struct recspec *r, char *err, size_t errlen)
{
	size_t i;

	if (r->nr_events > RECSPEC_MAX_EVENTS)
		return errline(err, errlen, "too many events (at most %d)", RECSPEC_MAX_EVENTS);
	if (recspec_nr_sampling(r) > RECSPEC_MAX_SAMPLING)
		return errline(err, errlen, "too many sampling events (at most %d)", RECSPEC_MAX_SAMPLING);
	if (r->nr_filters > RECSPEC_MAX_FILTERS)
		return errline(err, errlen, "too many filters (at most %d)", RECSPEC_MAX_FILTERS);
	for (i = 0; i < r->nr_filters; i++)
		if (!memchr(r->filters[i], '\0', RECSPEC_FILTER_MAX))
			return errline(err, errlen, "filter too long");
	for (i = 0; i < r->nr_events; i++)
		if (r->filter[i] && (r->filter[i] > r->nr_filters || !r->events[i].tracepoint))
			return errline(err, errlen, "a filter for %s, which is not a tracepoint",
				       r->events[i].name);
	if (!r->period && (r->freq < 1 || r->freq > EVSPEC_FREQ_MAX))
		return errline(err, errlen, "frequency out of range (1..100000)");
	if (r->period > UINT64_MAX >> 1)
		return errline(err, errlen, "period out of range");
	if (r->call_graph > RECSPEC_CG_EHFRAME)
		return errline(err, errlen, "unknown call-graph mode");
	if (r->call_graph == RECSPEC_CG_DWARF &&
	    (r->stack_size < 8 || r->stack_size > RECSPEC_STACK_MAX || r->stack_size % 8))
		return errline(err, errlen, "dwarf stack size out of range (8..65528, a multiple of 8)");
	if (r->max_stack < 1 || r->max_stack > RECSPEC_MAX_STACK)
		return errline(err, errlen, "max stack out of range (1..%d frames)", RECSPEC_MAX_STACK);
	/* perf unwinds dwarf copies itself, to its own --max-stack: not ours to cut */
	if (r->max_stack != RECSPEC_MAX_STACK &&
	    (r->call_graph == RECSPEC_CG_NONE || r->call_graph == RECSPEC_CG_DWARF))
		return errline(err, errlen, "--max-stack needs --call-graph fp or ehframe "
			       "(dwarf: perf unwinds, give perf report --max-stack)");
	if (r->target != RECSPEC_TARGET_ALL && r->target != RECSPEC_TARGET_PIDS)
		return errline(err, errlen, "unknown target");
	if (r->nr_pids > RECSPEC_MAX_PIDS)
		return errline(err, errlen, "too many pids (at most 64)");
	if (r->target == RECSPEC_TARGET_ALL && r->nr_pids)
		return errline(err, errlen, "give either a system-wide target or pids, not both");
	for (i = 0; i < r->nr_pids; i++)
		if (r->pids[i] < 1 || r->pids[i] > EVSPEC_PID_MAX)
			return errline(err, errlen, "bad pid in 'pids'");
	if (r->zstd_level < 0 || r->zstd_level > RECSPEC_ZSTD_MAX)
		return errline(err, errlen, "compression level out of range (1..22)");
	if (r->ringbuf_size && (r->ringbuf_size < RECSPEC_RINGBUF_MIN ||
				r->ringbuf_size > RECSPEC_RINGBUF_MAX ||
				(r->ringbuf_size & (r->ringbuf_size - 1))))
		return errline(err, errlen, "ring buffer size must be a power of two from 4096 to 1G");
	if (r->off_cpu_min_ns > RECSPEC_OFFCPU_MIN_MAX)
		return errline(err, errlen, "off-cpu MIN_NS out of range (0..10s)");
	if (r->aggregate > RECSPEC_AGGREGATE_MAX)
		return errline(err, errlen, "aggregation interval out of range (1..3600 seconds)");
	/* a stack copy (dwarf) or a table walk that may need one (ehframe) cannot be counted in a map */
	if (r->aggregate && r->call_graph != RECSPEC_CG_NONE && r->call_graph != RECSPEC_CG_FP)
		return errline(err, errlen, "--aggregate counts frame-pointer stacks only "
			       "(not --call-graph dwarf or ehframe)");
	return 0;
}

int recspec_parse_off_cpu(const char *s, struct recspec *r, char *err, size_t errlen)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	unsigned long long v;
	char *end;
	size_t i;

	errno = 0;
	v = strtoull(s, &end, 10);
	for (i = 0; end != s && *s != '-' && !errno && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) && v <= RECSPEC_OFFCPU_MIN_MAX / units[i].ns) {
			r->off_cpu = true;
			r->off_cpu_min_ns = v * units[i].ns;
			return 0;
		}
	return errline(err, errlen, "bad off-cpu MIN_NS '%.32s' (0..10s: 250us, 1ms, or ns)", s);
}

int recspec_parse_call_graph(const char *s, struct recspec *r, char *err, size_t errlen)
{
	static const struct { const char *name; enum recspec_call_graph mode; } modes[] = {
		{ "none", RECSPEC_CG_NONE }, { "fp", RECSPEC_CG_FP },
		{ "dwarf", RECSPEC_CG_DWARF }, { "ehframe", RECSPEC_CG_EHFRAME },
	};
	const char *comma = strchr(s, ',');
	size_t len = comma ? (size_t)(comma - s) : strlen(s), i;
	uint64_t size;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strlen(modes[i].name) == len && !strncmp(s, modes[i].name, len))
			break;
	if (i == sizeof(modes) / sizeof(modes[0])) {
		snprintf(err, errlen, "unknown call-graph mode '%.32s' (fp, dwarf[,SIZE], ehframe)", s);
		return -EINVAL;
	}
	if (comma && modes[i].mode != RECSPEC_CG_DWARF) {
		snprintf(err, errlen, "only dwarf takes a size: '%.32s'", s);
		return -EINVAL;
	}
	r->call_graph = modes[i].mode;
	r->stack_size = RECSPEC_STACK_DEFAULT;
	if (!comma)
		return 0;
	/* as perf: rounded up to 8 bytes, at most 65528 */
	if (evspec_parse_size(comma + 1, &size, err, errlen) ||
	    (size = (size + 7) & ~7ull) > RECSPEC_STACK_MAX) {
		snprintf(err, errlen, "bad dwarf stack size '%.32s' (8..65528 bytes)", comma + 1);
		return -EINVAL;
	}
	r->stack_size = (uint32_t)size;
	return 0;
}

int recspec_parse_max_stack(const char *s, struct recspec *r, char *err, size_t errlen)
{
	char *end;
	long l;

	errno = 0;
	l = strtol(s, &end, 10);
	if (!*s || *end || errno || l < 1 || l > RECSPEC_MAX_STACK)
		return errline(err, errlen, "bad --max-stack '%.32s' (1..%d frames)", s,
			       RECSPEC_MAX_STACK);
	r->max_stack = (uint32_t)l;
	return 0;
}

const char *recspec_call_graph_name(const struct recspec *r, char *buf, size_t len)
{
	switch (r->call_graph) {
	case RECSPEC_CG_NONE:
		return "none";
	case RECSPEC_CG_FP:
		return "fp";
	case RECSPEC_CG_DWARF:
		snprintf(buf, len, "dwarf,%u", r->stack_size);
		return buf;
	case RECSPEC_CG_EHFRAME:
		return "ehframe";
	}
	return "?";
}

const char *recspec_event_name(const struct recspec *r, size_t i)
{
	return r->nr_events ? r->events[i].name : "cycles";
}

size_t recspec_nr_sampling(const struct recspec *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr_events && i < RECSPEC_MAX_EVENTS; i++)
		n += !r->events[i].tracepoint;
	return n;
}

const char *recspec_filter(const struct recspec *r, size_t i)
{
	if (i >= r->nr_events || i >= RECSPEC_MAX_EVENTS || !r->filter[i] ||
	    r->filter[i] > r->nr_filters || r->filter[i] > RECSPEC_MAX_FILTERS)
		return NULL;
	return r->filters[r->filter[i] - 1];
}

int recspec_set_filter(struct recspec *r, size_t first, size_t n, const char *expr,
		       char *err, size_t errlen)
{
	size_t i, len = strlen(expr), k;

	if (!n || first + n > r->nr_events)
		return errline(err, errlen, "--filter needs a tracepoint before it (-e SUBSYS:NAME --filter EXPR)");
	for (i = first; i < first + n; i++)
		if (!r->events[i].tracepoint)
			return errline(err, errlen, "--filter applies to tracepoints, not to %s",
				       r->events[i].name);
	if (len >= RECSPEC_FILTER_MAX)
		return errline(err, errlen, "filter too long (at most %d bytes)", RECSPEC_FILTER_MAX - 1);
	if (!len || strspn(expr, " \t") == len)
		return errline(err, errlen, "empty filter");
	for (k = 0; k < r->nr_filters; k++)
		if (!strcmp(r->filters[k], expr))
			break;
	if (k == r->nr_filters) {
		if (k == RECSPEC_MAX_FILTERS)
			return errline(err, errlen, "too many filters (at most %d)", RECSPEC_MAX_FILTERS);
		memcpy(r->filters[k], expr, len + 1);
		r->nr_filters++;
	}
	for (i = first; i < first + n; i++)
		r->filter[i] = (uint8_t)(k + 1);
	return 0;
}

struct json_object *recspec_to_json(const struct recspec *r, bool all)
{
	struct json_object *o = json_object_new_object(), *a;
	struct recspec def;
	char buf[32];
	size_t i;

	if (!o)
		return NULL;
	recspec_init(&def);
	if (all || r->nr_events) {
		a = json_object_new_array();
		for (i = 0; i < r->nr_events; i++)
			json_object_array_add(a, json_object_new_string(r->events[i].name));
		json_object_object_add(o, "events", a);
	}
	if (r->period)
		json_object_object_add(o, "period", json_object_new_int64((int64_t)r->period));
	else if (all || r->freq != def.freq)
		json_object_object_add(o, "freq", json_object_new_int64((int64_t)r->freq));
	if (all || r->call_graph != def.call_graph)
		json_object_object_add(o, "call_graph",
				       json_object_new_string(recspec_call_graph_name(r, buf, sizeof(buf))));
	if (all || r->max_stack != def.max_stack)
		json_object_object_add(o, "max_stack", json_object_new_int((int)r->max_stack));
	if (all || r->markers != def.markers)
		json_object_object_add(o, "markers", json_object_new_boolean(r->markers));
	if (all || r->target != def.target)
		json_object_object_add(o, "target", json_object_new_string(
			r->target == RECSPEC_TARGET_ALL ? "all" : "pids"));
	if (all || r->nr_pids) {
		a = json_object_new_array();
		for (i = 0; i < r->nr_pids; i++)
			json_object_array_add(a, json_object_new_int(r->pids[i]));
		json_object_object_add(o, "pids", a);
	}
	if (all || r->zstd_level)
		json_object_object_add(o, "zstd", json_object_new_int(r->zstd_level));
	if (r->ringbuf_size)
		json_object_object_add(o, "ringbuf", json_object_new_int64((int64_t)r->ringbuf_size));
	if (all || r->off_cpu)
		json_object_object_add(o, "off_cpu", json_object_new_boolean(r->off_cpu));
	if (all || (r->off_cpu && r->off_cpu_min_ns != def.off_cpu_min_ns))
		json_object_object_add(o, "off_cpu_min_ns",
				       json_object_new_int64((int64_t)r->off_cpu_min_ns));
	if (all || r->aggregate)
		json_object_object_add(o, "aggregate", json_object_new_int64(r->aggregate));
	if (r->nr_filters) {
		a = json_object_new_object();
		for (i = 0; i < r->nr_events; i++)
			if (recspec_filter(r, i))
				json_object_object_add(a, r->events[i].name,
						       json_object_new_string(recspec_filter(r, i)));
		json_object_object_add(o, "filters", a);
	}
	return o;
}

static int events_from_json(struct json_object *o, struct recspec *r, char *err, size_t errlen)
{
	struct json_object *a, *x;
	size_t i;
	int e = jsonf_array(o, "events", &a, RECSPEC_MAX_EVENTS, err, errlen);

	for (i = 0; !e && a && i < json_object_array_length(a); i++) {
		x = json_object_array_get_idx(a, i);
		if (!json_object_is_type(x, json_type_string) ||
		    evspec_lookup(json_object_get_string(x), &r->events[i])) {
			snprintf(err, errlen, "unknown event '%.64s'",
				 json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "?");
			return -EINVAL;
		}
		r->nr_events = i + 1;
	}
	return e;
}

/* "filters": {EVENT: EXPR}, each EVENT one of "events" */
static int filters_from_json(struct json_object *o, struct recspec *r, char *err, size_t errlen)
{
	struct json_object *f;
	size_t i;
	int e = jsonf_object(o, "filters", &f, err, errlen);

	if (e || !f)
		return e;
	json_object_object_foreach(f, name, v) {
		for (i = 0; i < r->nr_events; i++)
			if (!strcmp(r->events[i].name, name))
				break;
		if (i == r->nr_events)
			return errline(err, errlen, "a filter for '%.64s', which is not among the events",
				       name);
		if (!json_object_is_type(v, json_type_string))
			return errline(err, errlen, "the filter of '%.64s' must be a string", name);
		e = recspec_set_filter(r, i, 1, json_object_get_string(v), err, errlen);
		if (e)
			return e;
	}
	return 0;
}

static int pids_from_json(struct json_object *o, struct recspec *r, char *err, size_t errlen)
{
	struct json_object *a, *x;
	size_t i;
	int e = jsonf_array(o, "pids", &a, RECSPEC_MAX_PIDS, err, errlen);

	for (i = 0; !e && a && i < json_object_array_length(a); i++) {
		x = json_object_array_get_idx(a, i);
		if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 1 ||
		    json_object_get_int64(x) > EVSPEC_PID_MAX)
			return errline(err, errlen, "bad pid in 'pids'");
		r->pids[i] = (int)json_object_get_int64(x);
		r->nr_pids = i + 1;
	}
	return e;
}

static int call_graph_from_json(struct json_object *o, struct recspec *r, char *err, size_t errlen)
{
	const char *s;
	bool legacy = false;
	int e = jsonf_str(o, "call_graph", &s, err, errlen);

	if (e)
		return e;
	if (s)
		return recspec_parse_call_graph(s, r, err, errlen);
	/* earlier perfmark: "callchain": true meant frame pointers */
	e = jsonf_bool(o, "callchain", &legacy, err, errlen);
	if (!e && legacy)
		r->call_graph = RECSPEC_CG_FP;
	return e;
}

/* every key recspec_to_json writes, and those earlier perfmark wrote */
const char recspec_json_keys[] =
	"events,freq,period,call_graph,callchain,max_stack,markers,target,pids,zstd,ringbuf,filters,"
	"off_cpu,off_cpu_min_ns,aggregate";

int recspec_from_json_in(struct json_object *o, struct recspec *r, char *err, size_t errlen)
{
	uint64_t zstd = 0, max_stack = RECSPEC_MAX_STACK, agg = 0;
	const char *t;
	int e;

	recspec_init(r);
	if (!o || !json_object_is_type(o, json_type_object))
		return errline(err, errlen, "the recording options must be an object");
	if ((e = events_from_json(o, r, err, errlen)) ||
	    (e = jsonf_u64(o, "freq", &r->freq, 1, EVSPEC_FREQ_MAX, err, errlen)) ||
	    (e = jsonf_u64(o, "period", &r->period, 1, UINT64_MAX >> 1, err, errlen)) ||
	    (e = call_graph_from_json(o, r, err, errlen)) ||
	    (e = jsonf_u64(o, "max_stack", &max_stack, 1, RECSPEC_MAX_STACK, err, errlen)) ||
	    (e = jsonf_bool(o, "markers", &r->markers, err, errlen)) ||
	    (e = jsonf_u64(o, "zstd", &zstd, 0, RECSPEC_ZSTD_MAX, err, errlen)) ||
	    (e = jsonf_u64(o, "ringbuf", &r->ringbuf_size, 0, RECSPEC_RINGBUF_MAX, err, errlen)) ||
	    (e = jsonf_str(o, "target", &t, err, errlen)) ||
	    (e = pids_from_json(o, r, err, errlen)) ||
	    (e = jsonf_bool(o, "off_cpu", &r->off_cpu, err, errlen)) ||
	    (e = jsonf_u64(o, "off_cpu_min_ns", &r->off_cpu_min_ns, 0, RECSPEC_OFFCPU_MIN_MAX,
			   err, errlen)) ||
	    (e = filters_from_json(o, r, err, errlen)) ||
	    (e = jsonf_u64(o, "aggregate", &agg, 0, RECSPEC_AGGREGATE_MAX, err, errlen)))
		return e;
	r->zstd_level = (int)zstd;
	r->max_stack = (uint32_t)max_stack;
	r->aggregate = (uint32_t)agg;
	if (t && strcmp(t, "all") && strcmp(t, "pids"))
		return errline(err, errlen, "'target' must be \"all\" or \"pids\"");
	if (t && !strcmp(t, "pids"))
		r->target = RECSPEC_TARGET_PIDS;
	return recspec_validate(r, err, errlen);
}

int recspec_from_json(struct json_object *o, struct recspec *r, char *err, size_t errlen)
{
	int e = jsonf_known_keys(o, recspec_json_keys, "option", err, errlen);

	return e ? e : recspec_from_json_in(o, r, err, errlen);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark script [-i FILE|-] [--type N] [--json]
 *
 * Reads a perf.data file (file or pipe mode, compressed or not), keeps the
 * samples, markers, lost counts and sideband, orders them by time (stable,
 * so records of equal time keep the file's order) and prints them:
 * text like `perf script`, or one JSON object per line (INTERFACE.md).
 * Sideband feeds the symbolizer as it comes in time order, so a sample is
 * named with the maps of its moment.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "perfdata.h"
#include "perfread.h"
#include "symbolize.h"
#include "uevent.h"

#define EV_PRINTF "perfmark:printf"
#define EV_UEVENT "perfmark:uevent"

#ifndef PERF_RECORD_LOST_SAMPLES
#define PERF_RECORD_LOST_SAMPLES 13
#endif

struct script_opts {
	const char *input;
	bool json;
	bool filter_type;
	uint32_t type;
};

/* One kept record: its time, its place in the file, its bytes in the arena. */
struct entry {
	uint64_t time;
	uint64_t seq;
	size_t off;
};

struct open_range {
	uint32_t tid;
	char *name;
	uint64_t time;
};

struct script {
	struct script_opts o;
	struct perfread *r;
	struct symbolizer *sym;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct entry *ents;
	size_t nents, capents;
	struct open_range *ranges;
	size_t nranges, capranges;
	/* trailer layout, when non-sample records carry sample_id */
	bool sample_id_all;
};

/* ---- loading ---------------------------------------------------------------- */

static bool keep_type(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		return true;
	default:
		return false;
	}
}

static const struct perfread_event *first_event(const struct perfread *r)
{
	return perfread__nr_events(r) ? perfread__event(r, 0) : NULL;
}

/*
 * Fields of the sample_id trailer of a non-sample record, read from its end
 * in reverse PERF_SAMPLE_* order: IDENTIFIER, CPU, STREAM_ID, ID, TIME, TID.
 */
struct trailer {
	bool have_time, have_tid, have_cpu;
	uint64_t time;
	uint32_t pid, tid, cpu;
};

static void parse_trailer(const struct script *sc, const struct perf_event_header *rec,
			  size_t body, struct trailer *t)
{
	const struct perfread_event *ev = first_event(sc->r);
	const uint8_t *p = (const uint8_t *)rec + rec->size;
	const uint8_t *lo = (const uint8_t *)rec + body;
	uint64_t st, v;

	memset(t, 0, sizeof(*t));
	if (!ev || !ev->attr.sample_id_all)
		return;
	st = ev->attr.sample_type;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		const struct perfread_event *e2;

		if (p - 8 < lo)
			return;
		memcpy(&v, p - 8, 8);
		e2 = perfread__event_by_id(sc->r, v);
		if (e2)
			st = e2->attr.sample_type;
		p -= 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		if (p - 8 < lo)
			return;
		memcpy(&t->cpu, p - 8, 4);
		t->have_cpu = true;
		p -= 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID)
		p -= 8;
	if ((st & PERF_SAMPLE_ID))
		p -= 8;
	if (st & PERF_SAMPLE_TIME) {
		if (p - 8 < lo)
			return;
		memcpy(&t->time, p - 8, 8);
		t->have_time = true;
		p -= 8;
	}
	if (st & PERF_SAMPLE_TID) {
		if (p - 8 < lo)
			return;
		memcpy(&t->pid, p - 8, 4);
		memcpy(&t->tid, p - 4, 4);
		t->have_tid = true;
	}
}

/* Size of the fixed body (before the trailer) of the record types kept. */
static size_t body_size(const struct perf_event_header *rec)
{
	const char *p = (const char *)rec;
	size_t n;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM: {
		size_t off = rec->type == PERF_RECORD_MMAP ? 40 : rec->type == PERF_RECORD_MMAP2 ? 72 : 16;

		if (rec->size <= off)
			return rec->size;
		n = strnlen(p + off, rec->size - off);
		return off + ((n + 8) & ~(size_t)7);
	}
	case PERF_RECORD_FORK:
		return 32;
	case PERF_RECORD_LOST:
		return 24;
	case PERF_RECORD_LOST_SAMPLES:
		return 16;
	default:
		return rec->size;
	}
}

static int arena_add(struct script *sc, const struct perf_event_header *rec, uint64_t time)
{
	size_t len = (rec->size + 7) & ~(size_t)7;

	if (sc->arena_len + len > sc->arena_cap) {
		size_t cap = sc->arena_cap ? sc->arena_cap * 2 : (1u << 20);
		uint8_t *a;

		while (cap < sc->arena_len + len)
			cap *= 2;
		a = realloc(sc->arena, cap);
		if (!a)
			return -ENOMEM;
		sc->arena = a;
		sc->arena_cap = cap;
	}
	if (sc->nents == sc->capents) {
		size_t cap = sc->capents ? sc->capents * 2 : 4096;
		struct entry *e = realloc(sc->ents, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		sc->ents = e;
		sc->capents = cap;
	}
	memcpy(sc->arena + sc->arena_len, rec, rec->size);
	memset(sc->arena + sc->arena_len + rec->size, 0, len - rec->size);
	sc->ents[sc->nents] = (struct entry){ .time = time, .seq = sc->nents, .off = sc->arena_len };
	sc->nents++;
	sc->arena_len += len;
	return 0;
}

static bool is_marker(const struct perfread_sample *s, bool *uevent)
{
	const char *n = s->event ? s->event->name : NULL;

	if (!n)
		return false;
	if (!strcmp(n, EV_PRINTF)) {
		*uevent = false;
		return true;
	}
	if (!strcmp(n, EV_UEVENT)) {
		*uevent = true;
		return true;
	}
	return false;
}

/* The uevent header and payload of a raw field, or NULL when malformed. */
static const struct perfmark_uevent_hdr *uevent_hdr(const struct perfread_sample *s,
						    const uint8_t **data)
{
	static struct perfmark_uevent_hdr h;

	if (!s->raw || s->raw_size < sizeof(h))
		return NULL;
	memcpy(&h, s->raw, sizeof(h));
	if (h.size > s->raw_size - sizeof(h))
		return NULL;
	*data = (const uint8_t *)s->raw + sizeof(h);
	return &h;
}

/* JIT code markers name code for the symbolizer before any sample is printed. */
static void note_jit(struct script *sc, const struct perfread_sample *s)
{
	const struct perfmark_uevent_hdr *h;
	const uint8_t *d;
	uint64_t addr, size;
	bool uevent;

	if (!is_marker(s, &uevent) || !uevent)
		return;
	h = uevent_hdr(s, &d);
	if (!h || h->version != PERFMARK_UEVENT_VERSION || h->type != PERFMARK_TYPE_JIT_CODE ||
	    h->size < 17 || !memchr(d + 16, '\0', h->size - 16))
		return;
	memcpy(&addr, d, 8);
	memcpy(&size, d + 8, 8);
	symbolizer__add_jit(sc->sym, s->pid, addr, size, (const char *)d + 16);
}

static const char *input_name(const struct script *sc)
{
	return strcmp(sc->o.input, "-") ? sc->o.input : "<stdin>";
}

/*
 * Keep every record of interest.  Returns 0, or a negative errno with the
 * reason in *why (what was read before the error is kept and printed).
 */
static int load(struct script *sc, const char **why)
{
	const struct perf_event_header *rec;
	const struct perfread_event *ev;
	int r;

	ev = first_event(sc->r);
	sc->sample_id_all = ev && ev->attr.sample_id_all;
	while ((r = perfread__next(sc->r, &rec)) > 0) {
		uint64_t time = 0;

		if (!keep_type(rec->type))
			continue;
		if (rec->type == PERF_RECORD_SAMPLE) {
			struct perfread_sample s;

			if (perfread__parse_sample(sc->r, rec, &s) < 0)
				continue;   /* malformed sample: skip it, as perf does */
			time = s.time;
			note_jit(sc, &s);
		} else {
			struct trailer t;

			parse_trailer(sc, rec, body_size(rec), &t);
			time = t.time;
		}
		if (arena_add(sc, rec, time) < 0) {
			*why = "out of memory";
			return -ENOMEM;
		}
	}
	if (r < 0) {
		const char *msg = perfread__error(sc->r);

		*why = msg && *msg ? msg : strerror(-r);
		return r;
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- ranges --------------------------------------------------------------------- */

static void range_begin(struct script *sc, uint32_t tid, const char *name, uint64_t time)
{
	char *n;

	if (sc->nranges == sc->capranges) {
		size_t cap = sc->capranges ? sc->capranges * 2 : 64;
		struct open_range *v = realloc(sc->ranges, cap * sizeof(*v));

		if (!v)
			return;
		sc->ranges = v;
		sc->capranges = cap;
	}
	n = strdup(name);
	if (!n)
		return;
	sc->ranges[sc->nranges++] = (struct open_range){ .tid = tid, .name = n, .time = time };
}

/* The innermost open range of tid named name: its duration, removed. */
static bool range_end(struct script *sc, uint32_t tid, const char *name, uint64_t time,
		      uint64_t *dur)
{
	for (size_t i = sc->nranges; i > 0; i--) {
		struct open_range *o = &sc->ranges[i - 1];

		if (o->tid != tid || strcmp(o->name, name))
			continue;
		*dur = time >= o->time ? time - o->time : 0;
		free(o->name);
		memmove(o, o + 1, (sc->nranges - i) * sizeof(*o));
		sc->nranges--;
		return true;
	}
	return false;
}

/* ---- output helpers -------------------------------------------------------------- */

static char *hexstr(const uint8_t *d, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(2 * n + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		s[2 * i] = digits[d[i] >> 4];
		s[2 * i + 1] = digits[d[i] & 15];
	}
	s[2 * n] = '\0';
	return s;
}

/* Length of a valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_len(const uint8_t *p, size_t n)
{
	size_t len;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON-safe copy: invalid UTF-8 bytes become U+FFFD. */
static char *utf8_clean(const uint8_t *s, size_t n)
{
	char *out = malloc(3 * n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len(s + i, n - i);

		if (l) {
			memcpy(o, s + i, l);
			o += l;
			i += l;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	*o = '\0';
	return out;
}

/* Text mode: a C-escaped, quoted string. */
static void put_quoted(FILE *f, const uint8_t *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\x%02x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static const char *event_name(const struct perfread_event *e, char *buf, size_t size)
{
	static const char *const hw[] = {
		[PERF_COUNT_HW_CPU_CYCLES] = "cycles",
		[PERF_COUNT_HW_INSTRUCTIONS] = "instructions",
		[PERF_COUNT_HW_CACHE_REFERENCES] = "cache-references",
		[PERF_COUNT_HW_CACHE_MISSES] = "cache-misses",
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branches",
		[PERF_COUNT_HW_BRANCH_MISSES] = "branch-misses",
	};
	static const char *const sw[] = {
		[PERF_COUNT_SW_CPU_CLOCK] = "cpu-clock",
		[PERF_COUNT_SW_TASK_CLOCK] = "task-clock",
		[PERF_COUNT_SW_PAGE_FAULTS] = "page-faults",
		[PERF_COUNT_SW_CONTEXT_SWITCHES] = "context-switches",
	};

	if (!e)
		return "unknown";
	if (e->name && *e->name)
		return e->name;
	if (e->attr.type == PERF_TYPE_HARDWARE && e->attr.config < sizeof(hw) / sizeof(hw[0]) &&
	    hw[e->attr.config])
		return hw[e->attr.config];
	if (e->attr.type == PERF_TYPE_SOFTWARE && e->attr.config < sizeof(sw) / sizeof(sw[0]) &&
	    sw[e->attr.config])
		return sw[e->attr.config];
	snprintf(buf, size, "%u:%llu", e->attr.type, (unsigned long long)e->attr.config);
	return buf;
}

static const char *comm_of(struct script *sc, uint32_t tid, char *buf, size_t size)
{
	const char *c = symbolizer__comm(sc->sym, tid);

	if (c)
		return c;
	snprintf(buf, size, ":%u", tid);
	return buf;
}

static void text_prefix(struct script *sc, uint32_t pid, uint32_t tid, uint32_t cpu,
			uint64_t time)
{
	char cb[24];

	printf("%16s %6u/%-6u [%03u] %" PRIu64 ".%09" PRIu64 ": ",
	       comm_of(sc, tid, cb, sizeof(cb)), pid, tid, cpu,
	       time / 1000000000U, time % 1000000000U);
}

static struct json_object *json_common(uint64_t time, uint32_t pid, uint32_t tid, uint32_t cpu,
				       const char *event)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "time", json_object_new_uint64(time));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "tid", json_object_new_int64(tid));
	json_object_object_add(o, "cpu", json_object_new_int64(cpu));
	json_object_object_add(o, "event", json_object_new_string(event));
	return o;
}

static void json_emit(struct json_object *o)
{
	if (!o)
		return;
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void json_add_string(struct json_object *o, const char *key, const uint8_t *s, size_t n)
{
	char *c = utf8_clean(s, n);

	if (c) {
		json_object_object_add(o, key, json_object_new_string(c));
		free(c);
	}
}

/* ---- samples -------------------------------------------------------------------- */

static bool is_context(uint64_t ip)
{
	return ip >= (uint64_t)PERF_CONTEXT_MAX;
}

static int cpumode_kernel(uint16_t misc)
{
	uint16_t m = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL;
}

static void print_sample(struct script *sc, const struct perfread_sample *s)
{
	char nb[48];
	const char *ev = event_name(s->event, nb, sizeof(nb));
	int kernel = cpumode_kernel(s->misc);
	const char *sym = symbolizer__name(sc->sym, s->pid, s->ip, kernel);
	struct json_object *o = NULL, *chain = NULL;

	if (sc->o.json) {
		o = json_common(s->time, s->pid, s->tid, s->cpu, ev);
		if (!o)
			return;
		json_object_object_add(o, "ip", json_object_new_uint64(s->ip));
		json_object_object_add(o, "sym", json_object_new_string(sym));
		if (s->period)
			json_object_object_add(o, "period", json_object_new_uint64(s->period));
		chain = json_object_new_array();
	} else {
		text_prefix(sc, s->pid, s->tid, s->cpu, s->time);
		printf("%s: %16" PRIx64 " %s\n", ev, s->ip, sym);
	}
	for (uint32_t i = 0; i < s->nr_ips; i++) {
		uint64_t ip = s->ips[i];
		const char *n;

		if (is_context(ip)) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL || ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL)
				kernel = 1;
			else if (ip == (uint64_t)PERF_CONTEXT_USER || ip == (uint64_t)PERF_CONTEXT_GUEST_USER)
				kernel = 0;
			continue;
		}
		n = symbolizer__name(sc->sym, s->pid, ip, kernel);
		if (chain)
			json_object_array_add(chain, json_object_new_string(n));
		else if (!sc->o.json)
			printf("\t%16" PRIx64 " %s\n", ip, n);
	}
	if (sc->o.json) {
		json_object_object_add(o, "callchain", chain ? chain : json_object_new_array());
		json_emit(o);
	} else if (s->nr_ips) {
		putchar('\n');
	}
}

/* ---- markers -------------------------------------------------------------------- */

struct marker {
	uint32_t type, size, orig_size, version;
	bool truncated, fault, uevent, valid;
	const uint8_t *data;
	size_t data_len;   /* bytes of data present */
};

static void decode_marker(const struct perfread_sample *s, bool uevent, struct marker *m)
{
	memset(m, 0, sizeof(*m));
	m->uevent = uevent;
	if (!uevent) {
		size_t n = s->raw ? strnlen(s->raw, s->raw_size) : 0;

		m->type = PERFMARK_TYPE_STRING;
		m->data = s->raw;
		m->data_len = n;
		m->size = m->orig_size = (uint32_t)(n < s->raw_size ? n + 1 : n);
		m->version = PERFMARK_UEVENT_VERSION;
		m->valid = true;
		return;
	}
	const struct perfmark_uevent_hdr *h = uevent_hdr(s, &m->data);
	if (!h) {
		/* a raw field too short for its header: show what is there */
		m->data = s->raw;
		m->data_len = s->raw ? s->raw_size : 0;
		m->type = UINT32_MAX;
		return;
	}
	m->version = h->version;
	m->type = h->type;
	m->size = h->size;
	m->orig_size = h->orig_size;
	m->truncated = h->flags & PERFMARK_UEVENT_F_TRUNCATED;
	m->fault = h->flags & PERFMARK_UEVENT_F_FAULT;
	m->data_len = h->size;
	m->valid = h->version == PERFMARK_UEVENT_VERSION;
}

/* A NUL-terminated name at d (within n bytes), or NULL. */
static const char *payload_name(const uint8_t *d, size_t n)
{
	return n && memchr(d, '\0', n) ? (const char *)d : NULL;
}

static void print_marker(struct script *sc, const struct perfread_sample *s, bool uevent)
{
	const char *ev = uevent ? EV_UEVENT : EV_PRINTF;
	const char *name = NULL;
	struct marker m;
	struct json_object *o = NULL;
	uint64_t dur = 0;
	bool have_dur = false;

	decode_marker(s, uevent, &m);

	/* range bookkeeping happens whatever --type shows */
	if (m.valid && m.type == PERFMARK_TYPE_RANGE_BEGIN) {
		name = payload_name(m.data, m.data_len);
		if (name)
			range_begin(sc, s->tid, name, s->time);
	} else if (m.valid && m.type == PERFMARK_TYPE_RANGE_END) {
		name = payload_name(m.data, m.data_len);
		if (name)
			have_dur = range_end(sc, s->tid, name, s->time, &dur);
	}
	if (sc->o.filter_type && (!m.valid || m.type != sc->o.type))
		return;

	if (sc->o.json) {
		o = json_common(s->time, s->pid, s->tid, s->cpu, ev);
		if (!o)
			return;
		if (m.type != UINT32_MAX)
			json_object_object_add(o, "type", json_object_new_int64(m.type));
		json_object_object_add(o, "size", json_object_new_int64(m.size));
		json_object_object_add(o, "truncated", json_object_new_boolean(m.truncated));
		json_object_object_add(o, "fault", json_object_new_boolean(m.fault));
		if (m.uevent && m.version != PERFMARK_UEVENT_VERSION)
			json_object_object_add(o, "version", json_object_new_int64(m.version));
		if (m.truncated)
			json_object_object_add(o, "orig_size", json_object_new_int64(m.orig_size));
		if (m.valid && m.type == PERFMARK_TYPE_STRING) {
			json_add_string(o, "text", m.data, strnlen((const char *)m.data, m.data_len));
		} else {
			char *hex = hexstr(m.data, m.data_len);

			if (hex) {
				json_object_object_add(o, "data", json_object_new_string(hex));
				free(hex);
			}
		}
		if (m.valid) {
			switch (m.type) {
			case PERFMARK_TYPE_RANGE_BEGIN:
			case PERFMARK_TYPE_RANGE_END:
				if (name)
					json_add_string(o, "name", (const uint8_t *)name, strlen(name));
				if (have_dur)
					json_object_object_add(o, "duration_ns", json_object_new_uint64(dur));
				break;
			case PERFMARK_TYPE_COUNTER:
				if (m.data_len >= 8) {
					int64_t v;
					const char *cn = payload_name(m.data + 8, m.data_len - 8);

					memcpy(&v, m.data, 8);
					if (cn)
						json_add_string(o, "name", (const uint8_t *)cn, strlen(cn));
					json_object_object_add(o, "value", json_object_new_int64(v));
				}
				break;
			case PERFMARK_TYPE_JIT_CODE:
				if (m.data_len >= 16) {
					uint64_t a, sz;
					const char *jn = payload_name(m.data + 16, m.data_len - 16);

					memcpy(&a, m.data, 8);
					memcpy(&sz, m.data + 8, 8);
					json_object_object_add(o, "addr", json_object_new_uint64(a));
					json_object_object_add(o, "code_size", json_object_new_uint64(sz));
					if (jn)
						json_add_string(o, "name", (const uint8_t *)jn, strlen(jn));
				}
				break;
			default:
				break;
			}
		}
		json_emit(o);
		return;
	}

	text_prefix(sc, s->pid, s->tid, s->cpu, s->time);
	if (!uevent) {
		printf("%s: ", ev);
		put_quoted(stdout, m.data, m.data_len);
		putchar('\n');
		return;
	}
	printf("%s", ev);
	if (m.type != UINT32_MAX)
		printf(" type=%u", m.type);
	printf(" size=%u", m.size);
	if (m.truncated)
		printf(" truncated");
	if (m.fault)
		printf(" fault");
	if (m.uevent && m.version != PERFMARK_UEVENT_VERSION)
		printf(" version=%u", m.version);
	printf(":");
	if (m.valid) {
		switch (m.type) {
		case PERFMARK_TYPE_STRING:
			putchar(' ');
			put_quoted(stdout, m.data, strnlen((const char *)m.data, m.data_len));
			putchar('\n');
			return;
		case PERFMARK_TYPE_RANGE_BEGIN:
		case PERFMARK_TYPE_RANGE_END:
			if (!name)
				break;
			printf(" range %s ", m.type == PERFMARK_TYPE_RANGE_BEGIN ? "begin" : "end");
			put_quoted(stdout, (const uint8_t *)name, strlen(name));
			if (have_dur)
				printf(" duration=%" PRIu64 ".%09" PRIu64 "s (%" PRIu64 " ns)",
				       dur / 1000000000U, dur % 1000000000U, dur);
			putchar('\n');
			return;
		case PERFMARK_TYPE_COUNTER:
			if (m.data_len >= 8) {
				const char *cn = payload_name(m.data + 8, m.data_len - 8);
				int64_t v;

				if (!cn)
					break;
				memcpy(&v, m.data, 8);
				printf(" counter %s=%" PRId64 "\n", cn, v);
				return;
			}
			break;
		case PERFMARK_TYPE_JIT_CODE:
			if (m.data_len >= 16) {
				const char *jn = payload_name(m.data + 16, m.data_len - 16);
				uint64_t a, sz;

				if (!jn)
					break;
				memcpy(&a, m.data, 8);
				memcpy(&sz, m.data + 8, 8);
				printf(" jit code addr=0x%" PRIx64 " size=%" PRIu64 " %s\n", a, sz, jn);
				return;
			}
			break;
		default:
			break;
		}
	}
	/* unknown type, or a payload its decoder cannot read: hex */
	{
		char *hex = hexstr(m.data, m.data_len);

		printf(" %s\n", hex ? hex : "");
		free(hex);
	}
}

static void print_lost(struct script *sc, const struct perf_event_header *rec)
{
	struct trailer t;
	uint64_t lost;
	size_t off = rec->type == PERF_RECORD_LOST ? 16 : 8;

	if (rec->size < off + 8)
		return;
	if (sc->o.filter_type)
		return;
	memcpy(&lost, (const uint8_t *)rec + off, 8);
	parse_trailer(sc, rec, body_size(rec), &t);
	if (sc->o.json) {
		struct json_object *o = json_common(t.time, t.pid, t.tid, t.cpu, "lost");

		if (o) {
			json_object_object_add(o, "lost", json_object_new_uint64(lost));
			json_emit(o);
		}
	} else {
		printf("LOST %" PRIu64 " samples\n", lost);
	}
}

static void print_all(struct script *sc)
{
	for (size_t i = 0; i < sc->nents; i++) {
		const struct perf_event_header *rec =
			(const struct perf_event_header *)(sc->arena + sc->ents[i].off);
		struct perfread_sample s;
		bool uevent;

		switch (rec->type) {
		case PERF_RECORD_SAMPLE:
			if (perfread__parse_sample(sc->r, rec, &s) < 0)
				break;
			if (is_marker(&s, &uevent))
				print_marker(sc, &s, uevent);
			else if (!sc->o.filter_type)
				print_sample(sc, &s);
			break;
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			print_lost(sc, rec);
			break;
		default:
			symbolizer__record(sc->sym, rec);
			break;
		}
	}
}

/* ---- command ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: perfmark script [-i FILE|-] [--type N] [--json]\n");
}

static int parse_args(int argc, char **argv, struct script_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "type", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->input = "perf.data";
	optind = 0;   /* restart getopt: argv[0] is "script" */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 't': {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || optarg[0] == '-' || optarg[0] == '+' ||
			    optarg[0] == ' ' || errno || v > UINT32_MAX) {
				pm_err("bad --type '%s'", optarg);
				return -EINVAL;
			}
			o->filter_type = true;
			o->type = (uint32_t)v;
			break;
		}
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			pm_err("option '%s' needs an argument", argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt)
				pm_err("unknown option '-%c' (try 'perfmark script --help')", optopt);
			else
				pm_err("unknown option '%s' (try 'perfmark script --help')", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pm_err("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_script(int argc, char **argv)
{
	struct script sc = { 0 };
	const char *why = NULL;
	int fd = -1, r, ret = 1;

	r = parse_args(argc, argv, &sc.o);
	if (r)
		return r > 0 ? 0 : 1;

	if (!strcmp(sc.o.input, "-")) {
		fd = STDIN_FILENO;
	} else {
		fd = open(sc.o.input, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return pm_err("%s: %s", sc.o.input, strerror(errno));
	}
	r = perfread__open(&sc.r, fd);
	if (r < 0) {
		const char *msg = sc.r ? perfread__error(sc.r) : NULL;

		pm_err("%s: %s", input_name(&sc), msg && *msg ? msg : strerror(-r));
		goto out;
	}
	r = symbolizer__new(&sc.sym);
	if (r < 0) {
		pm_err("%s", strerror(-r));
		goto out;
	}
	r = load(&sc, &why);
	qsort(sc.ents, sc.nents, sizeof(*sc.ents), entry_cmp);
	print_all(&sc);
	if (fflush(stdout) != 0 && r == 0) {
		pm_err("write error: %s", strerror(errno));
		goto out;
	}
	if (r < 0) {
		pm_err("%s: %s", input_name(&sc), why);
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < sc.nranges; i++)
		free(sc.ranges[i].name);
	free(sc.ranges);
	free(sc.arena);
	free(sc.ents);
	symbolizer__free(sc.sym);
	perfread__free(sc.r);
	if (fd > STDIN_FILENO)
		close(fd);
	return ret;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark script's output: samples, markers and losses as text (like
 * `perf script`) or one JSON object per line (INTERFACE.md), to sc->out.
 * Every name and text from the recording goes through lib/common/escape.h:
 * escape_term in the text, escape_json_object in the JSON.
 */
#include <inttypes.h>
#include <limits.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "callchain.h"
#include "evnames.h"
#include "escape.h"
#include "marker.h"
#include "script.h"
#include "uevent.h"

static void fputc_out(struct script *sc, int c)
{
	fputc(c, sc->out);
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

/* Text mode: a name as it is, escaped for the terminal */
static void put_name(FILE *f, const char *s, size_t n)
{
	escape_term(f, s, n, 0);
}

/* Text mode: a quoted string, escaped for the terminal */
static void put_quoted(FILE *f, const uint8_t *s, size_t n)
{
	fputc('"', f);
	escape_term(f, (const char *)s, n, ESC_TERM_QUOTED);
	fputc('"', f);
}

static const char *event_name(const struct perfread_event *e, char *buf, size_t size)
{
	const char *n;

	if (!e)
		return "unknown";
	if (e->name && *e->name)
		return e->name;
	n = evname_of(e->attr.type, e->attr.config);
	if (n)
		return n;
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

	escape_term_pad(sc->out, comm_of(sc, tid, cb, sizeof(cb)), 16);
	fprintf(sc->out, " %6u/%-6u [%03u] %" PRIu64 ".%09" PRIu64 ": ",
	       pid, tid, cpu, time / 1000000000U, time % 1000000000U);
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
	json_object_object_add(o, "event", escape_json_object(event, strlen(event)));
	return o;
}

static void json_emit(struct script *sc, struct json_object *o)
{
	if (!o)
		return;
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					     JSON_C_TO_STRING_NOSLASHESCAPE), sc->out);
	fputc('\n', sc->out);
	json_object_put(o);
}

static void json_add_string(struct json_object *o, const char *key, const void *s, size_t n)
{
	json_object_object_add(o, key, escape_json_object(s, n));
}

static void json_add_name(struct json_object *o, const char *key, const char *s)
{
	json_add_string(o, key, s, strlen(s));
}

/* ---- samples -------------------------------------------------------------------- */

static int cpumode_kernel(uint16_t misc)
{
	uint16_t m = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL;
}

/*
 * What to print for ip: its symbol, or, like perf script, "[unknown]" with
 * the file it is in: "[unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)", or
 * "[unknown] ([unknown])" outside any mapping.  *dso: the file, NULL if none.
 */
static const char *sym_text(struct script *sc, uint32_t pid, uint64_t ip, int kernel,
			    char *buf, size_t size, const char **dso)
{
	struct symbolizer_loc loc;

	symbolizer__lookup(sc->sym, pid, ip, kernel, &loc);
	*dso = loc.dso;
	if (strcmp(loc.name, "[unknown]"))
		return loc.name;
	snprintf(buf, size, "[unknown] (%s)", loc.dso ? loc.dso : "[unknown]");
	return buf;
}

void script__print_sample(struct script *sc, const struct perfread_sample *s)
{
	char nb[48], sb[PATH_MAX + 16];
	const char *ev = event_name(s->event, nb, sizeof(nb)), *dso;
	int kernel = cpumode_kernel(s->misc);
	const char *sym = sym_text(sc, s->pid, s->ip, kernel, sb, sizeof(sb), &dso);
	struct json_object *o = NULL, *chain = NULL;
	static struct callchain_ip ips[CALLCHAIN_MAX];
	size_t n;

	if (sc->o.json) {
		o = json_common(s->time, s->pid, s->tid, s->cpu, ev);
		if (!o)
			return;
		json_object_object_add(o, "ip", json_object_new_uint64(s->ip));
		json_add_name(o, "sym", symbolizer__name(sc->sym, s->pid, s->ip, kernel));
		if (dso)
			json_add_name(o, "dso", dso);
		if (s->period)
			json_object_object_add(o, "period", json_object_new_uint64(s->period));
		chain = json_object_new_array();
	} else {
		text_prefix(sc, s->pid, s->tid, s->cpu, s->time);
		put_name(sc->out, ev, strlen(ev));
		fprintf(sc->out, ": %16" PRIx64 " ", s->ip);
		put_name(sc->out, sym, strlen(sym));
		fputc_out(sc, '\n');
	}
	/* the chain as report has it (dwarf samples unwound there) */
	n = (s->nr_ips || s->stack_size) ? callchain__get(sc->sym, sc->r, s, ips, CALLCHAIN_MAX) : 0;
	for (size_t i = 0; i < n; i++) {
		if (chain) {
			const char *nm = symbolizer__name(sc->sym, s->pid, ips[i].ip, ips[i].kernel);

			json_object_array_add(chain, escape_json_object(nm, strlen(nm)));
		} else if (!sc->o.json) {
			const char *st = sym_text(sc, s->pid, ips[i].ip, ips[i].kernel, sb, sizeof(sb), &dso);

			fprintf(sc->out, "\t%16" PRIx64 " ", ips[i].ip);
			put_name(sc->out, st, strlen(st));
			fputc_out(sc, '\n');
		}
	}
	if (sc->o.json) {
		json_object_object_add(o, "callchain", chain ? chain : json_object_new_array());
		json_emit(sc, o);
	} else if (n) {
		fputc_out(sc, '\n');
	}
}

/* ---- markers -------------------------------------------------------------------- */

struct old_marker {
	uint32_t type, size, orig_size, version;
	bool truncated, fault, uevent, valid;
	const uint8_t *data;
	size_t data_len;   /* bytes of data present */
};

static void decode_marker(const struct perfread_sample *s, bool uevent, struct old_marker *m)
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
	const struct perfmark_uevent_hdr *h = script__uevent_hdr(s, &m->data);
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

void script__print_marker(struct script *sc, const struct perfread_sample *s, bool uevent)
{
	const char *ev = uevent ? EV_UEVENT : EV_PRINTF;
	const char *name = NULL;
	size_t nlen = 0;
	struct old_marker m;
	struct json_object *o = NULL;
	uint64_t dur = 0;
	bool have_dur = false;

	decode_marker(s, uevent, &m);

	/* range bookkeeping happens whatever --type shows */
	if (m.valid && m.type == PERFMARK_TYPE_RANGE_BEGIN) {
		name = marker_name(m.data, m.data_len, &nlen);
		if (name)
			script__range_begin(sc, s->tid, name, nlen, s->time);
	} else if (m.valid && m.type == PERFMARK_TYPE_RANGE_END) {
		name = marker_name(m.data, m.data_len, &nlen);
		if (name)
			have_dur = script__range_end(sc, s->tid, name, nlen, s->time, &dur);
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
			json_add_string(o, "text", m.data, m.data ? strnlen((const char *)m.data, m.data_len) : 0);
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
					json_add_string(o, "name", name, nlen);
				if (have_dur)
					json_object_object_add(o, "duration_ns", json_object_new_uint64(dur));
				break;
			case PERFMARK_TYPE_COUNTER:
				if (m.data_len >= 8) {
					int64_t v;
					const char *cn = marker_name(m.data + 8, m.data_len - 8, &nlen);

					memcpy(&v, m.data, 8);
					if (cn)
						json_add_string(o, "name", cn, nlen);
					json_object_object_add(o, "value", json_object_new_int64(v));
				}
				break;
			case PERFMARK_TYPE_JIT_CODE:
				if (m.data_len >= 16) {
					uint64_t a, sz;
					const char *jn = marker_name(m.data + 16, m.data_len - 16, &nlen);

					memcpy(&a, m.data, 8);
					memcpy(&sz, m.data + 8, 8);
					json_object_object_add(o, "addr", json_object_new_uint64(a));
					json_object_object_add(o, "code_size", json_object_new_uint64(sz));
					if (jn)
						json_add_string(o, "name", jn, nlen);
				}
				break;
			default:
				break;
			}
		}
		json_emit(sc, o);
		return;
	}

	text_prefix(sc, s->pid, s->tid, s->cpu, s->time);
	if (!uevent) {
		fprintf(sc->out, "%s: ", ev);   /* EV_PRINTF */
		put_quoted(sc->out, m.data, m.data_len);
		fputc_out(sc, '\n');
		return;
	}
	fputs(ev, sc->out);   /* EV_UEVENT */
	if (m.type != UINT32_MAX)
		fprintf(sc->out, " type=%u", m.type);
	fprintf(sc->out, " size=%u", m.size);
	if (m.truncated)
		fprintf(sc->out, " truncated");
	if (m.fault)
		fprintf(sc->out, " fault");
	if (m.uevent && m.version != PERFMARK_UEVENT_VERSION)
		fprintf(sc->out, " version=%u", m.version);
	fprintf(sc->out, ":");
	if (m.valid) {
		switch (m.type) {
		case PERFMARK_TYPE_STRING:
			fputc_out(sc, ' ');
			put_quoted(sc->out, m.data, m.data ? strnlen((const char *)m.data, m.data_len) : 0);
			fputc_out(sc, '\n');
			return;
		case PERFMARK_TYPE_RANGE_BEGIN:
		case PERFMARK_TYPE_RANGE_END:
			if (!name)
				break;
			fprintf(sc->out, " range %s ", m.type == PERFMARK_TYPE_RANGE_BEGIN ? "begin" : "end");
			put_quoted(sc->out, (const uint8_t *)name, nlen);
			if (have_dur)
				fprintf(sc->out, " duration=%" PRIu64 ".%09" PRIu64 "s (%" PRIu64 " ns)",
				       dur / 1000000000U, dur % 1000000000U, dur);
			fputc_out(sc, '\n');
			return;
		case PERFMARK_TYPE_COUNTER:
			if (m.data_len >= 8) {
				const char *cn = marker_name(m.data + 8, m.data_len - 8, &nlen);
				int64_t v;

				if (!cn)
					break;
				memcpy(&v, m.data, 8);
				fputs(" counter ", sc->out);
				put_name(sc->out, cn, nlen);
				fprintf(sc->out, "=%" PRId64 "\n", v);
				return;
			}
			break;
		case PERFMARK_TYPE_JIT_CODE:
			if (m.data_len >= 16) {
				const char *jn = marker_name(m.data + 16, m.data_len - 16, &nlen);
				uint64_t a, sz;

				if (!jn)
					break;
				memcpy(&a, m.data, 8);
				memcpy(&sz, m.data + 8, 8);
				fprintf(sc->out, " jit code addr=0x%" PRIx64 " size=%" PRIu64 " ", a, sz);
				put_name(sc->out, jn, nlen);
				fputc_out(sc, '\n');
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

		fprintf(sc->out, " %s\n", hex ? hex : "");
		free(hex);
	}
}

void script__print_lost(struct script *sc, const struct perf_event_header *rec)
{
	struct perfread_sample_id sid;
	uint64_t lost;
	size_t off = rec->type == PERF_RECORD_LOST ? 16 : 8;

	if (rec->size < off + 8)
		return;
	if (sc->o.filter_type)
		return;
	memcpy(&lost, (const uint8_t *)rec + off, 8);
	if (sc->o.json) {
		struct json_object *o;

		perfread__sample_id(sc->r, rec, &sid);   /* zeros when it has none */
		o = json_common(sid.time, sid.pid, sid.tid, sid.cpu, "lost");
		if (o) {
			json_object_object_add(o, "lost", json_object_new_uint64(lost));
			json_emit(sc, o);
		}
	} else {
		fprintf(sc->out, "LOST %" PRIu64 " samples\n", lost);
	}
}

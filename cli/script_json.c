// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark script --json: one JSON object a line per sample, marker and
 * loss (INTERFACE.md).  Every name and text from the recording goes
 * through escape_json_object (lib/common/escape.h).
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "obuf.h"
#include "script.h"

static void add_string(struct json_object *o, const char *key, const void *s, size_t n)
{
	json_object_object_add(o, key, escape_json_object(s, n));
}

static void add_name(struct json_object *o, const char *key, const char *s)
{
	add_string(o, key, s, strlen(s));
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_int(struct json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

/* Bytes as a lowercase hex string (NULL: out of memory). */
static struct json_object *hex(const uint8_t *d, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	struct json_object *o;
	char *s = malloc(2 * n + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		s[2 * i] = digits[d[i] >> 4];
		s[2 * i + 1] = digits[d[i] & 15];
	}
	s[2 * n] = '\0';
	o = json_object_new_string(s);
	free(s);
	return o;
}

static struct json_object *head(const struct script_head *h)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_u64(o, "time", h->time);
	add_int(o, "pid", h->pid);
	add_int(o, "tid", h->tid);
	add_int(o, "cpu", h->cpu);
	add_name(o, "event", h->event);
	return o;
}

static void emit(struct obuf *f, struct json_object *o)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE, &n);

	if (s)
		obuf__put(f, s, n);
	obuf__putc(f, '\n');
	json_object_put(o);
}

/*
 * "off_cpu": {"state":"S","blocked":true,"ns":N,"runqueue_ns":N,"count":N,
 * "end":NS,"waker":{"pid":P,"tid":T,"stack":[where it woke it, leaf first]} |
 * "interrupt" | "hidden" | null}
 */
static void offcpu_json(struct json_object *o, const struct script_sample *s)
{
	const struct offcpu *off = s->off;
	struct json_object *x = json_object_new_object(), *w = NULL;

	if (!x)
		return;
	add_u64(x, "ns", s->period);
	if (off->state == OFFCPU_OK) {
		json_object_object_add(x, "state", json_object_new_string(offcpu__state_letter(off)));
		json_object_object_add(x, "blocked", json_object_new_boolean(!off->runnable));
		add_u64(x, "runqueue_ns", off->runnable ? s->period :
			off->runq_ns < s->period ? off->runq_ns : s->period);
		add_u64(x, "count", off->count);
		add_u64(x, "end", off->end);
		if (off->waker_flags & PERFMARK_OFFCPU_WAKER_IRQ) {
			w = json_object_new_string("interrupt");
		} else if ((off->waker_flags & PERFMARK_OFFCPU_WAKER_TASK) && off->waker_tid) {
			struct json_object *ws = json_object_new_array();

			w = json_object_new_object();
			add_int(w, "pid", off->waker_pid);
			add_int(w, "tid", off->waker_tid);
			for (size_t i = 0; ws && i < s->nwaker; i++)
				json_object_array_add(ws, escape_json_object(s->waker[i].loc.name,
									     strlen(s->waker[i].loc.name)));
			if (w && ws)
				json_object_object_add(w, "stack", ws);
			else
				json_object_put(ws);
		} else if (off->waker_flags & PERFMARK_OFFCPU_WAKER_TASK) {
			w = json_object_new_string("hidden");
		}
		json_object_object_add(x, "waker", w);
	} else {
		json_object_object_add(x, "state", json_object_new_string("?"));
	}
	json_object_object_add(o, "off_cpu", x);
}

/* a field's name as a JSON key: the formats' names are C identifiers (tpcheck.h) */
static bool good_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
		      *k == '_'))
			return false;
	return true;
}

static struct json_object *tp_value(const struct tpvalue *v)
{
	struct json_object *a;

	switch (v->kind) {
	case TPV_INT:
		return json_object_new_int64(v->i);
	case TPV_UINT:
		return json_object_new_uint64(v->u);
	case TPV_STR:
		return escape_json_object(v->s, v->len);
	case TPV_ARRAY:
		a = json_object_new_array();
		for (size_t k = 0; a && k < v->n; k++)
			json_object_array_add(a, v->sgn ? json_object_new_int64((int64_t)tpvalue_elem(v, k)) :
					      json_object_new_uint64(tpvalue_elem(v, k)));
		return a;
	}
	return NULL;
}

/* a tracepoint's "fields": its fields by name, typed; null when it could not be decoded */
static void tp_fields(struct json_object *o, const struct script_tp *tp)
{
	struct json_object *f = tp->decoded ? json_object_new_object() : NULL;

	for (size_t i = 0; f && i < tp->nfields; i++)
		if (good_key(tp->fields[i].name))
			json_object_object_add(f, tp->fields[i].name, tp_value(&tp->fields[i].v));
	json_object_object_add(o, "fields", f);
}

static void json_sample(struct obuf *f, const struct script_sample *s)
{
	struct json_object *o = head(&s->h), *chain;
	char frame[SYMBOLIZER_FRAME_NAME_MAX];

	if (!o)
		return;
	add_u64(o, "ip", s->at.ip);
	add_name(o, "sym", symbolizer_loc__frame(&s->at.loc, frame, sizeof(frame)));
	if (s->at.loc.dso)
		add_name(o, "dso", s->at.loc.dso);
	if (s->period)
		add_u64(o, "period", s->period);
	if (s->tp)
		tp_fields(o, s->tp);
	chain = json_object_new_array();
	for (size_t i = 0; chain && i < s->nchain; i++) {
		const char *n = symbolizer_loc__frame(&s->chain[i].loc, frame, sizeof(frame));

		json_object_array_add(chain, escape_json_object(n, strlen(n)));
	}
	json_object_object_add(o, "callchain", chain ? chain : json_object_new_array());
	if (s->off)
		offcpu_json(o, s);
	emit(f, o);
}

/* The fields of a well-known type, where its payload holds them. */
static void marker_fields(struct json_object *o, const struct script_marker *sm)
{
	const struct marker *m = sm->m;

	switch (m->type) {
	case PERFMARK_TYPE_RANGE_BEGIN:
	case PERFMARK_TYPE_RANGE_END:
		if (m->text)
			add_string(o, "name", m->text, m->text_len);
		if (sm->has_duration)
			add_u64(o, "duration_ns", sm->duration);
		break;
	case PERFMARK_TYPE_COUNTER:
		if (!m->has_value)
			break;
		if (m->text)
			add_string(o, "name", m->text, m->text_len);
		add_int(o, "value", m->value);
		break;
	case PERFMARK_TYPE_JIT_CODE:
		if (!m->has_code)
			break;
		add_u64(o, "addr", m->code_addr);
		add_u64(o, "code_size", m->code_size);
		if (m->text)
			add_string(o, "name", m->text, m->text_len);
		break;
	default:
		break;
	}
}

static void json_marker(struct obuf *f, const struct script_marker *sm)
{
	const struct marker *m = sm->m;
	struct json_object *o = head(&sm->h), *data;
	bool truncated = m->flags & PERFMARK_UEVENT_F_TRUNCATED;

	if (!o)
		return;
	if (m->type != MARKER_TYPE_NONE)
		add_int(o, "type", m->type);
	add_int(o, "size", m->size);
	json_object_object_add(o, "truncated", json_object_new_boolean(truncated));
	json_object_object_add(o, "fault",
			       json_object_new_boolean(m->flags & PERFMARK_UEVENT_F_FAULT));
	if (m->version != PERFMARK_UEVENT_VERSION)
		add_int(o, "version", m->version);
	if (truncated)
		add_int(o, "orig_size", m->orig_size);
	if (m->state == MARKER_OK && m->type == PERFMARK_TYPE_STRING) {
		add_string(o, "text", m->text, m->text_len);
	} else if ((data = hex(m->data, m->len))) {
		json_object_object_add(o, "data", data);
	}
	if (m->state == MARKER_OK)
		marker_fields(o, sm);
	emit(f, o);
}

static void json_lost(struct obuf *f, const struct script_head *h, uint64_t lost)
{
	struct json_object *o = head(h);

	if (!o)
		return;
	add_u64(o, "lost", lost);
	emit(f, o);
}

const struct script_printer script_json = {
	.sample = json_sample,
	.marker = json_marker,
	.lost = json_lost,
};

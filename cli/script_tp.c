// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark script's tracepoint samples (lib/analyze/tracepoint.h): their
 * fields decoded with the recording's formats, in text as perf script
 * prints them ("prev_comm=x prev_pid=1 ..."), and in JSON as the members
 * of "fields" (numbers as numbers, strings escaped, arrays as arrays).
 * The formats are read once, when the first tracepoint sample is printed.
 * A sample that cannot be decoded (no tracing data, an entry that does
 * not hold what its format says) is printed as other samples are.
 */
#include <json-c/json.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "script.h"
#include "tracepoint.h"

#define TEXT_MAX 4096

/* the decoder of sc's recording, made at the first call; NULL when there is none */
static struct tpdecode *decoder(struct script *sc)
{
	const uint8_t *data;
	char err[128];
	size_t len;

	if (sc->tp_tried)
		return sc->tp;
	sc->tp_tried = true;
	data = perfread__tracing_data(sc->r, &len);
	if (data && tpdecode__new(&sc->tp, data, len, err, sizeof(err)))
		sc->tp = NULL;
	return sc->tp;
}

/* the event of a tracepoint sample, or NULL */
static const struct tpdecode_event *entry_of(struct script *sc, const struct perfread_sample *s)
{
	const struct tpdecode_event *ev;
	struct tpdecode *d;

	if (!s->event || s->event->attr.type != PERF_TYPE_TRACEPOINT || !s->raw || !(d = decoder(sc)))
		return NULL;
	return tpdecode__entry(d, s->raw, s->raw_size, &ev) ? NULL : ev;
}

bool script_tp__text(struct script *sc, const struct perfread_sample *s)
{
	const struct tpdecode_event *ev = entry_of(sc, s);
	static char buf[TEXT_MAX];
	size_t n;

	if (!ev)
		return false;
	n = tpdecode__text(sc->tp, ev, s->raw, s->raw_size, buf, sizeof(buf));
	escape_term(sc->out, buf, n < sizeof(buf) ? n : sizeof(buf) - 1, 0);
	return true;
}

/* a field's name as a JSON key: the formats' names are C identifiers (tpcheck.h) */
static bool good_key(const char *k)
{
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
		      *k == '_'))
			return false;
	return true;
}

static struct json_object *json_value(const struct tpvalue *v)
{
	struct json_object *a;
	size_t k;

	switch (v->kind) {
	case TPV_INT:
		return json_object_new_int64(v->i);
	case TPV_UINT:
		return json_object_new_uint64(v->u);
	case TPV_STR:
		return escape_json_object(v->s, v->len);
	case TPV_ARRAY:
		a = json_object_new_array();
		for (k = 0; a && k < v->n; k++)
			json_object_array_add(a, v->sgn ? json_object_new_int64((int64_t)tpvalue_elem(v, k)) :
					      json_object_new_uint64(tpvalue_elem(v, k)));
		return a;
	}
	return NULL;
}

void script_tp__json(struct script *sc, struct json_object *o, const struct perfread_sample *s)
{
	const struct tpdecode_event *ev;
	struct json_object *f;
	struct tpvalue v;
	size_t i;

	if (!s->event || s->event->attr.type != PERF_TYPE_TRACEPOINT)
		return;
	ev = entry_of(sc, s);
	if (!ev) {
		json_object_object_add(o, "fields", NULL);
		return;
	}
	f = json_object_new_object();
	for (i = 0; f && i < tpdecode__nr_fields(ev); i++) {
		const char *name = tpdecode__field_name(ev, i);

		if (!*name || !good_key(name))
			continue;
		tpdecode__value(ev, s->raw, s->raw_size, i, &v);
		json_object_object_add(f, name, json_value(&v));
	}
	json_object_object_add(o, "fields", f);
}

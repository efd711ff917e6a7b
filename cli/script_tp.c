// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark script's tracepoint samples (lib/analyze/tracepoint.h): their
 * fields decoded with the recording's formats into the form the printers
 * write, the text perf script prints ("prev_comm=x prev_pid=1 ...") and
 * each field's value.  The formats are read once, at the first tracepoint
 * sample.  A sample that cannot be decoded (no tracing data, an entry that
 * does not hold what its format says) has decoded false.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "script.h"

#define TEXT_MAX 4096
#define FIELDS_MAX 256          /* TPFORMAT_FIELDS_MAX: a format has no more */

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
	sc->tpfields = calloc(FIELDS_MAX, sizeof(*sc->tpfields));
	sc->tptext = malloc(TEXT_MAX);
	if (data && sc->tpfields && sc->tptext && tpdecode__new(&sc->tp, data, len, err, sizeof(err)))
		sc->tp = NULL;
	return sc->tp;
}

const struct script_tp *script_tp__decode(struct script *sc, const struct perfread_sample *s)
{
	struct script_tp *t = &sc->tpform;
	const struct tpdecode_event *ev;
	struct tpdecode *d;
	size_t i, n;

	if (!s->event || s->event->attr.type != PERF_TYPE_TRACEPOINT)
		return NULL;
	memset(t, 0, sizeof(*t));
	d = decoder(sc);
	if (!d || !s->raw || tpdecode__entry(d, s->raw, s->raw_size, &ev))
		return t;
	n = tpdecode__text(d, ev, s->raw, s->raw_size, sc->tptext, TEXT_MAX);
	t->text = sc->tptext;
	t->len = n < TEXT_MAX ? n : TEXT_MAX - 1;
	for (i = 0; i < tpdecode__nr_fields(ev) && i < FIELDS_MAX; i++) {
		sc->tpfields[i].name = tpdecode__field_name(ev, i);
		tpdecode__value(ev, s->raw, s->raw_size, i, &sc->tpfields[i].v);
	}
	t->fields = sc->tpfields;
	t->nfields = i;
	t->decoded = true;
	return t;
}

void script_tp__free(struct script *sc)
{
	tpdecode__free(sc->tp);
	free(sc->tpfields);
	free(sc->tptext);
}

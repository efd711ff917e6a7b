// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tracepoint formats, parsed with libtraceevent.  See tpformat.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <tracefs.h>

#include "errline.h"
#include "tpformat.h"
#include "tracepoint_wire.h"

struct tpformat {
	char *sys, *name, *text;
	size_t len;
	uint32_t id, fixed;
	struct tpfield *fields;
	size_t nr_fields;
};

void tpformat__free(struct tpformat *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nr_fields; i++) {
		free(f->fields[i].name);
		free(f->fields[i].type);
	}
	free(f->fields);
	free(f->sys);
	free(f->name);
	free(f->text);
	free(f);
}

static enum tpfield_kind kind_of(const struct tep_format_field *tf)
{
	unsigned long fl = tf->flags;

	if (fl & TEP_FIELD_IS_DYNAMIC)
		return (fl & TEP_FIELD_IS_STRING) ? TPFIELD_DYNSTR : TPFIELD_OTHER;
	if (fl & TEP_FIELD_IS_ARRAY)
		return ((fl & TEP_FIELD_IS_STRING) && tf->elementsize == 1) ? TPFIELD_CHARS : TPFIELD_OTHER;
	if (tf->size == 1 || tf->size == 2 || tf->size == 4 || tf->size == 8)
		return TPFIELD_NUM;
	return TPFIELD_OTHER;
}

/* one field of libtraceevent's list as ours: 0, or -EINVAL + err for one outside the entry */
static int take_field(struct tpformat *f, const struct tep_format_field *tf, char *err, size_t errlen)
{
	struct tpfield *d = &f->fields[f->nr_fields];

	if (!tf->name || tf->offset < 0 || tf->size < 0 ||
	    (uint64_t)tf->offset + (uint64_t)tf->size > PM_TP_RAW_MAX)
		return errline(err, errlen, "tracepoint %s:%s: a field outside its %d bytes",
			       f->sys, f->name, PM_TP_RAW_MAX);
	d->name = strdup(tf->name);
	d->type = strdup(tf->type ? tf->type : "");
	if (!d->name || !d->type) {
		free(d->name);
		free(d->type);
		return -ENOMEM;
	}
	f->nr_fields++;
	d->off = (uint32_t)tf->offset;
	d->size = (uint32_t)tf->size;
	d->kind = kind_of(tf);
	d->sgn = tf->flags & TEP_FIELD_IS_SIGNED;
	d->dyn = tf->flags & TEP_FIELD_IS_DYNAMIC;
	d->rel = tf->flags & TEP_FIELD_IS_RELATIVE;
	d->pointer = tf->flags & TEP_FIELD_IS_POINTER;
	if (d->dyn && d->size != 4)
		return errline(err, errlen, "tracepoint %s:%s: dynamic field %s is not 4 bytes",
			       f->sys, f->name, d->name);
	if (d->off + d->size > f->fixed)
		f->fixed = d->off + d->size;
	return 0;
}

static int take_fields(struct tpformat *f, struct tep_event *ev, char *err, size_t errlen)
{
	const struct tep_format_field *tf;
	size_t n = 0;
	int pass, e;

	for (pass = 0; pass < 2; pass++)
		for (tf = pass ? ev->format.fields : ev->format.common_fields; tf; tf = tf->next)
			n++;
	if (n > TPFORMAT_FIELDS_MAX)
		return errline(err, errlen, "tracepoint %s:%s has %zu fields (at most %d)",
			       f->sys, f->name, n, TPFORMAT_FIELDS_MAX);
	f->fields = calloc(n ? n : 1, sizeof(*f->fields));
	if (!f->fields)
		return -ENOMEM;
	for (pass = 0; pass < 2; pass++)
		for (tf = pass ? ev->format.fields : ev->format.common_fields; tf; tf = tf->next)
			if ((e = take_field(f, tf, err, errlen)))
				return e;
	if (f->fixed < 8)
		return errline(err, errlen, "tracepoint %s:%s: no common fields", f->sys, f->name);
	return 0;
}

int tpformat__parse(struct tpformat **out, const char *sys, const char *text, size_t len,
		    char *err, size_t errlen)
{
	struct tep_handle *tep = NULL;
	struct tep_event *ev = NULL;
	struct tpformat *f;
	int e;

	*out = NULL;
	if (len > TPFORMAT_TEXT_MAX)
		return errline(err, errlen, "tracepoint format of %zu bytes (at most %u)", len,
			       TPFORMAT_TEXT_MAX);
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->sys = strdup(sys);
	f->text = malloc(len + 1);
	tep = tep_alloc();
	if (!f->sys || !f->text || !tep) {
		e = -ENOMEM;
		goto out;
	}
	memcpy(f->text, text, len);
	f->text[len] = '\0';
	f->len = len;
	tep_set_loglevel(TEP_LOG_NONE);
	if (tep_parse_format(tep, &ev, f->text, len, sys) || !ev || !ev->name) {
		e = errline(err, errlen, "cannot parse the format of a %s tracepoint", sys);
		goto out;
	}
	f->name = strdup(ev->name);
	if (!f->name) {
		e = -ENOMEM;
		goto out;
	}
	f->id = (uint32_t)ev->id;
	e = take_fields(f, ev, err, errlen);
out:
	tep_free(tep);          /* the event with it: tep_parse_format added it */
	if (e)
		tpformat__free(f);
	else
		*out = f;
	return e;
}

int tpformat__read(struct tpformat **out, const char *sys, const char *name,
		   char *err, size_t errlen)
{
	int size = 0, e;
	char *text = tracefs_event_file_read(NULL, sys, name, "format", &size);

	*out = NULL;
	if (!text || size <= 0) {
		e = errno ? -errno : -ENOENT;
		free(text);
		errline(err, errlen, "cannot read the format of tracepoint %s:%s: %s", sys, name,
			strerror(-e));
		return e;
	}
	e = tpformat__parse(out, sys, text, (size_t)size, err, errlen);
	free(text);
	if (!e && strcmp((*out)->name, name)) {
		tpformat__free(*out);
		*out = NULL;
		return errline(err, errlen, "the format of %s:%s names another event", sys, name);
	}
	return e;
}

uint32_t tpformat__id(const struct tpformat *f)
{
	return f->id;
}

const char *tpformat__sys(const struct tpformat *f)
{
	return f->sys;
}

const char *tpformat__name(const struct tpformat *f)
{
	return f->name;
}

const char *tpformat__text(const struct tpformat *f, size_t *len)
{
	*len = f->len;
	return f->text;
}

size_t tpformat__nr_fields(const struct tpformat *f)
{
	return f->nr_fields;
}

const struct tpfield *tpformat__field(const struct tpformat *f, size_t i)
{
	return i < f->nr_fields ? &f->fields[i] : NULL;
}

const struct tpfield *tpformat__find(const struct tpformat *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nr_fields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

uint32_t tpformat__fixed(const struct tpformat *f)
{
	return f->fixed;
}

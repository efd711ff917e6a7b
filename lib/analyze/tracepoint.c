// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tracepoint samples decoded with libtraceevent.  See tracepoint.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "errline.h"
#include "pdbuf.h"
#include "tpcheck.h"
#include "tracepoint.h"

#define NAME_MAX_ 64              /* a system's name in the data */
#define PRINTK_MAX (4u << 20)

struct tpdecode_event {
	struct tep_event *tev;
	struct tep_format_field **fields;   /* its own, in order */
	size_t nr_fields;
	uint32_t fixed;                     /* end of its last field, common ones too */
	bool generic;                       /* its print fmt was dropped (tpcheck.h) */
};

/*
 * libtraceevent reads what a format's print fmt says to read; a hostile
 * format can point past the entry.  Entries are printed from a copy in a
 * zeroed area that holds any dynamic array a u16 offset and length reach.
 */
#define SCRATCH (2 * 65536 + 64)

struct tpdecode {
	struct tep_handle *tep;
	uint8_t *scratch;
	struct tpcheck_fmt *fmts;           /* while parsing: the formats taken */
	bool *generic;
	size_t nr_fmts;
	struct tpdecode_event *evs;
	size_t nr, cap;
};

static void tpdecode_drop_fmts(struct tpdecode *d)
{
	size_t i;

	for (i = 0; i < d->nr_fmts; i++)
		free(d->fmts[i].text);
	free(d->fmts);
	free(d->generic);
	d->fmts = NULL;
	d->generic = NULL;
	d->nr_fmts = 0;
}

void tpdecode__free(struct tpdecode *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nr; i++)
		free(d->evs[i].fields);
	free(d->evs);
	free(d->scratch);
	tpdecode_drop_fmts(d);
	tep_free(d->tep);
	free(d);
}

size_t tpdecode__nr_events(const struct tpdecode *d)
{
	return d->nr;
}

/* --- the tracing data --------------------------------------------------------- */

static bool take_bytes(struct pdcursor *c, const void *want, size_t n)
{
	if (c->len - c->off < n || memcmp(c->p + c->off, want, n))
		return false;
	c->off += n;
	return true;
}

/* a NUL-terminated string of at most max bytes at the cursor: its start, or NULL */
static const char *take_string(struct pdcursor *c, size_t max)
{
	const char *s = (const char *)c->p + c->off;
	size_t left = c->len - c->off, n = strnlen(s, left < max ? left : max);

	if (n == left || n == max)
		return NULL;
	c->off += n + 1;
	return s;
}

/* u64 size, then that many bytes: a NUL-terminated copy, or NULL */
static char *take_blob(struct pdcursor *c, bool wide, size_t max, size_t *len)
{
	uint64_t n64 = 0;
	uint32_t n32 = 0;
	char *p;

	if (wide ? !pdcursor_u64(c, &n64) : !pdcursor_u32(c, &n32))
		return NULL;
	if (!wide)
		n64 = n32;
	if (n64 > max || n64 > c->len - c->off)
		return NULL;
	p = malloc((size_t)n64 + 1);
	if (!p)
		return NULL;
	memcpy(p, c->p + c->off, (size_t)n64);
	p[n64] = '\0';
	c->off += (size_t)n64;
	*len = (size_t)n64;
	return p;
}

/* the event just parsed as ours: its fields listed, checked against the largest entry */
static int add_event(struct tpdecode *d, struct tep_event *tev, bool generic)
{
	struct tpdecode_event *e;
	struct tep_format_field *f;
	int pass;

	if (!tev || tev->context)
		return 0;                     /* a second format for an id: the first stays */
	if (d->nr == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct tpdecode_event *n = realloc(d->evs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->evs = n;
		d->cap = cap;
	}
	e = &d->evs[d->nr];
	memset(e, 0, sizeof(*e));
	e->tev = tev;
	e->generic = generic;
	for (f = tev->format.fields; f; f = f->next)
		e->nr_fields++;
	e->fields = calloc(e->nr_fields ? e->nr_fields : 1, sizeof(*e->fields));
	if (!e->fields)
		return -ENOMEM;
	e->nr_fields = 0;
	for (pass = 0; pass < 2; pass++)
		for (f = pass ? tev->format.fields : tev->format.common_fields; f; f = f->next) {
			if (f->offset < 0 || f->size < 0 || f->offset + (int64_t)f->size > 65535)
				return -EINVAL;
			if ((uint32_t)(f->offset + f->size) > e->fixed)
				e->fixed = (uint32_t)(f->offset + f->size);
			if (pass)
				e->fields[e->nr_fields++] = f;
		}
	d->nr++;
	/* the index is only taken once the whole list is grown: see finish() */
	return 0;
}

/* the formats of one system: checked (tpcheck_format), kept in d->fmts for later */
static int take_formats(struct tpdecode *d, struct pdcursor *c, const char *sys)
{
	uint32_t n, i;
	size_t len;
	char *text;
	int check;

	if (!pdcursor_u32(c, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct tpcheck_fmt *f;

		if (d->nr_fmts == TPDECODE_EVENTS_MAX)
			return -E2BIG;
		text = take_blob(c, true, TPDECODE_FORMAT_MAX, &len);
		if (!text)
			return -EINVAL;
		/* only what looks like the kernel's reaches libtraceevent */
		check = tpcheck_format(text, len);
		f = &d->fmts[d->nr_fmts++];
		f->sys = sys;
		f->text = text;
		f->len = len;
		f->bad = check < 0;
		d->generic[d->nr_fmts - 1] = check == 1;
	}
	return 0;
}

/* the formats taken, through the child first, then here */
static int parse_formats(struct tpdecode *d)
{
	size_t i;
	int e;

	tpcheck_isolate(d->fmts, d->nr_fmts);
	for (i = 0; i < d->nr_fmts; i++) {
		struct tep_event *tev = NULL;

		if (d->fmts[i].bad)
			continue;
		/* a format that cannot be read leaves its samples undecoded, not the file */
		if (!tep_parse_format(d->tep, &tev, d->fmts[i].text, d->fmts[i].len, d->fmts[i].sys) &&
		    (e = add_event(d, tev, d->generic[i])))
			return e;
	}
	return 0;
}

static int parse(struct tpdecode *d, struct pdcursor *c)
{
	static const char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const char *version, *sys;
	uint8_t endian, long_size;
	uint32_t page, systems, i;
	size_t len;
	char *text;
	int e;

	if (!take_bytes(c, magic, sizeof(magic)) || !(version = take_string(c, 16)) ||
	    c->len - c->off < 2)
		return -EINVAL;
	endian = c->p[c->off];
	long_size = c->p[c->off + 1];
	c->off += 2;
	if (endian || (long_size != 4 && long_size != 8) || !pdcursor_u32(c, &page) || !page)
		return -EINVAL;
	tep_set_file_bigendian(d->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(d->tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(d->tep, long_size);
	tep_set_page_size(d->tep, (int)page);
	/*
	 * The ring buffer's page header, and below the printk formats (for
	 * trace_printk's bprint events only): skipped, perf samples need
	 * neither, and libtraceevent 1.7 reads past the end of a malformed
	 * printk formats section (fuzz-tpdecode found it).
	 */
	if (!take_bytes(c, "header_page", 12) || !(text = take_blob(c, true, 65536, &len)))
		return -EINVAL;
	free(text);
	if (!take_bytes(c, "header_event", 13) || !(text = take_blob(c, true, 65536, &len)))
		return -EINVAL;
	free(text);
	if ((e = take_formats(d, c, "ftrace")))
		return e;
	if (!pdcursor_u32(c, &systems))
		return -EINVAL;
	for (i = 0; i < systems; i++) {
		if (!(sys = take_string(c, NAME_MAX_)) || (e = take_formats(d, c, sys)))
			return e ? e : -EINVAL;
	}
	/* kallsyms: skipped, as perf does (its addresses are the recording machine's) */
	if (!(text = take_blob(c, false, TPDECODE_FORMAT_MAX * 1024u, &len)))
		return -EINVAL;
	free(text);
	if (!(text = take_blob(c, false, PRINTK_MAX, &len)))
		return -EINVAL;
	free(text);
	/* 0.6 adds the saved command lines, which perf's own threads replace */
	if (strcmp(version, "0.5") && !(text = take_blob(c, true, TPDECODE_FORMAT_MAX * 1024u, &len)))
		return -EINVAL;
	if (strcmp(version, "0.5"))
		free(text);
	return parse_formats(d);
}

int tpdecode__new(struct tpdecode **out, const uint8_t *data, size_t len, char *err, size_t errlen)
{
	struct pdcursor c = { data, len, 0 };
	struct tpdecode *d;
	size_t i;
	int e;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	tep_set_loglevel(TEP_LOG_NONE);
	d->tep = tep_alloc();
	d->scratch = calloc(1, SCRATCH);
	d->fmts = calloc(TPDECODE_EVENTS_MAX, sizeof(*d->fmts));
	d->generic = calloc(TPDECODE_EVENTS_MAX, sizeof(*d->generic));
	if (!d->tep || !d->scratch || !d->fmts || !d->generic) {
		tpdecode__free(d);
		return -ENOMEM;
	}
	e = parse(d, &c);
	tpdecode_drop_fmts(d);     /* libtraceevent keeps copies of what it needs */
	if (e) {
		tpdecode__free(d);
		if (e == -ENOMEM)
			return e;
		return errline(err, errlen, "malformed tracing data (%s)",
			       e == -E2BIG ? "too many formats" : "cut short or out of bounds");
	}
	for (i = 0; i < d->nr; i++)
		d->evs[i].tev->context = &d->evs[i];
	*out = d;
	return 0;
}

/* --- entries ------------------------------------------------------------------ */

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* a dynamic field's data: [*off, *off + *len) of the entry, or false when outside it */
static bool dyn_range(const struct tep_format_field *f, const uint8_t *raw, size_t size,
		      size_t *off, size_t *len)
{
	uint32_t loc;

	if (f->size != 4 || (size_t)f->offset + 4 > size)
		return false;
	loc = get_u32(raw + f->offset);
	*off = (loc & 0xffff) + ((f->flags & TEP_FIELD_IS_RELATIVE) ? (size_t)f->offset + 4 : 0);
	*len = loc >> 16;
	return *off <= size && *len <= size - *off;
}

int tpdecode__entry(const struct tpdecode *d, const void *raw, size_t size,
		    const struct tpdecode_event **out)
{
	const struct tpdecode_event *ev;
	struct tep_event *tev;
	uint16_t type;
	size_t i, off, len;

	*out = NULL;
	if (size < 8)
		return -EINVAL;
	memcpy(&type, raw, 2);
	tev = tep_find_event(d->tep, type);
	if (!tev || !tev->context)
		return -ENOENT;
	ev = tev->context;
	if (ev->fixed > size)
		return -EINVAL;
	for (i = 0; i < ev->nr_fields; i++)
		if ((ev->fields[i]->flags & TEP_FIELD_IS_DYNAMIC) &&
		    !dyn_range(ev->fields[i], raw, size, &off, &len))
			return -EINVAL;
	*out = ev;
	return 0;
}

const struct tpdecode_event *tpdecode__event(const struct tpdecode *d, uint64_t id)
{
	struct tep_event *tev = id <= INT32_MAX ? tep_find_event(d->tep, (int)id) : NULL;

	return tev ? tev->context : NULL;
}

const char *tpdecode__sys(const struct tpdecode_event *ev)
{
	return ev->tev->system ? ev->tev->system : "";
}

const char *tpdecode__name(const struct tpdecode_event *ev)
{
	return ev->tev->name ? ev->tev->name : "";
}

size_t tpdecode__nr_fields(const struct tpdecode_event *ev)
{
	return ev->nr_fields;
}

const char *tpdecode__field_name(const struct tpdecode_event *ev, size_t i)
{
	return i < ev->nr_fields && ev->fields[i]->name ? ev->fields[i]->name : "";
}

bool tpdecode__field_numeric(const struct tpdecode_event *ev, size_t i)
{
	return i < ev->nr_fields &&
	       !(ev->fields[i]->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC));
}

int tpdecode__field_index(const struct tpdecode_event *ev, const char *name)
{
	size_t i;

	for (i = 0; i < ev->nr_fields; i++)
		if (ev->fields[i]->name && !strcmp(ev->fields[i]->name, name))
			return (int)i;
	return -1;
}

/* name=value for each field: for an event whose print fmt was dropped */
static size_t generic_text(const struct tpdecode_event *ev, const void *raw, size_t size,
			   char *buf, size_t len)
{
	size_t i, k, n = 0;
	struct tpvalue v;
	char one[96];
	int w;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < ev->nr_fields; i++) {
		tpdecode__value(ev, raw, size, i, &v);
		switch (v.kind) {
		case TPV_INT:
			w = snprintf(one, sizeof(one), "%lld", (long long)v.i);
			break;
		case TPV_UINT:
			w = snprintf(one, sizeof(one), "0x%llx", (unsigned long long)v.u);
			break;
		case TPV_STR:
			w = snprintf(one, sizeof(one), "%.*s", (int)(v.len < 64 ? v.len : 64), v.s);
			break;
		default:
			w = snprintf(one, sizeof(one), "[%zu]", v.n);
			for (k = 0; k < v.n && k < 4; k++)
				(void)tpvalue_elem(&v, k);
			break;
		}
		if (w < 0)
			w = 0;
		w = snprintf(len > n ? buf + n : NULL, len > n ? len - n : 0, "%s%s=%s", i ? " " : "",
			     tpdecode__field_name(ev, i), one);
		n += w > 0 ? (size_t)w : 0;
	}
	return n;
}

size_t tpdecode__text(const struct tpdecode *d, const struct tpdecode_event *ev,
		      const void *raw, size_t size, char *buf, size_t len)
{
	struct tep_record rec = { 0 };
	struct trace_seq s;
	size_t n;

	if (ev->generic)
		return generic_text(ev, raw, size, buf, len);
	if (size > 65536)
		return 0;
	memcpy(d->scratch, raw, size);
	rec.data = d->scratch;
	rec.size = (int)size;
	rec.record_size = (int)size;
	trace_seq_init(&s);
	tep_print_event(d->tep, &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	n = s.buffer ? s.len : 0;
	if (len)
		snprintf(buf, len, "%.*s", (int)n, s.buffer ? s.buffer : "");
	trace_seq_destroy(&s);
	memset(d->scratch, 0, size);
	return n;
}

static uint64_t load(const uint8_t *p, size_t size, bool sgn)
{
	uint64_t u = 0;

	memcpy(&u, p, size > 8 ? 8 : size);
	if (sgn && size < 8 && size && (u >> (size * 8 - 1) & 1))
		u |= ~0ull << (size * 8);
	return u;
}

void tpdecode__value(const struct tpdecode_event *ev, const void *raw, size_t size, size_t i,
		     struct tpvalue *v)
{
	const struct tep_format_field *f = ev->fields[i];
	const uint8_t *e = raw;
	size_t off = (size_t)f->offset, len = (size_t)f->size;
	bool sgn = f->flags & TEP_FIELD_IS_SIGNED;

	memset(v, 0, sizeof(*v));
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		if (!dyn_range(f, e, size, &off, &len))
			len = 0;
	}
	if (f->flags & TEP_FIELD_IS_STRING) {
		v->kind = TPV_STR;
		v->s = (const char *)e + off;
		v->len = len ? strnlen(v->s, len) : 0;
	} else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
		v->kind = TPV_ARRAY;
		v->elem = f->elementsize == 1 || f->elementsize == 2 || f->elementsize == 4 ||
			  f->elementsize == 8 ? f->elementsize : 1;
		v->p = e + off;
		v->n = len / v->elem;
		v->sgn = sgn;
	} else if (sgn) {
		v->kind = TPV_INT;
		v->i = (int64_t)load(e + off, len, true);
	} else {
		v->kind = TPV_UINT;
		v->u = load(e + off, len, false);
	}
}

uint64_t tpvalue_elem(const struct tpvalue *v, size_t k)
{
	return k < v->n ? load(v->p + k * v->elem, v->elem, v->sgn) : 0;
}

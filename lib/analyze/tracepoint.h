/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoding tracepoint samples: the entry a PERF_SAMPLE_RAW carries, read
 * with the formats of the recording's HEADER_TRACING_DATA
 * (perfread__tracing_data; layout: lib/write/tracedata.h) by
 * libtraceevent, as perf script decodes them.
 *
 *   tpdecode__new()    parse the tracing data once
 *   tpdecode__entry()  find an entry's event and check it against the format
 *   tpdecode__text()   the fields as perf script prints them
 *   tpdecode__value()  one field's value, for JSON and for grouping
 *
 * Everything here is data from the file: bounded and checked before
 * libtraceevent sees it.  At most TPDECODE_EVENTS_MAX formats of at most
 * TPDECODE_FORMAT_MAX bytes each; an entry is decoded only when every field
 * of its format, and every dynamic array it points at, lies inside it.
 * Strings come out as the bytes they are: the caller escapes them for
 * where they go (lib/common/escape.h).
 */
#ifndef PERFMARK_TRACEPOINT_H
#define PERFMARK_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TPDECODE_EVENTS_MAX 4096
#define TPDECODE_FORMAT_MAX (64u << 10)

struct tpdecode;
struct tpdecode_event;

/* 0, or -EINVAL with one line in err (a malformed section), -ENOMEM */
int tpdecode__new(struct tpdecode **out, const uint8_t *data, size_t len, char *err, size_t errlen);
void tpdecode__free(struct tpdecode *d);
/* formats parsed */
size_t tpdecode__nr_events(const struct tpdecode *d);

/*
 * The event of an entry (its common_type): 0 and *ev; -ENOENT when the
 * recording has no format for it, -EINVAL when the entry does not hold
 * what its format says (too short, a dynamic array outside it).
 */
int tpdecode__entry(const struct tpdecode *d, const void *raw, size_t size,
		    const struct tpdecode_event **ev);
/* the event of a tracepoint id (an attr's config), NULL when the recording has no format */
const struct tpdecode_event *tpdecode__event(const struct tpdecode *d, uint64_t id);
const char *tpdecode__sys(const struct tpdecode_event *ev);
const char *tpdecode__name(const struct tpdecode_event *ev);
/* the event's own fields (not the common ones), in format order */
size_t tpdecode__nr_fields(const struct tpdecode_event *ev);
const char *tpdecode__field_name(const struct tpdecode_event *ev, size_t i);
/* field i is a number (not a string, not an array) */
bool tpdecode__field_numeric(const struct tpdecode_event *ev, size_t i);
/* the index of a field by name, -1 when there is none */
int tpdecode__field_index(const struct tpdecode_event *ev, const char *name);

/*
 * perf script's text of an entry tpdecode__entry accepted (its print fmt,
 * "prev_comm=x prev_pid=1 ..."), NUL-terminated into buf (cut at len);
 * returns its length before any cut.
 */
size_t tpdecode__text(const struct tpdecode *d, const struct tpdecode_event *ev,
		      const void *raw, size_t size, char *buf, size_t len);

enum tpvalue_kind {
	TPV_INT,             /* i: a signed number */
	TPV_UINT,            /* u: an unsigned number (pointers too) */
	TPV_STR,             /* s[0, len): a string's bytes, no NUL */
	TPV_ARRAY,           /* n elements of elem bytes at p, signed or not */
};

struct tpvalue {
	enum tpvalue_kind kind;
	int64_t i;
	uint64_t u;
	const char *s;
	size_t len;
	const uint8_t *p;    /* TPV_ARRAY: read with tpvalue_elem() */
	size_t n, elem;
	bool sgn;
};

/* field i of an entry tpdecode__entry accepted */
void tpdecode__value(const struct tpdecode_event *ev, const void *raw, size_t size, size_t i,
		     struct tpvalue *v);
/* element k of a TPV_ARRAY, as a number (signed ones sign-extended) */
uint64_t tpvalue_elem(const struct tpvalue *v, size_t k);

#endif

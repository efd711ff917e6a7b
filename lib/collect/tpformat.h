/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tracepoint's format: tracefs's events/SUBSYS/NAME/format, parsed with
 * libtraceevent into its id and fields (the common ones first).  What the
 * recorder needs of it: the entry's size and where its dynamic arrays are
 * (tpconfig), the fields a filter may name (tpfilter).
 *
 * Bounds: a format's text at most TPFORMAT_TEXT_MAX bytes, at most
 * TPFORMAT_FIELDS_MAX fields, each within PM_TP_RAW_MAX bytes of the entry.
 */
#ifndef PERFMARK_TPFORMAT_H
#define PERFMARK_TPFORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TPFORMAT_TEXT_MAX   (64u << 10)
#define TPFORMAT_FIELDS_MAX 256

enum tpfield_kind {
	TPFIELD_NUM,        /* an integer of 1, 2, 4 or 8 bytes */
	TPFIELD_CHARS,      /* char NAME[N]: a string of at most N bytes */
	TPFIELD_DYNSTR,     /* __data_loc / __rel_loc char[]: a string elsewhere in the entry */
	TPFIELD_OTHER,      /* arrays of numbers, dynamic arrays of other kinds, odd sizes */
};

struct tpfield {
	char *name;
	char *type;         /* as the format spells it: "pid_t", "char[16]", "__data_loc char[]" */
	uint32_t off, size;
	enum tpfield_kind kind;
	bool sgn;           /* signed (numbers) */
	bool dyn, rel;      /* __data_loc (a u32 offset | length << 16); __rel_loc: offset from its end */
	bool pointer;       /* a kernel pointer: a number, but no string */
};

struct tpformat;

/* events/SYS/NAME/format of the mounted tracefs.  0 or -errno + err. */
int tpformat__read(struct tpformat **out, const char *sys, const char *name,
		   char *err, size_t errlen);
/* a format's text (from a recording, a test) */
int tpformat__parse(struct tpformat **out, const char *sys, const char *text, size_t len,
		    char *err, size_t errlen);
void tpformat__free(struct tpformat *f);

uint32_t tpformat__id(const struct tpformat *f);
const char *tpformat__sys(const struct tpformat *f);
const char *tpformat__name(const struct tpformat *f);
const char *tpformat__text(const struct tpformat *f, size_t *len);
size_t tpformat__nr_fields(const struct tpformat *f);
const struct tpfield *tpformat__field(const struct tpformat *f, size_t i);
const struct tpfield *tpformat__find(const struct tpformat *f, const char *name);
/* bytes of the entry without its dynamic data: the end of its last field */
uint32_t tpformat__fixed(const struct tpformat *f);

#endif

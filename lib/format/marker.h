/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A marker as every reader sees it: the one decoder of the format in
 * uevent.h (script, report, flamegraph and export each had their own).
 *
 * A marker is a sample of one of two events (PERFMARK_EV_*, uevent.h):
 *   perfmark:printf  its RAW field is the text, NUL terminated
 *   perfmark:uevent  its RAW field is a struct perfmark_uevent_hdr, then the payload
 *
 * marker__decode() reads one.  A marker whose header reads (MARKER_OK) of
 * a well-known type also gets that type's fields, where its payload holds them:
 *   string        text: up to the first NUL (may be empty)
 *   range begin   text: the range's name
 *   range end     text: the name of the range it ends
 *   counter       value (8 bytes), then text: its name
 *   JIT code      code_addr, code_size (8 bytes each), then text: its name
 * A payload too short for a field leaves it out (has_value, has_code false;
 * text NULL for a name).
 *
 * RULE (issue 18 case 12): a name is the payload's bytes up to its first
 * NUL, or all of them when there is none.  The recorder keeps at most
 * PERFMARK_MAX_PAYLOAD bytes of a marker, so a longer name arrives cut and
 * without its NUL (flagged truncated); it is still a name, the same at its
 * range's begin and end.  Requiring the NUL dropped such ranges and
 * counters from report without a word.
 *
 * marker_pairs pairs range begins with their ends, per thread: an end
 * closes the innermost open range of its name on its thread (a begin and
 * an end on two threads never pair; an end matching no open range is
 * dropped).  Each begin is an instance numbered from 0; a begin learns the
 * range it nests in (the innermost open on its thread, whatever its name)
 * and its depth, an end the instance it closes and how long it lasted.
 * O(1) per begin and end whatever the input holds (a scan of the open
 * ranges took 58 s for 100,000 ends matching no begin); memory: the names
 * begun, the threads, and the ranges open at once (a closed one's place
 * is reused).
 */
#ifndef PERFMARK_MARKER_H
#define PERFMARK_MARKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uevent.h"

enum marker_event {
	MARKER_NOT,             /* not a marker event */
	MARKER_PRINTF,          /* perfmark:printf */
	MARKER_UEVENT,          /* perfmark:uevent */
};

/* Which marker event a sample's event name is (NULL: none). */
enum marker_event marker__event(const char *name);

enum marker_state {
	MARKER_OK,              /* read: a version this reader knows, the payload within the record */
	MARKER_VERSION,         /* a version this reader does not know: the header's fields only */
	MARKER_MALFORMED,       /* a RAW field too short for its header or its payload */
};

#define MARKER_TYPE_NONE UINT32_MAX     /* the type of a malformed marker */

struct marker {
	enum marker_event event;
	enum marker_state state;
	uint32_t type;          /* PERFMARK_TYPE_*, an application's, or MARKER_TYPE_NONE */
	uint32_t version;       /* 0 when malformed */
	uint32_t flags;         /* PERFMARK_UEVENT_F_* */
	uint32_t size;          /* payload bytes as recorded (printf: with its NUL) */
	uint32_t orig_size;     /* bytes the application asked for */
	const uint8_t *data;    /* the payload (malformed: the whole RAW field) */
	size_t len;             /* its bytes (printf: the text, up to its NUL) */
	/* MARKER_OK and a well-known type: */
	const char *text;       /* a string's text, or the name (NULL when none) */
	size_t text_len;
	bool has_value;         /* counter */
	int64_t value;
	bool has_code;          /* JIT code */
	uint64_t code_addr, code_size;
};

/* Decode the RAW field of a sample of event ev (raw may be NULL). */
void marker__decode(struct marker *m, enum marker_event ev, const void *raw, size_t raw_size);

/* A payload kept apart from its record (a MARKER_OK marker's type, flags, data). */
void marker__decode_payload(struct marker *m, uint32_t type, uint32_t flags,
			    const uint8_t *data, size_t len);

/* The name at d (n bytes), up to its first NUL, length in *len; NULL when there are no bytes. */
const char *marker__name(const uint8_t *d, size_t n, size_t *len);

/* ---- ranges ------------------------------------------------------------------ */

#define MARKER_NO_RANGE UINT32_MAX

struct marker_pairs;

struct marker_pair {
	uint32_t id;            /* begin: the new instance; end: the one it closes;
				 * MARKER_NO_RANGE: dropped (past 2^32 - 2 begins) or none */
	uint32_t parent;        /* begin: the range it nests in, or MARKER_NO_RANGE */
	uint32_t depth;         /* begin: ranges open on its thread before it */
	uint64_t begin;         /* end: its begin's time */
	uint64_t duration;      /* end: from its begin (0 if the end is earlier) */
};

int marker_pairs__new(struct marker_pairs **out);
void marker_pairs__free(struct marker_pairs *mp);

/* A range named name (len bytes) begins on thread at time.  0 or -ENOMEM. */
int marker_pairs__begin(struct marker_pairs *mp, uint32_t thread, const char *name, size_t len,
			uint64_t time, struct marker_pair *out);
/* A range named name ends on thread at time: true when it closes one (out set). */
bool marker_pairs__end(struct marker_pairs *mp, uint32_t thread, const char *name, size_t len,
		       uint64_t time, struct marker_pair *out);
/* The innermost range open on thread, or MARKER_NO_RANGE. */
uint32_t marker_pairs__top(const struct marker_pairs *mp, uint32_t thread);

#endif

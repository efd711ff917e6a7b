/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark script, shared by its files and its fuzz target
 * (tests/fuzz/fuzz-perfread.c):
 *   script.c       options, the command, the run: the recording replayed in
 *                  time order (lib/analyze/replay.h, as report, flamegraph
 *                  and export read it), each record decoded once into the
 *                  forms below and handed to the printer of the output
 *   script_text.c  the text printer (like `perf script`)
 *   script_json.c  the JSON printer (one object a line, INTERFACE.md)
 *   script_tp.c    a tracepoint sample's fields, decoded with the
 *                  recording's formats (lib/analyze/tracepoint.h)
 *   script_frames.c  frames symbolized and formatted once, cached
 * The printers call nothing back: they only write what they are given.
 *
 * DESIGN (issue 8 case 6, issue 19): the input is anyone's file.
 * Everything here is O(1) or O(log n) per record, and memory does not grow
 * with the input: the replay holds about two rounds of records, the
 * symbolizer's maps, and the ranges open at once.  Stated bound, checked by
 * tests/t-hostile-reader.sh: peak memory at most 32 MiB plus 4 times (the
 * input plus what its compressed records expand to, itself bounded in
 * perfread.h).  Output errors (>/dev/full, a closed pipe) end the run with
 * one line and exit status 1.
 */
#ifndef PERFMARK_CLI_SCRIPT_H
#define PERFMARK_CLI_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "marker.h"
#include "offcpu.h"
#include "perfread.h"
#include "symbolize.h"
#include "tracepoint.h"

struct obuf;
struct replay;

struct filter;

struct script_opts {
	const char *input;
	struct filter *filter;      /* perf's filters (filter.h), or NULL */
	bool json;
	bool filter_type;
	uint32_t type;
	struct perfread_opts read;  /* reader bounds (zero: the defaults) */
};

/* ---- the decoded forms both printers print ---------------------------------------- */

/* Where and when a record happened, and who. */
struct script_head {
	uint64_t time;
	uint32_t pid, tid, cpu;
	const char *comm;           /* the thread's command, NULL when not known */
	const char *event;          /* the event's name */
};

/* An address, symbolized as of its sample's moment. */
struct script_frame {
	uint64_t ip;
	/* "%16llx SYMBOL", escaped, as the text prints it (script_text__frame); NULL: not made */
	const char *text;
	size_t text_len;
	struct symbolizer_loc loc;  /* what text was made of: set when text is NULL */
};

/* A tracepoint sample's fields (script_tp.c). */
struct script_tpfield {
	const char *name;           /* a C identifier (the formats are checked: tpcheck.h) */
	struct tpvalue v;
};

struct script_tp {
	bool decoded;               /* false: no format for it, or an entry that does not
				     * hold what its format says */
	const char *text;           /* its fields as perf script prints them (not escaped) */
	size_t len;
	const struct script_tpfield *fields;
	size_t nfields;
};

struct script_sample {
	struct script_head h;
	uint64_t period;            /* 0: the sample has none */
	struct script_frame at;     /* its ip */
	const struct script_frame *chain;   /* its call chain, leaf first */
	size_t nchain;
	const struct offcpu *off;   /* offcpu-time: its payload (lib/format/offcpu.h), else NULL */
	const struct script_frame *waker;   /* offcpu-time: where its waker was, leaf first */
	size_t nwaker;
	const struct script_tp *tp; /* a tracepoint's fields; NULL for other events */
};

struct script_marker {
	struct script_head h;
	const struct marker *m;     /* decoded (lib/format/marker.h) */
	bool has_duration;          /* a range end that closed a range */
	uint64_t duration;          /* ns since its begin */
};

/* Printers write into an output buffer (obuf.h) in front of the run's FILE. */
struct script_printer {
	void (*sample)(struct obuf *out, const struct script_sample *s);
	void (*marker)(struct obuf *out, const struct script_marker *m);
	/* LOST or LOST_SAMPLES: h from its sample_id (zeros when it has none) */
	void (*lost)(struct obuf *out, const struct script_head *h, uint64_t lost);
};

extern const struct script_printer script_text;    /* script_text.c */
extern const struct script_printer script_json;    /* script_json.c */

/* ---- the run ----------------------------------------------------------------------- */

struct script {
	struct script_opts o;
	FILE *out;
	struct obuf *ob;            /* in front of out */
	const struct script_printer *pr;
	struct replay *rp;
	struct symbolizer *sym;
	struct perfread *r;
	struct script_frame *chain; /* CALLCHAIN_MAX of them, reused */
	struct script_frame waker[PERFMARK_OFFCPU_WAKER_MAX];   /* an off-CPU sample's waker's */
	struct frame_cache *frames; /* symbolized and formatted once (script_frames.c) */
	int write_err;
	struct tpdecode *tp;        /* the tracepoints' formats, read at the first one */
	bool tp_tried;
	struct script_tp tpform;    /* the last tracepoint sample's fields, reused */
	struct script_tpfield *tpfields;
	char *tptext;
};

/*
 * Read fd into sc (o and out set by the caller), print it, free nothing.
 * 0, or 1 with *why set (a read error: what was read is printed first) or
 * *write_err set (an output error, errno).
 */
int script__run(struct script *sc, int fd, const char **why, int *write_err);
void script__free(struct script *sc);

/* script_text.c: fr's text into dst (cap bytes): its length, 0 when it does not fit */
size_t script_text__frame(char *dst, size_t cap, const struct script_frame *fr);

/*
 * script_frames.c: frames symbolized and, for the text, formatted once per
 * (process, the symbolizer's version of it, address) and kept in a cache of
 * bounded size (issue 24: lookups and formatting per frame were most of
 * the run).  The text of the frames got since the last
 * frame_cache__sample() stays valid until the next one.
 */
struct frame_cache;
int frame_cache__new(struct frame_cache **out, struct symbolizer *sym, bool text);
/* A new sample of process pid: its frames follow. */
void frame_cache__sample(struct frame_cache *fc, uint32_t pid);
/* ip's frame (a kernel address when kernel is set) in the sample's process */
void frame_cache__get(struct frame_cache *fc, uint64_t ip, bool kernel, struct script_frame *out);
void frame_cache__free(struct frame_cache *fc);

/* script_tp.c: a tracepoint sample's fields, NULL for other samples */
const struct script_tp *script_tp__decode(struct script *sc, const struct perfread_sample *s);
void script_tp__free(struct script *sc);

#endif

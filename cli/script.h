/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark script, shared by its two files and its fuzz target
 * (tests/fuzz-script.c):
 *   script.c        options, loading, time order, marker ranges, the command
 *   script_print.c  text and JSON output of samples, markers and losses
 *   script_tp.c     tracepoint samples' fields
 *
 * DESIGN (issue 8 case 6): the input is anyone's file.  Everything here is
 * O(1) or O(log n) per record and holds at most what the reader returned:
 * records in one arena (their bytes, plus 24 bytes each to sort them), open
 * ranges in a hash by (tid, name).  Stated bound, checked by
 * tests/t-hostile-reader.sh: peak memory at most 32 MiB plus 4 times (the
 * input plus what its compressed records expand to, itself bounded in
 * perfread.h).  Output errors (>/dev/full, a closed
 * pipe) end the run with one line and exit status 1.
 */
#ifndef PERFMARK_CLI_SCRIPT_H
#define PERFMARK_CLI_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perfread.h"
#include "symbolize.h"
#include "table.h"

#define EV_PRINTF "perfmark:printf"
#define EV_UEVENT "perfmark:uevent"

struct script_opts {
	const char *input;
	bool json;
	bool filter_type;
	uint32_t type;
	struct perfread_opts read;  /* reader bounds (zero: the defaults) */
};

/* One kept record: its time, its place in the file, its bytes in the arena. */
struct entry {
	uint64_t time;
	uint64_t seq;
	size_t off;
};

/* A range begin not ended yet; prev: the one it nests in, same tid and name (+1, 0 none) */
struct open_range {
	uint64_t time;
	uint32_t prev;
};

struct script {
	struct script_opts o;
	FILE *out;
	struct perfread *r;
	struct symbolizer *sym;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct entry *ents;
	size_t nents, capents;
	struct strtab range_names;
	struct idmap open_idx;      /* (tid, name id) -> innermost open range + 1 */
	struct open_range *ranges;
	size_t nranges, capranges;
	struct tpdecode *tp;        /* tracepoints' formats (script_tp.c), once read */
	bool tp_tried;
};

/*
 * Read fd into sc (o and out set by the caller), print it, free nothing.
 * 0, or 1 with *why set (a read error: what was read is printed first) or
 * *write_err set (an output error, errno).
 */
int script__run(struct script *sc, int fd, const char **why, int *write_err);
void script__free(struct script *sc);

/* script.c */
bool script__is_marker(const struct perfread_sample *s, bool *uevent);
const struct perfmark_uevent_hdr *script__uevent_hdr(const struct perfread_sample *s,
						     const uint8_t **data);
void script__range_begin(struct script *sc, uint32_t tid, const char *name, size_t len,
			 uint64_t time);
bool script__range_end(struct script *sc, uint32_t tid, const char *name, size_t len,
		       uint64_t time, uint64_t *dur);

/* script_print.c */
void script__print_sample(struct script *sc, const struct perfread_sample *s);
void script__print_marker(struct script *sc, const struct perfread_sample *s, bool uevent);
void script__print_lost(struct script *sc, const struct perf_event_header *rec);

/*
 * script_tp.c: a tracepoint sample's fields.  _text writes them as perf
 * script does, false when the sample is not one it can decode; _json adds
 * "fields" to a tracepoint sample's object (null when undecodable).
 */
struct json_object;
bool script_tp__text(struct script *sc, const struct perfread_sample *s);
void script_tp__json(struct script *sc, struct json_object *o, const struct perfread_sample *s);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A named session's definition: what it records (struct recspec), where
 * it goes (a ring in the daemon, or rotating files in a directory), and
 * the state the daemon keeps for it.  One JSON document describes it in
 * the create request, in the store and in `session show --json`:
 *
 *   {"name":NAME,
 *    "spec":{...recspec.h...},
 *    "sink":{"type":"ring","size":BYTES}
 *         | {"type":"file","dir":ABSDIR,"rotate_size":BYTES,"rotate_secs":S,"keep":N},
 *    "count":[EVENT,...]   (optional: counted, not sampled; no globs here),
 *    kept by the daemon (ignored in a create request):
 *    "owner":UID, "resolved":[EVENT as opened, ...], "seq":N,
 *    "stopped":B, "error":B, "message":TEXT}
 *
 * `session show`/`list` add what is live: "state", "samples", "markers",
 * "lost", "bytes", "readers", "reader_lost", "pin_dir", and in "sink" its
 * usage; with counters, "counts" (daemon/counts.c).  Definitions stored by earlier perfmark (recspec keys, "sink" as
 * "ring"/"file" and the sink's keys at the top level) are still read.
 */
#ifndef PERFMARK_SESSDEF_H
#define PERFMARK_SESSDEF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "recspec.h"

#define SESSDEF_RING_DEFAULT (64ull << 20)
#define SESSDEF_RING_MIN     (64ull << 10)
#define SESSDEF_RING_MAX     (1ull << 30)
#define SESSDEF_ROTATE_MIN   (64ull << 10)
#define SESSDEF_KEEP_MAX     100000
#define SESSDEF_MAX_COUNT    8        /* --counters: counters of one session */

enum sessdef_sink {
	SESSDEF_SINK_RING,
	SESSDEF_SINK_FILE,
};

struct sessdef {
	char name[PROTO_NAME_MAX + 1];
	struct recspec spec;
	enum sessdef_sink sink;
	uint64_t ring_size;                /* ring sink, bytes */
	char dir[PATH_MAX];                /* file sink */
	uint64_t rotate_size, rotate_secs;
	uint32_t keep;                     /* 0: keep all */
	/* --counters: events counted on the session's targets, as perf stat counts them */
	struct evspec count[SESSDEF_MAX_COUNT];
	size_t nr_count;
	/* kept by the daemon */
	uint32_t owner;                    /* uid */
	char resolved[RECSPEC_MAX_EVENTS][EVSPEC_NAME_MAX];     /* as opened (after fallback), for adoption */
	size_t nr_resolved;
	uint64_t seq;                      /* file sink: next file number */
	bool stopped;                      /* by `stop` */
	bool error;                        /* collection ended by an error */
	char message[256];
};

/* The defaults: recspec_init's, in a 64 MiB ring. */
void sessdef_init(struct sessdef *d);
/*
 * From a create request (trusted false: the daemon's keys are ignored, a
 * key it does not know is refused, naming it) or a stored file or a reply
 * (trusted: the live keys of show and list pass): every field validated.
 * The recording options refuse unknown keys either way (recspec.h).
 * 0 or -EINVAL with err.
 */
int sessdef_from_json(struct json_object *o, struct sessdef *d, bool trusted,
		      char *err, size_t errlen);
/*
 * New object (caller puts it).  with_state: every key and the daemon's
 * (stored, shown); without: a client's request, only what differs from the
 * defaults (recspec_to_json).
 */
struct json_object *sessdef_to_json(const struct sessdef *d, bool with_state);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Session definitions and their durable store: one JSON file per session
 * under STATE_DIR/sessions/NAME.json, written to a temporary file, fsynced,
 * renamed over, and the directory fsynced.
 */
#ifndef PERFMARK_STORE_H
#define PERFMARK_STORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evspec.h"
#include "proto.h"

#define SESSDEF_MAX_PIDS 64

enum sessdef_sink {
	SESSDEF_SINK_RING,
	SESSDEF_SINK_FILE,
};

struct sessdef {
	char name[PROTO_NAME_MAX + 1];
	uint32_t owner;                    /* uid; set by the daemon, not the client */
	struct evspec events[EVSPEC_MAX];  /* as asked (0: the default, cycles) */
	size_t nr_events;
	char resolved[EVSPEC_MAX][32];     /* as opened (after fallback), for adoption */
	size_t nr_resolved;
	uint64_t freq, period;
	bool callchain, markers, all;      /* all: -a; else pids */
	int pids[SESSDEF_MAX_PIDS];
	size_t nr_pids;
	int zstd_level;
	enum sessdef_sink sink;
	uint64_t ring_size;                /* ring sink, bytes */
	char dir[PATH_MAX];                /* file sink */
	uint64_t rotate_size, rotate_secs;
	uint32_t keep;                     /* 0: keep all */
	uint64_t seq;                      /* file sink: next file number */
	bool stopped;                      /* by `stop` */
	bool error;                        /* collection ended by an error */
	char message[256];
};

/* Fill defaults (ring 64 MiB, 4000 Hz, markers on, system-wide). */
void sessdef_init(struct sessdef *d);
/*
 * From a client's create request (or a stored file): validates every field.
 * owner, resolved, seq, stopped, error are only taken when trusted is set.
 * 0 or -EINVAL with err.
 */
int sessdef_from_json(struct json_object *o, struct sessdef *d, bool trusted,
		      char *err, size_t errlen);
/* New object (caller puts it). */
struct json_object *sessdef_to_json(const struct sessdef *d, bool with_state);

struct store;

/* dir: STATE_DIR; creates STATE_DIR/sessions (0700). */
int store__open(struct store **out, const char *dir);
int store__save(struct store *st, const struct sessdef *d);
int store__remove(struct store *st, const char *name);
/*
 * Call fn for every stored definition; unreadable ones are reported through
 * bad(ctx, file, reason) and skipped.
 */
int store__load(struct store *st, int (*fn)(void *ctx, const struct sessdef *d),
		void (*bad)(void *ctx, const char *file, const char *reason), void *ctx);
void store__free(struct store *st);

#endif

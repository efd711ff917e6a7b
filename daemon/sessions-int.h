/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What sessions.c and takeover.c share: a session's sink made of its
 * definition (sink_spec), the start once the sink is there (session_go),
 * and the takeover of a ring file by a job (takeover.c).
 */
#ifndef PERFMARKD_SESSIONS_INT_H
#define PERFMARKD_SESSIONS_INT_H

#include "perfdata.h"
#include "perfmarkd.h"
#include "sinks.h"

/* what the sink of a session is made of; evs, ids and rname belong to the caller */
struct sink_spec {
	struct perfdata_event evs[SESSION_MAX_EVENTS + SESSDEF_MAX_COUNT];
	uint64_t ids[SESSION_MAX_EVENTS + SESSDEF_MAX_COUNT];
	char rname[PROTO_NAME_MAX + 8];
	struct sink_opts ko;
};

int sink_spec(struct dsess *d, const struct session *s, struct sink_spec *k, char *err,
	      size_t errlen);
void sink_failed(const struct sink_opts *ko, int e, char *err, size_t errlen);
/* the built session collects into its new sink (d->sink) from now on; on failure undone */
int session_go(struct dsess *d, const struct sink_recovery *rec, char *err, size_t errlen);
void session_undo(struct dsess *d);
void ring_name(const struct dsess *d, char *buf, size_t len);
void log_recovery(const struct dsess *d, const struct sink_recovery *rec);
void save_def(struct dsess *d);
void restore_failed(struct dsess *d, int e, const char *err);

enum tk_mode {
	TK_RESTORE,                   /* a running session, at start-up */
	TK_START,                     /* `session start`: its client waits for the reply */
	TK_STOPPED,                   /* a stopped session's ring, kept for snapshots */
};

/*
 * 0: the job has it (c, for TK_START, hears when it is done); else nothing
 * was started (the caller opens the ring in place)
 */
int takeover_start(struct dsess *d, enum tk_mode mode, struct client *c);

#endif

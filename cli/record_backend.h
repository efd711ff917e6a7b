/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark record: one driver (record.c) and two back ends that run the
 * recording, in this process (record_local.c, the session engine) or in
 * perfmarkd (record_daemon.c, an anonymous session).  The driver owns
 * everything both share: options, the output file, the command, signals,
 * --duration, the status line, the summary and the exit status.
 */
#ifndef PERFMARK_CLI_RECORD_BACKEND_H
#define PERFMARK_CLI_RECORD_BACKEND_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "heldcmd.h"
#include "outfile.h"
#include "session.h"

#define RECORD_NOTICES 4
/* a back end's result: perfmarkd went away (nothing said yet) */
#define RECORD_GONE 2
/* ... the recording was kept as a named session: its file ended (r->kept, st) */
#define RECORD_KEPT 3

struct record {
	struct session_opts so;
	const char *output;
	double duration;
	int verbose;                 /* -v: 1, -vv: 2 (libbpf's debug messages too) */
	char **cmd;                  /* -- CMD: argv, cmd_argc entries */
	int cmd_argc;
	char cmd_path[PATH_MAX];     /* the file CMD runs, as execvp will find it */
	int argc;                    /* perfmark's own, for the CMDLINE feature */
	char **argv;
	bool status;                 /* a status line on the terminal */
	const char *keep_as;         /* --keep-as: SIGUSR2 keeps the recording under this name */
	char kept[72];               /* the session it was kept as */
	int kept_err;                /* ... and the error its file ended with (0: none) */
	pid_t child;
	struct heldcmd held;          /* CMD, held until attached */
	struct outfile out;
	char notices[RECORD_NOTICES][256];
	size_t nr_notices;
	/* the back ends' own */
	struct session *s;           /* local */
	struct sink *sink;           /* local, when it goes on in a file perfmarkd wrote */
	bool resume;                 /* local: go on after what perfmarkd wrote into out.fd */
	int sock;                    /* daemon */
	bool stats_asked;            /* daemon: a record-stats is on its way */
};

/*
 * A back end.  Every call returns 0, a negative errno when the output
 * failed (the driver says so as in-process recording does and, for a
 * reader that went away, ends CMD), 1 after its own error line, or
 * RECORD_GONE (the daemon back end: perfmarkd went away; the driver goes
 * on in-process, or waits for CMD, and says so in one line).
 */
struct record_backend {
	/* " via perfmarkd" in the summary with -v */
	const char *via;
	/* load and open everything: nothing is written yet */
	int (*open)(struct record *r);
	/* write into r->out.fd; r->child (when > 0) is held before its exec */
	int (*start)(struct record *r);
	/* fds the loop watches for the back end: *n of them */
	void (*fds)(struct record *r, int *fds, int *n, int max);
	/*
	 * One turn of the loop: tick (the drain timer fired), ready (one of
	 * its fds is readable).  *fresh when st holds new counters.
	 */
	int (*step)(struct record *r, bool tick, bool ready, struct session_stats *st, bool *fresh);
	/* final drain, the file finished; the counters in st */
	int (*stop)(struct record *r, struct session_stats *st);
	/*
	 * Ask that the recording go on as the named session name (SIGUSR2);
	 * the answer comes through step (RECORD_KEPT, or a notice and on).
	 * NULL: this back end cannot (in-process).
	 */
	int (*keep)(struct record *r, const char *name);
	void (*close)(struct record *r);
};

extern const struct record_backend record_local, record_daemon;
/* records nothing: what is left once perfmarkd is gone and nothing can take over */
extern const struct record_backend record_none;

/*
 * Connect to perfmarkd when it records for clients: 0 (r->sock set), -1 to
 * record in-process, or 1 after an error line (the daemon refused us).
 */
int record_daemon_connect(struct record *r);
/* Notices wait until recording starts: a failing command prints one line. */
static inline void record_notice(void *ctx, const char *msg)
{
	struct record *r = ctx;

	if (r->nr_notices < RECORD_NOTICES)
		snprintf(r->notices[r->nr_notices++], sizeof(r->notices[0]), "%s", msg);
}

#endif

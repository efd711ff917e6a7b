/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside `perfmark session`: what session.c (the verbs of named sessions)
 * shares with session_keep.c (keep, take: a recording and a session
 * change hands) and session_count.c (a session's counters).
 */
#ifndef PERFMARK_CLI_SESSION_VERBS_H
#define PERFMARK_CLI_SESSION_VERBS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opts.h"
#include "outfile.h"

struct json_object;

/* what most verbs take: a NAME, --json, -o FILE|- */
struct verb_opts {
	bool json;
	const char *out;
	const char *name;
};

/* -o FILE|- (required), on a struct verb_opts */
extern const struct opt session_out_table[];
extern const struct opts_cmd session_keep_cmd, session_take_cmd;

/* connected to perfmarkd, or -1 after one error line */
int session_connect(void);
/* Send req (consumed) with fds; the reply when it says ok, else NULL after the error. */
struct json_object *session_call(int sock, struct json_object *req, const int *fds, size_t nfds);
/* a valid session name, else false after one error line */
bool session_name_ok(const char *name);
/* --ring SIZE (at least 64K): 0, or 1 after one error line */
int session_parse_ring(const char *arg, uint64_t *ring);
/* a verb's options, then its NAME: 0, 1 after an error line, OPTS_HELP after --help */
int session_verb_args(const struct opts_cmd *c, struct verb_opts *v, int argc, char **argv);
/*
 * After c's options (parsed): its NAME into *name when c takes one (c->args),
 * and nothing more.  0, or 1 after one error line.
 */
int session_args(const struct opts_cmd *c, int argc, char **argv, const char **name);
/*
 * --output DIR, a directory opened with the caller's rights (passed to the
 * daemon, which opens no path of ours) and its absolute path into dir: the
 * fd, or -1 after one error line.
 */
int session_out_dir(const char *out, char dir[PATH_MAX]);
/*
 * req (consumed) to perfmarkd with dfd (closed here; none when < 0): the
 * reply when it says ok, else NULL after the error line.
 */
struct json_object *session_send(struct json_object *req, int dfd);
/*
 * The daemon, then -o: the request cmd naming v's session with the output
 * fd (a temporary that takes FILE's place once accepted).  0, 1 after the
 * error, -1 after --help.
 */
int session_start_out(const struct opts_cmd *c, int argc, char **argv, const char *cmd,
		      struct outfile *o, int *sock, struct json_object **rep);

/*
 * After session_start_out: the daemon has its own copy of the output, so
 * this end lets go of ours (stdout: pointed at /dev/null), and a pipe's
 * reader sees the end when the daemon's copy closes.
 */
void session_let_go_out(struct outfile *o);

struct sessdef;
/* --counters EVENTS into sd (as stat -e, at most SESSDEF_MAX_COUNT): 0, or 1 after the error */
int session_parse_count(const char *list, struct sessdef *sd);
/* show: the counters' totals and rates, when the session has counters */
void session_show_counts(struct json_object *s);

int session_do_keep(int argc, char **argv);
int session_do_take(int argc, char **argv);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * record's perfmarkd back end: an anonymous session owned by this
 * connection, writing into the output this process opened and passed over
 * (proto.h lists the requests).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "jsonf.h"
#include "proto.h"
#include "record_backend.h"

#define DAEMON_ANSWER_MS 1000

static bool no_daemon(void)
{
	const char *nd = getenv("PERFMARK_NO_DAEMON");

	return nd && nd[0] && strcmp(nd, "0");
}

/* why in-process: said when it surprises (no answer), else only with -v */
static int in_process(const struct record *r, int e)
{
	if (e == -EAGAIN || e == -EWOULDBLOCK || e == -ETIMEDOUT)
		pm_notice("perfmarkd at %s does not answer, recording in-process", client_socket());
	else if (r->verbose && e != -ENOENT && e != -ECONNREFUSED)
		pm_notice("cannot reach perfmarkd at %s (%s), recording in-process", client_socket(),
			  strerror(-e));
	return -1;
}

int record_daemon_connect(struct record *r)
{
	struct json_object *req, *rep = NULL;
	int fds[PROTO_MAX_FDS];
	size_t nr = PROTO_MAX_FDS, i;
	int fd, e;

	if (no_daemon())
		return -1;
	fd = client_connect(DAEMON_ANSWER_MS);
	if (fd == -EACCES || fd == -EPERM)
		return pm_err("cannot reach perfmarkd at %s: %s (PERFMARK_NO_DAEMON=1 records in-process)",
			      client_socket(), strerror(-fd));
	if (fd < 0)
		return in_process(r, fd);
	/* the oldest version: any daemon answers, and says which it speaks */
	req = client_request("ping", NULL);
	json_object_object_add(req, "v", json_object_new_int(PROTO_VERSION_MIN));
	e = proto_send(fd, req, NULL, 0);
	json_object_put(req);
	if (e && (rep = client_refusal(fd))) {
		close(fd);
		return client_refused(rep);     /* an outsider, a limit: say so */
	}
	if (!e)
		e = proto_recv(fd, &rep, fds, &nr);
	for (i = 0; !e && i < nr; i++)
		close(fds[i]);
	if (e) {
		close(fd);
		return in_process(r, e);
	}
	if (!jsonf_get_bool(rep, "ok")) {
		close(fd);
		return client_refused(rep);
	}
	if (!jsonf_get_bool(rep, "record") || jsonf_get_int(rep, "v") < PROTO_VERSION) {
		/* an older perfmarkd: named sessions only, or older recording options */
		json_object_put(rep);
		close(fd);
		if (r->verbose)
			pm_notice("perfmarkd at %s cannot record for clients, recording in-process",
				  client_socket());
		return -1;
	}
	json_object_put(rep);
	/* from here on the daemon takes its time (loading BPF programs) */
	client_untimed(fd);
	r->sock = fd;
	return 0;
}

static void take_notices(struct record *r, struct json_object *rep)
{
	struct json_object *a;
	size_t i;

	if (!json_object_object_get_ex(rep, "notices", &a) || !json_object_is_type(a, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(a); i++)
		record_notice(r, json_object_get_string(json_object_array_get_idx(a, i)));
}

static void take_stats(struct json_object *rep, struct session_stats *st)
{
	struct json_object *o, *l, *x;

	memset(st, 0, sizeof(*st));
	if (!json_object_object_get_ex(rep, "stats", &o))
		return;
	st->samples = (uint64_t)jsonf_get_int(o, "samples");
	st->markers = (uint64_t)jsonf_get_int(o, "markers");
	st->lost_samples = (uint64_t)jsonf_get_int(o, "lost_samples");
	st->lost_markers = (uint64_t)jsonf_get_int(o, "lost_markers");
	st->bytes = (uint64_t)jsonf_get_int(o, "bytes");
	st->raw_bytes = (uint64_t)jsonf_get_int(o, "raw_bytes");
	st->offcpu = (uint64_t)jsonf_get_int(o, "offcpu");
	st->offcpu_sums = (uint64_t)jsonf_get_int(o, "offcpu_sums");
	st->offcpu_summed = (uint64_t)jsonf_get_int(o, "offcpu_summed");
	st->offcpu_lost = (uint64_t)jsonf_get_int(o, "offcpu_lost");
	st->offcpu_unseen = (uint64_t)jsonf_get_int(o, "offcpu_unseen");
	st->offcpu_nowaker = (uint64_t)jsonf_get_int(o, "offcpu_nowaker");
	st->late = (uint64_t)jsonf_get_int(o, "late");
	st->late_unordered = (uint64_t)jsonf_get_int(o, "late_unordered");
	st->overflow = (uint64_t)jsonf_get_int(o, "overflow");
	st->clamped = (uint64_t)jsonf_get_int(o, "clamped");
	st->fl_corrupt = (uint64_t)jsonf_get_int(o, "fastlane_corrupt");
	st->offers_lost = (uint64_t)jsonf_get_int(o, "fastlane_offers_lost");
	st->jit_lines = (uint64_t)jsonf_get_int(o, "jit_lines");
	st->jit_missed = (uint64_t)jsonf_get_int(o, "jit_missed");
	st->jit_refused = (uint64_t)jsonf_get_int(o, "jit_refused");
	if (json_object_object_get_ex(o, "aggregated", &x))
		collector_agg_stats_from_json(x, &st->agg);
	if (json_object_object_get_ex(o, "lanes", &l))
		collector_lanes_from_json(l, &st->fast_markers, st->trap_markers);
	st->sampler_runs = (uint64_t)jsonf_get_int(o, "sampler_runs");
	st->sampler_ns = (uint64_t)jsonf_get_int(o, "sampler_ns");
	if (json_object_object_get_ex(o, "unwind", &o))
		collector_unwind_stats_from_json(o, &st->unwind);
}

/*
 * A reply that is not ok: the output failed (it carries the errno, the
 * driver prints it as in-process), or a refusal (printed here: 1).
 */
static int failed(struct json_object *rep)
{
	int e = (int)jsonf_get_int(rep, "errno");

	if (!e)
		return client_refused(rep);
	json_object_put(rep);
	return -e;
}

/* send req (consumed) with fds; the reply's notices taken; 0, -errno or 1 */
static int call(struct record *r, struct json_object *req, const int *fds, size_t nfds)
{
	struct json_object *rep = client_call(r->sock, req, fds, nfds);

	if (!rep)
		return 1;
	if (!jsonf_get_bool(rep, "ok"))
		return failed(rep);
	take_notices(r, rep);
	json_object_put(rep);
	return 0;
}

static int daemon_open(struct record *r)
{
	struct json_object *req = client_request("record", NULL), *a;
	int i;

	json_object_object_add(req, "opts", recspec_to_json(&r->so.spec, false));
	a = json_object_new_array();
	for (i = 0; i < r->argc; i++)
		json_object_array_add(a, json_object_new_string(r->argv[i]));
	json_object_object_add(req, "argv", a);
	i = call(r, req, NULL, 0);
	return i < 0 ? pm_err("perfmarkd: %s", strerror(-i)) : i;
}

/*
 * The output, and CMD's executable opened for reading as execvp will find
 * it: perfmarkd looks for a libperfmark linked into it before it runs
 * (a daemon that does not looks at the exec's mapping, later).
 */
static int daemon_start(struct record *r)
{
	struct json_object *req = client_request("record-start", NULL);
	int fds[2] = { r->out.fd, -1 }, e;

	json_object_object_add(req, "pipe", json_object_new_boolean(r->out.pipe));
	if (r->child > 0) {
		json_object_object_add(req, "pid", json_object_new_int(r->child));
		if (r->cmd_path[0])
			fds[1] = open(r->cmd_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	e = call(r, req, fds, fds[1] >= 0 ? 2 : 1);
	if (fds[1] >= 0)
		close(fds[1]);
	return e;
}

static void daemon_fds(struct record *r, int *fds, int *n, int max)
{
	*n = 0;
	if (max > 0)
		fds[(*n)++] = r->sock;
}

/* send a request whose reply comes later, to step; the daemon gone: RECORD_GONE */
static int ask(struct record *r, const char *cmd)
{
	struct json_object *req = client_request(cmd, NULL);
	int e = proto_send(r->sock, req, NULL, 0);

	json_object_put(req);
	return e ? RECORD_GONE : 0;
}

/* a message the daemon sent: 0 (*rep), or RECORD_GONE when the connection ended */
static int hear(struct record *r, struct json_object **rep)
{
	int fds[PROTO_MAX_FDS], e;
	size_t nr = PROTO_MAX_FDS, i;

	*rep = NULL;
	e = proto_recv(r->sock, rep, fds, &nr);
	for (i = 0; i < nr; i++)
		close(fds[i]);
	return e ? RECORD_GONE : 0;
}

/*
 * A message about keeping: the recording was kept (RECORD_KEPT, its counts
 * in st), or a keep this process asked for was refused (said; recording
 * goes on: 0).  -1: not about keeping.
 */
static int kept(struct record *r, struct json_object *rep, struct session_stats *st)
{
	const char *ev = jsonf_get_str(rep, "event"), *re = jsonf_get_str(rep, "re");

	if (!jsonf_get_bool(rep, "ok") && re && !strcmp(re, "keep")) {
		pm_notice("cannot keep the recording: %s; it goes on", jsonf_get_str(rep, "error") ?
			  jsonf_get_str(rep, "error") : "refused");
		json_object_put(rep);
		return 0;
	}
	if (!jsonf_get_bool(rep, "ok") || !ev || strcmp(ev, "kept"))
		return -1;
	snprintf(r->kept, sizeof(r->kept), "%s", jsonf_get_str(rep, "name") ? jsonf_get_str(rep, "name") : "?");
	r->kept_err = -(int)jsonf_get_int(rep, "errno");
	take_stats(rep, st);
	json_object_put(rep);
	return RECORD_KEPT;
}

static int daemon_keep(struct record *r, const char *name)
{
	struct json_object *req = client_request("keep", name);
	int e = proto_send(r->sock, req, NULL, 0);

	json_object_put(req);
	return e ? RECORD_GONE : 0;
}

/* the daemon says something (stats, or that the output failed); the tick asks for stats */
static int daemon_step(struct record *r, bool tick, bool ready, struct session_stats *st, bool *fresh)
{
	struct json_object *rep;
	int e;

	if (ready) {
		e = hear(r, &rep);
		if (e)
			return e;
		e = kept(r, rep, st);
		if (e >= 0)
			return e;
		if (!jsonf_get_bool(rep, "ok"))
			return failed(rep);
		take_stats(rep, st);
		*fresh = true;
		r->stats_asked = false;
		json_object_put(rep);
	}
	if (tick && r->status && !r->stats_asked) {
		e = ask(r, "record-stats");
		if (e)
			return e;
		r->stats_asked = true;
	}
	return 0;
}

/* the daemon drains the rest, finishes the file and says how it went */
static int daemon_stop(struct record *r, struct session_stats *st)
{
	struct json_object *rep;
	int e = ask(r, "record-stop");

	if (e)
		return e;
	for (;;) {
		const char *re;

		e = hear(r, &rep);
		if (e)
			return e;
		re = jsonf_get_str(rep, "re");
		if (re && !strcmp(re, "record-stop")) {
			if (jsonf_get_bool(rep, "ok") && jsonf_get_str(rep, "event"))
				return kept(r, rep, st);    /* kept just before: the file ended then */
			if (!jsonf_get_bool(rep, "ok"))
				return failed(rep);
			break;
		}
		e = kept(r, rep, st);
		if (e == RECORD_KEPT)
			return e;           /* record-stop's answer says the same: not waited for */
		if (e < 0 && !jsonf_get_bool(rep, "ok"))
			return failed(rep);
		if (e < 0)
			json_object_put(rep);   /* a stats reply still on its way */
	}
	take_stats(rep, st);
	json_object_put(rep);
	return 0;
}

static void daemon_close(struct record *r)
{
	if (r->sock >= 0)
		close(r->sock);
	r->sock = -1;
}

const struct record_backend record_daemon = {
	.via = " via perfmarkd", .open = daemon_open, .start = daemon_start, .fds = daemon_fds,
	.step = daemon_step, .stop = daemon_stop, .keep = daemon_keep, .close = daemon_close,
};

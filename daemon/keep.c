// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Keeping a recording (issue 20, seed 003's PERF_EVENT_IOC_DETACH): the
 * anonymous session of a `perfmark record` becomes a named session while
 * it runs.  Its file ends at the request and is finished; the session goes
 * on from the same collection (no event, program or ring reopened), into a
 * ring or files like any named session, pinned, stored and restored.
 *
 * Who: the recording's owner (the uid of its connection) or root.  The
 * session is the recording's owner's (its uid filter stays what it was),
 * counted against that owner's limits, whoever asked.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmarkd.h"
#include "proto.h"
#include "sessdef.h"

static struct json_object *keep_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* errors say "re":"keep": the recording's own connection tells them from its events */
static struct json_object *keep_err(const char *fmt, ...)
{
	struct json_object *o;
	char buf[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	o = reply_err("%s", buf);
	json_object_object_add(o, "re", json_object_new_string("keep"));
	return o;
}

/*
 * The connection recording for process pid that c may keep.  Someone
 * else's recording is answered as none at all: whether a process records
 * through perfmarkd is its owner's business.
 */
static struct client *find_recording(const struct client *c, int pid)
{
	struct client *o;

	for (o = D.clients; o; o = o->next)
		if (!o->dead && o->rec && o->cred.pid == pid && (c->root || o->cred.uid == c->cred.uid))
			return o;
	return NULL;
}

/* --output DIR: a directory the session's owner owns (as after a restart, open_dir_as_owner) */
static const char *check_dir(const struct sessdef *def, int *fds, size_t nfds, char *buf,
			     size_t len)
{
	struct stat sb;

	if (nfds < 1 || fstat(fds[0], &sb) || !S_ISDIR(sb.st_mode))
		return "--output needs the directory passed as an open descriptor";
	if (def->owner && sb.st_uid != def->owner) {
		snprintf(buf, len, "output directory %.200s is not the recording owner's: permission denied",
			 def->dir);
		return buf;
	}
	return NULL;
}

struct json_object *cmd_keep(struct client *c, const struct proto_request *rq,
			     struct json_object *msg, int *fds, size_t nfds)
{
	struct session_handover h = { 0 };
	struct session_stats final;
	struct json_object *o;
	struct sessdef def;
	struct client *rc;
	struct dsess *d;
	struct run *r;
	char err[256] = "", buf[320], dir[PATH_MAX];
	const char *why;
	uint64_t ring, held;
	int from, e, old_err, dfd = -1;

	if (proto_keep_opts(msg, &from, &ring, dir, sizeof(dir), err, sizeof(err)))
		return keep_err("%s", err);
	if (sessions__find(rq->name))
		return keep_err("session '%s' already exists", rq->name);
	rc = from ? find_recording(c, from) : c->rec ? c : NULL;
	if (!rc)
		return from ? keep_err("no recording of yours through perfmarkd in process %d", from) :
			      keep_err("this connection is not recording");
	r = anon__keepable(rc, err, sizeof(err));
	if (!r)
		return keep_err("cannot keep the recording of process %d: %s", (int)rc->cred.pid, err);

	sessdef_init(&def);
	snprintf(def.dir, sizeof(def.dir), "%s", dir);
	snprintf(def.name, sizeof(def.name), "%s", rq->name);
	def.spec = *session__spec(r->s);
	def.owner = rc->cred.uid;
	if (def.dir[0]) {
		def.sink = SESSDEF_SINK_FILE;
		why = check_dir(&def, fds, nfds, buf, sizeof(buf));
		if (why)
			return keep_err("%s", why);
	} else if (ring) {
		if (ring < SESSDEF_RING_MIN)
			return keep_err("ring size must be at least 64K");
		if (ring > (rc->root ? RING_MAX_ROOT : RING_MAX_USER))
			return keep_err("ring size too large (limit %llu MiB%s)",
					(rc->root ? RING_MAX_ROOT : RING_MAX_USER) >> 20,
					rc->root ? "" : " for non-root users");
		def.ring_size = ring;
	}
	/* the owner's limits; the BPF ring the recording holds becomes the session's */
	held = rc->rec_bytes;
	rc->rec_bytes = 0;
	why = limits__session(rc, &def, buf, sizeof(buf));
	rc->rec_bytes = held;
	if (why)
		return keep_err("%s", why);

	if (def.sink == SESSDEF_SINK_FILE) {
		dfd = fds[0];
		fds[0] = -1;
	}
	d = sessions__prepare(&def, &dfd, r->s, err, sizeof(err));
	if (dfd >= 0)
		close(dfd);
	if (!d)
		return keep_err("cannot keep as session '%s': %s", rq->name, err);
	h.sink = d->sink;
	h.until = session__clock();
	h.pin_dir = d->pin;
	e = session__handover(r->s, &h, &final, &old_err, err, sizeof(err));
	if (e) {
		sessions__discard(d);
		return keep_err("cannot keep as session '%s': %s", rq->name, err[0] ? err : strerror(-e));
	}
	sessions__commit(d, r);
	logmsg("recording of uid %u (pid %d) kept as session '%s' by uid %u (pid %d)%s%s",
	       (unsigned)rc->cred.uid, (int)rc->cred.pid, d->def.name, (unsigned)c->cred.uid,
	       (int)c->cred.pid, old_err ? "; its file ended with an error: " : "",
	       old_err ? strerror(-old_err) : "");
	anon__kept(rc, d->def.name, &final, old_err);
	if (rc == c)
		return NULL;          /* the recording's own: the "kept" event answers */
	o = reply_ok();
	json_object_object_add(o, "session", session_info(d));
	return o;
}

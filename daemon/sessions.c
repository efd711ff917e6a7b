// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Named sessions: each is built from its stored definition (struct sessdef),
 * collects into its sink (ring or rotating files) until stopped, and is
 * restored when the daemon starts again, adopting its pinned BPF collection
 * when the pins are still there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata.h"
#include "perfmarkd.h"
#include "proto.h"
#include "rangehist.h"
#include "sessions-int.h"
#include "sinks.h"

struct dsess *sessions__find(const char *name)
{
	struct dsess *d;

	for (d = D.sessions; d; d = d->next)
		if (!strcmp(d->def.name, name))
			return d;
	return NULL;
}

static void on_notice(void *ctx, const char *msg)
{
	struct dsess *d = ctx;

	logmsg("session '%s': %s", d ? d->def.name : "?", msg);
}

/*
 * The definition as it changed, stored (fsync'd: seconds under I/O load,
 * on the loop).  Unchanged since it was loaded or last saved: nothing to
 * write (a restart restores every session as it was stored).
 */
void save_def(struct dsess *d)
{
	int e;

	if (d->saved && !memcmp(d->saved, &d->def, sizeof(d->def)))
		return;
	e = store__save(D.store, &d->def);
	if (e)
		logmsg("cannot save session '%s' under %s: %s", d->def.name, D.state_dir, strerror(-e));
	else if (d->saved || (d->saved = malloc(sizeof(*d->saved))))
		*d->saved = d->def;
}

/* Open a file sink's directory with the owner's rights (never as root for a user). */
static int open_dir_as_owner(const struct sessdef *def)
{
	struct passwd *pw = def->owner ? getpwuid(def->owner) : NULL;
	uid_t ouid = (uid_t)setfsuid(def->owner);
	gid_t ogid = (gid_t)setfsgid(pw ? pw->pw_gid : 0);
	struct stat sb;
	int fd, e = 0;

	fd = open(def->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		e = -errno;
	setfsuid(ouid);
	setfsgid(ogid);
	if (fd < 0)
		return e;
	if (fstat(fd, &sb) || (def->owner && sb.st_uid != def->owner)) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* the ring file of a ring session: RING_DIR/NAME.ring */
void ring_name(const struct dsess *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s.ring", d->def.name);
}

void log_recovery(const struct dsess *d, const struct sink_recovery *rec)
{
	if (rec->found)
		logmsg("session '%s': ring taken over from %s: %llu records, %llu sideband%s",
		       d->def.name, D.ring_dir, (unsigned long long)rec->records,
		       (unsigned long long)rec->sideband,
		       rec->torn ? "; dropped a record torn by a crash while it was written" : "");
	if (rec->replaced)
		logmsg("session '%s': the ring in %s described other events: kept as %s.ring.old, "
		       "starting an empty one", d->def.name, D.ring_dir, d->def.name);
}

/*
 * A stopped ring session keeps its ring for snapshots, across restarts too:
 * the ring file describes its own events.
 */
static void open_stopped_ring(struct dsess *d)
{
	struct sink_opts ko = { .kind = SINK_RING, .ring_dir_fd = D.ring_dfd };
	struct sink_recovery rec;
	char name[PROTO_NAME_MAX + 8];

	if (d->def.sink != SESSDEF_SINK_RING || d->sink || D.ring_dfd < 0)
		return;
	ring_name(d, name, sizeof(name));
	ko.ring_name = name;
	ko.ring_size = d->def.ring_size;
	if (sink__new(&d->sink, &ko, &rec) == 0)
		log_recovery(d, &rec);
}

/* The sink of d for the events s writes (and its counters'): a ring, or files in d's directory. */
int sink_spec(struct dsess *d, const struct session *s, struct sink_spec *k, char *err,
		     size_t errlen)
{
	struct sink_opts *ko = &k->ko;
	struct passwd *pw;
	size_t n;
	int e;

	memset(ko, 0, sizeof(*ko));
	ko->events = k->evs;
	n = session__events(s, k->evs, k->ids, SESSION_MAX_EVENTS);
	ko->nr_events = n + counts__events(d, k->evs + n, k->ids + n, SESSDEF_MAX_COUNT);
	d->count_attrs = ko->nr_events > n;
	ko->zstd_level = d->def.spec.zstd_level;
	if (d->def.sink == SESSDEF_SINK_RING) {
		ko->kind = SINK_RING;
		ko->ring_size = d->def.ring_size;
		ring_name(d, k->rname, sizeof(k->rname));
		ko->ring_dir_fd = D.ring_dfd;
		ko->ring_name = D.ring_dfd >= 0 ? k->rname : NULL;   /* --ring-dir none: memory only */
		return 0;
	}
	ko->kind = SINK_FILE;
	if (d->dir_fd < 0)
		d->dir_fd = open_dir_as_owner(&d->def);
	if (d->dir_fd < 0) {
		e = d->dir_fd;
		d->dir_fd = -1;
		snprintf(err, errlen, "cannot open output directory %.160s: %s", d->def.dir, strerror(-e));
		return e;
	}
	ko->dir_fd = d->dir_fd;
	ko->prefix = d->def.name;
	ko->seq = d->def.seq;
	ko->rotate_size = d->def.rotate_size;
	ko->rotate_secs = d->def.rotate_secs;
	d->run.rotate_secs = d->def.rotate_secs;
	ko->keep = d->def.keep;
	pw = d->def.owner ? getpwuid(d->def.owner) : NULL;
	ko->uid = d->def.owner ? d->def.owner : (uid_t)-1;
	ko->gid = pw ? pw->pw_gid : (gid_t)-1;
	return 0;
}

void sink_failed(const struct sink_opts *ko, int e, char *err, size_t errlen)
{
	if (ko->kind == SINK_RING)
		snprintf(err, errlen, "cannot create the ring in %.160s: %s", D.ring_dir,
			 e == -EBUSY ? "another process writes it" : strerror(-e));
	else
		snprintf(err, errlen, "cannot create the output file: %s", strerror(-e));
}

/* d's sink, made here (on the loop: a new ring, or files), its recovery in *rec */
static int make_sink_rec(struct dsess *d, const struct session *s, struct sink_recovery *rec,
			 char *err, size_t errlen)
{
	struct sink_spec *k = malloc(sizeof(*k));
	int e;

	e = k ? sink_spec(d, s, k, err, errlen) : -ENOMEM;
	if (!e) {
		sink__free(d->sink);
		d->sink = NULL;
		e = sink__new(&d->sink, &k->ko, rec);
		if (e)
			sink_failed(&k->ko, e, err, errlen);
	}
	if (e == -ENOMEM && !k)
		snprintf(err, errlen, "out of memory");
	free(k);
	return e;
}

static int make_sink(struct dsess *d, const struct session *s, char *err, size_t errlen)
{
	struct sink_recovery rec;
	int e = make_sink_rec(d, s, &rec, err, errlen);

	if (!e)
		log_recovery(d, &rec);
	return e;
}

/* the events as opened (after any fallback), stored for adoption after a restart */
static void set_resolved(struct dsess *d, const struct session *s)
{
	size_t i;

	for (i = 0; i < RECSPEC_MAX_EVENTS && session__event_name(s, i); i++)
		snprintf(d->def.resolved[i], sizeof(d->def.resolved[i]), "%s",
			 session__event_name(s, i));
	d->def.nr_resolved = i;
}

/* Build the session from its definition, adopting pins when there are. */
static int session_build(struct dsess *d, bool adopt, char *err, size_t errlen)
{
	struct session_opts so = { 0 };
	size_t i;
	int e;

	so.spec = d->def.spec;
	so.uid_filter = d->def.owner ? d->def.owner : (uint32_t)-1;
	so.out_fd = -1;
	so.pin_dir = d->pin;
	so.notice = on_notice;
	so.notice_ctx = d;
	so.ranges = d->ranges;

	e = -ENOENT;
	if (adopt && d->def.nr_resolved && !access(d->pin, F_OK)) {
		struct session_opts ao = so;

		for (i = 0; i < d->def.nr_resolved; i++)
			evspec_lookup(d->def.resolved[i], &ao.spec.events[i]);
		ao.spec.nr_events = d->def.nr_resolved;
		e = session__adopt(&d->run.s, &ao, err, errlen);
		if (e)
			logmsg("session '%s': cannot adopt the pinned collection (%s), starting afresh",
			       d->def.name, err);
		else
			logmsg("session '%s': adopted the pinned collection", d->def.name);
	}
	if (e) {
		session__unpin(d->pin);
		e = session__new(&d->run.s, &so, err, errlen);
		if (e)
			return e;
		set_resolved(d, d->run.s);
	}
	return 0;
}

void session_undo(struct dsess *d)
{
	session__free(d->run.s);
	d->run.s = NULL;
	session__unpin(d->pin);
}

/* the built session collects into its new sink (d->sink) from now on */
int session_go(struct dsess *d, const struct sink_recovery *rec, char *err, size_t errlen)
{
	int e;

	log_recovery(d, rec);
	session__set_sink(d->run.s, d->sink);
	e = run__start(&d->run, err, errlen);
	if (!e && (e = counts__start(d, err, errlen)))
		run__abort(&d->run);
	if (e) {
		session_undo(d);
		return e;
	}
	d->def.stopped = false;
	d->def.error = false;
	d->def.message[0] = '\0';
	return 0;
}

/* a built session's sink, made here, and the start */
static int session_sink(struct dsess *d, char *err, size_t errlen)
{
	struct sink_recovery rec;
	int e = make_sink_rec(d, d->run.s, &rec, err, errlen);

	if (!e)
		e = session_go(d, &rec, err, errlen);
	else
		session_undo(d);
	return e;
}

static int session_start(struct dsess *d, bool adopt, char *err, size_t errlen)
{
	int e = session_build(d, adopt, err, errlen);

	return e ? e : session_sink(d, err, errlen);
}

static void update_seq(struct dsess *d)
{
	struct sink_stats ks;

	if (d->sink && d->def.sink == SESSDEF_SINK_FILE) {
		sink__stats(d->sink, &ks);
		if (ks.seq != d->def.seq) {
			d->def.seq = ks.seq;
			save_def(d);
		}
	}
}

/* End collection: final drain, unpin (or leave pinned when the daemon exits). */
static void session_end(struct dsess *d, bool keep_pinned)
{
	if (!d->run.s)
		return;
	counts__stop(d);
	run__end(&d->run, keep_pinned);
	update_seq(d);
	if (!keep_pinned)
		session__unpin(d->pin);
	streams__detach_session(d);
	if (d->sink)
		sink__close(d->sink);
}

static void session_fail(struct dsess *d, int e)
{
	struct sink_stats ks;

	d->def.error = true;
	if (d->sink && d->def.sink == SESSDEF_SINK_FILE) {
		sink__stats(d->sink, &ks);
		snprintf(d->def.message, sizeof(d->def.message), "writing %.120s/%.80s: %s", d->def.dir,
			 ks.current, strerror(-e));
	} else {
		snprintf(d->def.message, sizeof(d->def.message), "collection failed: %s", strerror(-e));
	}
	logmsg("session '%s': %s; collection stopped", d->def.name, d->def.message);
	counts__stop(d);
	run__abort(&d->run);
	session__unpin(d->pin);
	streams__detach_session(d);
	if (d->sink)
		sink__close(d->sink);
	update_seq(d);
	save_def(d);
}

/* after each drain of its run: the file's number kept, the readers fed */
static void on_drained(struct run *r, int e)
{
	struct dsess *d = container_of(r, struct dsess, run);

	if (e) {
		session_fail(d, e);
		return;
	}
	update_seq(d);
	streams__flush_readers(d);
}

static void dsess_release(struct defer *p)
{
	struct dsess *d = container_of(p, struct dsess, dead);

	rangehist__free(d->ranges);
	free(d->saved);
	free(d);
}

/* after dsess_unlink: the memory goes at the end of the event batch */
static void dsess_free(struct dsess *d)
{
	counts__stop(d);
	sink__free(d->sink);
	d->sink = NULL;
	if (d->dir_fd >= 0)
		close(d->dir_fd);
	d->dir_fd = -1;
	loop__defer(&d->dead, dsess_release);
}

static struct dsess *dsess_new(const struct sessdef *def)
{
	struct dsess *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->def = *def;
	d->dir_fd = -1;
	if (D.http && rangehist__new(&d->ranges, 0))
		d->ranges = NULL;   /* no histograms for it, the session still runs */
	run__init(&d->run, on_drained);
	snprintf(d->pin, sizeof(d->pin), "%s/%s", D.pin_root, def->name);
	return d;
}

static void dsess_link(struct dsess *d)
{
	struct dsess **pp;

	for (pp = &D.sessions; *pp; pp = &(*pp)->next)
		;
	*pp = d;
	D.nr_sessions++;
}

static void dsess_unlink(struct dsess *d)
{
	struct dsess **pp;

	for (pp = &D.sessions; *pp; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			D.nr_sessions--;
			return;
		}
}

/* --- commands --------------------------------------------------------------- */

struct json_object *cmd_create(struct client *c, const struct proto_request *rq,
			       int *fds, size_t nfds)
{
	struct json_object *o;
	char err[256] = "";
	struct sessdef def;
	struct dsess *d;
	size_t i;
	int e;

	if (sessions__find(rq->name))
		return reply_err("session '%s' already exists", rq->name);
	if (sessdef_from_json(rq->def, &def, false, err, sizeof(err)))
		return reply_err("bad session definition: %s", err);
	snprintf(def.name, sizeof(def.name), "%s", rq->name);
	def.owner = c->cred.uid;
	if (def.ring_size > (c->root ? RING_MAX_ROOT : RING_MAX_USER))
		return reply_err("ring size too large (limit %llu MiB%s)",
				 (c->root ? RING_MAX_ROOT : RING_MAX_USER) >> 20,
				 c->root ? "" : " for non-root users");
	if (limits__session(c, &def, err, sizeof(err)) || counts__check(c, &def, err, sizeof(err)))
		return reply_err("%s", err);
	for (i = 0; i < def.spec.nr_pids; i++)
		if (pid_check(c, def.spec.pids[i], err, sizeof(err)))
			return reply_err("%s", err);
	d = dsess_new(&def);
	if (!d)
		return reply_err("out of memory");
	if (def.sink == SESSDEF_SINK_FILE) {
		struct stat sb;

		if (nfds < 1 || fstat(fds[0], &sb) || !S_ISDIR(sb.st_mode)) {
			dsess_free(d);
			return reply_err("--output needs the directory passed as an open descriptor");
		}
		if (!c->root && sb.st_uid != c->cred.uid) {
			dsess_free(d);
			return reply_err("output directory %s is not yours: permission denied", def.dir);
		}
		d->dir_fd = fds[0];
		fds[0] = -1;
	}
	if (def.sink == SESSDEF_SINK_RING && D.ring_dfd >= 0) {   /* a new session: never an old ring */
		char rname[PROTO_NAME_MAX + 8];

		ring_name(d, rname, sizeof(rname));
		sink__remove_ring(D.ring_dfd, rname);
	}
	e = session_start(d, false, err, sizeof(err));
	if (e) {
		dsess_free(d);
		return reply_err("cannot create session '%s': %s", rq->name, err[0] ? err : strerror(-e));
	}
	dsess_link(d);
	save_def(d);
	logmsg("session '%s' created by uid %u", d->def.name, (unsigned)c->cred.uid);
	o = reply_ok();
	json_object_object_add(o, "session", session_info(d));
	return o;
}

struct json_object *cmd_list(struct client *c)
{
	struct json_object *a = json_object_new_array(), *o;
	struct dsess *d;

	for (d = D.sessions; d; d = d->next)
		if (may_see(c, d))
			json_object_array_add(a, session_info(d));
	o = reply_ok();
	json_object_object_add(o, "sessions", a);
	return o;
}

struct json_object *cmd_show(struct dsess *d)
{
	struct json_object *o = reply_ok();

	json_object_object_add(o, "session", session_info(d));
	return o;
}

struct json_object *cmd_stop(struct dsess *d)
{
	if (!d->run.s)
		return reply_err("session '%s' is not running", d->def.name);
	session_end(d, false);
	d->def.stopped = true;
	save_def(d);
	return reply_ok();
}

struct json_object *cmd_start(struct client *c, struct dsess *d)
{
	char err[256] = "";
	int e;

	if (d->run.s)
		return reply_err("session '%s' is already running", d->def.name);
	if (d->def.sink == SESSDEF_SINK_RING && D.ring_dfd >= 0) {
		/* its ring is taken over by a job: the reply when it is done */
		e = session_build(d, false, err, sizeof(err));
		if (!e && !takeover_start(d, TK_START, c))
			return NULL;
		if (!e)
			e = session_sink(d, err, sizeof(err));
	} else {
		e = session_start(d, false, err, sizeof(err));
	}
	if (e)
		return reply_err("cannot start session '%s': %s", d->def.name, err[0] ? err : strerror(-e));
	save_def(d);
	return reply_ok();
}

struct json_object *cmd_delete(struct dsess *d)
{
	char rname[PROTO_NAME_MAX + 8];

	if (d->taker) {        /* deleted before its taker went */
		d->taker->take = NULL;
		d->taker = NULL;
	}
	session_end(d, false);
	streams__detach_session(d);
	session__unpin(d->pin);
	store__remove(D.store, d->def.name);
	if (d->def.sink == SESSDEF_SINK_RING && D.ring_dfd >= 0) {
		sink__free(d->sink);
		d->sink = NULL;
		ring_name(d, rname, sizeof(rname));
		sink__remove_ring(D.ring_dfd, rname);
	}
	logmsg("session '%s' deleted", d->def.name);
	dsess_unlink(d);
	dsess_free(d);
	return reply_ok();
}

/* the taker went (cleanly or killed): its stream had everything, the session goes */
static void on_taker_close(struct client_hook *h, struct client *c)
{
	struct dsess *d = c->take;

	if (!d)
		return;
	c->take = NULL;
	d->taker = NULL;
	logmsg("session '%s': its taker (uid %u, pid %d) went; deleting it", d->def.name,
	       (unsigned)c->cred.uid, (int)c->cred.pid);
	if (d->tk || d->adopting || d->busy) {   /* deleted when it is free */
		d->delete_pending = true;
		return;
	}
	json_object_put(cmd_delete(d));
}

struct json_object *cmd_take(struct client *c, struct dsess *d, int *fds, size_t nfds)
{
	struct json_object *o;

	if (d->taker)
		return reply_err("session '%s' is being taken already", d->def.name);
	o = streams__take(c, d, fds, nfds);
	if (!c->reader)
		return o;    /* refused, as attach is */
	d->taker = c;
	c->take = d;
	client_hook_add(c, &c->take_hook, on_taker_close);
	logmsg("session '%s' taken by uid %u (pid %d): deleted when it goes", d->def.name,
	       (unsigned)c->cred.uid, (int)c->cred.pid);
	return o;
}

/* --- a collection that runs already (keep.c) -------------------------------- */

struct dsess *sessions__prepare(const struct sessdef *def, int *dir_fd, const struct session *s,
				char *err, size_t errlen)
{
	struct dsess *d = dsess_new(def);
	int e;

	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (def->sink == SESSDEF_SINK_FILE) {
		d->dir_fd = *dir_fd;
		*dir_fd = -1;
	} else if (D.ring_dfd >= 0) {   /* a new session: never an old ring */
		char rname[PROTO_NAME_MAX + 8];

		ring_name(d, rname, sizeof(rname));
		sink__remove_ring(D.ring_dfd, rname);
	}
	set_resolved(d, s);
	e = make_sink(d, s, err, errlen);
	if (e) {
		dsess_free(d);
		return NULL;
	}
	return d;
}

void sessions__commit(struct dsess *d, struct run *from)
{
	run__move(from, &d->run);
	dsess_link(d);
	save_def(d);
}

void sessions__discard(struct dsess *d)
{
	dsess_free(d);
}

/* --- start-up and exit ------------------------------------------------------ */

static void bad_def(void *ctx, const char *file, const char *reason)
{
	logmsg("ignoring %s/sessions/%s: %s", D.state_dir, file, reason);
}

static int restore_def(void *ctx, const struct sessdef *def)
{
	struct dsess *d;
	char err[256] = "";
	int e;

	if (D.nr_sessions >= MAX_ALL_SESSIONS) {
		logmsg("too many stored sessions, ignoring '%s'", def->name);
		return 0;
	}
	d = dsess_new(def);
	if (!d)
		return -ENOMEM;
	dsess_link(d);
	/* stored in the current form: saved again only when it changes */
	if (store__current(D.store, def) && (d->saved = malloc(sizeof(*d->saved))))
		*d->saved = *def;
	if (def->stopped || def->error) {
		session__unpin(d->pin);
		if (d->def.sink != SESSDEF_SINK_RING || D.ring_dfd < 0 || takeover_start(d, TK_STOPPED, NULL))
			open_stopped_ring(d);
		return 0;
	}
	e = session_build(d, true, err, sizeof(err));
	if (!e)
		sessions__adopt(d);     /* its fast lane's areas, a slice a turn from now on */
	/* a ring file: taken over by a job, the session starts when it is done */
	if (!e && d->def.sink == SESSDEF_SINK_RING && D.ring_dfd >= 0 &&
	    !takeover_start(d, TK_RESTORE, NULL))
		return 0;
	if (!e)
		e = session_sink(d, err, sizeof(err));
	if (e)
		restore_failed(d, e, err);
	save_def(d);
	return 0;
}

void restore_failed(struct dsess *d, int e, const char *err)
{
	open_stopped_ring(d);
	d->def.error = true;
	snprintf(d->def.message, sizeof(d->def.message), "cannot restart: %s",
		 err[0] ? err : strerror(-e));
	logmsg("session '%s': %s", d->def.name, d->def.message);
}

/* Pins left by sessions that no longer exist end now. */
static void sweep_pins(void)
{
	struct dirent *de;
	DIR *dir = opendir(D.pin_root);

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char path[PATH_MAX];

		if (de->d_name[0] == '.' || !proto_name_valid(de->d_name) || sessions__find(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", D.pin_root, de->d_name);
		logmsg("removing pins of unknown session '%s'", de->d_name);
		session__unpin(path);
	}
	closedir(dir);
}

void sessions__restore(void)
{
	store__load(D.store, restore_def, bad_def, NULL);
	sweep_pins();
	sessions__adopt_done_all();   /* none adopts: the fd store's areas nobody took go now */
}

void sessions__keep_taken(void)
{
	struct dsess *d;

	for (d = D.sessions; d; d = d->next)
		if (d->taker) {
			d->taker->take = NULL;
			d->taker = NULL;
		}
}

void sessions__free_all(void)
{
	while (D.sessions) {
		struct dsess *d = D.sessions;

		session_end(d, true);
		dsess_unlink(d);
		dsess_free(d);
	}
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmarkd: named recording sessions that outlive their clients.
 *
 * One epoll loop over the control socket, client connections, a signalfd,
 * one timerfd (drains every SESSION_DRAIN_MS while a session runs, and the
 * systemd watchdog; disarmed when idle), each session's ring fds and the
 * live readers' output fds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "perfdata.h"
#include "proto.h"
#include "session.h"
#include "sinks.h"
#include "store.h"

#define MAX_SESSIONS 64
#define MAX_CLIENTS 64
#define RING_MAX_ROOT (1ull << 30)
#define RING_MAX_USER (256ull << 20)
#define GROUP_NAME "perfmark"

enum watch_kind { W_LISTEN, W_SIGNAL, W_TIMER, W_CLIENT, W_SESSION, W_READER, W_PUMP,
		  W_ANON, W_ANON_OUT };

struct watch {
	enum watch_kind kind;
	void *ptr;
};

struct dsess {
	struct dsess *next;
	struct sessdef def;
	struct session *s;            /* NULL when not collecting */
	struct sink *sink;            /* kept after stop for ring snapshots */
	int sfds[4];
	int nr_sfds;
	struct watch w;
	int dir_fd;                   /* file sink output directory */
	struct session_stats st;      /* last known */
	char pin[PATH_MAX];
};

/*
 * An anonymous session: `perfmark record` through the daemon.  It belongs
 * to its connection (never stored, pinned or listed) and writes perf.data
 * into the client's fd with the session's own writer, as in-process.  A
 * pipe is not written directly (a stalled reader would stall the daemon):
 * the writer appends to a memfd that is pumped out without blocking; while
 * more than ANON_BACKLOG bytes wait, the session is not drained (its BPF
 * ring fills and drops, counted as lost, as a blocked in-process writer).
 */
#define ANON_BACKLOG (32ull << 20)
#define ANON_NOTICES 4

struct anon {
	struct session *s;
	struct session_opts so;
	char **argv;
	int argc;
	int out_fd;                   /* file mode: the client's file */
	bool pipe;
	int mfd;                      /* pipe mode: the writer's memfd */
	int dst;                      /* pipe mode: the client's pipe, non-blocking */
	uint64_t pumped, punched;
	bool dst_polled, dst_wait, blocked, started, stopped, stop_pending, failed;
	int err;                      /* the output's negative errno */
	int sfds[4];
	int nr_sfds;
	bool sfds_on;
	struct watch w, wo;
	char notices[ANON_NOTICES][256];
	size_t nr_notices;
	struct session_stats st;
};

struct client {
	struct client *next;
	struct proto_conn *c;
	struct ucred cred;
	bool allowed, root, closing, dead;
	struct watch w;
	/* attach */
	struct dsess *att;
	struct reader *reader;
	struct watch wr;
	bool reader_polled;
	/* snapshot to a pipe: stream a memfd out */
	int pump_src, pump_dst;
	off_t pump_off, pump_len;
	struct watch wp;
	/* record */
	struct anon *rec;
};

static struct {
	const char *socket_path, *state_dir, *pin_root;
	int ep, lfd, sfd, tfd;
	struct store *store;
	struct dsess *sessions;
	struct client *clients, *dead_clients;
	struct dsess *dead_sessions;
	bool activated;
	size_t nr_sessions, nr_clients;
	uint64_t watchdog_usec, last_ping;
	bool exiting, timer_on;
	uint64_t timer_ns;
	struct watch wl, ws, wt;
} D = { .ep = -1, .lfd = -1, .sfd = -1, .tfd = -1 };

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	fputs("perfmarkd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- systemd ---------------------------------------------------------------- */

static void sd_notify_msg(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || !path[0] || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)!sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

static void watchdog_setup(void)
{
	const char *u = getenv("WATCHDOG_USEC"), *p = getenv("WATCHDOG_PID");

	if (!u)
		return;
	if (p && (pid_t)strtol(p, NULL, 10) != getpid())
		return;
	D.watchdog_usec = strtoull(u, NULL, 10);
}

/* socket activation: $LISTEN_PID/$LISTEN_FDS */
static int activated_fd(void)
{
	const char *p = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int fl;

	if (!p || !n || (pid_t)strtol(p, NULL, 10) != getpid() || strtol(n, NULL, 10) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	fl = fcntl(3, F_GETFL);
	if (fl < 0)
		return -1;
	fcntl(3, F_SETFL, fl | O_NONBLOCK);
	fcntl(3, F_SETFD, FD_CLOEXEC);
	return 3;
}

/* --- epoll helpers ---------------------------------------------------------- */

static int ep_add(int fd, uint32_t events, struct watch *w)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(D.ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void ep_mod(int fd, uint32_t events, struct watch *w)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	epoll_ctl(D.ep, EPOLL_CTL_MOD, fd, &ev);
}

static void ep_del(int fd)
{
	epoll_ctl(D.ep, EPOLL_CTL_DEL, fd, NULL);
}

/* Arm the timer only when something needs it: idle means no wakeups. */
static void timer_update(void)
{
	struct itimerspec its = { 0 };
	uint64_t ns = 0;
	struct dsess *d;

	struct client *c;

	for (d = D.sessions; d; d = d->next)
		if (d->s) {
			ns = SESSION_DRAIN_MS * 1000000ull;
			break;
		}
	for (c = D.clients; c && !ns; c = c->next)
		if (c->rec && c->rec->started && !c->rec->stopped)
			ns = SESSION_DRAIN_MS * 1000000ull;
	if (D.watchdog_usec) {
		uint64_t w = D.watchdog_usec * 1000 / 2;

		if (!ns || w < ns)
			ns = w;
	}
	if (ns == D.timer_ns)
		return;
	D.timer_ns = ns;
	its.it_value.tv_sec = ns / 1000000000ull;
	its.it_value.tv_nsec = ns % 1000000000ull;
	its.it_interval = its.it_value;
	timerfd_settime(D.tfd, 0, &its, NULL);
}

/* --- sessions ------------------------------------------------------------- */

static struct dsess *find_session(const char *name)
{
	struct dsess *d;

	for (d = D.sessions; d; d = d->next)
		if (!strcmp(d->def.name, name))
			return d;
	return NULL;
}

static int sink_record_cb(void *ctx, const void *rec, size_t len)
{
	struct dsess *d = ctx;

	return d->sink ? sink__record(d->sink, rec, len) : 0;
}

static int sink_round_cb(void *ctx)
{
	struct dsess *d = ctx;

	return d->sink ? sink__round(d->sink) : 0;
}

static const struct session_sink_ops sink_ops = {
	.record = sink_record_cb,
	.round = sink_round_cb,
};

static void on_notice(void *ctx, const char *msg)
{
	struct dsess *d = ctx;

	logmsg("session '%s': %s", d ? d->def.name : "?", msg);
}

static void save_def(struct dsess *d)
{
	int e = store__save(D.store, &d->def);

	if (e)
		logmsg("cannot save session '%s' under %s: %s", d->def.name, D.state_dir, strerror(-e));
}

static void client_close(struct client *c);
static void anon_end(struct client *c, const char *why);

static void detach_readers(struct dsess *d)
{
	struct client *c, *n;

	for (c = D.clients; c; c = n) {
		n = c->next;
		if (c->att == d)
			client_close(c);
	}
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

static void session_unregister(struct dsess *d)
{
	int i;

	for (i = 0; i < d->nr_sfds; i++)
		ep_del(d->sfds[i]);
	d->nr_sfds = 0;
}

/* Build the session from its definition, adopting pins when there are. */
static int session_start(struct dsess *d, bool adopt, char *err, size_t errlen)
{
	struct session_opts so = { 0 };
	struct perfdata_event evs[EVSPEC_MAX + 2];
	uint64_t ids[EVSPEC_MAX + 2];
	struct sink_opts ko = { 0 };
	struct passwd *pw;
	size_t n, i;
	int e;

	memcpy(so.events, d->def.events, sizeof(so.events));
	so.nr_events = d->def.nr_events;
	so.freq = d->def.freq;
	so.period = d->def.period;
	so.callchain = d->def.callchain;
	so.markers = d->def.markers;
	so.target = d->def.all ? SESSION_TARGET_ALL : SESSION_TARGET_PIDS;
	for (i = 0; i < d->def.nr_pids; i++)
		so.pids[i] = d->def.pids[i];
	so.nr_pids = d->def.nr_pids;
	so.uid_filter = d->def.owner ? d->def.owner : (uint32_t)-1;
	so.out_fd = -1;
	so.sink = &sink_ops;
	so.sink_ctx = d;
	so.pin_dir = d->pin;
	so.notice = on_notice;
	so.notice_ctx = d;

	e = -ENOENT;
	if (adopt && d->def.nr_resolved && !access(d->pin, F_OK)) {
		struct session_opts ao = so;

		for (i = 0; i < d->def.nr_resolved; i++)
			evspec_lookup(d->def.resolved[i], &ao.events[i]);
		ao.nr_events = d->def.nr_resolved;
		e = session__adopt(&d->s, &ao, err, errlen);
		if (e)
			logmsg("session '%s': cannot adopt the pinned collection (%s), starting afresh",
			       d->def.name, err);
		else
			logmsg("session '%s': adopted the pinned collection", d->def.name);
	}
	if (e) {
		session__unpin(d->pin);
		e = session__new(&d->s, &so, err, errlen);
		if (e)
			return e;
		for (i = 0; i < EVSPEC_MAX && session__event_name(d->s, i); i++)
			snprintf(d->def.resolved[i], sizeof(d->def.resolved[i]), "%s",
				 session__event_name(d->s, i));
		d->def.nr_resolved = i;
	}
	n = session__events(d->s, evs, ids, EVSPEC_MAX + 2);
	sink__free(d->sink);
	d->sink = NULL;
	ko.events = evs;
	ko.nr_events = n;
	ko.zstd_level = d->def.zstd_level;
	if (d->def.sink == SESSDEF_SINK_RING) {
		ko.kind = SINK_RING;
		ko.ring_size = d->def.ring_size;
	} else {
		ko.kind = SINK_FILE;
		if (d->dir_fd < 0)
			d->dir_fd = open_dir_as_owner(&d->def);
		if (d->dir_fd < 0) {
			e = d->dir_fd;
			d->dir_fd = -1;
			snprintf(err, errlen, "cannot open output directory %.160s: %s", d->def.dir, strerror(-e));
			goto fail;
		}
		ko.dir_fd = d->dir_fd;
		ko.prefix = d->def.name;
		ko.seq = d->def.seq;
		ko.rotate_size = d->def.rotate_size;
		ko.rotate_secs = d->def.rotate_secs;
		ko.keep = d->def.keep;
		pw = d->def.owner ? getpwuid(d->def.owner) : NULL;
		ko.uid = d->def.owner ? d->def.owner : (uid_t)-1;
		ko.gid = pw ? pw->pw_gid : (gid_t)-1;
	}
	e = sink__new(&d->sink, &ko);
	if (e) {
		snprintf(err, errlen, "cannot create the %s: %s",
			 ko.kind == SINK_RING ? "ring" : "output file", strerror(-e));
		goto fail;
	}
	e = session__start(d->s, err, errlen);
	if (e)
		goto fail;
	d->nr_sfds = session__fds(d->s, d->sfds, 4);
	for (i = 0; i < (size_t)d->nr_sfds; i++)
		ep_add(d->sfds[i], EPOLLIN, &d->w);
	d->def.stopped = false;
	d->def.error = false;
	d->def.message[0] = '\0';
	timer_update();
	return 0;
fail:
	session__free(d->s);
	d->s = NULL;
	session__unpin(d->pin);
	return e ? e : -EINVAL;
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
	if (!d->s)
		return;
	session_unregister(d);
	if (keep_pinned) {
		session__drain(d->s);
	} else {
		session__stop(d->s);
	}
	session__stats(d->s, &d->st);
	update_seq(d);
	session__free(d->s);
	d->s = NULL;
	if (!keep_pinned)
		session__unpin(d->pin);
	detach_readers(d);
	if (d->sink)
		sink__close(d->sink);
	timer_update();
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
	session_unregister(d);
	session__stats(d->s, &d->st);
	session__free(d->s);
	d->s = NULL;
	session__unpin(d->pin);
	detach_readers(d);
	if (d->sink)
		sink__close(d->sink);
	update_seq(d);
	save_def(d);
	timer_update();
}

static void flush_readers(struct dsess *d);

static void session_drain(struct dsess *d)
{
	int e;

	if (!d->s)
		return;
	e = session__drain(d->s);
	if (e) {
		session_fail(d, e);
		return;
	}
	session__stats(d->s, &d->st);
	update_seq(d);
	flush_readers(d);
}

/* after dsess_unlink: the memory goes at the end of the event batch */
static void dsess_free(struct dsess *d)
{
	sink__free(d->sink);
	d->sink = NULL;
	if (d->dir_fd >= 0)
		close(d->dir_fd);
	d->dir_fd = -1;
	d->s = NULL;
	d->next = D.dead_sessions;
	D.dead_sessions = d;
}

static struct dsess *dsess_new(const struct sessdef *def)
{
	struct dsess *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->def = *def;
	d->dir_fd = -1;
	d->w.kind = W_SESSION;
	d->w.ptr = d;
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

/* --- readers and pumps ------------------------------------------------------ */

static void reader_poll(struct client *c)
{
	uint32_t ev = reader__pending(c->reader) ? EPOLLOUT : 0;

	if (!c->reader_polled)
		return;
	ep_mod(reader__fd(c->reader), ev, &c->wr);
}

static void flush_readers(struct dsess *d)
{
	struct reader *rs[MAX_CLIENTS];
	size_t n, i;

	if (!d->sink)
		return;
	n = sink__readers(d->sink, rs, MAX_CLIENTS);
	for (i = 0; i < n && i < MAX_CLIENTS; i++) {
		struct client *c = reader__ctx(rs[i]);
		int e = reader__flush(rs[i]);

		if (e && e != -EAGAIN)
			client_close(c);   /* EPIPE: the reader went away */
		else
			reader_poll(c);
	}
}

static void pump_end(struct client *c)
{
	if (c->pump_dst >= 0) {
		ep_del(c->pump_dst);
		close(c->pump_dst);
	}
	if (c->pump_src >= 0)
		close(c->pump_src);
	c->pump_src = c->pump_dst = -1;
}

/* --- clients ---------------------------------------------------------------- */

/*
 * Events already fetched may still point at a closed client: it is only
 * marked dead here and freed after the batch (reap()).
 */
static void client_close(struct client *c)
{
	struct client **pp;

	if (c->dead)
		return;
	for (pp = &D.clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->reader) {
		if (c->reader_polled)
			ep_del(reader__fd(c->reader));
		sink__detach(c->att->sink, c->reader);
		c->reader = NULL;
		c->att = NULL;
	}
	pump_end(c);
	if (c->rec)
		anon_end(c, "the client went away");
	ep_del(proto_conn__fd(c->c));
	proto_conn__free(c->c);
	c->c = NULL;
	D.nr_clients--;
	c->dead = true;
	c->next = D.dead_clients;
	D.dead_clients = c;
}

static void reap(void)
{
	while (D.dead_clients) {
		struct client *c = D.dead_clients;

		D.dead_clients = c->next;
		free(c);
	}
	while (D.dead_sessions) {
		struct dsess *d = D.dead_sessions;

		D.dead_sessions = d->next;
		free(d);
	}
}

static void client_poll(struct client *c)
{
	ep_mod(proto_conn__fd(c->c), EPOLLIN | EPOLLRDHUP | (proto_conn__pending(c->c) ? EPOLLOUT : 0),
	       &c->w);
}

static struct json_object *reply_ok(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static struct json_object *reply_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct json_object *reply_err(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(buf));
	return o;
}

static void send_reply(struct client *c, struct json_object *o)
{
	int e = proto_conn__queue(c->c, o);

	json_object_put(o);
	if (e) {
		c->closing = true;
		return;
	}
	e = proto_conn__flush(c->c);
	if (e && e != -EAGAIN)
		c->closing = true;
	client_poll(c);
}

static bool in_group(pid_t pid, gid_t pgid, gid_t want)
{
	char path[64], line[4096];
	bool found = pgid == want;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return found;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)g == want)
				found = true;
		}
	}
	fclose(f);
	return found;
}

static bool may_see(const struct client *c, const struct dsess *d)
{
	return c->root || d->def.owner == c->cred.uid;
}

static const char *state_name(const struct dsess *d)
{
	if (d->s)
		return "running";
	return d->def.error ? "error" : "stopped";
}

static struct json_object *session_info(const struct dsess *d, bool full)
{
	struct json_object *o = json_object_new_object(), *a;
	struct sink_stats ks;
	size_t i;

	json_object_object_add(o, "name", json_object_new_string(d->def.name));
	json_object_object_add(o, "state", json_object_new_string(state_name(d)));
	if (d->def.message[0])
		json_object_object_add(o, "message", json_object_new_string(d->def.message));
	json_object_object_add(o, "owner", json_object_new_int64(d->def.owner));
	a = json_object_new_array();
	if (d->def.nr_resolved)
		for (i = 0; i < d->def.nr_resolved; i++)
			json_object_array_add(a, json_object_new_string(d->def.resolved[i]));
	else if (d->def.nr_events)
		for (i = 0; i < d->def.nr_events; i++)
			json_object_array_add(a, json_object_new_string(d->def.events[i].name));
	else
		json_object_array_add(a, json_object_new_string("cycles"));
	json_object_object_add(o, "events", a);
	if (d->def.all) {
		json_object_object_add(o, "target", json_object_new_string("all"));
	} else {
		a = json_object_new_array();
		for (i = 0; i < d->def.nr_pids; i++)
			json_object_array_add(a, json_object_new_int(d->def.pids[i]));
		json_object_object_add(o, "target", a);
	}
	json_object_object_add(o, "samples", json_object_new_int64((int64_t)d->st.samples));
	json_object_object_add(o, "markers", json_object_new_int64((int64_t)d->st.markers));
	json_object_object_add(o, "lost",
			       json_object_new_int64((int64_t)(d->st.lost_samples + d->st.lost_markers)));
	memset(&ks, 0, sizeof(ks));
	ks.kind = d->def.sink == SESSDEF_SINK_RING ? SINK_RING : SINK_FILE;
	if (d->sink)
		sink__stats(d->sink, &ks);
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)(ks.kind == SINK_RING ? ks.used : ks.bytes)));
	a = json_object_new_object();
	if (ks.kind == SINK_RING) {
		json_object_object_add(a, "type", json_object_new_string("ring"));
		json_object_object_add(a, "size", json_object_new_int64((int64_t)d->def.ring_size));
		json_object_object_add(a, "used", json_object_new_int64((int64_t)ks.used));
		json_object_object_add(a, "evicted", json_object_new_int64((int64_t)ks.evicted));
	} else {
		json_object_object_add(a, "type", json_object_new_string("file"));
		json_object_object_add(a, "dir", json_object_new_string(d->def.dir));
		if (ks.current[0])
			json_object_object_add(a, "current", json_object_new_string(ks.current));
		json_object_object_add(a, "current_bytes", json_object_new_int64((int64_t)ks.used));
		json_object_object_add(a, "files", json_object_new_int64((int64_t)ks.files));
		if (d->def.rotate_size)
			json_object_object_add(a, "rotate_size", json_object_new_int64((int64_t)d->def.rotate_size));
		if (d->def.rotate_secs)
			json_object_object_add(a, "rotate_secs", json_object_new_int64((int64_t)d->def.rotate_secs));
		if (d->def.keep)
			json_object_object_add(a, "keep", json_object_new_int64(d->def.keep));
	}
	json_object_object_add(a, "sideband_bytes", json_object_new_int64((int64_t)ks.sideband_bytes));
	json_object_object_add(o, "sink", a);
	json_object_object_add(o, "readers", json_object_new_int64((int64_t)ks.readers));
	if (full) {
		json_object_object_add(o, "reader_lost", json_object_new_int64((int64_t)ks.reader_lost));
		json_object_object_add(o, "callchain", json_object_new_boolean(d->def.callchain));
		json_object_object_add(o, "markers_enabled", json_object_new_boolean(d->def.markers));
		if (d->def.period)
			json_object_object_add(o, "period", json_object_new_int64((int64_t)d->def.period));
		else
			json_object_object_add(o, "freq", json_object_new_int64((int64_t)d->def.freq));
		json_object_object_add(o, "zstd", json_object_new_int(d->def.zstd_level));
		json_object_object_add(o, "pin_dir", json_object_new_string(d->pin));
	}
	return o;
}

static bool pid_owned_by(int pid, uid_t uid)
{
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return !stat(path, &sb) && sb.st_uid == uid;
}

static struct json_object *cmd_create(struct client *c, const struct proto_request *rq,
				      int *fds, size_t nfds)
{
	char err[256] = "";
	struct sessdef def;
	struct dsess *d;
	size_t i;
	int e;

	if (find_session(rq->name))
		return reply_err("session '%s' already exists", rq->name);
	if (D.nr_sessions >= MAX_SESSIONS)
		return reply_err("too many sessions (limit %d)", MAX_SESSIONS);
	if (sessdef_from_json(rq->def, &def, false, err, sizeof(err)))
		return reply_err("bad session definition: %s", err);
	snprintf(def.name, sizeof(def.name), "%s", rq->name);
	def.owner = c->cred.uid;
	if (def.ring_size > (c->root ? RING_MAX_ROOT : RING_MAX_USER))
		return reply_err("ring size too large (limit %llu MiB%s)",
				 (c->root ? RING_MAX_ROOT : RING_MAX_USER) >> 20,
				 c->root ? "" : " for non-root users");
	for (i = 0; i < def.nr_pids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d", def.pids[i]);
		if (access(path, F_OK))
			return reply_err("no such process: %d", def.pids[i]);
		if (!c->root && !pid_owned_by(def.pids[i], c->cred.uid))
			return reply_err("process %d is not yours: permission denied", def.pids[i]);
	}
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
	e = session_start(d, false, err, sizeof(err));
	if (e) {
		dsess_free(d);
		return reply_err("cannot create session '%s': %s", rq->name, err[0] ? err : strerror(-e));
	}
	dsess_link(d);
	timer_update();
	save_def(d);
	logmsg("session '%s' created by uid %u", d->def.name, (unsigned)c->cred.uid);
	{
		struct json_object *o = reply_ok();

		json_object_object_add(o, "session", session_info(d, true));
		return o;
	}
}

static int pump_step(struct client *c)
{
	while (c->pump_off < c->pump_len) {
		ssize_t n = sendfile(c->pump_dst, c->pump_src, &c->pump_off,
				     (size_t)(c->pump_len - c->pump_off));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -EAGAIN : -errno;
		}
		if (n == 0)
			return -EIO;
	}
	return 0;
}

static struct json_object *cmd_snapshot(struct client *c, struct dsess *d, int *fds, size_t nfds)
{
	struct stat sb;
	struct json_object *o;
	int e, mfd;

	if (nfds < 1 || fstat(fds[0], &sb))
		return reply_err("snapshot needs the output passed as an open descriptor");
	if (!d->sink)
		return reply_err("session '%s' holds nothing to snapshot", d->def.name);
	if (d->s)
		session_drain(d);
	if (!d->sink)
		return reply_err("session '%s' holds nothing to snapshot", d->def.name);
	if (S_ISREG(sb.st_mode)) {
		if (ftruncate(fds[0], 0) && errno != EINVAL)
			return reply_err("cannot truncate the output: %s", strerror(errno));
		e = sink__snapshot(d->sink, fds[0], false);
		if (e)
			return reply_err("snapshot of '%s' failed: %s", d->def.name, strerror(-e));
		o = reply_ok();
		fstat(fds[0], &sb);
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)sb.st_size));
		return o;
	}
	if (!S_ISFIFO(sb.st_mode) && !S_ISSOCK(sb.st_mode))
		return reply_err("snapshot output must be a regular file or a pipe");
	mfd = memfd_create("perfmark-snapshot", MFD_CLOEXEC);
	if (mfd < 0)
		return reply_err("memfd: %s", strerror(errno));
	e = sink__snapshot(d->sink, mfd, true);
	if (e) {
		close(mfd);
		return reply_err("snapshot of '%s' failed: %s", d->def.name, strerror(-e));
	}
	fstat(mfd, &sb);
	c->pump_src = mfd;
	c->pump_dst = fds[0];
	fds[0] = -1;
	c->pump_off = 0;
	c->pump_len = sb.st_size;
	fcntl(c->pump_dst, F_SETFL, fcntl(c->pump_dst, F_GETFL) | O_NONBLOCK);
	e = pump_step(c);
	if (e == -EAGAIN) {
		ep_add(c->pump_dst, EPOLLOUT, &c->wp);
		return NULL;   /* the reply comes when the stream is out */
	}
	pump_end(c);
	if (e)
		return reply_err("snapshot stream: %s", strerror(-e));
	o = reply_ok();
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)sb.st_size));
	return o;
}

static struct json_object *cmd_attach(struct client *c, struct dsess *d, int *fds, size_t nfds)
{
	struct stat sb;
	int e;

	if (c->reader)
		return reply_err("this connection is already attached");
	if (nfds < 1 || fstat(fds[0], &sb))
		return reply_err("attach needs the output passed as an open descriptor");
	if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISSOCK(sb.st_mode))
		return reply_err("attach output must be a regular file or a pipe");
	if (!d->s || !d->sink)
		return reply_err("session '%s' is %s", d->def.name, state_name(d));
	e = sink__attach(d->sink, fds[0], c, &c->reader);
	if (e)
		return reply_err("cannot attach: %s", strerror(-e));
	fds[0] = -1;
	c->att = d;
	c->reader_polled = ep_add(reader__fd(c->reader), 0, &c->wr) == 0;
	e = reader__flush(c->reader);
	if (e && e != -EAGAIN) {
		sink__detach(d->sink, c->reader);
		c->reader = NULL;
		c->att = NULL;
		return reply_err("cannot write to the output: %s", strerror(-e));
	}
	if (!c->reader_polled) {   /* a regular file: writes never wait */
		while (reader__pending(c->reader) && reader__flush(c->reader) == -EAGAIN)
			;
	}
	reader_poll(c);
	return reply_ok();
}

/* --- anonymous sessions: `perfmark record` through the daemon --------------- */

static void anon_notice(void *ctx, const char *msg)
{
	struct anon *a = ctx;

	if (a->nr_notices < ANON_NOTICES)
		snprintf(a->notices[a->nr_notices++], sizeof(a->notices[0]), "%s", msg);
}

static void anon_sfds(struct anon *a, bool on)
{
	int i;

	if (a->sfds_on == on)
		return;
	for (i = 0; i < a->nr_sfds; i++) {
		if (on)
			ep_add(a->sfds[i], EPOLLIN, &a->w);
		else
			ep_del(a->sfds[i]);
	}
	a->sfds_on = on;
}

static void anon_free(struct anon *a)
{
	int i;

	if (!a)
		return;
	anon_sfds(a, false);
	session__free(a->s);
	if (a->out_fd >= 0)
		close(a->out_fd);
	if (a->mfd >= 0)
		close(a->mfd);
	if (a->dst >= 0) {
		if (a->dst_polled)
			ep_del(a->dst);
		close(a->dst);
	}
	for (i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	free(a);
}

/*
 * Pipe mode: move what the writer appended to the memfd into the client's
 * pipe without blocking.  0 all out, -EAGAIN (waits for EPOLLOUT), -errno.
 */
static int anon_pump(struct anon *a)
{
	off_t end = lseek(a->mfd, 0, SEEK_CUR);
	uint64_t backlog;
	bool wait;
	int e = 0;

	if (end < 0)
		return -errno;
	while (a->pumped < (uint64_t)end) {
		off_t off = (off_t)a->pumped;
		ssize_t n = sendfile(a->dst, a->mfd, &off, (size_t)((uint64_t)end - a->pumped));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno == EAGAIN ? -EAGAIN : -errno;
			break;
		}
		if (n == 0) {
			e = -EIO;
			break;
		}
		a->pumped += (uint64_t)n;
	}
	/* what is out needs no memory */
	if (a->pumped - a->punched >= (1u << 20)) {
		uint64_t to = a->pumped & ~4095ull;

		if (to > a->punched &&
		    !fallocate(a->mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->punched,
			       (off_t)(to - a->punched)))
			a->punched = to;
	}
	if (e && e != -EAGAIN)
		return e;
	wait = e == -EAGAIN;
	if (a->dst_polled && wait != a->dst_wait)
		ep_mod(a->dst, wait ? EPOLLOUT : 0, &a->wo);
	a->dst_wait = wait;
	/* a slow reader holds the drains back, as a blocking write does in-process */
	backlog = (uint64_t)end - a->pumped;
	if (!a->blocked && backlog > ANON_BACKLOG) {
		a->blocked = true;
		anon_sfds(a, false);
	} else if (a->blocked && backlog <= ANON_BACKLOG / 2) {
		a->blocked = false;
		if (!a->stopped)
			anon_sfds(a, true);
	}
	return e;
}

static void anon_stats_json(struct json_object *o, const struct session_stats *st)
{
	struct json_object *x = json_object_new_object();

	json_object_object_add(x, "samples", json_object_new_int64((int64_t)st->samples));
	json_object_object_add(x, "markers", json_object_new_int64((int64_t)st->markers));
	json_object_object_add(x, "lost_samples", json_object_new_int64((int64_t)st->lost_samples));
	json_object_object_add(x, "lost_markers", json_object_new_int64((int64_t)st->lost_markers));
	json_object_object_add(x, "bytes", json_object_new_int64((int64_t)st->bytes));
	json_object_object_add(x, "raw_bytes", json_object_new_int64((int64_t)st->raw_bytes));
	json_object_object_add(o, "stats", x);
}

static struct json_object *anon_reply(const char *re)
{
	struct json_object *o = reply_ok();

	json_object_object_add(o, "re", json_object_new_string(re));
	return o;
}

static void anon_add_notices(struct anon *a, struct json_object *o)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < a->nr_notices; i++)
		json_object_array_add(arr, json_object_new_string(a->notices[i]));
	a->nr_notices = 0;
	json_object_object_add(o, "notices", arr);
}

/* the output failed: the client is told with the errno, and formats it as in-process */
static struct json_object *anon_err(const char *re, int e)
{
	struct json_object *o = reply_err("output: %s", strerror(-e));

	json_object_object_add(o, re ? "re" : "event", json_object_new_string(re ? re : "failed"));
	json_object_object_add(o, "errno", json_object_new_int(-e));
	return o;
}

/* Stop collecting (final drain, file finished); the stats stay. */
static int anon_finish(struct anon *a)
{
	int e;

	if (!a->s)
		return 0;
	anon_sfds(a, false);
	a->stopped = true;
	e = session__stop(a->s);
	session__stats(a->s, &a->st);
	session__free(a->s);
	a->s = NULL;
	timer_update();
	return e;
}

static void anon_fail(struct client *c, int e)
{
	struct anon *a = c->rec;

	if (a->failed)
		return;
	a->failed = true;
	a->err = e;
	anon_finish(a);
	logmsg("anonymous recording of uid %u (pid %d): output failed: %s; recording stopped",
	       (unsigned)c->cred.uid, (int)c->cred.pid, strerror(-e));
	send_reply(c, anon_err(a->stop_pending ? "record-stop" : NULL, e));
	a->stop_pending = false;
}

static void anon_drain(struct client *c)
{
	struct anon *a = c->rec;
	int e;

	if (!a->started || a->stopped)
		return;
	if (!a->blocked) {
		e = session__drain(a->s);
		if (e) {
			anon_fail(c, e);
			return;
		}
	}
	if (a->pipe) {
		e = anon_pump(a);
		if (e && e != -EAGAIN)
			anon_fail(c, e);
	}
}

static struct json_object *anon_stop_reply(const struct client *c, struct anon *a)
{
	struct json_object *o = anon_reply("record-stop");

	logmsg("anonymous recording of uid %u (pid %d) done: %llu samples, %llu markers",
	       (unsigned)c->cred.uid, (int)c->cred.pid, (unsigned long long)a->st.samples,
	       (unsigned long long)a->st.markers);

	anon_stats_json(o, &a->st);
	return o;
}

static void on_anon_out(struct client *c, uint32_t ev)
{
	struct anon *a = c->rec;
	int e;

	if (a->failed || a->dst < 0)
		return;
	e = (ev & (EPOLLERR | EPOLLHUP)) ? -EPIPE : anon_pump(a);
	if (e == -EAGAIN)
		return;
	if (e) {
		anon_fail(c, e);
		return;
	}
	if (a->stop_pending && a->pumped == (uint64_t)lseek(a->mfd, 0, SEEK_CUR)) {
		a->stop_pending = false;
		send_reply(c, anon_stop_reply(c, a));
	}
}

/* A pipe gets a description of its own, so O_NONBLOCK stays with the daemon. */
static int anon_open_dst(int fd)
{
	char path[64];
	struct stat sb;
	int d;

	if (fstat(fd, &sb))
		return -errno;
	if (S_ISFIFO(sb.st_mode)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		d = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (d >= 0)
			return d;
		if (errno == ENXIO)
			return -EPIPE;   /* nobody reads it */
	}
	d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (d < 0)
		return -errno;
	if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))
		fcntl(d, F_SETFL, fcntl(d, F_GETFL) | O_NONBLOCK);
	return d;
}

/*
 * A shared collector tells its notices only to its creator: the fallback
 * that in-process recording would announce is announced here too.
 */
static void anon_fallback_notice(struct anon *a)
{
	size_t i, n = a->so.nr_events ? a->so.nr_events : 1;

	if (a->nr_notices)
		return;
	for (i = 0; i < n; i++) {
		const char *want = a->so.nr_events ? a->so.events[i].name : "cycles";
		const char *got = session__event_name(a->s, i);

		if (got && strcmp(want, got) && !strcmp(got, "cpu-clock") && a->nr_notices < ANON_NOTICES)
			snprintf(a->notices[a->nr_notices++], sizeof(a->notices[0]),
				 "%s is not supported here (no hardware PMU), falling back to cpu-clock",
				 want);
	}
}

static const char *pid_check(const struct client *c, int pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (access(path, F_OK))
		snprintf(buf, len, "no such process: %d", pid);
	else if (!c->root && !pid_owned_by(pid, c->cred.uid))
		snprintf(buf, len, "process %d is not yours: permission denied", pid);
	else
		return NULL;
	return buf;
}

static struct json_object *cmd_record(struct client *c, const struct proto_request *rq,
				      struct json_object *msg)
{
	struct json_object *o, *arr;
	char err[256] = "";
	struct anon *a;
	size_t i, n;
	int e;

	if (c->rec)
		return reply_err("this connection is already recording");
	a = calloc(1, sizeof(*a));
	if (!a)
		return reply_err("out of memory");
	a->out_fd = a->mfd = a->dst = -1;
	a->w.kind = W_ANON;
	a->w.ptr = c;
	a->wo.kind = W_ANON_OUT;
	a->wo.ptr = c;
	if (proto_record_opts_from_json(rq->def, &a->so, err, sizeof(err))) {
		anon_free(a);
		return reply_err("%s", err);
	}
	for (i = 0; i < a->so.nr_pids; i++)
		if (pid_check(c, a->so.pids[i], err, sizeof(err))) {
			anon_free(a);
			return reply_err("%s", err);
		}
	if (json_object_object_get_ex(msg, "argv", &arr) && json_object_is_type(arr, json_type_array)) {
		n = json_object_array_length(arr);
		if (n > 256)
			n = 256;
		a->argv = calloc(n + 1, sizeof(*a->argv));
		for (i = 0; a->argv && i < n; i++) {
			struct json_object *x = json_object_array_get_idx(arr, i);

			a->argv[a->argc] = strndup(json_object_is_type(x, json_type_string) ?
						   json_object_get_string(x) : "", 4096);
			if (a->argv[a->argc])
				a->argc++;
		}
	}
	a->so.argc = a->argc;
	a->so.argv = a->argv;
	/* as a named session of this user: never other users' processes */
	a->so.uid_filter = c->root ? (uint32_t)-1 : c->cred.uid;
	a->so.out_fd = -1;
	a->so.notice = anon_notice;
	a->so.notice_ctx = a;
	e = session__new(&a->s, &a->so, err, sizeof(err));
	if (e) {
		anon_free(a);
		return reply_err("%s", err[0] ? err : strerror(-e));
	}
	anon_fallback_notice(a);
	c->rec = a;
	o = anon_reply("record");
	anon_add_notices(a, o);
	return o;
}

static struct json_object *cmd_record_start(struct client *c, struct json_object *msg,
					    int *fds, size_t nfds)
{
	struct anon *a = c->rec;
	struct json_object *x, *o;
	char err[256] = "";
	struct stat sb;
	int e, pid = 0;

	if (!a)
		return reply_err("record-start: no recording on this connection");
	if (a->started)
		return reply_err("record-start: already recording");
	if (nfds < 1 || fstat(fds[0], &sb))
		return reply_err("record-start needs the output passed as an open descriptor");
	a->pipe = json_object_object_get_ex(msg, "pipe", &x) && json_object_get_boolean(x);
	if (json_object_object_get_ex(msg, "pid", &x)) {
		if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) <= 0 ||
		    json_object_get_int64(x) > INT32_MAX || a->so.target != SESSION_TARGET_PIDS)
			return reply_err("record-start: bad pid");
		pid = (int)json_object_get_int64(x);
		if (pid_check(c, pid, err, sizeof(err)))
			return reply_err("%s", err);
	}
	if (a->pipe) {
		if (a->mfd < 0)
			a->mfd = memfd_create("perfmark-record", MFD_CLOEXEC);
		if (a->mfd < 0)
			return reply_err("memfd: %s", strerror(errno));
		if (a->dst < 0) {
			e = anon_open_dst(fds[0]);
			if (e < 0)
				return reply_err("cannot write the output header: %s", strerror(-e));
			a->dst = e;
			a->dst_polled = ep_add(a->dst, 0, &a->wo) == 0;
		}
		session__set_output(a->s, a->mfd, true);
	} else {
		if (!S_ISREG(sb.st_mode) && !S_ISCHR(sb.st_mode))
			return reply_err("record output must be a regular file or a pipe");
		if (a->out_fd >= 0)
			close(a->out_fd);
		a->out_fd = fds[0];
		fds[0] = -1;
		session__set_output(a->s, a->out_fd, false);
	}
	if (pid)
		session__add_pid(a->s, pid);
	e = session__start(a->s, err, sizeof(err));
	if (e)
		return reply_err("%s", err[0] ? err : strerror(-e));
	a->started = true;
	a->nr_sfds = session__fds(a->s, a->sfds, 4);
	anon_sfds(a, true);
	timer_update();
	if (a->pipe) {
		e = anon_pump(a);
		if (e && e != -EAGAIN) {
			a->failed = true;
			a->err = e;
			anon_finish(a);
			return reply_err("cannot write the output header: %s", strerror(-e));
		}
	}
	if (a->so.target == SESSION_TARGET_ALL)
		logmsg("uid %u (pid %d) records system-wide (anonymous session)",
		       (unsigned)c->cred.uid, (int)c->cred.pid);
	else
		logmsg("uid %u (pid %d) records pid %d%s (anonymous session)", (unsigned)c->cred.uid,
		       (int)c->cred.pid, pid ? pid : a->so.pids[0],
		       a->so.nr_pids + (pid ? 1 : 0) > 1 ? " and others" : "");
	o = anon_reply("record-start");
	anon_add_notices(a, o);
	return o;
}

static struct json_object *cmd_record_stats(struct client *c)
{
	struct anon *a = c->rec;
	struct json_object *o;

	if (!a)
		return reply_err("record-stats: no recording on this connection");
	if (a->s)
		session__stats(a->s, &a->st);
	o = anon_reply("record-stats");
	anon_stats_json(o, &a->st);
	return o;
}

static struct json_object *cmd_record_stop(struct client *c)
{
	struct anon *a = c->rec;
	int e;

	if (!a || !a->started)
		return reply_err("record-stop: no recording on this connection");
	if (a->failed)
		return anon_err("record-stop", a->err);
	if (a->stopped || a->stop_pending)
		return reply_err("record-stop: already stopped");
	e = anon_finish(a);
	if (!e && a->pipe) {
		e = anon_pump(a);
		if (e == -EAGAIN) {
			a->stop_pending = true;
			return NULL;   /* the reply comes when the stream is out */
		}
	}
	if (e) {
		a->failed = true;
		a->err = e;
		return anon_err("record-stop", e);
	}
	return anon_stop_reply(c, a);
}

/* The connection ends: a recording still going is finished (the file stays readable). */
static void anon_end(struct client *c, const char *why)
{
	struct anon *a = c->rec;

	c->rec = NULL;
	if (a->started && !a->stopped) {
		anon_finish(a);
		if (a->pipe && !a->failed)
			anon_pump(a);   /* what fits without waiting */
		logmsg("anonymous recording of uid %u (pid %d) ended: %s", (unsigned)c->cred.uid,
		       (int)c->cred.pid, why);
	}
	anon_free(a);
	timer_update();
}

static void handle_request(struct client *c, struct json_object *msg, int *fds, size_t nfds)
{
	struct proto_request rq;
	struct json_object *o = NULL;
	struct dsess *d = NULL;
	char err[256];
	int e;

	if (!c->allowed) {
		send_reply(c, reply_err("permission denied: uid %u is neither root nor in group '%s'",
					(unsigned)c->cred.uid, GROUP_NAME));
		c->closing = true;
		return;
	}
	if (c->reader || c->pump_dst >= 0) {
		send_reply(c, reply_err("this connection is busy streaming"));
		return;
	}
	if (proto_request_parse(msg, &rq, err, sizeof(err))) {
		send_reply(c, reply_err("%s", err));
		return;
	}
	if (rq.cmd != PROTO_CMD_CREATE && !proto_cmd_anonymous(rq.cmd)) {
		d = find_session(rq.name);
		if (!d || !may_see(c, d)) {
			send_reply(c, reply_err("no such session '%s'", rq.name));
			return;
		}
	}
	switch (rq.cmd) {
	case PROTO_CMD_PING:
		o = reply_ok();
		/* what this daemon does beyond named sessions (clients check before asking) */
		json_object_object_add(o, "record", json_object_new_boolean(1));
		break;
	case PROTO_CMD_CREATE:
		o = cmd_create(c, &rq, fds, nfds);
		break;
	case PROTO_CMD_LIST: {
		struct json_object *a = json_object_new_array();

		for (d = D.sessions; d; d = d->next)
			if (may_see(c, d))
				json_object_array_add(a, session_info(d, false));
		o = reply_ok();
		json_object_object_add(o, "sessions", a);
		break;
	}
	case PROTO_CMD_SHOW:
		o = reply_ok();
		json_object_object_add(o, "session", session_info(d, true));
		break;
	case PROTO_CMD_SNAPSHOT:
		o = cmd_snapshot(c, d, fds, nfds);
		break;
	case PROTO_CMD_ATTACH:
		o = cmd_attach(c, d, fds, nfds);
		break;
	case PROTO_CMD_STOP:
		if (!d->s) {
			o = reply_err("session '%s' is not running", d->def.name);
			break;
		}
		session_end(d, false);
		d->def.stopped = true;
		save_def(d);
		o = reply_ok();
		break;
	case PROTO_CMD_START:
		if (d->s) {
			o = reply_err("session '%s' is already running", d->def.name);
			break;
		}
		e = session_start(d, false, err, sizeof(err));
		if (e) {
			o = reply_err("cannot start session '%s': %s", d->def.name, err[0] ? err : strerror(-e));
			break;
		}
		save_def(d);
		o = reply_ok();
		break;
	case PROTO_CMD_RECORD:
		o = cmd_record(c, &rq, msg);
		break;
	case PROTO_CMD_RECORD_START:
		o = cmd_record_start(c, msg, fds, nfds);
		break;
	case PROTO_CMD_RECORD_STATS:
		o = cmd_record_stats(c);
		break;
	case PROTO_CMD_RECORD_STOP:
		o = cmd_record_stop(c);
		break;
	case PROTO_CMD_DELETE:
		session_end(d, false);
		detach_readers(d);
		session__unpin(d->pin);
		store__remove(D.store, d->def.name);
		logmsg("session '%s' deleted", d->def.name);
		dsess_unlink(d);
		dsess_free(d);
		o = reply_ok();
		break;
	}
	if (o)
		send_reply(c, o);
}

static void client_input(struct client *c)
{
	int e = proto_conn__read(c->c);

	if (e == 0 || (e < 0 && e != -EAGAIN)) {
		client_close(c);   /* gone (perhaps mid-message): nothing else is affected */
		return;
	}
	for (;;) {
		struct json_object *msg = NULL;
		int fds[PROTO_MAX_FDS];
		size_t nfds = 0, i;
		char err[256];

		e = proto_conn__next(c->c, &msg, fds, &nfds, err, sizeof(err));
		if (e == 0)
			break;
		if (e < 0) {
			send_reply(c, reply_err("%s", err));
			if (e == -EMSGSIZE)
				c->closing = true;
		} else {
			handle_request(c, msg, fds, nfds);
		}
		json_object_put(msg);
		for (i = 0; i < nfds; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (c->closing)
			break;
	}
	if (c->closing && !proto_conn__pending(c->c))
		client_close(c);
}

static void accept_client(void)
{
	socklen_t len;
	struct client *c;
	struct group *gr;
	int fd;

	fd = accept4(D.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (D.nr_clients >= MAX_CLIENTS) {
		struct json_object *o = reply_err("too many connections (limit %d)", MAX_CLIENTS);
		char *frame;
		size_t flen;

		if (!proto_encode(o, &frame, &flen)) {
			(void)!send(fd, frame, flen, MSG_DONTWAIT | MSG_NOSIGNAL);
			free(frame);
		}
		json_object_put(o);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || proto_conn__new(&c->c, fd)) {
		free(c);
		close(fd);
		return;
	}
	c->pump_src = c->pump_dst = -1;
	c->w.kind = W_CLIENT;
	c->w.ptr = c;
	c->wr.kind = W_READER;
	c->wr.ptr = c;
	c->wp.kind = W_PUMP;
	c->wp.ptr = c;
	len = sizeof(c->cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len)) {
		proto_conn__free(c->c);
		free(c);
		return;
	}
	c->root = c->cred.uid == 0;
	gr = getgrnam(GROUP_NAME);
	c->allowed = c->root || (gr && in_group(c->cred.pid, c->cred.gid, gr->gr_gid));
	c->next = D.clients;
	D.clients = c;
	D.nr_clients++;
	ep_add(fd, EPOLLIN | EPOLLRDHUP, &c->w);
}

static void on_client_event(struct client *c, uint32_t ev)
{
	if (ev & EPOLLOUT) {
		int e = proto_conn__flush(c->c);

		if (e && e != -EAGAIN) {
			client_close(c);
			return;
		}
		if (c->closing && !proto_conn__pending(c->c)) {
			client_close(c);
			return;
		}
		client_poll(c);
	}
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))
		client_input(c);
}

static void on_reader_event(struct client *c, uint32_t ev)
{
	int e;

	if (ev & (EPOLLERR | EPOLLHUP)) {
		client_close(c);   /* the reading end is gone */
		return;
	}
	e = reader__flush(c->reader);
	if (e && e != -EAGAIN)
		client_close(c);
	else
		reader_poll(c);
}

static void on_pump_event(struct client *c, uint32_t ev)
{
	off_t len = c->pump_len;
	struct json_object *o;
	int e;

	e = (ev & (EPOLLERR | EPOLLHUP)) ? -EPIPE : pump_step(c);
	if (e == -EAGAIN)
		return;
	pump_end(c);
	if (e) {
		send_reply(c, reply_err("snapshot stream: %s", strerror(-e)));
	} else {
		o = reply_ok();
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)len));
		send_reply(c, o);
	}
	if (c->closing && !proto_conn__pending(c->c))
		client_close(c);
}

/* --- start-up -------------------------------------------------------------- */

static void bad_def(void *ctx, const char *file, const char *reason)
{
	logmsg("ignoring %s/sessions/%s: %s", D.state_dir, file, reason);
}

static int restore_def(void *ctx, const struct sessdef *def)
{
	struct dsess *d;
	char err[256] = "";
	int e;

	if (D.nr_sessions >= MAX_SESSIONS) {
		logmsg("too many stored sessions, ignoring '%s'", def->name);
		return 0;
	}
	d = dsess_new(def);
	if (!d)
		return -ENOMEM;
	dsess_link(d);
	if (def->stopped || def->error) {
		session__unpin(d->pin);
		return 0;
	}
	e = session_start(d, true, err, sizeof(err));
	if (e) {
		d->def.error = true;
		snprintf(d->def.message, sizeof(d->def.message), "cannot restart: %s",
			 err[0] ? err : strerror(-e));
		logmsg("session '%s': %s", d->def.name, d->def.message);
	}
	save_def(d);
	return 0;
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

		if (de->d_name[0] == '.' || !proto_name_valid(de->d_name) || find_session(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", D.pin_root, de->d_name);
		logmsg("removing pins of unknown session '%s'", de->d_name);
		session__unpin(path);
	}
	closedir(dir);
}

static void ensure_bpffs(void)
{
	struct statfs sf;

	if (strncmp(D.pin_root, "/sys/fs/bpf", 11))
		return;
	if (!statfs("/sys/fs/bpf", &sf) && sf.f_type == BPF_FS_MAGIC)
		return;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
		logmsg("cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
}

static int mkdir_parent(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	p = strrchr(buf, '/');
	if (!p || p == buf)
		return 0;
	*p = '\0';
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int listen_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct group *gr;
	struct stat sb;
	int fd, e;

	if (strlen(D.socket_path) >= sizeof(sa.sun_path)) {
		logmsg("socket path too long: %s", D.socket_path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, D.socket_path, strlen(D.socket_path));
	mkdir_parent(D.socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (!lstat(D.socket_path, &sb)) {
		int t = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (S_ISSOCK(sb.st_mode) && t >= 0 && connect(t, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(t);
			close(fd);
			logmsg("another perfmarkd is already listening on %s", D.socket_path);
			return -EADDRINUSE;
		}
		if (t >= 0)
			close(t);
		if (S_ISSOCK(sb.st_mode))
			unlink(D.socket_path);
	}
	{
		mode_t old = umask(0117);

		e = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		umask(old);
	}
	if (e || listen(fd, 64)) {
		e = -errno;
		logmsg("cannot listen on %s: %s", D.socket_path, strerror(-e));
		close(fd);
		return e;
	}
	gr = getgrnam(GROUP_NAME);
	if (gr && chown(D.socket_path, 0, gr->gr_gid))
		logmsg("cannot give %s to group %s: %s", D.socket_path, GROUP_NAME, strerror(errno));
	chmod(D.socket_path, 0660);
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: perfmarkd [--foreground] [--socket PATH] [--state-dir DIR] [--pin-dir DIR]\n");
}

static void on_timer(void)
{
	uint64_t ticks, now;
	struct dsess *d, *n;
	struct client *c, *cn;

	(void)!read(D.tfd, &ticks, sizeof(ticks));
	for (d = D.sessions; d; d = n) {
		n = d->next;
		session_drain(d);
	}
	for (c = D.clients; c; c = cn) {
		cn = c->next;
		if (c->rec)
			anon_drain(c);
	}
	if (D.watchdog_usec) {
		now = mono_ns();
		if (now - D.last_ping >= D.watchdog_usec * 1000 / 2 - 1000000) {
			sd_notify_msg("WATCHDOG=1");
			D.last_ping = now;
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "pin-dir", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	bool foreground = false;
	int ready_pipe[2] = { -1, -1 };
	sigset_t mask;
	int c, e;

	D.socket_path = "/run/perfmark/perfmarkd.sock";
	D.state_dir = "/var/lib/perfmark";
	D.pin_root = "/sys/fs/bpf/perfmark";
	while ((c = getopt_long(argc, argv, "fs:S:P:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'f': foreground = true; break;
		case 's': D.socket_path = optarg; break;
		case 'S': D.state_dir = optarg; break;
		case 'P': D.pin_root = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("perfmarkd %s\n", PERFMARK_VERSION); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 1;
	}
	if (geteuid() != 0) {
		logmsg("must run as root (it loads BPF programs)");
		return 1;
	}
	setenv("PERFMARK_QUIET", "1", 0);
	if (!foreground && !getenv("NOTIFY_SOCKET")) {
		pid_t pid;
		char b;

		if (pipe2(ready_pipe, O_CLOEXEC))
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid > 0) {
			close(ready_pipe[1]);
			return read(ready_pipe[0], &b, 1) == 1 ? 0 : 1;
		}
		close(ready_pipe[0]);
		setsid();
	}
	watchdog_setup();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	D.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	D.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	D.ep = epoll_create1(EPOLL_CLOEXEC);
	if (D.sfd < 0 || D.tfd < 0 || D.ep < 0) {
		logmsg("cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	e = store__open(&D.store, D.state_dir);
	if (e) {
		logmsg("cannot open state directory %s: %s", D.state_dir, strerror(-e));
		return 1;
	}
	D.lfd = activated_fd();
	D.activated = D.lfd >= 0;
	if (D.lfd < 0)
		D.lfd = listen_socket();
	if (D.lfd < 0)
		return 1;
	D.wl.kind = W_LISTEN;
	D.ws.kind = W_SIGNAL;
	D.wt.kind = W_TIMER;
	ep_add(D.lfd, EPOLLIN, &D.wl);
	ep_add(D.sfd, EPOLLIN, &D.ws);
	ep_add(D.tfd, EPOLLIN, &D.wt);

	ensure_bpffs();
	store__load(D.store, restore_def, bad_def, NULL);
	sweep_pins();
	timer_update();
	logmsg("listening on %s (%zu session%s)", D.activated ? "the socket-activated fd 3" : D.socket_path,
	       D.nr_sessions,
	       D.nr_sessions == 1 ? "" : "s");
	sd_notify_msg("READY=1\nSTATUS=serving");
	D.last_ping = mono_ns();
	if (ready_pipe[1] >= 0) {
		(void)!write(ready_pipe[1], "r", 1);
		close(ready_pipe[1]);
		if (!freopen("/dev/null", "r", stdin))
			return 1;
	}

	while (!D.exiting) {
		struct epoll_event evs[32];
		int n = epoll_wait(D.ep, evs, 32, -1), i;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			logmsg("epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n && !D.exiting; i++) {
			struct watch *w = evs[i].data.ptr;
			uint32_t ev = evs[i].events;

			switch (w->kind) {
			case W_LISTEN:
				accept_client();
				break;
			case W_SIGNAL: {
				struct signalfd_siginfo si;

				while (read(D.sfd, &si, sizeof(si)) == sizeof(si))
					if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
						D.exiting = true;
				break;
			}
			case W_TIMER:
				on_timer();
				break;
			case W_SESSION:
				if (((struct dsess *)w->ptr)->s)
					session_drain(w->ptr);
				break;
			case W_CLIENT:
				if (!((struct client *)w->ptr)->dead)
					on_client_event(w->ptr, ev);
				break;
			case W_READER:
				if (!((struct client *)w->ptr)->dead && ((struct client *)w->ptr)->reader)
					on_reader_event(w->ptr, ev);
				break;
			case W_PUMP:
				if (!((struct client *)w->ptr)->dead && ((struct client *)w->ptr)->pump_dst >= 0)
					on_pump_event(w->ptr, ev);
				break;
			case W_ANON:
				if (!((struct client *)w->ptr)->dead && ((struct client *)w->ptr)->rec)
					anon_drain(w->ptr);
				break;
			case W_ANON_OUT:
				if (!((struct client *)w->ptr)->dead && ((struct client *)w->ptr)->rec)
					on_anon_out(w->ptr, ev);
				break;
			}
		}
		reap();
	}
	sd_notify_msg("STOPPING=1");
	logmsg("exiting; running sessions stay pinned and keep collecting");
	while (D.clients)
		client_close(D.clients);
	while (D.sessions) {
		struct dsess *d = D.sessions;

		session_end(d, true);
		dsess_unlink(d);
		dsess_free(d);
	}
	reap();
	store__free(D.store);
	if (!D.activated)
		unlink(D.socket_path);
	close(D.lfd);
	close(D.ep);
	close(D.tfd);
	close(D.sfd);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Anonymous recordings: `perfmark record` through the daemon (proto.h
 * describes the requests).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdout.h"
#include "perfmarkd.h"
#include "proto.h"

/*
 * An anonymous session: `perfmark record` through the daemon.  It belongs
 * to its connection (never stored, pinned or listed) and writes perf.data
 * into the client's fd with the session's own writer, as in-process.  A
 * pipe is not written directly (a stalled reader would stall the daemon):
 * the writer appends to a memfd that is pumped out without blocking; while
 * more than ANON_BACKLOG bytes wait, the session is not drained (its BPF
 * ring fills and drops, counted as lost, as a blocked in-process writer).
 */
#define ANON_NOTICES 4

struct anon {
	struct run run;
	struct session_opts so;
	char **argv;
	int argc;
	int out_fd;                   /* file mode: the client's file */
	bool pipe;
	int mfd;                      /* pipe mode: the writer's memfd */
	int dst;                      /* pipe mode: the client's pipe (fdout.h) */
	bool dst_nowait;
	uint64_t pumped, punched;
	bool dst_polled, dst_wait, started, stopped, stop_pending, failed;
	char kept[PROTO_NAME_MAX + 1];  /* kept as this named session (keep.c) */
	int err;                      /* the output's negative errno */
	struct watch wo;              /* the pipe */
	struct client *c;             /* NULL once ended */
	struct client_hook hook;      /* c goes: the recording ends (anon_end) */
	struct defer dead;
	char notices[ANON_NOTICES][256];
	size_t nr_notices;
};


static void anon_notice(void *ctx, const char *msg)
{
	struct anon *a = ctx;

	if (a->nr_notices < ANON_NOTICES)
		snprintf(a->notices[a->nr_notices++], sizeof(a->notices[0]), "%s", msg);
}

static void anon_release(struct defer *p)
{
	free(container_of(p, struct anon, dead));
}

/* Close everything now; the memory goes after the batch (events may point at it). */
static void anon_free(struct anon *a)
{
	if (!a)
		return;
	a->c = NULL;
	run__abort(&a->run);
	if (a->out_fd >= 0)
		close(a->out_fd);
	if (a->mfd >= 0)
		close(a->mfd);
	if (a->dst >= 0) {
		if (a->dst_polled)
			watch__del(a->dst);
		close(a->dst);
	}
	proto_argv_free(a->argv);
	loop__defer(&a->dead, anon_release);
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
	{
		off_t off = (off_t)a->pumped;

		e = fdout_copy(a->dst, a->dst_nowait, a->mfd, &off, end);
		a->pumped = (uint64_t)off;
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
		watch__mod(&a->wo, a->dst, wait ? EPOLLOUT : 0);
	a->dst_wait = wait;
	/* a slow reader holds the drains back, as a blocking write does in-process */
	backlog = (uint64_t)end - a->pumped;
	if (!a->run.held && backlog > ANON_BACKLOG)
		run__hold(&a->run, true);
	else if (a->run.held && backlog <= ANON_BACKLOG / 2)
		run__hold(&a->run, false);
	return e;
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
	a->stopped = true;
	return run__end(&a->run, false);
}

/* the reply to record-stop, or the news that the recording was kept (its file ends) */
static struct json_object *anon_stop_reply(const struct client *c, struct anon *a)
{
	struct json_object *o;

	if (a->kept[0]) {
		o = reply_ok();
		json_object_object_add(o, "event", json_object_new_string("kept"));
		json_object_object_add(o, "name", json_object_new_string(a->kept));
		if (a->err) {   /* the session goes on; the file ended with this */
			json_object_object_add(o, "errno", json_object_new_int(-a->err));
			json_object_object_add(o, "error", json_object_new_string(strerror(-a->err)));
		}
	} else {
		o = anon_reply("record-stop");
		logmsg("anonymous recording of uid %u (pid %d) done: %llu samples, %llu markers",
		       (unsigned)c->cred.uid, (int)c->cred.pid, (unsigned long long)a->run.st.samples,
		       (unsigned long long)a->run.st.markers);
	}
	stats_json(o, &a->run.st);
	return o;
}

static void anon_fail(struct client *c, int e)
{
	struct anon *a = c->rec;

	if (a->failed)
		return;
	a->failed = true;
	a->err = e;
	if (a->kept[0]) {     /* the rest of a kept recording's stream: the session goes on */
		a->stop_pending = false;
		send_reply(c, anon_stop_reply(c, a));
		return;
	}
	anon_finish(a);
	logmsg("anonymous recording of uid %u (pid %d): output failed: %s; recording stopped",
	       (unsigned)c->cred.uid, (int)c->cred.pid, strerror(-e));
	send_reply(c, anon_err(a->stop_pending ? "record-stop" : NULL, e));
	a->stop_pending = false;
}

/* after each drain of its run: a pipe is fed */
static void on_drained(struct run *r, int e)
{
	struct anon *a = container_of(r, struct anon, run);

	if (!a->c)
		return;
	if (!e && a->pipe)
		e = anon_pump(a);
	if (e && e != -EAGAIN)
		anon_fail(a->c, e);
}

/* the client's pipe has room */
static void on_anon_out(struct watch *w, uint32_t ev)
{
	struct anon *a = container_of(w, struct anon, wo);
	struct client *c = a->c;
	int e;

	if (!c || a->failed || a->dst < 0)
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

/* The connection ends: a recording still going is finished (the file stays readable). */
static void anon_end(struct client *c, const char *why)
{
	struct anon *a = c->rec;

	c->rec = NULL;
	c->rec_bytes = 0;
	if (a->started && !a->stopped) {
		anon_finish(a);
		if (a->pipe && !a->failed)
			anon_pump(a);   /* what fits without waiting */
		logmsg("anonymous recording of uid %u (pid %d) ended: %s", (unsigned)c->cred.uid,
		       (int)c->cred.pid, why);
	}
	anon_free(a);
}

static void on_client_close(struct client_hook *h, struct client *c)
{
	anon_end(c, "the client went away");
}

/* The client's output, as it passed it (fdout.h): never reopened, its flags untouched */
static int anon_open_dst(int fd, bool *nowait)
{
	int e = fdout_check(fd, nowait), d;

	if (e)
		return e;
	d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return d < 0 ? -errno : d;
}

struct json_object *cmd_record(struct client *c, const struct proto_request *rq,
			       struct json_object *msg)
{
	struct json_object *o;
	char err[256] = "";
	struct anon *a;
	size_t i;
	int e;

	if (c->rec)
		return reply_err("this connection is already recording");
	a = calloc(1, sizeof(*a));
	if (!a)
		return reply_err("out of memory");
	a->out_fd = a->mfd = a->dst = -1;
	run__init(&a->run, on_drained);
	a->wo.fn = on_anon_out;
	if (recspec_from_json(rq->def, &a->so.spec, err, sizeof(err))) {
		anon_free(a);
		return reply_err("%s", err);
	}
	for (i = 0; i < a->so.spec.nr_pids; i++)
		if (pid_check(c, a->so.spec.pids[i], err, sizeof(err))) {
			anon_free(a);
			return reply_err("%s", err);
		}
	if (limits__record(c, &a->so.spec, err, sizeof(err))) {
		anon_free(a);
		return reply_err("%s", err);
	}
	if (proto_record_argv(msg, &a->argv, &a->argc)) {
		anon_free(a);
		return reply_err("out of memory");
	}
	a->so.argc = a->argc;
	a->so.argv = a->argv;
	/* as a named session of this user: never other users' processes */
	a->so.uid_filter = c->root ? (uint32_t)-1 : c->cred.uid;
	a->so.out_fd = -1;
	a->so.pinnable = true;   /* `session keep` may pin it; kept (--linger) for the next one */
	a->so.notice = anon_notice;
	a->so.notice_ctx = a;
	e = session__new(&a->run.s, &a->so, err, sizeof(err));
	if (e) {
		anon_free(a);
		return reply_err("%s", err[0] ? err : strerror(-e));
	}
	a->c = c;
	c->rec = a;
	c->rec_bytes = a->so.spec.ringbuf_size + ANON_BACKLOG;   /* its BPF ring and pipe backlog */
	client_hook_add(c, &a->hook, on_client_close);
	o = anon_reply("record");
	anon_add_notices(a, o);
	return o;
}

struct json_object *cmd_record_start(struct client *c, struct json_object *msg,
				     int *fds, size_t nfds)
{
	struct anon *a = c->rec;
	struct json_object *o;
	char err[256] = "";
	struct stat sb;
	int e, pid = 0;

	if (!a)
		return reply_err("record-start: no recording on this connection");
	if (a->started)
		return reply_err("record-start: already recording");
	if (nfds < 1 || fstat(fds[0], &sb))
		return reply_err("record-start needs the output passed as an open descriptor");
	if (proto_record_start_opts(msg, &a->pipe, &pid, err, sizeof(err)))
		return reply_err("%s", err);
	if (pid) {
		if (a->so.spec.target != RECSPEC_TARGET_PIDS)
			return reply_err("record-start: bad pid");
		if (pid_check(c, pid, err, sizeof(err)))
			return reply_err("%s", err);
	}
	if (a->pipe) {
		if (a->mfd < 0)
			a->mfd = memfd_create("perfmark-record", MFD_CLOEXEC);
		if (a->mfd < 0)
			return reply_err("memfd: %s", strerror(errno));
		if (a->dst < 0) {
			e = anon_open_dst(fds[0], &a->dst_nowait);
			if (e < 0)
				return reply_err("%s", e == -EBADF ?
						 "record output: not open for writing: permission denied" :
						 "record output must be a regular file or a pipe");
			a->dst = e;
			a->dst_polled = watch__add(&a->wo, a->dst, 0) == 0;
		}
		session__set_output(a->run.s, a->mfd, true);
	} else {
		bool nowait;

		e = fdout_check(fds[0], &nowait);
		if (e == -EBADF)
			return reply_err("record output: not open for writing: permission denied");
		if (e || nowait)
			return reply_err("record output must be a regular file or a pipe");
		if (a->out_fd >= 0)
			close(a->out_fd);
		a->out_fd = fds[0];
		fds[0] = -1;
		session__set_output(a->run.s, a->out_fd, false);
	}
	if (pid) {
		session__add_pid(a->run.s, pid);
		/*
		 * CMD's executable, opened by the client (it may read it): a
		 * libperfmark linked into it statically gets its probes now,
		 * before the exec, not when the exec's mapping is seen.
		 */
		if (nfds >= 2 && fds[1] >= 0)
			session__watch_fd(a->run.s, fds[1], "the command's executable");
	}
	e = run__start(&a->run, err, sizeof(err));
	if (e)
		return reply_err("%s", err[0] ? err : strerror(-e));
	a->started = true;
	if (a->pipe) {
		e = anon_pump(a);
		if (e && e != -EAGAIN) {
			a->failed = true;
			a->err = e;
			anon_finish(a);
			return reply_err("cannot write the output header: %s", strerror(-e));
		}
	}
	if (a->so.spec.target == RECSPEC_TARGET_ALL)
		logmsg("uid %u (pid %d) records system-wide (anonymous session)",
		       (unsigned)c->cred.uid, (int)c->cred.pid);
	else
		logmsg("uid %u (pid %d) records pid %d%s (anonymous session)", (unsigned)c->cred.uid,
		       (int)c->cred.pid, pid ? pid : a->so.spec.pids[0],
		       a->so.spec.nr_pids + (pid ? 1 : 0) > 1 ? " and others" : "");
	o = anon_reply("record-start");
	anon_add_notices(a, o);
	return o;
}

struct json_object *cmd_record_stats(struct client *c)
{
	struct anon *a = c->rec;
	struct json_object *o;

	if (!a)
		return reply_err("record-stats: no recording on this connection");
	if (a->run.s)
		session__stats(a->run.s, &a->run.st);
	o = anon_reply("record-stats");
	stats_json(o, &a->run.st);
	return o;
}

struct json_object *cmd_record_stop(struct client *c)
{
	struct anon *a = c->rec;
	int e;

	if (!a || !a->started)
		return reply_err("record-stop: no recording on this connection");
	if (a->failed)
		return anon_err("record-stop", a->err);
	if (a->kept[0] && !a->stop_pending) {   /* kept meanwhile: the file ended then */
		struct json_object *o = anon_stop_reply(c, a);

		json_object_object_add(o, "re", json_object_new_string("record-stop"));
		return o;
	}
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

/* --- kept as a named session (keep.c) ------------------------------------------- */

struct run *anon__keepable(struct client *rc, char *err, size_t errlen)
{
	struct anon *a = rc->rec;

	if (!a || !a->started || !a->run.s) {
		snprintf(err, errlen, "it is not recording");
		return NULL;
	}
	if (a->failed || a->stopped || a->stop_pending || a->kept[0]) {
		snprintf(err, errlen, "its recording is %s", a->failed ? "failed" :
			 a->kept[0] ? "kept already" : "stopping");
		return NULL;
	}
	return &a->run;
}

void anon__kept(struct client *rc, const char *name, const struct session_stats *final, int old_err)
{
	struct anon *a = rc->rec;
	int e = old_err;

	snprintf(a->kept, sizeof(a->kept), "%s", name);
	a->stopped = true;
	a->run.st = *final;
	/* the ring memory is the session's now; a pipe's backlog is still ours */
	rc->rec_bytes = a->pipe ? ANON_BACKLOG : 0;
	if (!e && a->pipe) {
		e = anon_pump(a);
		if (e == -EAGAIN) {
			a->stop_pending = true;   /* the news goes once the stream is out */
			return;
		}
	}
	if (e) {
		a->failed = true;
		a->err = e;
	}
	send_reply(rc, anon_stop_reply(rc, a));
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What flows out of a named session to a client's fd: a live reader
 * (`session attach`: the sink's header, then every round as it is drained)
 * and a snapshot (`session snapshot`: the ring's contents, written directly
 * into a regular file or pumped from a memfd into a pipe without blocking).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdout.h"
#include "perfmarkd.h"
#include "proto.h"
#include "sinks.h"

static void reader_poll(struct client *c)
{
	uint32_t ev = reader__pending(c->reader) ? EPOLLOUT : 0;

	if (!c->reader_polled)
		return;
	watch__mod(&c->wr, reader__fd(c->reader), ev);
}

static void pump_end(struct client *c)
{
	if (c->pump_dst >= 0) {
		watch__del(c->pump_dst);
		close(c->pump_dst);
	}
	if (c->pump_src >= 0)
		close(c->pump_src);
	c->pump_src = c->pump_dst = -1;
}

static unsigned nr_live;   /* attached readers: while there is one, rounds go out at the fast tick */

unsigned streams__nr_live(void)
{
	return nr_live;
}

/* The reader or pump of c goes (its fd closed); the connection stays. */
static void streams_detach(struct client *c)
{
	if (c->reader) {
		nr_live--;
		if (c->reader_polled)
			watch__del(reader__fd(c->reader));
		sink__detach(c->att->sink, c->reader);
		c->reader = NULL;
		c->att = NULL;
	}
	pump_end(c);
}

/*
 * An attach ends: the client hears why (an error for a failed output, so
 * `session attach` exits 1 instead of 0 with a cut file), then the
 * connection closes once that reply is out.
 */
static void attach_end(struct client *c, struct json_object *why)
{
	streams_detach(c);
	client_end(c, why);
}

static void attach_failed(struct client *c, int e)
{
	attach_end(c, e == -EPIPE ? reply_err("attach output closed by its reader (broken pipe)") :
		   reply_err("attach output: %s", strerror(-e)));
}

void streams__flush_readers(struct dsess *d)
{
	struct reader *rs[MAX_ALL_CLIENTS];
	size_t n, i;

	if (!d->sink)
		return;
	n = sink__readers(d->sink, rs, MAX_ALL_CLIENTS);
	for (i = 0; i < n && i < MAX_ALL_CLIENTS; i++) {
		struct client *c = reader__ctx(rs[i]);
		int e = reader__flush(rs[i]);

		if (e && e != -EAGAIN)
			attach_failed(c, e);
		else
			reader_poll(c);
	}
}

/* The session ended: its readers' connections end with it. */
void streams__detach_session(struct dsess *d)
{
	struct client *c, *n;

	for (c = D.clients; c; c = n) {
		struct json_object *o;

		n = c->next;
		if (c->att != d)
			continue;
		o = reply_ok();
		json_object_object_add(o, "end", json_object_new_boolean(1));   /* the session ended */
		attach_end(c, o);
	}
}

static int pump_step(struct client *c)
{
	return fdout_copy(c->pump_dst, c->pump_nowait, c->pump_src, &c->pump_off, c->pump_len);
}

static struct json_object *reply_bytes(off_t bytes)
{
	struct json_object *o = reply_ok();

	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)bytes));
	return o;
}

/* The client's output fd, checked as fdout.h says; NULL or the refusal */
static struct json_object *check_out(const char *what, int *fds, size_t nfds, bool *nowait)
{
	int e;

	if (nfds < 1)
		return reply_err("%s needs the output passed as an open descriptor", what);
	e = fdout_check(fds[0], nowait);
	if (e == -EBADF)
		return reply_err("%s output: not open for writing: permission denied", what);
	if (e)
		return reply_err("%s output must be a regular file or a pipe", what);
	return NULL;
}

/* the sink's records, then the counters' (counts.c) when the sink has their attrs */
static int snapshot(struct dsess *d, int fd, bool pipe)
{
	char tail[COUNTS_RECORDS_MAX];
	size_t n = d->count_attrs ? counts__records(d, tail, sizeof(tail)) : 0;

	return sink__snapshot_tail(d->sink, fd, pipe, UINT64_MAX, tail, n);
}

/*
 * A snapshot: the session's flush in steps (run.c), then a ring's records
 * written by a job (jobs.c) into the client's regular file, or into a
 * memfd pumped to its pipe, while the session goes on (what its ring
 * evicts meanwhile is kept for the job: pring_view.c); the reply when all
 * is out.  The connection may
 * go meanwhile (sp->c NULL then); the session stays busy (not deleted, not
 * restarted) until it is done.
 */
struct snap {
	struct run_flush flush;
	struct job job;
	struct client_hook hook;      /* on the connection while it waits */
	struct client *c;             /* NULL once the connection went */
	struct dsess *d;
	struct sink_snap *sn;
	int out, mfd;
	bool pipe;
	int err;
	uint64_t evicted;
};

static void snap_free(struct snap *sp)
{
	struct dsess *d = sp->d;

	sink_snap__free(sp->sn);
	if (sp->out >= 0)
		close(sp->out);
	if (sp->mfd >= 0)
		close(sp->mfd);
	if (sp->c)
		client_reply_later_drop(sp->c, &sp->hook);
	free(sp);
	d->busy--;
	sessions__unbusy(d);
}

/* the reply, unless the connection went; then the snapshot is done */
static void snap_reply(struct snap *sp, struct json_object *o)
{
	struct client *c = sp->c;

	sp->c = NULL;
	if (c)
		client_reply_later_done(c, &sp->hook, o);
	else
		json_object_put(o);
	snap_free(sp);
}

/* the connection went first: the snapshot ends unheard */
static void snap_orphan(struct client_hook *h, struct client *c)
{
	container_of(h, struct snap, hook)->c = NULL;
}

static void snap_work(struct job *j)
{
	struct snap *sp = container_of(j, struct snap, job);

	sessions__test_hold(sp->d->def.name);
	sp->err = sink_snap__write(sp->sn, sp->pipe ? sp->mfd : sp->out, sp->pipe);
	sp->evicted = sink_snap__evicted(sp->sn);
}

/* a pipe: stream the memfd out without blocking (the reply when it is out) */
static struct json_object *pump_start(struct client *c, int mfd, int out)
{
	struct stat sb;
	int e;

	fstat(mfd, &sb);
	c->pump_src = mfd;
	c->pump_dst = out;
	c->pump_off = 0;
	c->pump_len = sb.st_size;
	e = pump_step(c);
	if (e == -EAGAIN) {
		watch__add(&c->wp, c->pump_dst, EPOLLOUT);
		return NULL;
	}
	pump_end(c);
	if (e)
		return reply_err("snapshot stream: %s", strerror(-e));
	return reply_bytes(sb.st_size);
}

static void snap_done(struct job *j)
{
	struct snap *sp = container_of(j, struct snap, job);
	struct json_object *o;
	struct stat sb;

	if (sp->evicted)
		logmsg("session '%s': %llu records evicted while a snapshot was written could not be "
		       "kept for it (no memory): they are not in it", sp->d->def.name,
		       (unsigned long long)sp->evicted);
	if (sp->err) {
		snap_reply(sp, reply_err("snapshot of '%s' failed: %s", sp->d->def.name,
					 strerror(-sp->err)));
		return;
	}
	if (!sp->c) {
		snap_free(sp);
		return;
	}
	if (!sp->pipe) {
		fstat(sp->out, &sb);
		snap_reply(sp, reply_bytes(sb.st_size));
		return;
	}
	/* the pump's now, and it replies when the stream is out */
	o = pump_start(sp->c, sp->mfd, sp->out);
	sp->mfd = sp->out = -1;
	if (o) {
		snap_reply(sp, o);
		return;
	}
	client_reply_later_drop(sp->c, &sp->hook);
	sp->c = NULL;
	snap_free(sp);
}

/* the session flushed up to the request: write what it holds */
static void snap_flushed(struct run_flush *f, int err)
{
	struct snap *sp = container_of(f, struct snap, flush);
	struct dsess *d = sp->d;
	char tail[COUNTS_RECORDS_MAX];
	size_t tail_len;
	int e;

	if (!sp->c) {                 /* the connection went meanwhile */
		snap_free(sp);
		return;
	}
	if (!d->sink) {
		snap_reply(sp, reply_err("session '%s' holds nothing to snapshot", d->def.name));
		return;
	}
	if (!sp->pipe && ftruncate(sp->out, 0) && errno != EINVAL) {
		snap_reply(sp, reply_err("cannot truncate the output: %s", strerror(errno)));
		return;
	}
	if (sp->pipe) {
		sp->mfd = memfd_create("perfmark-snapshot", MFD_CLOEXEC);
		if (sp->mfd < 0) {
			snap_reply(sp, reply_err("memfd: %s", strerror(errno)));
			return;
		}
	}
	/* the counters' records (counts.c) after the ring's, read now */
	tail_len = d->count_attrs ? counts__records(d, tail, sizeof(tail)) : 0;
	e = sink__snapshot_begin(d->sink, UINT64_MAX, tail, tail_len, &sp->sn);
	if (e == -EOPNOTSUPP) {       /* rotating files: the current one, here */
		sp->err = snapshot(d, sp->pipe ? sp->mfd : sp->out, sp->pipe);
		snap_done(&sp->job);
		return;
	}
	if (e) {
		snap_reply(sp, reply_err("snapshot of '%s' failed: %s", d->def.name, strerror(-e)));
		return;
	}
	job__start(&sp->job, snap_work, snap_done);
}

struct json_object *cmd_snapshot(struct client *c, struct dsess *d, int *fds, size_t nfds)
{
	struct json_object *refused = check_out("snapshot", fds, nfds, &c->pump_nowait);
	struct snap *sp;
	struct stat sb;

	if (refused)
		return refused;
	if (fstat(fds[0], &sb))
		return reply_err("snapshot output: %s", strerror(errno));
	if (!d->sink)
		return reply_err("session '%s' holds nothing to snapshot", d->def.name);
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return reply_err("out of memory");
	sp->c = c;
	sp->d = d;
	sp->out = fds[0];
	fds[0] = -1;
	sp->mfd = -1;
	sp->pipe = !S_ISREG(sb.st_mode);
	client_reply_later(c, &sp->hook, snap_orphan);
	d->busy++;
	if (d->run.s)   /* everything up to this request */
		run__flush_steps(&d->run, &sp->flush, session__clock(), snap_flushed);
	else
		snap_flushed(&sp->flush, 0);
	return NULL;   /* the reply comes when the snapshot is out */
}

struct json_object *cmd_attach(struct client *c, struct dsess *d, int *fds, size_t nfds)
{
	struct json_object *refused;
	bool nowait;
	uint64_t now;
	int e;

	if (c->reader)
		return reply_err("this connection is already attached");
	refused = check_out("attach", fds, nfds, &nowait);
	if (refused)
		return refused;
	if (!d->run.s || !d->sink)
		return reply_err("session '%s' is %s", d->def.name, dsess_state(d));
	/* the stream starts with everything up to this request */
	now = session__clock();
	run__flush(&d->run, now);
	if (!d->run.s || !d->sink)
		return reply_err("session '%s' is %s", d->def.name, dsess_state(d));
	e = sink__attach(d->sink, fds[0], c, now, &c->reader);
	if (e)
		return reply_err("cannot attach: %s", strerror(-e));
	fds[0] = -1;
	c->att = d;
	nr_live++;
	runs__hurry();
	c->reader_polled = watch__add(&c->wr, reader__fd(c->reader), 0) == 0;
	e = reader__flush(c->reader);
	if (e && e != -EAGAIN) {
		sink__detach(d->sink, c->reader);
		c->reader = NULL;
		c->att = NULL;
		nr_live--;
		return reply_err("cannot write to the output: %s", strerror(-e));
	}
	if (!c->reader_polled) {   /* a regular file: writes never wait */
		while (reader__pending(c->reader) && reader__flush(c->reader) == -EAGAIN)
			;
	}
	reader_poll(c);
	return reply_ok();
}

static void on_reader_event(struct watch *w, uint32_t ev)
{
	struct client *c = container_of(w, struct client, wr);
	int e;

	if (c->dead || !c->reader)
		return;
	if (ev & (EPOLLERR | EPOLLHUP)) {
		attach_failed(c, -EPIPE);   /* the reading end is gone */
		return;
	}
	e = reader__flush(c->reader);
	if (e && e != -EAGAIN)
		attach_failed(c, e);
	else
		reader_poll(c);
}

static void on_pump_event(struct watch *w, uint32_t ev)
{
	struct client *c = container_of(w, struct client, wp);
	off_t len = c->pump_len;
	int e;

	if (c->dead || c->pump_dst < 0)
		return;
	e = (ev & (EPOLLERR | EPOLLHUP)) ? -EPIPE : pump_step(c);
	if (e == -EAGAIN)
		return;
	pump_end(c);
	if (e)
		send_reply(c, reply_err("snapshot stream: %s", strerror(-e)));
	else
		send_reply(c, reply_bytes(len));
	if (c->closing && !proto_conn__pending(c->c))
		client_close(c);
}

/*
 * A taker's last words: everything the session read up to now goes to its
 * reader, all of it into a regular file (writes never wait there), what
 * fits into a pipe.  Straight through the engine: no drain callbacks while
 * the connection is being closed.
 */
static void reader_final(struct client *c)
{
	struct dsess *d = c->att;

	if (d->run.s && !d->run.held)
		session__flush(d->run.s, session__clock());
	while (reader__pending(c->reader) && reader__flush(c->reader) == -EAGAIN && !c->reader_polled)
		;
}

/* the connection goes: so do its reader and its pump */
static void on_client_close(struct client_hook *h, struct client *c)
{
	if (c->reader && c->reader_final)
		reader_final(c);
	streams_detach(c);
}

struct json_object *streams__take(struct client *c, struct dsess *d, int *fds, size_t nfds)
{
	struct json_object *o = cmd_attach(c, d, fds, nfds);

	c->reader_final = c->reader != NULL;
	return o;
}

void streams__init(struct client *c)
{
	c->pump_src = c->pump_dst = -1;
	c->wr.fn = on_reader_event;
	c->wp.fn = on_pump_event;
	client_hook_add(c, &c->streams_hook, on_client_close);
}

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

/* The reader or pump of c goes (its fd closed); the connection stays. */
static void streams_detach(struct client *c)
{
	if (c->reader) {
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

struct json_object *cmd_snapshot(struct client *c, struct dsess *d, int *fds, size_t nfds)
{
	struct json_object *refused = check_out("snapshot", fds, nfds, &c->pump_nowait);
	struct stat sb;
	int e, mfd;

	if (refused)
		return refused;
	if (fstat(fds[0], &sb))
		return reply_err("snapshot output: %s", strerror(errno));
	if (!d->sink)
		return reply_err("session '%s' holds nothing to snapshot", d->def.name);
	if (d->run.s)
		run__flush(&d->run, session__clock());   /* everything up to this request */
	if (!d->sink)
		return reply_err("session '%s' holds nothing to snapshot", d->def.name);
	if (S_ISREG(sb.st_mode)) {
		if (ftruncate(fds[0], 0) && errno != EINVAL)
			return reply_err("cannot truncate the output: %s", strerror(errno));
		e = snapshot(d, fds[0], false);
		if (e)
			return reply_err("snapshot of '%s' failed: %s", d->def.name, strerror(-e));
		fstat(fds[0], &sb);
		return reply_bytes(sb.st_size);
	}
	mfd = memfd_create("perfmark-snapshot", MFD_CLOEXEC);
	if (mfd < 0)
		return reply_err("memfd: %s", strerror(errno));
	e = snapshot(d, mfd, true);
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
	e = pump_step(c);
	if (e == -EAGAIN) {
		watch__add(&c->wp, c->pump_dst, EPOLLOUT);
		return NULL;   /* the reply comes when the stream is out */
	}
	pump_end(c);
	if (e)
		return reply_err("snapshot stream: %s", strerror(-e));
	return reply_bytes(sb.st_size);
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
	c->reader_polled = watch__add(&c->wr, reader__fd(c->reader), 0) == 0;
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

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Connections on the control socket: accepted when the peer is root or in
 * group "perfmark" (SO_PEERCRED) and within the limits of limits.c, read
 * as framed requests (proto.h) and dispatched to one handler per command
 * (sessions.c, streams.c, anon.c).  A connection's life and end: conn.c.
 */
#include <errno.h>
#include <grp.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmarkd.h"
#include "proto.h"

/* --- requests --------------------------------------------------------------- */

/* what a handler gets: the request, checked (proto_request_parse) */
struct request {
	struct client *c;
	const struct proto_request *rq;
	struct dsess *d;             /* PROTO_NAMED, not PROTO_NEW: the session, visible to c */
	struct json_object *msg;
	int *fds;                    /* those that came with it */
	size_t nfds;
};

/* one handler per row of PROTO_COMMANDS (proto.h), handle_<fn> */
static struct json_object *handle_ping(const struct request *x)
{
	struct json_object *o = reply_ok();

	/* what this daemon does beyond named sessions (clients check before asking) */
	json_object_object_add(o, "record", json_object_new_boolean(1));
	return o;
}

static struct json_object *handle_create(const struct request *x)
{
	return cmd_create(x->c, x->rq, x->fds, x->nfds);
}

static struct json_object *handle_list(const struct request *x) { return cmd_list(x->c); }
static struct json_object *handle_show(const struct request *x) { return cmd_show(x->d); }
static struct json_object *handle_stop(const struct request *x) { return cmd_stop(x->d); }
static struct json_object *handle_start(const struct request *x) { return cmd_start(x->c, x->d); }
static struct json_object *handle_delete(const struct request *x) { return cmd_delete(x->d); }

static struct json_object *handle_snapshot(const struct request *x)
{
	return cmd_snapshot(x->c, x->d, x->fds, x->nfds);
}

static struct json_object *handle_attach(const struct request *x)
{
	return cmd_attach(x->c, x->d, x->fds, x->nfds);
}

static struct json_object *handle_record(const struct request *x)
{
	return cmd_record(x->c, x->rq, x->msg);
}

static struct json_object *handle_record_start(const struct request *x)
{
	return cmd_record_start(x->c, x->msg, x->fds, x->nfds);
}

static struct json_object *handle_record_stats(const struct request *x)
{
	return cmd_record_stats(x->c);
}

static struct json_object *handle_record_stop(const struct request *x)
{
	return cmd_record_stop(x->c);
}

static struct json_object *handle_keep(const struct request *x)
{
	return cmd_keep(x->c, x->rq, x->msg, x->fds, x->nfds);
}

static struct json_object *handle_take(const struct request *x)
{
	return cmd_take(x->c, x->d, x->fds, x->nfds);
}

/* indexed by id: NULL from a handler means the reply comes when a stream is out */
static struct json_object *(*const handlers[PROTO_NR_CMDS])(const struct request *) = {
#define HANDLER(id, fn, name, flags, keys) [PROTO_CMD_##id] = handle_##fn,
	PROTO_COMMANDS(HANDLER)
#undef HANDLER
};


/* --- requests that wait for a busy session ------------------------------------ */

_Static_assert(PROTO_MAX_FDS <= sizeof(((struct client *)0)->parked_fds) / sizeof(int),
	       "parked fds");

static void unpark_clear(struct client *c)
{
	size_t i;

	for (i = 0; i < c->parked_nfds; i++)
		if (c->parked_fds[i] >= 0)
			close(c->parked_fds[i]);
	json_object_put(c->parked);
	c->parked = NULL;
	c->parked_on = NULL;
	c->parked_nfds = 0;
}

/* the request and its fds, kept until the session is free (the fds are ours now) */
static void park(struct client *c, struct dsess *d, struct json_object *msg, int *fds, size_t nfds)
{
	size_t i;

	c->parked = json_object_get(msg);
	c->parked_on = d;
	for (i = 0; i < nfds; i++) {
		c->parked_fds[i] = fds[i];
		fds[i] = -1;
	}
	c->parked_nfds = nfds;
}

static void on_park_close(struct client_hook *h, struct client *c)
{
	unpark_clear(c);
}

static void handle_request(struct client *c, struct json_object *msg, int *fds, size_t nfds);

/*
 * In the order they came (the oldest connection first); a request may park
 * again (a delete behind a snapshot it let start).  Connections are freed
 * only after the batch, so the pointers taken first stay valid.
 */
void clients__unpark(struct dsess *d)
{
	struct client *all[MAX_ALL_CLIENTS], *c;
	size_t n = 0, k;

	for (c = D.clients; c && n < sizeof(all) / sizeof(all[0]); c = c->next)
		if (c->parked_on == d)
			all[n++] = c;
	for (k = n; k-- > 0;) {        /* D.clients is newest first */
		struct json_object *msg;
		int fds[PROTO_MAX_FDS];
		size_t nfds, i;

		c = all[k];
		if (c->dead || c->parked_on != d)
			continue;
		msg = c->parked;
		nfds = c->parked_nfds;
		memcpy(fds, c->parked_fds, nfds * sizeof(int));
		c->parked = NULL;
		c->parked_on = NULL;
		c->parked_nfds = 0;
		handle_request(c, msg, fds, nfds);
		json_object_put(msg);
		for (i = 0; i < nfds; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (c->closing && !c->dead && !proto_conn__pending(c->c))
			client_close(c);
	}
}

static void handle_request(struct client *c, struct json_object *msg, int *fds, size_t nfds)
{
	struct proto_request rq;
	struct request x = { .c = c, .rq = &rq, .msg = msg, .fds = fds, .nfds = nfds };
	struct json_object *o;
	unsigned flags;
	char err[256];

	client_touch(c);
	if (c->reader || c->pump_dst >= 0 || c->waiting || c->parked) {
		send_reply(c, reply_err("this connection is busy streaming"));
		return;
	}
	if (proto_request_parse(msg, &rq, err, sizeof(err))) {
		send_reply(c, reply_err("%s", err));
		return;
	}
	flags = proto_cmd_info(rq.cmd)->flags;
	if ((flags & PROTO_NAMED) && !(flags & PROTO_NEW)) {
		x.d = sessions__find(rq.name);
		if (!x.d || !may_see(c, x.d)) {
			send_reply(c, reply_err("no such session '%s'", rq.name));
			return;
		}
		if (sessions__busy_for(x.d, rq.cmd)) {
			park(c, x.d, msg, fds, nfds);
			return;
		}
	}
	o = handlers[rq.cmd](&x);
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

static void on_client_event(struct watch *w, uint32_t ev)
{
	struct client *c = container_of(w, struct client, w);

	if (c->dead)
		return;
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

/* --- accepting -------------------------------------------------------------- */

/* one reply, sent without waiting, and the connection is closed */
static void refuse(int fd, struct json_object *o)
{
	char *frame;
	size_t flen;

	if (!proto_encode(o, &frame, &flen)) {
		(void)!send(fd, frame, flen, MSG_DONTWAIT | MSG_NOSIGNAL);
		free(frame);
	}
	json_object_put(o);
	close(fd);
}

static void on_listen(struct watch *w, uint32_t ev)
{
	struct client probe = { 0 }, *c;
	const char *why;
	socklen_t len = sizeof(probe.cred);
	struct group *gr;
	char buf[160];
	int fd;

	fd = accept4(D.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &probe.cred, &len)) {
		close(fd);
		return;
	}
	/* who, before anything is held for them: outsiders never take a slot */
	probe.root = probe.cred.uid == 0;
	gr = getgrnam(GROUP_NAME);
	if (!probe.root && !(gr && in_group(probe.cred.pid, probe.cred.gid, gr->gr_gid))) {
		refuse(fd, reply_err("permission denied: uid %u is neither root nor in group '%s'",
				     (unsigned)probe.cred.uid, GROUP_NAME));
		return;
	}
	why = limits__connection(&probe, buf, sizeof(buf));
	if (why) {
		refuse(fd, reply_err("%s", why));
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || proto_conn__new(&c->c, fd)) {
		free(c);
		close(fd);
		return;
	}
	c->w.fn = on_client_event;
	streams__init(c);
	client_hook_add(c, &c->park_hook, on_park_close);
	c->cred = probe.cred;
	c->root = probe.root;
	c->allowed = true;
	client_touch(c);
	c->next = D.clients;
	D.clients = c;
	D.nr_clients++;
	watch__add(&c->w, fd, EPOLLIN | EPOLLRDHUP);
	clients__idle_arm();
}

struct watch clients__listen_watch = { .fn = on_listen };

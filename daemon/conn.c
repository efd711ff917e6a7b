// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A connection's life: its replies, what it owns, its end.
 *
 * What a connection owns (a live reader or a snapshot pump: streams.c; a
 * recording: anon.c) hangs a close hook on it, and the hook says what to do
 * when the connection goes.  So the owners call into this file, never the
 * other way: the request handlers sit above them (clients.c).
 *
 * A connection that streams nothing, records nothing and sends no request
 * for --idle-timeout is told so and closed (issue 8 case 5, limits.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "perfmarkd.h"
#include "proto.h"

unsigned idle_timeout_s = IDLE_TIMEOUT_S;

void client_hook_add(struct client *c, struct client_hook *h,
		     void (*fn)(struct client_hook *h, struct client *c))
{
	struct client_hook **pp = &c->hooks;

	while (*pp)
		pp = &(*pp)->next;
	h->fn = fn;
	h->next = NULL;
	*pp = h;
}

void client_hook_del(struct client *c, struct client_hook *h)
{
	struct client_hook **pp;

	for (pp = &c->hooks; *pp; pp = &(*pp)->next)
		if (*pp == h) {
			*pp = h->next;
			h->next = NULL;
			return;
		}
}

void client_reply_later(struct client *c, struct client_hook *h,
			void (*fn)(struct client_hook *h, struct client *c))
{
	client_hook_add(c, h, fn);
	c->waiting++;
}

void client_reply_later_drop(struct client *c, struct client_hook *h)
{
	client_hook_del(c, h);
	c->waiting--;
}

void client_reply_later_done(struct client *c, struct client_hook *h, struct json_object *o)
{
	client_reply_later_drop(c, h);
	send_reply(c, o);
	if (c->closing && !proto_conn__pending(c->c))
		client_close(c);
}

/*
 * Events already fetched may still point at a closed client: it is only
 * marked dead here and freed after the batch.
 */
static void client_release(struct defer *p)
{
	free(container_of(p, struct client, gone));
}

void client_close(struct client *c)
{
	struct client **pp;
	struct client_hook *h;

	if (c->dead)
		return;
	for (pp = &D.clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	while ((h = c->hooks)) {   /* in the order they were added */
		c->hooks = h->next;
		h->fn(h, c);
	}
	watch__del(proto_conn__fd(c->c));
	proto_conn__free(c->c);
	c->c = NULL;
	D.nr_clients--;
	c->dead = true;
	loop__defer(&c->gone, client_release);
	clients__idle_arm();
}

void clients__close_all(void)
{
	while (D.clients)
		client_close(D.clients);
}

void client_poll(struct client *c)
{
	watch__mod(&c->w, proto_conn__fd(c->c),
		   EPOLLIN | EPOLLRDHUP | (proto_conn__pending(c->c) ? EPOLLOUT : 0));
}

void send_reply(struct client *c, struct json_object *o)
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

void client_end(struct client *c, struct json_object *o)
{
	send_reply(c, o);
	c->closing = true;
	if (!proto_conn__pending(c->c))
		client_close(c);
}

/* --- idle connections -------------------------------------------------------- */

static int idle_fd = -1;

static uint64_t now_s(void)
{
	return clock_mono_ns() / 1000000000ull;
}

void client_touch(struct client *c)
{
	c->last_active = now_s();
}

static bool busy(const struct client *c)
{
	return c->reader || c->pump_dst >= 0 || c->rec || c->waiting || c->parked;
}

static void on_idle_tick(struct watch *w, uint32_t ev)
{
	uint64_t n, now = now_s();
	struct client *c, *next;

	(void)!read(idle_fd, &n, sizeof(n));
	for (c = D.clients; c; c = next) {
		next = c->next;
		if (busy(c) || c->closing || now - c->last_active < idle_timeout_s)
			continue;
		client_end(c, reply_err("idle for %u s: connection closed", idle_timeout_s));
	}
}

static struct watch idle_watch = { .fn = on_idle_tick };

/* The sweep runs only while there are connections: an idle daemon never wakes. */
void clients__idle_arm(void)
{
	struct itimerspec its = { 0 };
	unsigned period = idle_timeout_s > 2 ? idle_timeout_s / 2 : 1;

	if (idle_fd < 0) {
		idle_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (idle_fd < 0 || watch__add(&idle_watch, idle_fd, EPOLLIN)) {
			logmsg("no idle timeout: %s", strerror(errno));
			return;
		}
	}
	if (D.clients && idle_timeout_s) {
		its.it_value.tv_sec = period;
		its.it_interval.tv_sec = period;
	}
	timerfd_settime(idle_fd, 0, &its, NULL);
}

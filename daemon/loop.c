// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The daemon's one epoll loop.  Each polled fd is registered with the
 * struct watch of the object that owns it, and an event calls that watch's
 * handler: the loop knows no object type.  One timerfd ticks while
 * something records (and for the systemd watchdog); idle means no wakeups.
 * Long work goes in steps (loop__soon: one step a turn, the events ready
 * in between are served) or to a thread of its own (jobs.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "perfmarkd.h"

static struct {
	int ep, tfd;
	uint64_t tick_ns;
	bool exiting;
	struct defer *deferred;
	struct defer *soon;          /* steps for the next turn */
	uint64_t turn;
	uint64_t turn_max_ns;        /* the longest turn, logged as it grows past LONG_TURN_NS */
} L = { .ep = -1, .tfd = -1 };

int loop__init(struct watch *tick)
{
	L.ep = epoll_create1(EPOLL_CLOEXEC);
	L.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (L.ep < 0 || L.tfd < 0)
		return -errno;
	return watch__add(tick, L.tfd, EPOLLIN);
}

int watch__add(struct watch *w, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(L.ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void watch__mod(struct watch *w, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	epoll_ctl(L.ep, EPOLL_CTL_MOD, fd, &ev);
}

void watch__del(int fd)
{
	epoll_ctl(L.ep, EPOLL_CTL_DEL, fd, NULL);
}

void loop__defer(struct defer *d, void (*fn)(struct defer *d))
{
	d->fn = fn;
	d->next = L.deferred;
	L.deferred = d;
}

uint64_t loop__turn(void)
{
	return L.turn;
}

void loop__soon(struct defer *d, void (*fn)(struct defer *d))
{
	struct defer **pp = &L.soon;

	while (*pp)
		pp = &(*pp)->next;
	d->fn = fn;
	d->next = NULL;
	*pp = d;
}

bool loop__cancel(struct defer *d)
{
	struct defer **pp;

	for (pp = &L.soon; *pp; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			d->next = NULL;
			return true;
		}
	return false;
}

/* the steps queued before this turn (those they queue wait for the next) */
static void run_soon(void)
{
	struct defer *list = L.soon;

	L.soon = NULL;
	while (list) {
		struct defer *d = list;

		list = d->next;
		d->next = NULL;
		d->fn(d);
		if (L.exiting)
			break;
	}
	if (list) {                  /* exiting: put back what did not run */
		struct defer **pp = &list;

		while (*pp)
			pp = &(*pp)->next;
		*pp = L.soon;
		L.soon = list;
	}
}

static void run_deferred(void)
{
	while (L.deferred) {
		struct defer *d = L.deferred;

		L.deferred = d->next;
		d->fn(d);
	}
}

void loop__set_tick(uint64_t ns)
{
	struct itimerspec its = { 0 };

	if (ns == L.tick_ns)
		return;
	L.tick_ns = ns;
	its.it_value.tv_sec = ns / 1000000000ull;
	its.it_value.tv_nsec = ns % 1000000000ull;
	its.it_interval = its.it_value;
	timerfd_settime(L.tfd, 0, &its, NULL);
}

void loop__ack_tick(void)
{
	uint64_t ticks;

	(void)!read(L.tfd, &ticks, sizeof(ticks));
}

/*
 * A turn longer than this is logged (each time a longer one comes): the
 * watchdog and every client wait for it (issue 18 case 14).
 */
#define LONG_TURN_NS (500ull * 1000 * 1000)

static void turn_took(uint64_t t0)
{
	uint64_t dt = clock_mono_ns() - t0;

	if (dt <= L.turn_max_ns)
		return;
	L.turn_max_ns = dt;
	if (dt > LONG_TURN_NS)
		logmsg("a turn of the loop took %llu ms", (unsigned long long)(dt / 1000000));
}

uint64_t loop__turn_max_ns(void)
{
	return L.turn_max_ns;
}

int loop__run(void)
{
	/* tests only: each turn ends held while $PERFMARK_TEST_HOLD.loop exists (stall.c's test) */
	bool hold = getenv("PERFMARK_TEST_HOLD") != NULL;

	while (!L.exiting) {
		struct epoll_event evs[32];
		int n = epoll_wait(L.ep, evs, 32, L.soon ? 0 : -1), i;
		uint64_t t0 = clock_mono_ns();

		L.turn++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		stall__turn(L.turn, t0);
		for (i = 0; i < n && !L.exiting; i++) {
			struct watch *w = evs[i].data.ptr;

			w->fn(w, evs[i].events);
		}
		run_deferred();
		if (!L.exiting)
			run_soon();
		run_deferred();
		if (hold)
			sessions__test_hold("loop");
		turn_took(t0);
		stall__idle();
	}
	return 0;
}

void loop__exit(void)
{
	L.exiting = true;
}

/* After the owners closed their fds: what they deferred goes now. */
void loop__free(void)
{
	run_deferred();
	if (L.tfd >= 0)
		close(L.tfd);
	if (L.ep >= 0)
		close(L.ep);
	L.tfd = L.ep = -1;
}

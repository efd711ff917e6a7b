// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Running recordings: a session the daemon drives, for a named session
 * (sessions.c) or an anonymous one (anon.c) alike.  A run polls its
 * session's ring fds with its own watch, is drained when a ring fills and
 * on every tick, and tells its owner after each drain.  The tick runs while
 * any run does (and for the systemd watchdog): idle means no wakeups.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "perfmarkd.h"

#define MAX_RUNS (MAX_ALL_SESSIONS + MAX_ALL_CLIENTS)

static struct run *runs;   /* the running ones */

/*
 * The drain tick while runs go on: SESSION_DRAIN_MS, doubled after each
 * quiet tick, up to RUN_QUIET_TICK_MS; back at once when the runs get busy
 * (a ring's wakeup, a tick that read RUN_QUIET_RECORDS or more, a second's
 * worth of them at a tick slower than a second, a run starting or
 * ending), and stays there while a live reader is attached
 * (session attach, perfmark top: they show each round as it comes).
 * Quiet is a trickle, not nothing: an always-on session on an idle
 * machine reads a few records every tick (-a -F 10: 20 samples a second;
 * --off-cpu: a hundred intervals), and each wakeup of the daemon costs
 * ~100 us of a VM's CPU however little it reads: ten a second were 0.05 %
 * of the 2-CPU machine, the whole of issue 21's budget.
 * A burst while the tick is slow still wakes it: the sampler forces a
 * wakeup past the ring's fill threshold, and fast-lane offers wake it at
 * once.  Markers a fast-lane area holds wait one slow tick at most, and a
 * snapshot or stop drains up to its own moment first.
 * Four seconds, not one: at one a second, the wakeups were still 3 of the
 * 5 ms of CPU perfmarkd took in 30 s for an always-on -a --off-cpu=1ms
 * session, which with its programs' 23-25 ms sat at issue 21's 0.05 %
 * (bench-offcpu: 0.0475-0.0506 %).  What waits in the rings meanwhile is
 * kept there (pinned, or in the traced process's fast-lane area) through
 * a daemon restart, and a session's files are at most a tick behind.
 */
#define RUN_QUIET_TICK_MS 4000
#define RUN_QUIET_RECORDS 256
static uint64_t drain_ms = SESSION_DRAIN_MS;
static uint64_t activity_seen;

/*
 * The slowest the tick may go: RUN_QUIET_TICK_MS, or what a run's own
 * period asks, so that files rotated every second and intervals
 * aggregated every second stay a second long on a quiet machine.
 */
static uint64_t quiet_tick_ms(void)
{
	uint64_t ms = RUN_QUIET_TICK_MS;

	for (struct run *r = runs; r; r = r->next) {
		const struct recspec *sp = r->s ? session__spec(r->s) : NULL;

		if (r->rotate_secs && r->rotate_secs * 1000ull < ms)
			ms = r->rotate_secs * 1000ull;
		if (sp && sp->aggregate && sp->aggregate * 1000ull < ms)
			ms = sp->aggregate * 1000ull;
	}
	return ms;
}

/* what the runs read so far (changes when a run starts or ends too: then busy) */
static uint64_t runs_activity(void)
{
	uint64_t n = 0;

	for (struct run *r = runs; r; r = r->next)
		if (r->s)
			n += session__activity(r->s) + 1;
	return n;
}

void runs__hurry(void)
{
	if (drain_ms != SESSION_DRAIN_MS) {
		drain_ms = SESSION_DRAIN_MS;
		runs__update_tick();
	}
}

static void poll_fds(struct run *r, bool on)
{
	int i;

	if (r->polled == on)
		return;
	for (i = 0; i < r->nr_fds; i++) {
		if (on)
			watch__add(&r->w, r->fds[i], EPOLLIN);
		else
			watch__del(r->fds[i]);
	}
	r->polled = on;
}

/*
 * A ring filled up.  Each of the run's fds may say so in one batch of
 * events, and a drain takes a batch of up to FL_CONSUME_MAX: one drain a
 * turn of the loop, so the connections ready in the same turn wait for one
 * batch of each run at most.
 */
static void on_ring(struct watch *w, uint32_t events)
{
	struct run *r = container_of(w, struct run, w);

	if (r->s && r->turn != loop__turn())
		run__drain(r);
	runs__hurry();
}

void run__init(struct run *r, void (*drained)(struct run *r, int err))
{
	*r = (struct run){ .w.fn = on_ring, .drained = drained };
}

static void unlink_run(struct run *r)
{
	struct run **pp;

	for (pp = &runs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	r->next = NULL;
	runs__update_tick();
}

int run__start(struct run *r, char *err, size_t errlen)
{
	int e = session__start(r->s, err, errlen);

	if (e)
		return e;
	/* the loop drains every session: ahead of the traced (and of the table builders) */
	session__boost();
	r->nr_fds = session__fds(r->s, r->fds, 4);
	r->held = false;
	poll_fds(r, true);
	r->next = runs;
	runs = r;
	runs__hurry();   /* its start-up (every process synthesized) comes in at once */
	runs__update_tick();
	return 0;
}

void run__move(struct run *from, struct run *to)
{
	poll_fds(from, false);
	unlink_run(from);
	to->s = from->s;
	to->nr_fds = from->nr_fds;
	memcpy(to->fds, from->fds, sizeof(to->fds));
	to->st = from->st;
	to->held = false;
	from->s = NULL;
	from->nr_fds = 0;
	poll_fds(to, true);
	to->next = runs;
	runs = to;
	runs__update_tick();
}

void run__hold(struct run *r, bool hold)
{
	r->held = hold;
	poll_fds(r, !hold && r->s);
}

void run__flush(struct run *r, uint64_t until)
{
	int e = 0;

	r->turn = loop__turn();
	if (!r->held) {
		e = until ? session__flush(r->s, until) : session__drain(r->s);
		session__stats(r->s, &r->st);
	}
	r->drained(r, e);
}

void run__drain(struct run *r)
{
	run__flush(r, 0);
}

static void flush_unlink(struct run_flush *f)
{
	struct run_flush **pp;

	for (pp = &f->r->flushes; *pp; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	f->next = NULL;
}

/* one batch a turn; then what was read goes out up to until, and the owner hears */
static void flush_step(struct defer *d)
{
	struct run_flush *f = container_of(d, struct run_flush, step);
	struct run *r = f->r;
	int e = 0;

	if (r->s && !r->held && --f->left > 0 && session__consume(r->s)) {
		loop__soon(&f->step, flush_step);
		return;
	}
	flush_unlink(f);
	if (r->s && !r->held) {
		e = session__flush_read(r->s, f->until);
		session__stats(r->s, &r->st);
		r->drained(r, e);   /* may end the run: f is off its list already */
	}
	f->fn(f, e);
}

void run__flush_steps(struct run *r, struct run_flush *f, uint64_t until,
		      void (*fn)(struct run_flush *f, int err))
{
	f->r = r;
	f->until = until;
	f->left = COLLECTOR_ALL_BATCHES;
	f->fn = fn;
	f->next = r->flushes;
	r->flushes = f;
	loop__soon(&f->step, flush_step);
}

/* the run ends: its final drain (if any) took everything, the flushes waiting are done */
static void flushes_done(struct run *r)
{
	while (r->flushes) {
		struct run_flush *f = r->flushes;

		loop__cancel(&f->step);
		r->flushes = f->next;
		f->next = NULL;
		f->fn(f, 0);
	}
}

static void release(struct run *r)
{
	poll_fds(r, false);
	session__stats(r->s, &r->st);
	session__free(r->s);
	r->s = NULL;
	unlink_run(r);
	flushes_done(r);
}

int run__end(struct run *r, bool keep_pinned)
{
	int e;

	if (!r->s)
		return 0;
	poll_fds(r, false);
	/*
	 * A pinned collection goes on without us: take everything read so far
	 * (the reorder window too: a file gets it, the next daemon opens a new one)
	 */
	e = keep_pinned ? session__flush(r->s, UINT64_MAX) : session__stop(r->s);
	release(r);
	return e;
}

void run__abort(struct run *r)
{
	if (r->s)
		release(r);
}

/*
 * Every run, drained.  A drain may end others (a failed session closes its
 * readers' connections, and so their recordings): those are skipped.  Their
 * memory outlives the batch (loop__defer), so the pointers stay valid.
 */
void runs__drain_all(void)
{
	struct run *all[MAX_RUNS], *r;
	size_t n = 0, i;

	for (r = runs; r && n < MAX_RUNS; r = r->next)
		all[n++] = r;
	for (i = 0; i < n; i++)
		if (all[i]->s && all[i]->turn != loop__turn())
			run__drain(all[i]);
}

/*
 * every SESSION_DRAIN_MS while a run goes on (slower while none reads
 * anything: drain_ms), every IDLE_TICK_MS while an
 * idle collector is kept for the next recording (collector__set_linger),
 * and at half the watchdog's period
 */
#define IDLE_TICK_MS 1000
void runs__update_tick(void)
{
	uint64_t ns = 0, wd = sd_watchdog_usec() * 1000 / 2;

	if (runs)
		ns = drain_ms * 1000000ull;
	else if (collector__nr_idle())
		ns = IDLE_TICK_MS * 1000000ull;
	if (wd && (!ns || wd < ns))
		ns = wd;
	loop__set_tick(ns);
}

static void on_tick(struct watch *w, uint32_t ev)
{
	uint64_t seen, cap;
	bool busy;

	loop__ack_tick();
	runs__drain_all();
	seen = runs_activity();
	/* fewer: a run ended; a run starting adds one, as a record would */
	busy = seen < activity_seen || streams__nr_live() ||
	       seen - activity_seen >= RUN_QUIET_RECORDS * (drain_ms > 1000 ? drain_ms / 1000 : 1);
	activity_seen = seen;
	if (busy)
		runs__hurry();
	else if (drain_ms != (cap = quiet_tick_ms())) {
		drain_ms = drain_ms * 2 < cap ? drain_ms * 2 : cap;
		runs__update_tick();
	}
	if (!collector__idle_tick() && !runs)
		runs__update_tick();   /* the last one let go: no more ticks for it */
	sd_watchdog_tick();
}

struct watch runs__tick = { .fn = on_tick };

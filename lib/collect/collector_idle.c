// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Idle collectors kept for the next recording (perfmarkd): making one
 * loads and verifies the BPF programs, attaches the uprobes, opens the
 * events, and freeing it waits for RCU grace periods as each uprobe comes
 * off, which was most of the time of a short recording through the daemon
 * (`record -- true`).  A collector whose last session ended stays in the
 * registry, unreferenced, its events disabled and its filter empty (no
 * subscriber: every program returns at its filter), for the next request
 * with the same events, rate, call graph, markers and ring size
 * (collector__get), for at most the linger time.  What its buffers take in
 * meanwhile (another process's fast-lane registration, sideband) is read
 * on each tick and at reuse with no subscriber to hand it to, so the
 * markers' bookkeeping (files seen, areas, execs) stays current.  Pinned
 * and adopted collectors never linger; nor any while linger is 0 (the
 * default: a recording in-process ends with its process).
 */
#include <bpf/libbpf.h>

#include "clock.h"
#include "collector_int.h"

#define MAX_IDLE 4           /* idle collectors kept at once; the oldest go first */

static uint64_t linger_ns;

void collector__set_linger(uint64_t ns)
{
	linger_ns = ns;
}

/* no subscriber: read what waits, for the bookkeeping only */
static void idle_read(struct collector *c)
{
	for (int i = 0; i < COLLECTOR_ALL_BATCHES && collector__consume(c); i++)
		;
}

/* the last reference gone: false, free it now */
static bool idle_keep(struct collector *c)
{
	struct collector *o, *oldest;
	size_t n;

	if (!linger_ns || c->pinned || c->adopted || c->nr_subs)
		return false;
	c->idle_since = clock_mono_ns();
	c->idle = true;
	for (;;) {
		n = 0;
		oldest = NULL;
		for (o = collector_registry; o; o = o->next)
			if (o->idle) {
				n++;
				if (!oldest || o->idle_since < oldest->idle_since)
					oldest = o;
			}
		if (n <= MAX_IDLE || !oldest)
			return true;
		oldest->idle = false;
		collector_free(oldest);
	}
}

/* here, not in collector.c, so that calls go collector_idle.c -> collector.c only */
void collector__put(struct collector *c)
{
	if (c && --c->refs == 0 && !idle_keep(c))
		collector_free(c);
}

size_t collector__nr_idle(void)
{
	size_t n = 0;

	for (struct collector *c = collector_registry; c; c = c->next)
		n += c->idle;
	return n;
}

size_t collector__idle_tick(void)
{
	uint64_t now = clock_mono_ns();
	struct collector *c, *next;
	size_t n = 0;

	for (c = collector_registry; c; c = next) {
		next = c->next;
		if (!c->idle)
			continue;
		if (now - c->idle_since >= linger_ns) {
			c->idle = false;
			collector_free(c);
			continue;
		}
		idle_read(c);
		n++;
	}
	return n;
}

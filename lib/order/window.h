/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reorder window: records arrive roughly in time order (per CPU, per
 * buffer) and leave in time order, a round at a time.
 *
 *   window__alloc()  room for an encoded record and its time
 *   window__flush()  hand everything with time <= cutoff to out(), sorted
 *                     (equal times: in arrival order), as one round
 *
 * A record that arrives after a flush has passed its time (time < the
 * cutoff of an earlier flush) keeps its time: it is counted late and goes
 * out in time order with the next round.  perf 6.1 sorts what it reads and
 * at each FINISHED_ROUND delivers only what is older than the maximum time
 * of the round before, so such a record is still in order for perf unless
 * it is older than the maximum written two rounds back: those are counted
 * late_unordered (perf reports them as "out of order events" and delivers
 * them late).  A round is what perf sees as one: only flushes that wrote
 * something count (the writer emits no FINISHED_ROUND for an empty round).
 */
#ifndef PERFMARK_WINDOW_H
#define PERFMARK_WINDOW_H

#include <stddef.h>
#include <stdint.h>

struct window;

struct window_stats {
	uint64_t held;             /* records waiting */
	uint64_t late;             /* arrived after a flush had passed their time */
	uint64_t late_unordered;   /* ... and older than what perf has flushed */
};

typedef int (*window_out_fn)(void *ctx, uint64_t time, const void *rec, size_t len);

int window__new(struct window **out);
#define WINDOW_MAX_REC 65536u   /* a perf record's size is 16 bits */

/*
 * room for len (<= WINDOW_MAX_REC) bytes, 8-aligned; it stays where it is
 * until it goes out.  NULL: out of memory, or too long.
 */
void *window__alloc(struct window *o, uint32_t len, uint64_t time);
/*
 * out() for each record with time <= cutoff in time order; a non-zero
 * return stops and is returned (the records not handed over stay).
 * Returns 1 when something went out (a round), 0 when nothing did.
 */
int window__flush(struct window *o, uint64_t cutoff, window_out_fn out, void *ctx);
/* the highest cutoff flushed so far (0: none) */
uint64_t window__flushed(const struct window *o);
void window__stats(const struct window *o, struct window_stats *st);
void window__free(struct window *o);

#endif

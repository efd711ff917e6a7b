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
 *
 * RULE (issue 18 case 4): the window's memory has a cap (window__set_cap,
 * WINDOW_MAX_BYTES by default: its blocks and its index).  At the cap
 * window__alloc() refuses (window__full() says why) and the caller lets the
 * oldest half of what is held go out at once (window__overflow), before its
 * reorder delay: nothing is dropped, the records written early are counted
 * (overflow), and one that arrives later with an older time is late as
 * above.  Records whose times lie far ahead (a traced process's, before
 * they were clamped) once stayed until the recording ended.
 */
#ifndef PERFMARK_WINDOW_H
#define PERFMARK_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct window;

struct window_stats {
	uint64_t held;             /* records waiting */
	uint64_t late;             /* arrived after a flush had passed their time */
	uint64_t late_unordered;   /* ... and older than what perf has flushed */
	uint64_t overflow;         /* written before their reorder delay: the window was full */
	uint64_t bytes;            /* memory held (blocks and index) */
};

typedef int (*window_out_fn)(void *ctx, uint64_t time, const void *rec, size_t len);

int window__new(struct window **out);
#define WINDOW_MAX_REC 65536u   /* a perf record's size is 16 bits */
#define WINDOW_MAX_BYTES (256ull << 20)
#define WINDOW_MIN_BYTES (4ull << 20)
/* the memory the window may hold, at least WINDOW_MIN_BYTES */
void window__set_cap(struct window *o, uint64_t bytes);

/*
 * room for len (<= WINDOW_MAX_REC) bytes, 8-aligned; it stays where it is
 * until it goes out.  NULL: out of memory, too long, or the window is at
 * its cap (window__full).
 */
void *window__alloc(struct window *o, uint32_t len, uint64_t time);
/* the last window__alloc() was refused for the cap: window__overflow(), then again */
bool window__full(const struct window *o);
/*
 * The oldest half (in bytes) of what is held goes to out() now, as one
 * round, however young: counted as overflow.  Returns as window__flush.
 */
int window__overflow(struct window *o, window_out_fn out, void *ctx);
/*
 * out() for each record with time <= cutoff in time order; a non-zero
 * return stops and is returned (the records not handed over stay).
 * Returns 1 when something went out (a round), 0 when nothing did.
 */
int window__flush(struct window *o, uint64_t cutoff, window_out_fn out, void *ctx);
/*
 * out() for each record held, in no particular order, and they stay: a
 * session handed to a new sink journals what it still holds there.  A
 * non-zero return stops and is returned.
 */
int window__foreach(const struct window *o, window_out_fn out, void *ctx);
/* the highest cutoff flushed so far (0: none) */
uint64_t window__flushed(const struct window *o);
void window__stats(const struct window *o, struct window_stats *st);
void window__free(struct window *o);

#endif

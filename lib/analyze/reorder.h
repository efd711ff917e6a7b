/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Time order for the records of a perf.data stream, as perf itself restores
 * it: records are buffered, and at each FINISHED_ROUND everything up to the
 * latest time of the round before is sorted (by time, then file order) and
 * handed out.  Memory is about two rounds of records, reused.
 *
 * The time of a record comes from perfread__sample_id().
 */
#ifndef PERFMARK_REORDER_H
#define PERFMARK_REORDER_H

#include <linux/perf_event.h>
#include <stdint.h>

struct perfread;
struct reorder;

typedef int (*reorder_fn)(void *ctx, const struct perf_event_header *rec);

int reorder__new(struct reorder **out, const struct perfread *r, reorder_fn fn, void *ctx);
/* Take one record from perfread__next() (FINISHED_ROUND included).  0 or -errno
 * (from fn, or -ENOMEM). */
int reorder__add(struct reorder *ro, const struct perf_event_header *rec);
/* Hand out everything still buffered. */
int reorder__finish(struct reorder *ro);
void reorder__free(struct reorder *ro);

/* The time of a record (its sample time, or its sample_id trailer's), 0 if none. */
uint64_t reorder__time(const struct perfread *r, const struct perf_event_header *rec);

#endif

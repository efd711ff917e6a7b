/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Marker ranges as latency histograms, accumulated while a session drains
 * (perfmarkd's GET /metrics): nothing is read back from files per scrape.
 *
 * The session engine hands every range begin and end it encodes (encode.c,
 * in arrival order) to rangehist__marker().  Begins and ends pair per
 * thread as marker.h pairs them (an end closes the innermost open range of
 * its name on its thread), and each closed range counts in the histogram
 * of its (range name, comm) label set.  Arrival order is not quite each
 * thread's order (the fast lane and the BPF ring are two ways in): an end
 * that finds no begin waits for one, RANGEHIST_PENDING per thread.
 *
 * Buckets: log-linear, 8 per power of two of nanoseconds from 1024 ns to
 * 2^36 ns (~69 s); a bucket's upper bound is at most 12.5 % above its lower
 * one, so a quantile interpolated within one is that close.
 *
 * Bounds (the names come from any application): at most max_sets label
 * sets (a new one beyond: counted in .overflow, the range is not kept);
 * RANGEHIST_THREADS threads with open ranges and RANGEHIST_DEPTH open
 * ranges per thread (beyond: the begin is counted in .unpaired and
 * forgotten; so is a waiting end pushed out by a newer one; a full thread table starts afresh, its open ranges counted
 * there too); a name is kept up to RANGEHIST_NAME_MAX bytes.  The comm is
 * the process's, read once per pid from /proc/PID/comm (RANGEHIST_PIDS
 * remembered; "" when the process is gone).
 *
 * One thread: the one that drains the session (perfmarkd's loop).
 */
#ifndef PERFMARK_RANGEHIST_H
#define PERFMARK_RANGEHIST_H

#include <stddef.h>
#include <stdint.h>

#define RANGEHIST_SUB 8                  /* buckets per power of two */
#define RANGEHIST_MIN_SHIFT 10           /* the first bound: 2^10 ns */
#define RANGEHIST_MAX_SHIFT 36           /* the last: 2^36 ns */
/* bucket 0: <= 2^10 ns; then 8 per power of two; the last: above 2^36 ns (+Inf) */
#define RANGEHIST_BUCKETS ((RANGEHIST_MAX_SHIFT - RANGEHIST_MIN_SHIFT) * RANGEHIST_SUB + 2)
#define RANGEHIST_THREADS 4096
#define RANGEHIST_DEPTH 16
#define RANGEHIST_PENDING 4               /* ends waiting for their begins, per thread */
#define RANGEHIST_PIDS 4096
#define RANGEHIST_NAME_MAX 256
#define RANGEHIST_DEFAULT_SETS 1000

struct rangehist;

struct rangehist_set {
	const char *name;                 /* the range's name (NUL-terminated copy) */
	size_t name_len;
	const char *comm;
	uint64_t count, sum_ns;
	const uint64_t *buckets;          /* RANGEHIST_BUCKETS counts, not cumulative */
};

/* A counter marker's (perfmark_counter) last value, per (name, comm) */
struct rangehist_counter {
	const char *name;
	size_t name_len;
	const char *comm;
	int64_t value;
};

struct rangehist_totals {
	uint64_t ranges;                  /* closed ranges counted */
	uint64_t overflow;                /* closed ranges of label sets beyond the cap */
	uint64_t unpaired;                /* begins forgotten (depth, thread table) */
	uint64_t sets;                    /* label sets held */
};

/* max_sets: the cap on label sets (0: RANGEHIST_DEFAULT_SETS) */
int rangehist__new(struct rangehist **out, size_t max_sets);
void rangehist__free(struct rangehist *rs);

/*
 * A range begin (type 1) or end (type 2) of pid/tid at time, or a counter
 * (type 3: its last value kept, its label set counted against the same
 * cap); others are ignored.
 */
void rangehist__marker(struct rangehist *rs, uint32_t type, uint32_t pid, uint32_t tid,
			uint64_t time, const uint8_t *payload, size_t len);

/* Bucket i's upper bound in ns (UINT64_MAX for the last: +Inf). */
uint64_t rangehist__bound(size_t i);
/* The bucket of a duration. */
size_t rangehist__bucket(uint64_t ns);

size_t rangehist__nr_sets(const struct rangehist *rs);
/* Label set i (< rangehist__nr_sets) in *out. */
void rangehist__set(const struct rangehist *rs, size_t i, struct rangehist_set *out);
void rangehist__totals(const struct rangehist *rs, struct rangehist_totals *t);
size_t rangehist__nr_counters(const struct rangehist *rs);
void rangehist__counter(const struct rangehist *rs, size_t i, struct rangehist_counter *out);

#endif

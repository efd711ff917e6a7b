/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pring: a flight-recorder ring whose memory outlives the process that
 * writes it.
 *
 * The ring is one file, mapped shared: the pages belong to the file, not to
 * the process, so kill -9, a restart or a new binary find them as the last
 * writer left them.  It holds two things:
 *
 *   data      a circular log of records (samples, markers, LOST), the newest
 *             `data_size` bytes, in the order they were seen;
 *   sideband  COMM/MMAP/FORK/EXIT kept aside (they name the processes of the
 *             data whatever its age), an append-only log in one of two
 *             halves, compacted into the other half and switched over.
 *
 * Each record is a frame { size, magic, kind, time, pos } + the record.
 * `pos` is the frame's own position and is stored last: while a frame is
 * being written it holds ~pos.  Recovery walks the frames from the tail and
 * stops at the first one whose pos does not match: a torn frame (~pos: the
 * writer died inside it) is reported and dropped, stale bytes of an earlier
 * lap end the log.  Everything before is kept, and appending goes on there.
 * The tail is stored before any byte it frees is overwritten.
 *
 * Records are handed over with their time; readers get them back in time
 * order (pring__sorted), the kept sideband first at equal times.
 *
 * A meta blob (up to PRING_META_MAX bytes: what the records mean, e.g. the
 * perf.data event description) is stored in the header.  Its first
 * meta_key_len bytes say how records are encoded: a ring opened with
 * another key or other sizes is moved aside to NAME.old and started afresh;
 * the rest (e.g. a sampling rate) is replaced by the new meta.
 *
 * Single writer; all functions return 0 or a negative errno.
 */
#ifndef PERFMARK_PRING_H
#define PERFMARK_PRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRING_META_MAX 3072

struct pring;

struct pring_opts {
	/* the ring file is `name` in dir_fd; name NULL: anonymous memory (nothing survives) */
	int dir_fd;
	const char *name;
	uint64_t data_size;        /* bytes of data frames kept (rounded up to pages; 0: none) */
	uint64_t sb_size;          /* bytes of each sideband half (rounded up to pages) */
	const void *meta;          /* NULL with name set: open an existing ring as it is */
	size_t meta_len;
	size_t meta_key_len;       /* the part of meta that must match (0: all of it) */
};

struct pring_recovery {
	bool found;                /* an earlier ring was taken over */
	bool replaced;             /* an earlier ring of another shape or meta went to NAME.old */
	uint64_t frames, sb_frames;   /* frames recovered */
	uint64_t torn;             /* torn frames found and dropped (data and sideband) */
	uint64_t torn_pos;         /* where the (last) torn data frame began */
	uint64_t lost_bytes;       /* committed bytes that could not be walked (damage) */
};

struct pring_stats {
	uint64_t used, capacity;   /* data bytes held (frames included) / data_size */
	uint64_t frames;           /* data frames held */
	uint64_t evicted;          /* data frames pushed out by newer ones, ever */
	uint64_t sb_used, sb_capacity;
	uint64_t torn;             /* torn frames found at recoveries, ever */
};

typedef int (*pring_cb)(void *ctx, uint64_t time, const void *rec, size_t len);
typedef bool (*pring_keep_cb)(void *ctx, uint64_t time, const void *rec, size_t len);

/* rec may be NULL */
int pring__open(struct pring **out, const struct pring_opts *o, struct pring_recovery *rec);
/* len: a multiple of 8.  -E2BIG for a record larger than a quarter of the data. */
int pring__append(struct pring *r, uint64_t time, const void *rec, size_t len);
/* -ENOSPC when the active half is full: compact, then try again */
int pring__sb_append(struct pring *r, uint64_t time, const void *rec, size_t len);
/* rewrite the sideband keeping what keep() says into the other half, then switch */
int pring__sb_compact(struct pring *r, pring_keep_cb keep, void *ctx);
/* records in the order they were appended; a callback's non-zero return stops the walk */
int pring__foreach(const struct pring *r, bool sideband, pring_cb cb, void *ctx);
/* sideband and data with time <= until, in time order (sideband first at equal times) */
int pring__sorted(struct pring *r, uint64_t until, pring_cb cb, void *ctx);
/*
 * A view of what the ring holds now, to be read in another thread while
 * the writer goes on appending (a snapshot off the daemon's loop).  Taken
 * and freed in the writer's thread; the ring must outlive it.  The sideband
 * is copied (it is compacted in place); data frames are read where they
 * lie, and a frame the writer evicts while the view is open is kept for it
 * first (pring_view.c), so the view reads what the ring held when it was
 * taken.  pring__sorted is a view read at once.
 */
struct pring_view;
int pring__view(struct pring *r, struct pring_view **out);
/*
 * as pring__sorted, from any one thread.  *evicted (may be NULL): the
 * view's data frames it could not hand on (evicted when no memory was left
 * to keep them; with until below the newest time, those of a lap lost so
 * count here even if later than until)
 */
int pring_view__sorted(struct pring_view *v, uint64_t until, pring_cb cb, void *ctx,
		       uint64_t *evicted);
/* the same without the data frames older than since (the sideband all the same) */
int pring_view__sorted_span(struct pring_view *v, uint64_t since, uint64_t until, pring_cb cb,
			    void *ctx, uint64_t *evicted);
void pring_view__free(struct pring_view *v);
/*
 * The newest max_frames data frames of those recovered at open (an
 * earlier writer's last records), those still held, oldest first.  What a
 * writer killed at once after appending a record wrote last (sinks.h:
 * sink__journaled_before).
 */
int pring__recovered_last(const struct pring *r, uint64_t max_frames, pring_cb cb, void *ctx);
/* time of the oldest data frame held (UINT64_MAX: none) */
uint64_t pring__oldest(const struct pring *r);
const void *pring__meta(const struct pring *r, size_t *len);
/* publish the committed end in the header (a hint for readers of a dead ring) */
void pring__sync(struct pring *r);
void pring__stats(const struct pring *r, struct pring_stats *st);
void pring__free(struct pring *r);
/* remove the ring file (and NAME.old) */
int pring__unlink(int dir_fd, const char *name);

#endif

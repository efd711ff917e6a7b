/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fast lane, recorder side: the rings that traced processes write their
 * markers into (layout: lib/perfmark/fastlane_wire.h).  A collector owns one
 * fastlane.  A process offers its area through one probe hit (a
 * PM_REC_FASTREG record in the BPF ring); the fastlane maps the area, joins
 * it as one of its consumers, and from then on a pump thread copies what the
 * process's threads write into private memory, so that the rings never wait
 * for the session's drain.  fastlane__consume() hands every record on as an
 * ordinary PM_REC_MARKER record (bpf/perfmark_wire.h), in each thread's
 * order.
 *
 * Nothing in an area is trusted: it is the traced process's memory.  The
 * memfd is opened through /proc/PID/map_files with O_PATH first (a device
 * or FIFO is never opened), must be a sealed shmem file of the registered
 * size (it cannot shrink under our mapping: no SIGBUS), and every length,
 * offset and tag is checked on a private copy.
 */
#ifndef PERFMARK_FASTLANE_H
#define PERFMARK_FASTLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "perfmark_wire.h"

struct fastlane;

/* a PM_REC_MARKER record (struct pm_marker + payload), in the calling thread */
typedef void (*fastlane_deliver_fn)(void *ctx, const void *rec, size_t size);

struct fastlane_stats {
	uint64_t areas;          /* areas attached now */
	uint64_t markers;        /* records delivered */
	uint64_t overflow;       /* markers a full ring sent down the trap lane */
	uint64_t refused;        /* registrations refused (bad area, no consumer slot) */
	uint64_t corrupt;        /* rings given up because their contents made no sense */
	uint64_t evicted;        /* areas that let us go (we were silent too long) */
	uint64_t lost;           /* markers an earlier recorder took and died with, or
				    that changed under our copy (not delivered) */
	uint64_t clamped;        /* marker times outside what we saw, clamped into it */
};

/*
 * Keeping areas beyond this process: perfmarkd, under systemd, puts each
 * area's memfd in the service's fd store, so that markers a process left in
 * its rings are still there for the next daemon when this one is killed and
 * the process exits before the next one starts.  put(fd, name) stores fd
 * under name; put(-1, name) drops it again (the area was read to its end
 * and let go).  fds and names: what the store handed back at start-up.
 * Set once, before any fastlane is made; without it nothing is kept.
 */
struct fastlane_store {
	void (*put)(int fd, const char *name);
	/*
	 * The daemon's policy: may uid keep one more area in the store (true
	 * counts it), and one of uid's counted areas left it.  An area not
	 * admitted is read as any other, only not kept.
	 */
	bool (*admit)(uint32_t uid);
	void (*release)(uint32_t uid);
};
/* the three are called one at a time (under the keeper's lock), from any thread */
#define FASTLANE_KEPT_PREFIX "pmfl-"
void fastlane_keeper(const struct fastlane_store *store, const int *fds, char *const *names,
		     size_t n);
/*
 * After every session was adopted: the handed-back areas no fastlane took
 * (their session is gone) are dropped from the store and closed.
 * *taken: areas adopted, *exited: of those, whose process had exited.
 */
void fastlane_keeper_done(size_t *taken, size_t *exited, size_t *dropped);

/* token: the consumer token to use in areas (0: a new random one) */
int fastlane__new(struct fastlane **out, uint64_t token, fastlane_deliver_fn deliver, void *ctx);
uint64_t fastlane__token(const struct fastlane *fl);
/*
 * After a restart (adopted pins): every live area of pid where our token
 * still holds a consumer word is joined again, reading on from where the
 * earlier process stopped.
 */
void fastlane__rejoin(struct fastlane *fl, uint32_t pid);
/*
 * A daemon that adopts its pins takes its areas back in slices, so that
 * its loop goes on between them (issue 18 case 14: 256 kept areas and a
 * scan of every process's maps, in one call before READY=1, outlasted
 * systemd's start timeout on a loaded machine).  adopt_begin: from now on
 * each adopt_step takes up to budget of the areas the keeper handed back
 * with this fastlane's token, then scans up to budget processes for live
 * areas (those found first are skipped); false once all is done.  The
 * areas adopted are read at once; what they hold is older than anything
 * read since the restart: the caller holds its reorder window meanwhile.
 */
struct fastlane_adopt_stats {
	uint64_t kept;                /* areas the keeper handed back, taken */
	uint64_t rejoined;            /* live areas found in the scan */
	uint64_t procs;               /* processes scanned */
	uint64_t steps;
	uint64_t redo;                /* records still to read that may be handed on already */
};
void fastlane__adopt_begin(struct fastlane *fl);
bool fastlane__adopt_step(struct fastlane *fl, unsigned budget);
/* true while adopting; st (may be NULL): its progress */
bool fastlane__adopting(struct fastlane *fl, struct fastlane_adopt_stats *st);
/* detaches from every area (the processes go back to the trap lane) */
void fastlane__free(struct fastlane *fl);
/* a PM_REC_FASTREG record from the BPF ring */
void fastlane__register(struct fastlane *fl, const struct pm_fastreg *r, size_t size);
/* a session now records pid (0: every process): its areas are read from now on */
void fastlane__want(struct fastlane *fl, uint32_t pid);
/* pid exec'd at time: its areas registered before are read once more, then let go */
void fastlane__exec(struct fastlane *fl, uint32_t pid, uint64_t time);
/*
 * Readable when the fast lane holds enough to be worth a drain before the
 * next tick: a busy process's markers then go through in batches that stay
 * in the cache, not in one large one per tick.  consume() resets it.
 */
int fastlane__fd(const struct fastlane *fl);
/*
 * What was written so far, delivered in each ring's order, up to a batch
 * (FL_CONSUME_MAX): true when more waits (the fd is readable again).
 */
bool fastlane__consume(struct fastlane *fl);
void fastlane__stats(struct fastlane *fl, struct fastlane_stats *st);
/*
 * The owner of pid's area (still read, or let go with records not yet
 * delivered), as found when it registered and the process was verified
 * alive: the uid its markers are recorded under and its /proc group.
 */
bool fastlane__owner(struct fastlane *fl, uint32_t pid, uint32_t *uid, uint32_t *gid);

#endif

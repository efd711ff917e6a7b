/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the fast lane's recorder side (users have fastlane.h):
 *
 *   fastlane_keep.c   keeping areas beyond this process, adopting them again
 *                     (the daemon's store and its policy: struct fastlane_store)
 *   fastlane.c        attaching to areas, life cycle, consume
 *   fastlane_read.c   the pass over the rings (pump thread and consume) and
 *                     the delivery of what it copied
 */
#ifndef PERFMARK_FASTLANE_INT_H
#define PERFMARK_FASTLANE_INT_H

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "collector.h"
#include "fastlane.h"
#include "fastlane_wire.h"

#define FL_MAX_AREA       (4ull << 30)
#define FASTLANE_SITES    3                              /* register sites in libperfmark */
#define FL_SPILL_MAX      (256u << 20)                   /* copied, not yet delivered */
#define FL_SEG_SIZE       (4u << 20)                     /* the spill is a queue of these */
#define FL_SPILL_WAKE     FL_SEG_SIZE                    /* this much copied: wake the drain */
#define FL_PUBLISH_BATCH  64u     /* records handed on between publications (fastlane_read.c) */
#define FL_CONSUME_MAX    (2u << 20)                     /* per consume: the BPF ring is read between */
_Static_assert(FL_SPILL_MAX / FL_CONSUME_MAX < COLLECTOR_ALL_BATCHES, "all batches take the spill");
#define FL_SPARE_SEGS     16                             /* emptied segments kept for reuse */
#define FL_PUMP_IDLE_NS   (2ull * 1000 * 1000)
#define FL_PUMP_BUSY_NS   (100ull * 1000)
#define FL_GONE_PASSES    20                             /* drains after the process went */
#define FL_CONFIRM_NS     (1000ull * 1000 * 1000)        /* records unconfirmed this long */

/* one process's area, attached */
struct area {
	struct area *next;
	uint32_t pid, uid;            /* as the registration (BPF) saw them */
	/*
	 * Offered as the library loaded (PM_FL_REG_EARLY): joined, but not read
	 * until the offer its first marker makes says whose its markers are
	 * (confirmed).  Records waiting unconfirmed for FL_CONFIRM_NS (the
	 * confirmation lost: the BPF ring was full), or left by a process that
	 * has gone, are read as PM_UID_PRIVILEGED's (read_anyway).
	 */
	bool confirmed, read_anyway;
	uint64_t waiting_since;       /* unconfirmed with records since (0: none seen) */
	uint32_t local_pid;           /* the process's own getpid() */
	uint64_t nonce, reg_time;
	uint64_t reg_area;            /* its address in the process */
	/*
	 * The earliest time its records can honestly carry (the clamp's
	 * floor, fastlane_read.c): when we joined, or, reading on from an
	 * earlier holder's tails, when the area was made (its memfd's birth,
	 * which the process cannot move).
	 */
	uint64_t since, born;
	uint32_t gid;                 /* /proc/PID's group at attach, (uint32_t)-1: unknown */
	int pidfd;                    /* readable once the process has exited */
	void *map;
	struct pm_fl_hdr *hdr;        /* == map */
	uint64_t size;
	uint32_t hdr_size, nr_slots, slot_size, ring_size;   /* checked copies */
	int cons;                     /* our consumer word (= our register site), -1: none */
	bool reading;                 /* a session records it: read, else only joined */
	bool has_tails;               /* tails[] hold where we are */
	uint64_t *tails;              /* per slot: how far we have copied (the shared copy is theirs to scribble) */
	/*
	 * Per slot: the tail we published in the slot's word, and how many
	 * records we copied past it (fastlane_read.c, publish()).  With the
	 * fastlane's lock held.
	 */
	uint64_t *pub;
	uint64_t *unpub;
	/*
	 * Per slot: how many of the next records read may have been handed
	 * on already by the earlier holder whose backlog we read (its tail
	 * moved a publish batch at a time: fastlane_read.c), flagged
	 * PM_X_REDELIVERED for the sessions to look up in what they kept,
	 * among those written before we joined (redo_end: the head then);
	 * redo_left, their sum.  The collector's thread only.
	 */
	uint8_t *redo;
	uint64_t *redo_end;
	uint64_t redo_left;
	struct { uint32_t local, tid; } *tids;   /* thread ids when namespaces differ */
	size_t nr_tids;
	bool gone;                    /* exited or exec'd: read to the end, then let go */
	unsigned gone_passes;         /* consumes since: a record never finished ends it */
	bool corrupt;                 /* contents made no sense: let go */
	size_t queued;                /* chunks of it in the spill: freed only at 0 */
	int memfd;                    /* until handed to the keeper (fastlane.h), else -1 */
	char kept[80];                /* its name in the keeper's store, "" if not kept */
};

/*
 * The spill: a queue of segments, each holding chunks (struct fl_chunk,
 * then its bytes, 8-aligned).  A consume takes whole segments from the
 * head; emptied ones are used again, so a steady stream of markers goes
 * through the same memory.
 */
struct fl_seg {
	struct fl_seg *next;
	size_t len, cap;              /* bytes of chunks in data, room */
	char data[];                  /* FL_SEG_CAP, or one larger ring's span */
};
/* a segment is FL_SEG_SIZE bytes in all, in huge pages (bigmem.h) */
#define FL_SEG_CAP (FL_SEG_SIZE - sizeof(struct fl_seg))

struct fl_chunk {
	struct area *area;
	uint64_t pos;                 /* ring position of the first byte */
	uint64_t lo, hi;              /* the times its records may carry (clamped into) */
	uint32_t bytes;
	uint32_t slot;
	uint32_t recs;                /* records in it (markers; fillers not counted) */
	int32_t cons;                 /* our consumer word when it was copied */
};

struct fastlane {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t pump;
	bool stopping;
	uint64_t token;               /* our consumer token in every area */
	struct area *areas, *dead;
	struct fl_seg *head, *tail;   /* the spill, filled by passes at the tail */
	size_t spilled;               /* bytes in it */
	struct fl_seg *spare;         /* emptied segments */
	size_t nr_spare;
	int wake_fd;                  /* eventfd: the spill holds FL_SPILL_WAKE, drain now */
	bool woke;                    /* written since the last consume */
	struct fastlane_stats stats;
	fastlane_deliver_fn deliver;
	void *ctx;
	char *tidbuf;                 /* scratch for /proc reads */
	/* taking the areas back after a restart, in slices (fastlane__adopt_step) */
	bool adopting;
	size_t adopt_next;            /* the keeper's next handed-back area */
	DIR *adopt_dir;               /* /proc, scanned for live areas, once the kept ones are in */
	struct fastlane_adopt_stats adopt;
};

static inline struct pm_fl_slot *area_slot(const struct area *a, uint32_t s)
{
	return (struct pm_fl_slot *)(void *)((char *)a->map + a->hdr_size + (size_t)s * a->slot_size);
}

/* fastlane_map.c: fd (a sealed shmem file of size bytes) mapped; *born: when it was made */
int fastlane_map_fd(int fd, uint64_t size, void **out, uint64_t *born);
/* ... the memfd behind [addr, addr + size) in pid (its map_files entry), mapped */
int fastlane_map_area(uint32_t pid, uint64_t addr, uint64_t size, void **out, int *memfd,
		      uint64_t *born);
/* fastlane.c, for fastlane_keep.c */
int fastlane_area_setup(struct area *a, const struct pm_fastreg *r);
int fastlane_rejoin_area(struct fastlane *fl, struct area *a);
void fastlane_area_free(struct fastlane *fl, struct area *a);
uint32_t fastlane_proc_gid(uint32_t pid);
unsigned fastlane_rejoin_pid(struct fastlane *fl, uint32_t pid);
/*
 * fastlane_keep.c's, which fastlane.c calls through these (set by
 * fastlane_keeper() before any fastlane is made; NULL: nothing is kept), so
 * calls go one way, keep.c -> fastlane.c: keep(), the area's memfd to the
 * keeper, once, on attaching (lock held; the caller closes the memfd after);
 * unkeep(), out of the store again as the area is freed.
 */
struct fastlane_keep_hooks {
	void (*keep)(struct fastlane *fl, struct area *a);
	void (*unkeep)(struct area *a);
};
extern const struct fastlane_keep_hooks *fastlane_keep_hooks;

/* fastlane_read.c; pass with the lock held, returns the next wait for the pump */
uint64_t fastlane_pass(struct fastlane *fl, uint64_t last_wait_ns, bool pressure);
/* what a delivery found, added to the stats under the lock */
struct fastlane_counts {
	uint64_t clamped;             /* times clamped (stream_next) */
	uint64_t dropped;             /* records a copy lost to the producer's writes */
};
/* the chunks of the segments in list, as PM_REC_MARKER records (lock not held) */
void fastlane_deliver(struct fastlane *fl, const struct fl_seg *list, struct fastlane_counts *counts);

#endif

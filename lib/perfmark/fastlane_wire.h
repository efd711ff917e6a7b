/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast lane's shared memory, as libperfmark writes it and a recorder
 * reads it (lib/collect/fastlane.c).  Only fixed-width fields: both sides
 * must agree on every offset, and the recorder trusts none of them.
 *
 * An area is one sealed memfd (F_SEAL_SHRINK | F_SEAL_GROW) per process and
 * libperfmark copy, mapped MAP_SHARED by the process and by each recorder
 * that attached to it, so markers written just before the process exits or
 * execs are still there for the recorder to read.
 *
 *   [ struct pm_fl_hdr, padded to hdr_size ]
 *   [ slot 0: struct pm_fl_slot (PM_FL_CTL_SIZE bytes), ring of ring_size ]
 *   [ slot 1 ... ]                                     each slot_size bytes
 *
 * A slot is one thread's ring (threads beyond nr_slots share slots: every
 * record names its thread).  Producers reserve space with a compare-and-swap
 * on head, so signal handlers, raw clone() threads and vfork children that
 * share a thread's TLS cannot corrupt it; each consumer (the recorder holding
 * register site k uses word k) has its own tail, and producers never pass
 * the smallest tail of the readers.
 *
 * A record is complete when its tag matches the position it was reserved
 * at (pm_fl_tag): the producer writes len and tag last, in one 8-byte
 * release store, so a consumer never reads a half-written record and stops
 * at the first one that is not complete yet.  A record that would cross the
 * ring's end is preceded by a PAD record up to the end.
 */
#ifndef PERFMARK_FASTLANE_WIRE_H
#define PERFMARK_FASTLANE_WIRE_H

#include <stdint.h>

#define PM_FL_MAGIC         0x31454e414c545346ull   /* "FSTLANE1" */
#define PM_FL_VERSION       1
#define PM_FL_MAX_CONSUMERS 4        /* register sites: 3 used */
#define PM_FL_HDR_SIZE      4096u
#define PM_FL_CTL_SIZE      128u
#define PM_FL_MAX_SLOTS     1024u
#define PM_FL_MIN_RING      (16u << 10)
#define PM_FL_MAX_RING      (256u << 20)
#define PM_FL_MAX_PAYLOAD   4096u

/* slot states (pm_fl_slot.state) */
#define PM_FL_SLOT_FREE     0u
#define PM_FL_SLOT_OWNED    1u
#define PM_FL_SLOT_RETIRED  2u   /* its thread exited: free once drained */

struct pm_fl_consumer {
	uint64_t token;          /* 0: free, else the recorder's (compare-and-swap) */
	uint64_t heartbeat_ns;   /* CLOCK_MONOTONIC of its last pass */
};

struct pm_fl_hdr {
	uint64_t magic;          /* PM_FL_MAGIC */
	uint32_t version;        /* PM_FL_VERSION */
	uint32_t hdr_size;       /* offset of slot 0 */
	uint32_t nr_slots;
	uint32_t slot_size;      /* PM_FL_CTL_SIZE + ring_size */
	uint32_t ring_size;      /* a power of two */
	uint32_t pid;            /* the creator's getpid(), its own namespace */
	uint64_t nonce;          /* random; also in the registration */
	/*
	 * Consumer k is the recorder holding register site k (perfmark.c).
	 * joined: bit k once it has joined; readers: bit k while it reads
	 * (one that records nothing of this process joins without reading).
	 * Producers use the rings only once every taken site has joined, and
	 * keep room only for readers of a site that is still taken.
	 */
	uint32_t joined;
	uint32_t readers;
	uint32_t slots_used;     /* slots ever claimed: readers look at [0, slots_used) */
	uint32_t pad0;
	uint64_t pad1[9];
	struct pm_fl_consumer consumer[PM_FL_MAX_CONSUMERS];   /* at byte 128 */
};

_Static_assert(__builtin_offsetof(struct pm_fl_hdr, consumer) == 128, "consumer words at 128");

struct pm_fl_slot {
	/* written by producers */
	uint64_t head;           /* bytes reserved since the slot was made */
	uint64_t limit;          /* cached smallest consumer tail + ring_size */
	uint64_t lost;           /* markers the slow lane had to take (ring full) */
	uint32_t state;          /* PM_FL_SLOT_* */
	uint32_t tid;            /* owner's gettid(), its own namespace */
	uint64_t pad0[4];
	/* written by consumers, one word each */
	uint64_t tail[PM_FL_MAX_CONSUMERS];
	/*
	 * Records consumer k copied and published its tail past (to make
	 * room in a filling ring) but has not handed on yet: what a consumer
	 * that died leaves here is what it lost, which its successor counts.
	 * Otherwise a consumer publishes its tail only past what it has
	 * handed on.  Producers never touch it.
	 */
	uint64_t held[PM_FL_MAX_CONSUMERS];
};

_Static_assert(sizeof(struct pm_fl_slot) == PM_FL_CTL_SIZE, "a slot's control words");

/* record flags, in the top bits of pm_fl_rec.len */
#define PM_FL_F_PAD        0x80000000u   /* filler up to the ring's end */
#define PM_FL_F_TRUNCATED  0x40000000u   /* payload cut to PM_FL_MAX_PAYLOAD */
#define PM_FL_F_FAULT      0x20000000u   /* payload unreadable: none kept */
#define PM_FL_LEN_MASK     0x1fffffffu

struct pm_fl_rec {
	uint32_t len;            /* record bytes incl. this header, a multiple of 8 | flags */
	uint32_t tag;            /* pm_fl_tag(position): written last */
	uint64_t time;           /* CLOCK_MONOTONIC ns (vDSO): the samples' clock */
	uint64_t ip;             /* where the marker was emitted from */
	uint32_t type;
	uint32_t tid;            /* gettid() in the process's namespace */
	uint16_t cpu;
	uint16_t size;           /* payload bytes in data[] */
	uint32_t orig_size;      /* size the application passed */
	uint8_t data[];
};

/*
 * The tag of a record reserved at byte position pos.  Stale bytes at the
 * same ring offset carry the tag of a position a multiple of ring_size
 * earlier, which differs unless the reader lags by 32 GiB; zeroed memory
 * never matches a position below 2^34.
 */
static inline uint32_t pm_fl_tag(uint64_t pos)
{
	return (uint32_t)(pos >> 3) ^ 0x9e3779b9u;
}

static inline uint32_t pm_fl_rec_bytes(uint32_t payload)
{
	return ((uint32_t)sizeof(struct pm_fl_rec) + payload + 7u) & ~7u;
}

#endif

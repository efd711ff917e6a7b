/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside libperfmark (not installed):
 *
 *   perfmark.c   the API, the probe sites and their USDT notes, the semaphores
 *   fastlane.c   the fast lane: per-process area, per-thread rings, the
 *                fault-proof payload copy
 */
#ifndef PERFMARK_INTERNAL_H
#define PERFMARK_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "perfmark_wire.h"
#include "fastlane_wire.h"

#define PM_HIDDEN __attribute__((visibility("hidden")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * The USDT semaphores (perfmark.c): [0] holds uevent's (bits 0-15, bpftrace
 * and other USDT tools) and the three recorder sites' (bits 16-63), [1]
 * trapall's.  Untraced calls test both words.
 */
extern volatile uint64_t perfmark__semas[2] PM_HIDDEN;
#define PM_SEMA_UEVENT(s) ((s) & 0xffffu)
#define PM_NR_SITES 3
/* bit k: recorder site k is taken */
static inline uint32_t PM_SEMA_SITES(uint64_t s)
{
	return ((s >> 16) & 0xffff ? 1u : 0) | ((s >> 32) & 0xffff ? 2u : 0) | ((s >> 48) ? 4u : 0);
}

/* probe sites (one-byte nops, see perfmark.c) */
void perfmark__uevent(uint32_t type, const void *data, uint32_t size) PM_HIDDEN;
/* why: PM_TRAP_TAG | enum pm_trap_why, for the recorder's count */
void perfmark__trap(uint32_t type, const void *data, uint32_t size, uint64_t ip, uint64_t why) PM_HIDDEN;
void perfmark__register(const struct pm_fl_reg *reg) PM_HIDDEN;   /* the sled */

struct pm_marker_in {
	uint32_t type;
	uint32_t size;           /* as passed */
	const void *data;
	uint64_t ip;             /* the caller */
	bool own;                /* data is libperfmark's own buffer: no check needed */
};

/*
 * Write one marker into this thread's ring.  0: written; else the caller
 * must take the trap lane, and this says why (enum pm_trap_why: no ring
 * yet, no recorder attached yet, the ring is full, ...).  *then (set only
 * when there is some): what the caller must do after the trap, by
 * pm_fast_then(*then, semas): make, confirm or offer again the area.
 * Async-signal-safe.
 */
enum { PM_THEN_NONE, PM_THEN_SETUP, PM_THEN_CONFIRM, PM_THEN_OFFER };
int pm_fast_emit(const struct pm_marker_in *m, uint64_t semas, uint64_t trapall,
		 uint32_t *then) PM_HIDDEN;
void pm_fast_then(uint32_t then, uint64_t semas) PM_HIDDEN;
/*
 * The common formats without vfprintf (format.c): the length written to buf
 * (NUL-terminated), or -1 when vsnprintf must do it.  *ap is consumed
 * either way: the caller starts over from a va_list of its own (one from
 * va_start, not va_copy: a copy of the list the caller has just written
 * stalls on the load, store forwarding fails on it).
 */
int pm_format(char *buf, size_t cap, const char *fmt, va_list *ap) PM_HIDDEN;

/*
 * once, from the library constructor: settings and facts the fast lane
 * caches; and when a recorder already listens (its site's semaphore was
 * raised as the library was mapped), the area is made and offered at once
 */
void pm_fast_init(void) PM_HIDDEN;
/* after pm_fast_init: a recorder listens already: the area made and offered now */
void pm_fast_offer_early(void) PM_HIDDEN;

#endif

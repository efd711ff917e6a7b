/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tables the BPF unwinder (bpf/unwind.bpf.c, --call-graph ehframe)
 * reads, and the mappings that point at them.
 *
 * One unwinder per process, shared by every collector in it: a table is
 * built once per ELF file (keyed by its build-id, else a hash of its CFI)
 * into a run of rows in one of a few large BPF arrays (pools) that every
 * collector's array of pools holds; every process that maps the file points
 * at it through each collector's (pid, address) LPM trie.  Pools grow up to
 * the memory cap; tables nobody maps any more stay cached until a new one
 * needs their room (least recently used first).
 *
 * Fed by the collector: the sideband (MMAP2 of executable mappings, COMM
 * exec, FORK, EXIT, LOST) and each sample's pid; a process seen for the first
 * time has its mappings read from /proc/PID/maps.  Files are opened through
 * /proc/PID/map_files, never by a path the traced process could change.
 */
#ifndef PERFMARK_UNWIND_H
#define PERFMARK_UNWIND_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UNWIND_DEFAULT_CAP (64ull << 20)   /* bytes of pools; $PERFMARK_UNWIND_CAP ("16M") */
#define UNWIND_MAX_MAPS    (1u << 18)      /* LPM prefixes per collector */
#define UNWIND_MAX_PIDS    (1u << 16)      /* processes installed at once */
#define UNWIND_COPY_STACK  8192            /* stack bytes copied for a process without tables */
/*
 * Tables are built off the thread that drains the ring (unwind_build.c):
 * by at most UNWIND_BUILD_THREADS workers (and no more than the CPUs), a
 * nice level below the caller's, from a queue of at most
 * UNWIND_BUILD_QUEUE files, the most urgent first (a target's, then by the
 * copied samples waiting for it).
 */
#define UNWIND_BUILD_THREADS 4
#define UNWIND_BUILD_QUEUE   64
#define UNWIND_BUILD_NICE    10                /* added to the creator's nice level */

struct unwinder;

struct unwind_stats {
	uint64_t tables, table_bytes;        /* loaded now, and their rows' bytes */
	uint64_t pool_bytes, cap;            /* BPF memory holding them, its cap */
	uint64_t built, evicted, failed;     /* since start: built, evicted, not loadable */
	uint64_t over_cap;                   /* mappings left without a table (cap) */
	uint64_t refused[4];                 /* files whose CFI was over a budget, by enum unwind_refusal */
	uint64_t procs, mappings;            /* processes and mappings installed now */
	uint64_t walks;                      /* stack copies walked here (unwinder__walk) */
	uint64_t walk_ends[5];               /* how they ended, by enum pm_uw_end */
	uint64_t builds_pending;             /* files queued or being built now */
	uint64_t builds_dropped;             /* builds not queued, or dropped, for room (asked again later) */
	uint64_t build_max_ns;               /* the longest build */
};

/* The process's unwinder (created on first use); unwinder__put releases it. */
int unwinder__get(struct unwinder **out);
void unwinder__put(struct unwinder *u);
/*
 * The recorder's own process (its pid as the samples number it): installed
 * without tables, its frames found by frame pointers, as --call-graph fp
 * does.  Its tables would hold the cap as long as it runs (perfmarkd maps
 * some 1.2 MiB of rows), built for samples of its own work, and a perfmarkd
 * started by a target's shell is one of that session's processes.  0: none.
 */
void unwinder__set_self(struct unwinder *u, uint32_t pid);
/*
 * A collector's maps: uw_pools (array of maps), uw_maps (LPM trie) and
 * uw_pids (the processes installed: the others get their stacks copied).
 * What is loaded already is copied in; from now on every change goes to
 * them too.  Cleared first (an adopted collector's maps hold stale entries).
 */
int unwinder__add_maps(struct unwinder *u, int pools_fd, int maps_fd, int pids_fd);
void unwinder__remove_maps(struct unwinder *u, int pools_fd);
/*
 * A sideband record (others than MMAP2, COMM, FORK, EXIT, LOST are ignored).
 * For an MMAP2, how much to do for a process not installed yet:
 */
enum {
	UNWIND_LIST,        /* note the mapping; the rest at its first sample */
	UNWIND_RESOLVE,     /* also read the file now: it may exit before its samples are read */
	UNWIND_INSTALL,     /* install the process now (a target) */
};
void unwinder__sideband(struct unwinder *u, const struct perf_event_header *h, int how);
/* After each read of the ring: processes that exited a drain ago are forgotten. */
void unwinder__tick(struct unwinder *u);
/*
 * A sample of pid (copied: its stack, for us to walk): the first one of a
 * process loads its mappings.
 */
void unwinder__sample(struct unwinder *u, uint32_t pid, bool copied);
/*
 * Walk a stack the BPF side copied at time (regs: perf's 20 user registers,
 * stack: size bytes from regs[SP] up) with pid's tables, by the BPF rules;
 * the pcs, leaf first: their number.  A stack from before pid's image began
 * (an exec read since) gets the frame pointers only.  Call
 * unwinder__sample(pid) first.  how:
 */
enum {
	UNWIND_WALK_NOW,     /* with the tables there are (frame pointers where one is missing) */
	UNWIND_WALK_FIRST,   /* -EAGAIN if a frame is in a file whose table is being built: the
			      * copy waits for it (and makes that build more urgent) */
	UNWIND_WALK_AGAIN,   /* the same for a copy that waits already */
};
int unwinder__walk(struct unwinder *u, uint32_t pid, uint64_t time, const uint64_t *regs,
		   const uint8_t *stack, uint64_t size, uint64_t *pcs, size_t max, int how);
/*
 * A copy waits UNWIND_HOLD_NS at most (after that it is walked as it can
 * be); the unwinder keeps the mappings of an exited process that long too.
 */
#define UNWIND_HOLD_NS (1500ull * 1000 * 1000)
/* Tables built since: loaded, and the mappings that waited installed (also at each tick). */
void unwinder__collect(struct unwinder *u);
/* Wait for a build to end, until deadline (CLOCK_MONOTONIC ns); true if one did. */
bool unwinder__wait(struct unwinder *u, uint64_t deadline);
/* efd (an eventfd) is told of every build that ends, from now on (on) or no more. */
void unwinder__notify(struct unwinder *u, int efd, bool on);
void unwinder__stats(const struct unwinder *u, struct unwind_stats *st);

#endif

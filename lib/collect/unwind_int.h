/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the unwinder (users include unwind.h): the state unwind.c (processes,
 * their mappings, the BPF maps that point at tables, walks) and unwind_pool.c
 * (table slots, their rows in the BPF pools, resolving a mapping to its
 * table) share.
 */
#ifndef PERFMARK_UNWIND_INT_H
#define PERFMARK_UNWIND_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind.h"
#include "unwind_table.h"

#define PROC_BUCKETS 1024
#define MAX_SETS     16
#define MAX_TABLES   4096
#define POOL_MIN_ROWS (128u << 10)   /* 1 MiB */
#define MAX_LOADS    8
#define MAX_REFUSED  64       /* files remembered as refused, so they are not read again */
#define KEY_LEN      48
#define NO_TABLE     (-1)     /* not resolved yet */
#define BAD_TABLE    (-2)     /* resolved: none (no file, no CFI, over the cap) */

struct uw_load {
	uint64_t vaddr, off, filesz;
};

struct uw_table {
	bool used;
	char key[KEY_LEN];
	dev_t dev;                 /* the file last read for it */
	ino_t ino;
	int64_t size, mtime;
	uint32_t pool, first, nr_rows;   /* its rows in a pool */
	uint32_t refs;             /* installed mappings using it */
	uint64_t last_use;
	uint32_t gen;              /* which filling of the slot (mappings check it) */
	struct uw_load loads[MAX_LOADS];
	size_t nr_loads;
};

/* a file whose CFI was over a budget */
struct uw_refused {
	dev_t dev;
	ino_t ino;
	int64_t size, mtime;
};

struct uw_pool {
	int fd;                    /* BPF array of rows */
	uint32_t cap;              /* rows */
	struct pm_uw_row *mem;     /* the array, mmap'ed */
};

struct uw_mapping {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	int32_t slot;              /* NO_TABLE, BAD_TABLE or a table ... */
	uint32_t gen;              /* ... as long as the slot's gen is this */
	uint64_t bias;
	uint64_t time;             /* of its record: no older record replaces it */
	bool vdso, installed;
};

/*
 * A process as its records made it, each applied by its time, not in the
 * order read: a CPU's sideband buffer is read whole before the next one's,
 * so a process's FORK, COMM exec and MMAP2s, written on several CPUs, come
 * in any order.  An older record never undoes what a newer one did.
 */
struct uw_proc {
	struct uw_proc *next;
	uint32_t pid;
	bool active;
	bool exited;               /* kept a drain longer: its last samples may follow */
	bool partial;              /* mappings from before born may be missing: /proc is read
				    * when it is installed */
	bool exact;                /* born is when its image began (a FORK or COMM exec
				    * record), not when /proc was read */
	uint64_t born;             /* its image since (the BPF side's pm_uw_pid.since); 0: unknown */
	uint64_t lost_seen;        /* the sideband's losses when it was installed */
	uint64_t exit_time;
	uint64_t exit_tick;
	struct uw_mapping *maps;
	size_t nr, cap;
};

struct uw_set {
	int pools_fd, maps_fd, pids_fd;
};

struct unwinder {
	int refs;
	struct uw_table *tables;   /* MAX_TABLES slots */
	struct uw_pool pools[PM_UW_MAX_POOLS];
	uint32_t nr_pools;
	struct uw_proc *procs[PROC_BUCKETS];
	struct uw_set sets[MAX_SETS];
	size_t nr_sets;
	uint64_t cap, clock, tick;
	uint64_t lost;             /* sideband LOST records: mappings may be missing */
	uint32_t gen;
	struct uw_refused refused[MAX_REFUSED];   /* a ring */
	uint32_t next_refused;
	struct unwind_stats st;
};

/* --- unwind_pool.c ---------------------------------------------------------------- */

/* rows for the first pool, or the next one for n rows: doubling, under the cap */
uint64_t unwind_pool_rows(const struct unwinder *u, uint32_t n);
/* a new pool of rows, in every collector's array of pools */
int unwind_pool_new(struct unwinder *u, uint32_t rows);
/* unmap and close every pool */
void unwind_pools_free(struct unwinder *u);
/*
 * The table slot for mapping m of pid: cached, or built from the file mapped
 * there (/proc/PID/map_files) and loaded into a pool; BAD_TABLE if none.
 */
int32_t unwind_resolve(struct unwinder *u, uint32_t pid, struct uw_mapping *m);
/* m->bias from the table's PT_LOAD segments; false if m maps none of them */
bool unwind_mapping_bias(const struct uw_table *t, struct uw_mapping *m);

#endif

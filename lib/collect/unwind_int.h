/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the unwinder (users include unwind.h): the state unwind.c (processes,
 * their mappings, the BPF maps that point at tables, walks), unwind_pool.c
 * (table slots, their rows in the BPF pools, resolving a mapping to its
 * table) and unwind_build.c (the worker threads that build tables) share.
 * Everything but the builder's jobs belongs to the thread that drains the
 * ring; a job, to whoever its state says (struct uw_job).
 */
#ifndef PERFMARK_UNWIND_INT_H
#define PERFMARK_UNWIND_INT_H

#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "unwind.h"
#include "unwind_table.h"

#define PROC_BUCKETS 1024
#define MAX_SETS     16
#define MAX_TABLES   4096
#define POOL_MIN_ROWS (128u << 10)   /* 1 MiB */
#define MAX_LOADS    8
#define MAX_REFUSED  64       /* files remembered as refused, so they are not read again */
#define KEY_LEN      64     /* "b:" 40 hex digits ":" owner uid, or "h:" hash ":" size */
#define NO_TABLE     (-1)     /* not resolved yet */
#define BAD_TABLE    (-2)     /* resolved: none (no file, no CFI, over the cap) */
#define PENDING_TABLE (-3)    /* its file's table is being built (uw_mapping.job) */
#define BUILD_PRIO_TARGET (1ull << 32)   /* a target's file: before any other's */
#define BUILD_PRIO_SAMPLED 1              /* a sampled process's file (+ each copy that waits) */

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
	int32_t slot;              /* NO_TABLE, BAD_TABLE, PENDING_TABLE or a table ... */
	uint32_t gen;              /* ... as long as the slot's (the job's) gen is this */
	uint32_t job;              /* PENDING_TABLE: the job building its file's table */
	uint64_t tried;            /* NO_TABLE: the tick of the last try (no room in the queue) */
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
	uint64_t prio;             /* of its files' builds: BUILD_PRIO_TARGET, _SAMPLED or 0 */
	struct uw_mapping *maps;
	size_t nr, cap;
};

struct uw_set {
	int pools_fd, maps_fd, pids_fd;
};

/*
 * A table to build, of one file (a file mapped by many processes is one
 * job).  state says whose it is: FREE and DONE, the drain thread's; QUEUED,
 * both's under the lock (prio may rise); BUILDING, the worker's but for
 * prio and the fields the drain thread set before queuing it, which nobody
 * changes until it is FREE again.
 */
enum { JOB_FREE, JOB_QUEUED, JOB_BUILDING, JOB_DONE };

struct uw_job {
	bool live;                 /* not FREE: the drain thread's to read unlocked */
	int state;
	uint64_t prio;             /* BUILD_PRIO_TARGET for a target's file, + copied samples that wait */
	uint64_t order;            /* first come first among equals */
	uint32_t gen;              /* which use of the slot (mappings check it) */
	/* the file, set before QUEUED */
	Elf *elf;                  /* read from fd */
	int fd;
	struct stat sb;
	char key[KEY_LEN];         /* its build-id key, or "" (a hash of the rows, once built) */
	/* the worker's result, the drain thread's once DONE */
	int err, why;              /* 0 or unwind_table__build's error; why: E2BIG's refusal */
	struct unwind_table *t;
	struct uw_load loads[MAX_LOADS];
	size_t nr_loads;
	uint64_t ns;               /* the build's time */
};

struct uw_builder {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	pthread_t threads[UNWIND_BUILD_THREADS];
	size_t nr_threads;
	atomic_bool stop;          /* set under the lock; builds read it to give up early */
	uint64_t order;
	uint64_t finished;         /* jobs DONE since start (under the lock) */
	int notify[MAX_SETS];      /* eventfds told of each job DONE */
	size_t nr_notify;
	struct uw_job jobs[UNWIND_BUILD_QUEUE];
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
	uint32_t self;             /* the recorder's pid: no tables (unwinder__set_self) */
	struct uw_refused refused[MAX_REFUSED];   /* a ring */
	uint32_t next_refused;
	struct uw_builder *b;      /* started at the first build */
	bool retry;                /* mappings wait for room in the builder's queue */
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
 * The table slot for mapping m of pid: cached; or the file mapped there
 * (/proc/PID/map_files) is handed to the builder, at priority prio
 * (PENDING_TABLE, m->job and m->gen set); BAD_TABLE if none; NO_TABLE when
 * the builder has no room for it now.
 */
int32_t unwind_resolve(struct unwinder *u, uint32_t pid, struct uw_mapping *m, uint64_t prio);
/* m->bias from the table's PT_LOAD segments; false if m maps none of them */
bool unwind_mapping_bias(const struct uw_table *t, struct uw_mapping *m);
/*
 * The next table built: loaded into a pool, false when none is; job *j of
 * generation *gen ended with *slot, or BAD_TABLE, for the mappings that
 * wait for it (unwind.c tells them: calls go unwind.c -> unwind_pool.c)
 */
bool unwind_collect_next(struct unwinder *u, uint32_t *j, uint32_t *gen, int32_t *slot);

/* --- unwind_maps.c ----------------------------------------------------------------- */

/* the BPF side unwinds p's stacks (with the mappings of p's image since p->born) or copies them */
void unwind_set_installed(struct unwinder *u, const struct uw_proc *p, bool on);
/* [start, end) of pid set to val (NULL: deleted) in every collector's trie, or only's */
int unwind_set_range(struct unwinder *u, const struct uw_set *only, uint32_t pid,
		     uint64_t start, uint64_t end, const struct pm_uw_map *val);
/* m in the tries (only's), with its table if it has one */
int unwind_install_mapping(struct unwinder *u, const struct uw_set *only, uint32_t pid,
			   const struct uw_mapping *m);

/* --- unwind_build.c ---------------------------------------------------------------- */

/* the builder, its workers not started yet */
int uw_build_new(struct unwinder *u);
/*
 * Queue a build of the file at fd (elf read from it; both the job's from
 * now on, also on failure): 0 and *job, or -ENOSPC (the queue is full of
 * jobs at least as urgent) or -ENOMEM.  A full queue makes room by
 * dropping its least urgent job not started (its mappings resolve again).
 */
int uw_build_submit(struct unwinder *u, int fd, Elf *elf, const struct stat *sb,
		    const char *key, uint64_t prio, uint32_t *job);
/* the live job (queued, building or done) for this file or build-id key; -1 if none */
int32_t uw_build_find(const struct unwinder *u, const struct stat *sb, const char *key);
/* whether job j is still the one of generation gen */
bool uw_build_live(const struct unwinder *u, uint32_t j, uint32_t gen);
/* job j's priority: at least at_least, then add more */
void uw_build_raise(struct unwinder *u, uint32_t j, uint64_t at_least, uint64_t add);
/* jobs live now */
size_t uw_build_pending(const struct unwinder *u);
/* efd is told (an eventfd count) of every job DONE from now on (on), or no more */
void uw_build_notify(struct unwinder *u, int efd, bool on);
/* the next job DONE (its result the caller's to free with uw_build_release), or -1 */
int32_t uw_build_next_done(struct unwinder *u);
/* job j's result used: the slot is free for another (its generation moves on) */
void uw_build_release(struct unwinder *u, uint32_t j);
/* until a job is DONE or deadline (CLOCK_MONOTONIC ns): true if one is */
bool uw_build_wait(struct unwinder *u, uint64_t deadline);
/* stop and join the workers (a build under way gives up), free every job */
void uw_build_stop(struct unwinder *u);
/* what the build-id tells before building: "b:" and its hex, or "" */
void uw_build_id_key(Elf *elf, uint32_t owner, char *key);
/* elf's PT_LOAD segments (the first MAX_LOADS) */
void uw_elf_loads(Elf *elf, struct uw_load *loads, size_t *nr);

#endif

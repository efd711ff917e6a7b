/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the session engine: which processes a session keeps (targets.c).
 * The BPF filter lets through the union of what every session on a
 * collector wants; targets.c takes this session's exact share of it: the
 * ring's samples, markers and off-CPU records by pid and uid, the
 * sideband (COMM, MMAP, FORK, EXIT, LOST) by pid and uid, following forks.
 * session.c calls in here (its subscription's callbacks, the drain's
 * recheck, the targets it is given); nothing here calls session.c.
 */
#ifndef PERFMARK_TARGETS_INT_H
#define PERFMARK_TARGETS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_event_header;
struct session;

struct pidset {
	uint32_t *slots;      /* 0 = empty; pid 0 is never a target */
	size_t cap, n;
};

bool pidset_has(const struct pidset *p, uint32_t pid);
int pidset_add(struct pidset *p, uint32_t pid);
void pidset_del(struct pidset *p, uint32_t pid);

/* A session's targets and what it knows of other processes. */
struct targets {
	struct pidset pids;             /* the targets (and their children) */
	struct pidset uid_ok, uid_bad;  /* uid filter on sideband, by pid */
	struct pidset not_ours;         /* pids known not to be targets' children */
	uint32_t last;                  /* the pid record_wanted() found a target last */
	char *held;                     /* sideband of pids not known yet, this drain */
	size_t held_len, held_cap;
	bool rechecking;
};

/* collector_sub's callbacks; ctx is the session */
void targets_on_ring(void *ctx, const void *data, size_t size);
void targets_on_sideband(void *ctx, const struct perf_event_header *h);
/* every buffer read (a drain): the sideband held for want of a FORK, again */
void targets_recheck_held(struct session *s);
/* pid becomes a target, in BPF too: at its next exec (a command), or now */
int targets_add(struct session *s, pid_t pid, bool at_exec);
/*
 * A session taken over after a restart: its targets' descendants that the
 * pinned BPF target set holds (forked while the daemon before ran, or while
 * none ran) become its targets now, so that their state is synthesized and
 * their fast lanes read.  Those missed here (an exited parent) are found
 * by their records as before (child_of_target).
 */
void targets_adopt(struct session *s);
void targets_free(struct targets *t);

#endif

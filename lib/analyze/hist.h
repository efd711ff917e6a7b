/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Samples by perf report's sort keys (`--sort comm,dso,sym`): one row per
 * distinct value of the keys, with self and children ("total") period and
 * samples counted as perf report --children counts them (issue 22):
 *
 *   self      the samples whose leaf frame has the row's values
 *   children  the samples with any frame of the row's values, once per
 *             sample however often it recurs
 *
 * Keys of the sample (comm, pid, tid, cpu) take the sample's values: the
 * command is its thread's as of the sample; keys of the frame (dso, sym)
 * the frame's, sym being a function of one file (as perf's sym key, two
 * files' functions of one name are two rows).  Without dso and sym every
 * frame of a sample is the one row of its sample keys.
 *
 * Linear in the samples plus the frames of each distinct (stack, sample
 * keys) pair; nothing per sample is allocated.
 */
#ifndef PERFMARK_HIST_H
#define PERFMARK_HIST_H

#include "aggregate.h"

enum hist_key { HIST_COMM, HIST_PID, HIST_TID, HIST_CPU, HIST_DSO, HIST_SYM, HIST_NR_KEYS };

#define HIST_MAX_KEYS 8

/* The keys of --sort, in order: up to HIST_MAX_KEYS of them */
struct hist_keys {
	enum hist_key k[HIST_MAX_KEYS];
	size_t n;
	bool has[HIST_NR_KEYS];
};

/* "comm,dso,sym" (perf's names; "symbol" and "shared_object" too).  0, or -EINVAL
 * with the name that is not a key in bad (size badlen). */
int hist_keys__parse(struct hist_keys *k, const char *list, char *bad, size_t badlen);
/* "comm", "dso", ... */
const char *hist_key__name(enum hist_key k);

struct hist_row {
	/* per key asked for: comm a string id, pid, tid, cpu the numbers, dso a
	 * mapping index, sym a frame index (PROFILE_NONE: none, a sample without
	 * a stack); a key not asked for is 0 */
	uint32_t v[HIST_NR_KEYS];
	uint64_t self, children;                /* period */
	uint64_t self_samples, children_samples;
};

struct hist {
	struct hist_row *v;
	size_t n;
	uint64_t total_period, total_samples;   /* of the samples aggregated */
};

int hist__build(struct hist *h, const struct profile *p, const struct hist_keys *keys,
		sample_pred keep, void *ctx);
/*
 * Heaviest first by children (by_children) or self, then self, then the
 * keys' values; with group_comm the rows of a command stay together, the
 * commands heaviest (by self) first.
 */
void hist__sort(struct hist *h, const struct profile *p, const struct hist_keys *keys,
		bool by_children, bool group_comm);
void hist__free(struct hist *h);

#endif

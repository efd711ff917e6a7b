/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Aggregations over a profile (profile.h) for report, flamegraph and export:
 *
 *   weights    per call-tree node: the samples and period that end there
 *   fnstats    per function (optionally per command): self and total
 *              ("children") samples and period, as perf report --no-children
 *              and --children count them (a function counts once per sample)
 *   rangestats per range name: count, durations, and the samples inside:
 *              "self" where it is the innermost range, "total" with nested ones,
 *              with the functions of its self samples; with off-CPU time in
 *              the recording, where its wall time went (on CPU, blocked,
 *              waiting for a CPU) and the stacks it blocked in most
 *
 * A selection is a predicate on samples (NULL: every sample).
 *
 * Every aggregation is linear in the samples, nodes and ranges (plus the
 * sorts): no walk up the range nesting per sample, however deep a file
 * nests its ranges.
 */
#ifndef PERFMARK_AGGREGATE_H
#define PERFMARK_AGGREGATE_H

#include "profile.h"

typedef bool (*sample_pred)(const struct profile *p, const struct profile_sample *s, void *ctx);

/*
 * Samples inside a range named name (a string id), at any depth: which
 * range instances are, or nest in, one of that name is worked out once, in
 * one pass over the ranges (a walk up the nesting per sample took 20 s for
 * 40,000 nested ranges).
 */
struct range_pred_ctx {
	uint32_t name;
	bool *within;       /* per range instance */
};
int range_pred__init(struct range_pred_ctx *c, const struct profile *p, uint32_t name);
void range_pred__free(struct range_pred_ctx *c);
bool aggregate__in_range(const struct profile *p, const struct profile_sample *s, void *ctx);

struct weights {
	uint64_t *period, *count;   /* per node */
	size_t n;
	uint64_t total_period, total_count;
};
int weights__build(struct weights *w, const struct profile *p, sample_pred keep, void *ctx);
void weights__free(struct weights *w);

struct fnstat {
	uint32_t comm;      /* string id, or PROFILE_NONE when not per command */
	uint32_t name;      /* string id */
	uint64_t self, total;                   /* period */
	uint64_t self_samples, total_samples;
};

struct fnstats {
	struct fnstat *v;
	size_t n;
	uint64_t total_period, total_samples;
};

enum fnsort { FNSORT_SELF, FNSORT_TOTAL };

int fnstats__build(struct fnstats *out, const struct profile *p, const struct weights *w,
		   bool per_comm);
/* Sort by comm (first seen order kept by weight), then by key, heaviest first. */
void fnstats__sort(struct fnstats *s, const struct profile *p, enum fnsort by);
void fnstats__free(struct fnstats *s);

/* A stack a range blocked in (its own time, not its nested ranges') */
struct rangestack {
	uint32_t node;      /* the stack: a node of the call tree */
	uint64_t ns;        /* blocked there, in all */
	uint64_t intervals; /* how many times (summed intervals counted each) */
};

#define RANGESTATS_STACKS 3     /* top blocking stacks kept per range name */

struct rangestat {
	uint32_t name;      /* string id */
	uint64_t count;     /* closed instances */
	uint64_t open;      /* instances without an end */
	uint64_t total_ns, mean_ns, min_ns, p50_ns, p99_ns, max_ns;
	uint64_t self_samples, total_samples, self_period, total_period;
	struct fnstat *fns; /* functions of the self samples, heaviest first */
	size_t nfns;
	/*
	 * Off-CPU time (rangestats.offcpu): over the closed instances that are
	 * the outermost of their name, nested ranges included, so that wall =
	 * on CPU + blocked + runqueue up to sampling.  on CPU is estimated from
	 * the samples (rangestats.oncpu false: the event does not tell time).
	 */
	uint64_t instances;                 /* closed, outermost of their name */
	uint64_t wall_ns, oncpu_ns, blocked_ns, runq_ns;
	struct rangestack stacks[RANGESTATS_STACKS];    /* heaviest first */
	size_t nstacks;
};

struct rangestats {
	struct rangestat *v;
	size_t n;
	struct fnstat *fn_store;    /* every range's fns, one after the other */
	bool offcpu;                /* the recording has off-CPU time */
	bool oncpu;                 /* the analysed event's samples tell time on CPU */
};

int rangestats__build(struct rangestats *out, const struct profile *p);
void rangestats__free(struct rangestats *s);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Call graphs as `perf report -g caller|callee` shows them (issue 22):
 *
 *   caller  from each command down: a node is a call path from the
 *           command's outermost frame; its children ("total") are the
 *           samples taken in it or anything it called on that path, its
 *           self those taken in it
 *   callee  from each leaf function up: a node is a call path read from
 *           the leaf; its total the samples whose stack begins so; self is
 *           the leaf's own samples, at the first level (a leaf's whole
 *           total), 0 below it (callers)
 *
 * Siblings are ordered heaviest first.  Linear in the call tree's nodes
 * (callee: in the frames of its nodes that have samples) plus the sorts.
 */
#ifndef PERFMARK_CALLTREE_H
#define PERFMARK_CALLTREE_H

#include "aggregate.h"

struct calltree_node {
	uint32_t frame;             /* profile frame (a command: its comm frame); root: PROFILE_NONE */
	uint32_t first, next;       /* first child, next sibling: PROFILE_NONE ends */
	uint64_t self, total;       /* period */
	uint64_t self_samples, total_samples;
};

struct calltree {
	struct calltree_node *v;    /* v[0]: the root, over the commands (caller) or leaves (callee) */
	size_t n;
	uint64_t total_period, total_samples;
};

int calltree__build(struct calltree *t, const struct profile *p, bool callee, sample_pred keep,
		    void *ctx);
void calltree__free(struct calltree *t);

#endif

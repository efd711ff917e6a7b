/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Address ranges of a process (its memory maps, its JIT code): a set of
 * non-overlapping intervals [start, end), each with a file offset and a
 * value, where inserting a range cuts away whatever it overlaps (as mmap
 * does, and as perf's maps__fixup_overlappings does).
 *
 * A persistent treap: trees share nodes, so a FORK gives the child its
 * parent's maps in O(1) (maptree__share) and a later insert in either copies
 * only the O(log n) nodes on its path.  Costs, whatever order the input
 * comes in (issue 8 case 6: 200,000 MMAP records in one process took the
 * old sorted array > 10 s, forks of a many-mapped process copied all maps
 * each):
 *   insert   O(log n) expected, plus O(1) amortized per range it removes
 *   find     O(log n) expected
 *   share    O(1)
 * Priorities come from a generator seeded from getrandom(), so an input
 * cannot be crafted to degenerate the tree.  Nodes are counted; past
 * max_nodes an insert fails with -E2BIG (the caller reports it).
 */
#ifndef PERFMARK_MAPTREE_H
#define PERFMARK_MAPTREE_H

#include <stddef.h>
#include <stdint.h>

struct maprange {
	uint64_t start, end, pgoff;
	void *val;
};

struct mapnode;

struct maptree {
	size_t nodes, max_nodes;   /* live nodes of every tree of this context */
	uint64_t rng;
};

/* A context for trees (nodes counted against max_nodes, 0: no cap). */
void maptree__init(struct maptree *t, size_t max_nodes);
/* Insert r into *root, cutting what it overlaps.  0, -ENOMEM or -E2BIG. */
int maptree__insert(struct maptree *t, struct mapnode **root, const struct maprange *r);
/* The range holding addr, or NULL. */
const struct maprange *maptree__find(const struct mapnode *root, uint64_t addr);
/* Another reference to the same ranges (a forked child's). */
struct mapnode *maptree__share(struct mapnode *root);
/* Drop a reference (NULL is fine). */
void maptree__drop(struct maptree *t, struct mapnode *root);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Persistent treap of address ranges: maptree.h.
 *
 * Ownership: every function takes over the references it is given and
 * returns references its caller owns.  A node with refs == 1 is owned by
 * one tree and is changed in place; a shared one (refs > 1) is copied first
 * (own()), which is the only place sharing costs anything.  split() owns
 * the nodes on its path, so the merges that follow only rewire owned
 * nodes.  Running out of memory mid-way (malloc failing) loses ranges,
 * never memory safety; the caller stops on the error.
 */
#include "maptree.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

struct mapnode {
	struct maprange r;
	uint64_t prio;
	unsigned refs;
	struct mapnode *left, *right;
};

void maptree__init(struct maptree *t, size_t max_nodes)
{
	t->nodes = 0;
	t->max_nodes = max_nodes;
	if (getrandom(&t->rng, sizeof(t->rng), GRND_NONBLOCK) != sizeof(t->rng))
		t->rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
	t->rng |= 1;
}

static uint64_t next_prio(struct maptree *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng;
}

/* The cap is checked once per insert (the O(log n) copies on its path may pass it). */
static struct mapnode *node_new(struct maptree *t, const struct maprange *r)
{
	struct mapnode *n = malloc(sizeof(*n));

	if (!n)
		return NULL;
	*n = (struct mapnode){ .r = *r, .prio = next_prio(t), .refs = 1 };
	t->nodes++;
	return n;
}

struct mapnode *maptree__share(struct mapnode *n)
{
	if (n)
		n->refs++;
	return n;
}

void maptree__drop(struct maptree *t, struct mapnode *n)
{
	while (n && --n->refs == 0) {
		struct mapnode *right = n->right;

		maptree__drop(t, n->left);
		free(n);
		t->nodes--;
		n = right;      /* iterate down the right side, recurse on the left */
	}
}

/* n exclusively owned: n itself, or a copy holding new references to its children */
static struct mapnode *own(struct maptree *t, struct mapnode *n)
{
	struct mapnode *c;

	if (n->refs == 1)
		return n;
	c = node_new(t, &n->r);
	if (!c)
		return NULL;
	c->prio = n->prio;
	c->left = maptree__share(n->left);
	c->right = maptree__share(n->right);
	n->refs--;        /* shared: never reaches 0 here */
	return c;
}

/* Split n into *lo (start < key) and *hi (start >= key). */
static int split(struct maptree *t, struct mapnode *n, uint64_t key, struct mapnode **lo,
		 struct mapnode **hi)
{
	struct mapnode *c;

	*lo = *hi = NULL;
	if (!n)
		return 0;
	c = own(t, n);
	if (!c)
		return -ENOMEM;
	if (c->r.start < key) {
		*lo = c;
		return split(t, c->right, key, &c->right, hi);
	}
	*hi = c;
	return split(t, c->left, key, lo, &c->left);
}

/* All of a before all of b (a's right spine and b's left spine are owned). */
static struct mapnode *merge(struct maptree *t, struct mapnode *a, struct mapnode *b)
{
	struct mapnode *c;

	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		c = own(t, a);
		if (c)
			c->right = merge(t, c->right, b);
		return c;
	}
	c = own(t, b);
	if (c)
		c->left = merge(t, a, c->left);
	return c;
}

/* The last node of *root, owned along the way, for trimming; NULL if empty or no memory */
static struct mapnode *own_last(struct maptree *t, struct mapnode **root)
{
	struct mapnode **pp = root;

	while (*pp) {
		struct mapnode *c = own(t, *pp);

		if (!c)
			return NULL;
		*pp = c;
		if (!c->right)
			return c;
		pp = &c->right;
	}
	return NULL;
}

/* A range that stays of o past end (o reaches beyond end) */
static struct maprange rest_of(const struct maprange *o, uint64_t end)
{
	struct maprange rest = *o;

	rest.pgoff += end - o->start;
	rest.start = end;
	return rest;
}

int maptree__insert(struct maptree *t, struct mapnode **root, const struct maprange *r)
{
	struct mapnode *lo, *mid, *hi, *n, *last, *tail = NULL;
	struct maprange rest;
	bool have_rest = false;

	if (r->end <= r->start)
		return 0;
	if (t->max_nodes && t->nodes >= t->max_nodes)
		return -E2BIG;
	n = node_new(t, r);
	if (!n || split(t, *root, r->start, &lo, &mid) || split(t, mid, r->end, &mid, &hi))
		goto nomem;
	/* the range before r may reach into it: cut it at r->start, keep what passes r->end */
	last = own_last(t, &lo);
	if (lo && !last)
		goto nomem;
	if (last && last->r.end > r->start) {
		if (last->r.end > r->end) {
			rest = rest_of(&last->r, r->end);
			have_rest = true;
		}
		last->r.end = r->start;
	}
	/* ranges starting inside r go; the last may reach past r->end */
	last = own_last(t, &mid);
	if (mid && !last)
		goto nomem;
	if (last && last->r.end > r->end) {
		rest = rest_of(&last->r, r->end);
		have_rest = true;
	}
	maptree__drop(t, mid);
	if (have_rest && !(tail = node_new(t, &rest)))
		goto nomem;
	*root = merge(t, merge(t, lo, n), merge(t, tail, hi));
	return 0;
nomem:
	return -ENOMEM;
}

const struct maprange *maptree__find(const struct mapnode *n, uint64_t addr)
{
	const struct mapnode *best = NULL;

	while (n) {
		if (n->r.start <= addr) {
			best = n;
			n = n->right;
		} else {
			n = n->left;
		}
	}
	return best && addr < best->r.end ? &best->r : NULL;
}

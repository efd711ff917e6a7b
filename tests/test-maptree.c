/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/analyze/maptree.c: random inserts checked against a
 * byte-per-page model, shared trees (a FORK) that must not see each other's
 * later inserts, the node cap, and the cost of a descending insert order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "maptree.h"

#define PAGES 512

/* the model: for each page, the id of the range holding it (0: none) and its pgoff */
struct model {
	uintptr_t id[PAGES];
	uint64_t pgoff[PAGES];
};

static void model_insert(struct model *m, const struct maprange *r)
{
	for (uint64_t p = r->start; p < r->end && p < PAGES; p++) {
		m->id[p] = (uintptr_t)r->val;
		m->pgoff[p] = r->pgoff + (p - r->start);
	}
}

static void check(const struct model *m, const struct mapnode *root)
{
	for (uint64_t p = 0; p < PAGES; p++) {
		const struct maprange *r = maptree__find(root, p);

		if (!m->id[p]) {
			assert_null(r);
			continue;
		}
		assert_non_null(r);
		assert_int_equal((uintptr_t)r->val, m->id[p]);
		/* the file offset of page p, whatever was cut around it */
		assert_int_equal(r->pgoff + (p - r->start), m->pgoff[p]);
	}
}

static struct maprange rnd_range(uintptr_t id)
{
	uint64_t a = (uint64_t)rand() % PAGES, len = 1 + (uint64_t)rand() % 40;

	return (struct maprange){ a, a + len, (uint64_t)rand() % 1000 * 1000, (void *)id };
}

static void test_random_against_model(void **state)
{
	struct maptree t;
	struct mapnode *root = NULL;
	struct model m = { 0 };

	(void)state;
	srand(1);
	maptree__init(&t, 0);
	for (uintptr_t i = 1; i <= 3000; i++) {
		struct maprange r = rnd_range(i);

		assert_int_equal(maptree__insert(&t, &root, &r), 0);
		model_insert(&m, &r);
		if (i % 50 == 0)
			check(&m, root);
	}
	check(&m, root);
	maptree__drop(&t, root);
	assert_int_equal(t.nodes, 0);
}

static void test_shared_trees(void **state)
{
	struct maptree t;
	struct mapnode *parent = NULL, *child;
	struct model mp = { 0 }, mc;

	(void)state;
	srand(2);
	maptree__init(&t, 0);
	for (uintptr_t i = 1; i <= 300; i++) {
		struct maprange r = rnd_range(i);

		maptree__insert(&t, &parent, &r);
		model_insert(&mp, &r);
	}
	child = maptree__share(parent);
	mc = mp;
	for (uintptr_t i = 1000; i <= 1600; i++) {
		struct maprange r = rnd_range(i);

		/* each side changes on its own, the other must not see it */
		if (i & 1) {
			maptree__insert(&t, &child, &r);
			model_insert(&mc, &r);
		} else {
			maptree__insert(&t, &parent, &r);
			model_insert(&mp, &r);
		}
	}
	check(&mp, parent);
	check(&mc, child);
	maptree__drop(&t, parent);
	check(&mc, child);
	maptree__drop(&t, child);
	assert_int_equal(t.nodes, 0);
}

/* 200,000 descending inserts (the old sorted array's worst case) and 50,000
 * forks each changing one map: a few million node operations, not 10^10 */
static void test_descending_and_forks(void **state)
{
	struct maptree t;
	struct mapnode *root = NULL, *kids[64] = { 0 };

	(void)state;
	maptree__init(&t, 0);
	for (uint64_t i = 0; i < 200000; i++) {
		struct maprange r = { (200000 - i) * 2, (200000 - i) * 2 + 1, 0, (void *)1 };

		assert_int_equal(maptree__insert(&t, &root, &r), 0);
	}
	assert_int_equal(t.nodes, 200000);
	for (uint64_t i = 0; i < 50000; i++) {
		struct mapnode **k = &kids[i % 64];
		struct maprange r = { 3, 4, 0, (void *)2 };

		maptree__drop(&t, *k);
		*k = maptree__share(root);
		assert_int_equal(maptree__insert(&t, k, &r), 0);
		assert_ptr_equal(maptree__find(*k, 3)->val, (void *)2);
		assert_null(maptree__find(root, 3));
	}
	/* each child copied one path, not the tree */
	assert_true(t.nodes < 200000 + 64 * 100);
	for (int i = 0; i < 64; i++)
		maptree__drop(&t, kids[i]);
	maptree__drop(&t, root);
	assert_int_equal(t.nodes, 0);
}

static void test_cap(void **state)
{
	struct maptree t;
	struct mapnode *root = NULL;
	int err = 0;

	(void)state;
	maptree__init(&t, 1000);
	for (uint64_t i = 0; i < 2000 && !err; i++) {
		struct maprange r = { i * 2, i * 2 + 1, 0, NULL };

		err = maptree__insert(&t, &root, &r);
	}
	assert_int_equal(err, -E2BIG);
	maptree__drop(&t, root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_shared_trees),
		cmocka_unit_test(test_descending_and_forks),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

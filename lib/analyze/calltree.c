// SPDX-License-Identifier: LGPL-2.1-or-later
/* Caller and callee call graphs: see calltree.h. */
#include "calltree.h"
#include "grow.h"
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int by_total(const void *a, const void *b, void *arg)
{
	const struct calltree_node *v = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (v[x].total != v[y].total)
		return v[x].total > v[y].total ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Children lists, heaviest first (every node's parent in parent[]) */
static int link_children(struct calltree *t, const uint32_t *parent)
{
	uint32_t *order = malloc((t->n ? t->n : 1) * sizeof(*order));
	size_t k = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 1; i < t->n; i++)
		order[k++] = (uint32_t)i;
	if (k)
		qsort_r(order, k, sizeof(*order), by_total, t->v);
	for (size_t i = 0; i < t->n; i++)
		t->v[i].first = t->v[i].next = PROFILE_NONE;
	/* prepend lightest first: each list ends heaviest first */
	for (size_t i = k; i-- > 0;) {
		uint32_t c = order[i];

		t->v[c].next = t->v[parent[c]].first;
		t->v[parent[c]].first = c;
	}
	free(order);
	return 0;
}

static int build_caller(struct calltree *t, const struct profile *p, const struct weights *w)
{
	size_t nn;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	uint32_t *parent = malloc((nn ? nn : 1) * sizeof(*parent));
	int err;

	t->v = calloc(nn ? nn : 1, sizeof(*t->v));
	if (!t->v || !parent) {
		free(parent);
		return -ENOMEM;
	}
	t->n = nn ? nn : 1;
	t->v[0].frame = PROFILE_NONE;
	parent[0] = 0;
	for (size_t i = 1; i < nn; i++) {
		t->v[i].frame = nodes[i].frame;
		t->v[i].self = t->v[i].total = w->period[i];
		t->v[i].self_samples = t->v[i].total_samples = w->count[i];
		parent[i] = nodes[i].parent;
	}
	/* children come after their parents */
	for (size_t i = nn; i-- > 1;) {
		t->v[parent[i]].total += t->v[i].total;
		t->v[parent[i]].total_samples += t->v[i].total_samples;
	}
	err = link_children(t, parent);
	free(parent);
	return err;
}

static int build_callee(struct calltree *t, const struct profile *p, const struct weights *w)
{
	size_t nn, cap = 0, pcap = 0;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	struct idmap ids = { 0 };
	uint32_t *parent = NULL;
	int err = -ENOMEM;

	if (grow_to(&t->v, &cap, 1, sizeof(*t->v), 256) || grow_to(&parent, &pcap, 1, sizeof(*parent), 256))
		goto out;
	t->v[0] = (struct calltree_node){ .frame = PROFILE_NONE };
	parent[0] = 0;
	t->n = 1;
	for (size_t i = 1; i < nn; i++) {
		uint32_t cur = 0;

		if (!w->count[i])
			continue;
		for (uint32_t k = (uint32_t)i; k; k = nodes[k].parent) {
			uint64_t key = (uint64_t)cur << 32 | nodes[k].frame;
			uint32_t c = idmap__get(&ids, key);

			if (c == TABLE_NONE) {
				c = (uint32_t)t->n;
				if (idmap__put(&ids, key, c) < 0 ||
				    grow_to(&t->v, &cap, t->n + 1, sizeof(*t->v), 256) ||
				    grow_to(&parent, &pcap, t->n + 1, sizeof(*parent), 256))
					goto out;
				t->v[c] = (struct calltree_node){ .frame = nodes[k].frame };
				parent[c] = cur;
				t->n++;
			}
			cur = c;
			t->v[cur].total += w->period[i];
			t->v[cur].total_samples += w->count[i];
			if (k == i) {   /* the leaf: its own samples */
				t->v[cur].self += w->period[i];
				t->v[cur].self_samples += w->count[i];
			}
		}
	}
	t->v[0].total = w->total_period;
	t->v[0].total_samples = w->total_count;
	err = link_children(t, parent);
out:
	idmap__free(&ids);
	free(parent);
	return err;
}

int calltree__build(struct calltree *t, const struct profile *p, bool callee, sample_pred keep,
		    void *ctx)
{
	struct weights w;
	int err;

	memset(t, 0, sizeof(*t));
	err = weights__build(&w, p, keep, ctx);
	if (err)
		return err;
	t->total_period = w.total_period;
	t->total_samples = w.total_count;
	err = callee ? build_callee(t, p, &w) : build_caller(t, p, &w);
	weights__free(&w);
	if (err)
		calltree__free(t);
	return err;
}

void calltree__free(struct calltree *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

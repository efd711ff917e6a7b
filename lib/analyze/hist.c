// SPDX-License-Identifier: LGPL-2.1-or-later
/* Samples by perf's sort keys, self and children: see hist.h. */
#include "hist.h"
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	enum hist_key k;
} key_names[] = {
	{ "comm", HIST_COMM }, { "pid", HIST_PID }, { "tid", HIST_TID }, { "cpu", HIST_CPU },
	{ "dso", HIST_DSO }, { "shared_object", HIST_DSO }, { "sym", HIST_SYM },
	{ "symbol", HIST_SYM },
};

const char *hist_key__name(enum hist_key k)
{
	static const char *const names[HIST_NR_KEYS] = { "comm", "pid", "tid", "cpu", "dso", "sym" };

	return k < HIST_NR_KEYS ? names[k] : "?";
}

int hist_keys__parse(struct hist_keys *k, const char *list, char *bad, size_t badlen)
{
	const char *s = list;

	memset(k, 0, sizeof(*k));
	do {
		size_t len = strcspn(s, ","), i;

		for (i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
			if (strlen(key_names[i].name) == len && !strncmp(s, key_names[i].name, len))
				break;
		if (i == sizeof(key_names) / sizeof(key_names[0]) || k->n == HIST_MAX_KEYS) {
			snprintf(bad, badlen, "%.*s", (int)len, s);
			return -EINVAL;
		}
		if (!k->has[key_names[i].k]) {  /* a key given twice counts once */
			k->k[k->n++] = key_names[i].k;
			k->has[key_names[i].k] = true;
		}
		s += len;
	} while (*s++ == ',');
	return 0;
}

/* ---- building --------------------------------------------------------------------- */

/* The sample keys of a row (comm, pid, tid, cpu), interned per distinct tuple */
struct task {
	uint32_t comm, pid, tid, cpu;
};

struct build {
	const struct profile *p;
	const struct hist_keys *keys;
	struct hist *h;
	size_t rows_cap;
	uint32_t *stamp;            /* per row: the last bucket that counted it, + 1 */
	size_t stamp_cap;
	struct idmap row_ids;       /* task << 32 | frame part -> row */
	struct idmap t1, t2, t3;    /* (comm, pid) -> a, (a, tid) -> b, (b, cpu) -> task */
	uint32_t n1, n2;
	struct task *tasks;
	size_t ntasks, tasks_cap;
	struct idmap bucket_ids;    /* node << 32 | task -> bucket */
	struct bucket {
		uint32_t node, task;
		uint64_t period, count;
	} *buckets;
	size_t nbuckets, buckets_cap;
	uint32_t *comm_of;          /* per node: the command it is under (string id) */
};

/* The id of key in m, a new one (*next) when it is not there; TABLE_NONE: no memory */
static uint32_t intern(struct idmap *m, uint64_t key, uint32_t *next)
{
	uint32_t v = idmap__get(m, key);

	if (v != TABLE_NONE)
		return v;
	if (idmap__put(m, key, *next) < 0)
		return TABLE_NONE;
	return (*next)++;
}

static uint32_t task_of(struct build *b, const struct profile_sample *s, uint32_t comm)
{
	size_t nt;
	const struct profile_thread *tv = profile__threads(b->p, &nt);
	struct task t = {
		.comm = b->keys->has[HIST_COMM] ? comm : 0,
		.pid = b->keys->has[HIST_PID] ? tv[s->thread].pid : 0,
		.tid = b->keys->has[HIST_TID] ? s->tid : 0,
		.cpu = b->keys->has[HIST_CPU] ? s->cpu : 0,
	};
	uint32_t a, c, id, next;

	a = intern(&b->t1, (uint64_t)t.comm << 32 | t.pid, &b->n1);
	c = a == TABLE_NONE ? a : intern(&b->t2, (uint64_t)a << 32 | t.tid, &b->n2);
	if (c == TABLE_NONE)
		return TABLE_NONE;
	next = (uint32_t)b->ntasks;
	id = intern(&b->t3, (uint64_t)c << 32 | t.cpu, &next);
	if (id == TABLE_NONE || id < b->ntasks)
		return id;
	if (grow_to(&b->tasks, &b->tasks_cap, b->ntasks + 1, sizeof(*b->tasks), 64))
		return TABLE_NONE;
	b->tasks[b->ntasks++] = t;
	return id;
}

/* The samples of each distinct (stack, sample keys): their period and count */
static int fill_buckets(struct build *b, sample_pred keep, void *ctx)
{
	size_t ns;
	const struct profile_sample *sv = profile__samples(b->p, &ns);

	for (size_t i = 0; i < ns; i++) {
		uint32_t task, k, next = (uint32_t)b->nbuckets;

		if (keep && !keep(b->p, &sv[i], ctx))
			continue;
		task = task_of(b, &sv[i], b->comm_of[sv[i].node]);
		if (task == TABLE_NONE)
			return -ENOMEM;
		k = intern(&b->bucket_ids, (uint64_t)sv[i].node << 32 | task, &next);
		if (k == TABLE_NONE)
			return -ENOMEM;
		if (k == b->nbuckets) {
			if (grow_to(&b->buckets, &b->buckets_cap, b->nbuckets + 1, sizeof(*b->buckets), 256))
				return -ENOMEM;
			b->buckets[b->nbuckets++] = (struct bucket){ .node = sv[i].node, .task = task };
		}
		b->buckets[k].period += sv[i].period;
		b->buckets[k].count++;
		b->h->total_period += sv[i].period;
		b->h->total_samples++;
	}
	return 0;
}

/* The row of a task and a frame (PROFILE_NONE: the sample has no frame) */
static struct hist_row *row_of(struct build *b, uint32_t task, uint32_t frame, uint32_t *idx)
{
	size_t nf;
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	const struct hist_keys *k = b->keys;
	uint32_t part = 0, next = (uint32_t)b->h->n, r;
	struct hist_row *row;

	if (k->has[HIST_SYM])
		part = frame == PROFILE_NONE ? 0 : frame + 1;
	else if (k->has[HIST_DSO])
		part = frame == PROFILE_NONE || fv[frame].mapping == PROFILE_NONE ? 0 :
		       fv[frame].mapping + 1;
	r = intern(&b->row_ids, (uint64_t)task << 32 | part, &next);
	if (r == TABLE_NONE)
		return NULL;
	*idx = r;
	if (r < b->h->n)
		return &b->h->v[r];
	if (grow_to(&b->h->v, &b->rows_cap, b->h->n + 1, sizeof(*b->h->v), 256) ||
	    grow_to(&b->stamp, &b->stamp_cap, b->h->n + 1, sizeof(*b->stamp), 256))
		return NULL;
	row = &b->h->v[b->h->n++];
	b->stamp[r] = 0;
	*row = (struct hist_row){ 0 };
	row->v[HIST_COMM] = b->tasks[task].comm;
	row->v[HIST_PID] = b->tasks[task].pid;
	row->v[HIST_TID] = b->tasks[task].tid;
	row->v[HIST_CPU] = b->tasks[task].cpu;
	if (k->has[HIST_SYM])
		row->v[HIST_SYM] = frame;
	if (k->has[HIST_DSO])
		row->v[HIST_DSO] = frame == PROFILE_NONE ? PROFILE_NONE : fv[frame].mapping;
	return row;
}

/* Each bucket's weight to the rows of its frames: self at the leaf, children once per row */
static int fill_rows(struct build *b)
{
	size_t nn, nf;
	const struct profile_node *nodes = profile__nodes(b->p, &nn);
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	bool framed = b->keys->has[HIST_SYM] || b->keys->has[HIST_DSO];

	for (size_t i = 0; i < b->nbuckets; i++) {
		const struct bucket *bk = &b->buckets[i];
		uint32_t n = bk->node, r;
		bool leaf = true;
		struct hist_row *row;

		if (n == 0 || fv[nodes[n].frame].kind == PROFILE_FRAME_COMM) {
			/* a sample without a stack: its own row, or none when frames are keys */
			if (framed)
				continue;
			row = row_of(b, bk->task, PROFILE_NONE, &r);
			if (!row)
				return -ENOMEM;
			row->self += bk->period;
			row->self_samples += bk->count;
			row->children += bk->period;
			row->children_samples += bk->count;
			continue;
		}
		for (; n && nodes[n].parent; n = nodes[n].parent, leaf = false) {
			row = row_of(b, bk->task, nodes[n].frame, &r);
			if (!row)
				return -ENOMEM;
			if (leaf) {
				row->self += bk->period;
				row->self_samples += bk->count;
			}
			if (b->stamp[r] == i + 1)
				continue;   /* recursion: once per sample */
			b->stamp[r] = (uint32_t)i + 1;
			row->children += bk->period;
			row->children_samples += bk->count;
		}
	}
	return 0;
}

int hist__build(struct hist *h, const struct profile *p, const struct hist_keys *keys,
		sample_pred keep, void *ctx)
{
	size_t nn, nf;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	const struct profile_frame *fv = profile__frames(p, &nf);
	struct build b = { .p = p, .keys = keys, .h = h };
	int err = -ENOMEM;

	memset(h, 0, sizeof(*h));
	b.comm_of = calloc(nn ? nn : 1, sizeof(*b.comm_of));
	if (!b.comm_of)
		goto out;
	/* a parent comes before its children; the command is the root's child */
	for (size_t i = 1; i < nn; i++)
		b.comm_of[i] = nodes[i].parent == 0 ? fv[nodes[i].frame].name :
			       b.comm_of[nodes[i].parent];
	err = fill_buckets(&b, keep, ctx);
	if (!err)
		err = fill_rows(&b);
out:
	free(b.comm_of);
	free(b.stamp);
	free(b.tasks);
	free(b.buckets);
	idmap__free(&b.row_ids);
	idmap__free(&b.t1);
	idmap__free(&b.t2);
	idmap__free(&b.t3);
	idmap__free(&b.bucket_ids);
	if (err)
		hist__free(h);
	return err;
}

void hist__free(struct hist *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* ---- sorting ----------------------------------------------------------------------- */

struct sort_ctx {
	const struct profile *p;
	const struct hist_keys *keys;
	bool by_children;
	const uint64_t *comm_weight;    /* by comm string id, NULL: not grouped */
};

static int cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

static const char *frame_name(const struct profile *p, uint32_t f)
{
	size_t nf;

	return f == PROFILE_NONE ? "" : profile__str(p, profile__frames(p, &nf)[f].name);
}

static const char *dso_name(const struct profile *p, uint32_t m)
{
	size_t nm;

	return m == PROFILE_NONE ? "" : profile__str(p, profile__mappings(p, &nm)[m].file);
}

static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct hist_row *x = a, *y = b;
	int r;

	if (c->comm_weight && x->v[HIST_COMM] != y->v[HIST_COMM]) {
		r = cmp_u64(c->comm_weight[y->v[HIST_COMM]], c->comm_weight[x->v[HIST_COMM]]);
		return r ? r : cmp_u64(x->v[HIST_COMM], y->v[HIST_COMM]);
	}
	if (c->by_children && (r = cmp_u64(y->children, x->children)))
		return r;
	if ((r = cmp_u64(y->self, x->self)))
		return r;
	for (size_t i = 0; i < c->keys->n; i++) {
		enum hist_key k = c->keys->k[i];

		switch (k) {
		case HIST_COMM:
			r = strcmp(profile__str(c->p, x->v[k]), profile__str(c->p, y->v[k]));
			break;
		case HIST_SYM:
			r = strcmp(frame_name(c->p, x->v[k]), frame_name(c->p, y->v[k]));
			break;
		case HIST_DSO:
			r = strcmp(dso_name(c->p, x->v[k]), dso_name(c->p, y->v[k]));
			break;
		default:
			r = cmp_u64(x->v[k], y->v[k]);
			break;
		}
		if (r)
			return r;
	}
	/* last: the identities (two files' functions of one name) */
	return cmp_u64(x->v[HIST_SYM], y->v[HIST_SYM]) ?: cmp_u64(x->v[HIST_DSO], y->v[HIST_DSO]);
}

void hist__sort(struct hist *h, const struct profile *p, const struct hist_keys *keys,
		bool by_children, bool group_comm)
{
	struct sort_ctx c = { .p = p, .keys = keys, .by_children = by_children };
	uint64_t *w = NULL;

	if (group_comm && keys->has[HIST_COMM]) {
		w = calloc(profile__strings(p)->n + 1, sizeof(*w));
		if (!w)
			return;     /* out of memory: left as built */
		for (size_t i = 0; i < h->n; i++)
			w[h->v[i].v[HIST_COMM]] += h->v[i].self;
		c.comm_weight = w;
	}
	if (h->n)
		qsort_r(h->v, h->n, sizeof(*h->v), row_cmp, &c);
	free(w);
}

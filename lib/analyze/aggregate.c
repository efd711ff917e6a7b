// SPDX-License-Identifier: LGPL-2.1-or-later
/* Aggregations over a profile: see aggregate.h. */
#include "aggregate.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int range_pred__init(struct range_pred_ctx *c, const struct profile *p, uint32_t name)
{
	size_t nr;
	const struct profile_range *rv = profile__ranges(p, &nr);

	c->name = name;
	c->within = calloc(nr ? nr : 1, sizeof(*c->within));
	if (!c->within)
		return -ENOMEM;
	/* a range's parent began before it: it comes first */
	for (size_t i = 0; i < nr; i++)
		c->within[i] = rv[i].name == name ||
			       (rv[i].parent != PROFILE_NONE && c->within[rv[i].parent]);
	return 0;
}

void range_pred__free(struct range_pred_ctx *c)
{
	free(c->within);
	c->within = NULL;
}

bool aggregate__in_range(const struct profile *p, const struct profile_sample *s, void *ctx)
{
	const struct range_pred_ctx *c = ctx;

	return s->range != PROFILE_NONE && c->within[s->range];
}

int weights__build(struct weights *w, const struct profile *p, sample_pred keep, void *ctx)
{
	size_t ns;
	const struct profile_sample *sv = profile__samples(p, &ns);

	memset(w, 0, sizeof(*w));
	profile__nodes(p, &w->n);
	w->period = calloc(w->n ? w->n : 1, sizeof(*w->period));
	w->count = calloc(w->n ? w->n : 1, sizeof(*w->count));
	if (!w->period || !w->count) {
		weights__free(w);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		if (keep && !keep(p, &sv[i], ctx))
			continue;
		w->period[sv[i].node] += sv[i].period;
		w->count[sv[i].node]++;
		w->total_period += sv[i].period;
		w->total_count++;
	}
	return 0;
}

void weights__free(struct weights *w)
{
	free(w->period);
	free(w->count);
	memset(w, 0, sizeof(*w));
}

/* ---- functions ------------------------------------------------------------------ */

struct fnbuild {
	struct fnstats *out;
	size_t cap;
	struct idmap ids;       /* comm << 32 | name -> index */
};

static struct fnstat *fn_get(struct fnbuild *b, uint32_t comm, uint32_t name)
{
	uint64_t key = (uint64_t)comm << 32 | name;
	uint32_t i = idmap__get(&b->ids, key);

	if (i != TABLE_NONE)
		return &b->out->v[i];
	if (grow_to(&b->out->v, &b->cap, b->out->n + 1, sizeof(*b->out->v), 256))
		return NULL;
	if (idmap__put(&b->ids, key, (uint32_t)b->out->n) < 0)
		return NULL;
	b->out->v[b->out->n] = (struct fnstat){ .comm = comm, .name = name };
	return &b->out->v[b->out->n++];
}

int fnstats__build(struct fnstats *out, const struct profile *p, const struct weights *w,
		   bool per_comm)
{
	size_t nn, nf;
	const struct profile_node *nodes = profile__nodes(p, &nn);
	const struct profile_frame *frames = profile__frames(p, &nf);
	uint32_t *stamp = calloc(profile__strings(p)->n + 1, sizeof(*stamp));
	struct fnbuild b = { .out = out };
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!stamp)
		return -ENOMEM;
	out->total_period = w->total_period;
	out->total_samples = w->total_count;
	for (size_t i = 1; i < nn && !err; i++) {
		uint32_t comm = PROFILE_NONE, leaf = frames[nodes[i].frame].name;
		struct fnstat *f;

		if (!w->count[i])
			continue;
		/* the comm frame is the child of the root */
		for (uint32_t k = (uint32_t)i; k; k = nodes[k].parent)
			if (nodes[k].parent == 0)
				comm = per_comm ? frames[nodes[k].frame].name : PROFILE_NONE;
		if (frames[nodes[i].frame].kind == PROFILE_FRAME_COMM)
			continue;   /* a sample with no stack at all */
		f = fn_get(&b, comm, leaf);
		if (!f) {
			err = -ENOMEM;
			break;
		}
		f->self += w->period[i];
		f->self_samples += w->count[i];
		for (uint32_t k = (uint32_t)i; k && nodes[k].parent; k = nodes[k].parent) {
			uint32_t name = frames[nodes[k].frame].name;

			if (stamp[name] == i)
				continue;   /* recursion: once per stack */
			stamp[name] = (uint32_t)i;
			f = fn_get(&b, comm, name);
			if (!f) {
				err = -ENOMEM;
				break;
			}
			f->total += w->period[i];
			f->total_samples += w->count[i];
		}
	}
	free(stamp);
	idmap__free(&b.ids);
	if (err)
		fnstats__free(out);
	return err;
}

static const struct profile *sort_p;
static enum fnsort sort_by;
static uint64_t *sort_comm_weight;   /* by comm string id */

static int fn_cmp(const void *a, const void *b)
{
	const struct fnstat *x = a, *y = b;
	uint64_t kx = sort_by == FNSORT_SELF ? x->self : x->total;
	uint64_t ky = sort_by == FNSORT_SELF ? y->self : y->total;

	if (x->comm != y->comm) {
		uint64_t cx = x->comm == PROFILE_NONE ? 0 : sort_comm_weight[x->comm];
		uint64_t cy = y->comm == PROFILE_NONE ? 0 : sort_comm_weight[y->comm];

		if (cx != cy)
			return cx > cy ? -1 : 1;
		return x->comm < y->comm ? -1 : 1;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(profile__str(sort_p, x->name), profile__str(sort_p, y->name));
}

void fnstats__sort(struct fnstats *s, const struct profile *p, enum fnsort by)
{
	sort_comm_weight = calloc(profile__strings(p)->n + 1, sizeof(uint64_t));
	if (!sort_comm_weight)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].comm != PROFILE_NONE)
			sort_comm_weight[s->v[i].comm] += s->v[i].self;
	sort_p = p;
	sort_by = by;
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), fn_cmp);
	free(sort_comm_weight);
	sort_comm_weight = NULL;
}

void fnstats__free(struct fnstats *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ---- ranges --------------------------------------------------------------------- */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of n sorted values. */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned pct)
{
	size_t rank = (n * pct + 99) / 100;

	return n ? v[rank ? rank - 1 : 0] : 0;
}

static int range_durations(struct rangestats *out, const struct profile *p, struct idmap *ids)
{
	size_t nr;
	const struct profile_range *rv = profile__ranges(p, &nr);
	uint64_t *d = malloc((nr ? nr : 1) * sizeof(*d));
	size_t *fill;

	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		uint32_t k = idmap__get(ids, rv[i].name);
		struct rangestat *r;

		if (k == TABLE_NONE) {
			k = (uint32_t)out->n++;
			if (idmap__put(ids, rv[i].name, k) < 0) {
				free(d);
				return -ENOMEM;
			}
			out->v[k] = (struct rangestat){ .name = rv[i].name, .min_ns = UINT64_MAX };
		}
		r = &out->v[k];
		if (rv[i].open) {
			r->open++;
			continue;
		}
		r->count++;
	}
	/* durations of each name, contiguous in d: offsets from counts */
	fill = calloc(out->n + 1, sizeof(*fill));
	if (!fill) {
		free(d);
		return -ENOMEM;
	}
	for (size_t k = 1; k <= out->n; k++)
		fill[k] = fill[k - 1] + out->v[k - 1].count;
	for (size_t i = 0; i < nr; i++) {
		uint32_t k = idmap__get(ids, rv[i].name);

		if (!rv[i].open)
			d[fill[k]++] = rv[i].end - rv[i].start;
	}
	for (size_t k = 0, at = 0; k < out->n; k++) {
		struct rangestat *r = &out->v[k];
		uint64_t *v = d + at;

		at += r->count;
		if (r->count)
			qsort(v, r->count, sizeof(*v), u64_cmp);
		for (size_t j = 0; j < r->count; j++)
			r->total_ns += v[j];
		r->mean_ns = r->count ? r->total_ns / r->count : 0;
		r->min_ns = r->count ? v[0] : 0;
		r->max_ns = r->count ? v[r->count - 1] : 0;
		r->p50_ns = percentile(v, r->count, 50);
		r->p99_ns = percentile(v, r->count, 99);
	}
	free(fill);
	free(d);
	return 0;
}

/* By range (held in comm while building), then heaviest first */
static int fn_by_self(const void *a, const void *b)
{
	const struct fnstat *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Which range instances are the outermost of their name on their nesting
 * path (top[r]): a depth-first walk of the nesting forest, counting the
 * names open on the path.  0 or -ENOMEM.
 */
static int outermost_of_name(const struct profile *p, struct idmap *ids, size_t nnames,
			     bool *top)
{
	size_t nr;
	const struct profile_range *rv = profile__ranges(p, &nr);
	uint32_t *child = malloc((nr + 1) * sizeof(*child));     /* first child, [nr]: roots */
	uint32_t *next = malloc((nr ? nr : 1) * sizeof(*next));  /* next sibling */
	size_t *stack = malloc((nr ? nr : 1) * sizeof(*stack));
	uint32_t *on_path = calloc(nnames ? nnames : 1, sizeof(*on_path));
	size_t sp = 0;
	int err = 0;

	if (!child || !next || !stack || !on_path) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i <= nr; i++)
		child[i] = PROFILE_NONE;
	for (size_t i = nr; i-- > 0;) {
		uint32_t up = rv[i].parent == PROFILE_NONE ? (uint32_t)nr : rv[i].parent;

		next[i] = child[up];
		child[up] = (uint32_t)i;
	}
	/* stack entries: r, a range to enter, or nr + r, one to leave; each range
	 * is on it once, to be entered or left: at most nr entries */
	for (uint32_t r = child[nr]; r != PROFILE_NONE; r = next[r])
		stack[sp++] = r;
	while (sp) {
		size_t r = stack[--sp];
		uint32_t k;

		if (r >= nr) {
			on_path[idmap__get(ids, rv[r - nr].name)]--;
			continue;
		}
		k = idmap__get(ids, rv[r].name);
		top[r] = on_path[k]++ == 0;
		stack[sp++] = nr + r;
		for (uint32_t c = child[r]; c != PROFILE_NONE; c = next[c])
			stack[sp++] = c;
	}
out:
	free(child);
	free(next);
	free(stack);
	free(on_path);
	return err;
}

/*
 * Samples per range name: self where innermost; total once per sample at
 * every name it nests in: the samples under each range instance (summed up
 * the nesting, children after their parents), counted at the instances that
 * are the outermost of their name on their path.
 */
static int range_samples(struct rangestats *out, const struct profile *p, struct idmap *ids)
{
	size_t ns, nr, nn, nf;
	const struct profile_sample *sv = profile__samples(p, &ns);
	const struct profile_range *rv = profile__ranges(p, &nr);
	const struct profile_node *nodes = profile__nodes(p, &nn);
	const struct profile_frame *frames = profile__frames(p, &nf);
	struct fnstats fs = { 0 };
	struct fnbuild fb = { .out = &fs };     /* one for all: keyed by range name, function */
	uint64_t *under = calloc(nr ? nr : 1, sizeof(*under));        /* samples */
	uint64_t *under_p = calloc(nr ? nr : 1, sizeof(*under_p));    /* their period */
	bool *top = calloc(nr ? nr : 1, sizeof(*top));
	int err = 0;

	if (!under || !under_p || !top) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ns && !err; i++) {
		uint32_t r = sv[i].range, k;
		struct fnstat *f;

		if (r == PROFILE_NONE)
			continue;
		k = idmap__get(ids, rv[r].name);
		out->v[k].self_samples++;
		out->v[k].self_period += sv[i].period;
		under[r]++;
		under_p[r] += sv[i].period;
		f = fn_get(&fb, k, frames[nodes[sv[i].node].frame].name);
		if (!f) {
			err = -ENOMEM;
			break;
		}
		f->self += sv[i].period;
		f->self_samples++;
	}
	if (!err)
		err = outermost_of_name(p, ids, out->n, top);
	for (size_t r = nr; r-- > 0 && !err;) {
		if (rv[r].parent != PROFILE_NONE) {
			under[rv[r].parent] += under[r];
			under_p[rv[r].parent] += under_p[r];
		}
		if (top[r]) {
			uint32_t k = idmap__get(ids, rv[r].name);

			out->v[k].total_samples += under[r];
			out->v[k].total_period += under_p[r];
		}
	}
	/* each range's functions: one slice of the sorted array */
	if (!err && fs.n)
		qsort(fs.v, fs.n, sizeof(*fs.v), fn_by_self);
	for (size_t i = 0; i < fs.n && !err; i++) {
		struct rangestat *r = &out->v[fs.v[i].comm];

		if (!r->nfns)
			r->fns = &fs.v[i];
		r->nfns++;
		fs.v[i].comm = PROFILE_NONE;
	}
	if (!err)
		out->fn_store = fs.v;
	else
		free(fs.v);
out:
	idmap__free(&fb.ids);
	free(under);
	free(under_p);
	free(top);
	return err;
}

/* ---- where the ranges' wall time went -------------------------------------------- */

struct stack_acc {
	uint32_t k, node;
	uint64_t ns, intervals;
};

static int by_name_node(const void *a, const void *b)
{
	const struct stack_acc *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int by_name_ns(const void *a, const void *b)
{
	const struct stack_acc *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* The blocked stacks of each name's own time, the heaviest RANGESTATS_STACKS kept. */
static int range_stacks(struct rangestats *out, const struct profile *p, struct idmap *ids)
{
	size_t no, nr, n = 0, m = 0;
	const struct profile_offcpu *ov = profile__offcpus(p, &no);
	const struct profile_range *rv = profile__ranges(p, &nr);
	struct stack_acc *a = malloc((no ? no : 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < no; i++)
		if (!ov[i].runnable && ov[i].range != PROFILE_NONE && ov[i].range < nr)
			a[n++] = (struct stack_acc){ .k = idmap__get(ids, rv[ov[i].range].name),
				.node = ov[i].node, .ns = ov[i].period - ov[i].runq,
				.intervals = ov[i].count };
	if (n)
		qsort(a, n, sizeof(*a), by_name_node);
	for (size_t i = 0; i < n; i++) {
		if (m && a[m - 1].k == a[i].k && a[m - 1].node == a[i].node) {
			a[m - 1].ns += a[i].ns;
			a[m - 1].intervals += a[i].intervals;
		} else {
			a[m++] = a[i];
		}
	}
	if (m)
		qsort(a, m, sizeof(*a), by_name_ns);
	for (size_t i = 0; i < m; i++) {
		struct rangestat *r = &out->v[a[i].k];

		if (r->nstacks < RANGESTATS_STACKS)
			r->stacks[r->nstacks++] = (struct rangestack){ .node = a[i].node, .ns = a[i].ns,
				.intervals = a[i].intervals };
	}
	free(a);
	return 0;
}

/*
 * On CPU, blocked and waiting for a CPU per instance (nested ones summed
 * into their parents, children after them), counted at the closed
 * instances that are the outermost of their name.  An interval off the
 * CPU lies within the innermost range open when it began: the thread
 * cannot end a range while it is off the CPU.
 */
static int range_offcpu(struct rangestats *out, const struct profile *p, struct idmap *ids)
{
	size_t ns, no, nr;
	const struct profile_sample *sv = profile__samples(p, &ns);
	const struct profile_offcpu *ov = profile__offcpus(p, &no);
	const struct profile_range *rv = profile__ranges(p, &nr);
	uint64_t *acc = calloc(3 * (nr ? nr : 1), sizeof(*acc));   /* on, blocked, runqueue */
	bool *top = calloc(nr ? nr : 1, sizeof(*top));
	bool per_period;
	uint64_t unit = profile__oncpu_ns(p, &per_period);
	int err = 0;

	if (!acc || !top) {
		err = -ENOMEM;
		goto out;
	}
	out->offcpu = true;
	out->oncpu = unit != 0;
	for (size_t i = 0; i < ns && unit; i++)
		if (sv[i].range != PROFILE_NONE && sv[i].range < nr)
			acc[3 * sv[i].range] += per_period ? sv[i].period : unit;
	for (size_t i = 0; i < no; i++) {
		if (ov[i].range == PROFILE_NONE || ov[i].range >= nr)
			continue;
		acc[3 * ov[i].range + 1] += ov[i].period - ov[i].runq;
		acc[3 * ov[i].range + 2] += ov[i].runq;
	}
	err = outermost_of_name(p, ids, out->n, top);
	for (size_t r = nr; r-- > 0 && !err;) {
		if (rv[r].parent != PROFILE_NONE)
			for (int j = 0; j < 3; j++)
				acc[3 * rv[r].parent + j] += acc[3 * r + j];
		if (top[r] && !rv[r].open) {
			struct rangestat *s = &out->v[idmap__get(ids, rv[r].name)];

			s->instances++;
			s->wall_ns += rv[r].end - rv[r].start;
			s->oncpu_ns += acc[3 * r];
			s->blocked_ns += acc[3 * r + 1];
			s->runq_ns += acc[3 * r + 2];
		}
	}
	if (!err)
		err = range_stacks(out, p, ids);
out:
	free(acc);
	free(top);
	return err;
}

int rangestats__build(struct rangestats *out, const struct profile *p)
{
	size_t nr;
	struct idmap ids = { 0 };
	int err;

	profile__ranges(p, &nr);
	memset(out, 0, sizeof(*out));
	out->v = calloc(nr ? nr : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	err = range_durations(out, p, &ids);
	if (!err)
		err = range_samples(out, p, &ids);
	if (!err && profile__offcpus(p, &nr) && nr)
		err = range_offcpu(out, p, &ids);
	idmap__free(&ids);
	if (err)
		rangestats__free(out);
	return err;
}

void rangestats__free(struct rangestats *s)
{
	free(s->fn_store);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

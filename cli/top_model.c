// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What perfmark top shows (top.h): samples per (command, DSO, function),
 * their weight the sampled period as perf top counts it, decayed by 7/8 at
 * every interval so the view follows what runs now; and per range name the
 * completions of the last interval and the latest durations.
 *
 * Nothing is allocated per sample: functions, rows and the address cache
 * are tables that grow by doubling, up to TOP_MAX_ENTRIES rows and
 * functions and TOP_MAX_STRINGS names (a sample that would need another is
 * counted as refused); the caches by thread and address start again when
 * they reach ADDR_CACHE_MAX.  An address is
 * symbolized once per (process generation, address): a process's
 * generation changes when its mappings or its command do.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "commname.h"
#include "callchain.h"
#include "escape.h"
#include "grow.h"
#include "perfread.h"
#include "symbolize.h"
#include "top.h"

#define USER_ADDR_BITS 47
#define MAX_GEN (1u << 16)
#define ADDR_CACHE_MAX (1u << 20)
#define TOP_MAX_STRINGS (4u * TOP_MAX_ENTRIES)
#define DECAY_NUM 7
#define DECAY_DEN 8

struct fn {
	uint32_t dso, sym;              /* string ids */
};

struct entry {
	uint32_t comm, fn;
	uint64_t self, total;           /* period, decayed */
	uint64_t stamp;                 /* the last sample that counted it in total */
};

struct rng {
	uint32_t name;
	uint64_t count, window;         /* completions: since the start, this interval */
	double rate;                    /* of the last interval */
	bool rated;                     /* an interval has ended since it was first seen */
	uint64_t durs[TOP_RANGE_KEEP];  /* the latest, a ring */
	uint32_t head, n;
};

struct top_model {
	pthread_mutex_t mu;
	struct top_model_opts o;
	char event[64];
	bool have_event;
	struct strtab strs;
	struct idmap fn_ids, ent_ids, addr, gen, comms, rng_ids;
	struct fn *fns;
	size_t nfns, capfns;
	struct entry *ents;
	size_t nents, capents;
	struct rng *rngs;
	size_t nrngs, caprngs;
	uint32_t next_gen;
	uint64_t stamp;
	uint64_t window, last_window, total, lost, refused;
};

int top_model__new(struct top_model **out, const struct top_model_opts *o)
{
	struct top_model *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->mu, NULL);
	m->o = *o;
	if (o->event) {
		snprintf(m->event, sizeof(m->event), "%s", o->event);
		m->o.event = m->event;
	}
	*out = m;
	return 0;
}

void top_model__free(struct top_model *m)
{
	if (!m)
		return;
	strtab__free(&m->strs);
	idmap__free(&m->fn_ids);
	idmap__free(&m->ent_ids);
	idmap__free(&m->addr);
	idmap__free(&m->gen);
	idmap__free(&m->comms);
	idmap__free(&m->rng_ids);
	free(m->fns);
	free(m->ents);
	free(m->rngs);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

/* a name's id; past TOP_MAX_STRINGS only the names known already have one */
static uint32_t intern_n(struct top_model *m, const char *s, size_t len)
{
	if (m->strs.n >= TOP_MAX_STRINGS)
		return strtab__find(&m->strs, s, len);
	return strtab__intern(&m->strs, s, len);
}

static uint32_t intern(struct top_model *m, const char *s)
{
	return intern_n(m, s, strlen(s));
}

/* ---- functions, by address ------------------------------------------------------ */

static uint32_t fn_of(struct top_model *m, const char *dso, const char *sym)
{
	uint32_t d = intern(m, dso), n = intern(m, sym), i;
	uint64_t key = (uint64_t)d << 32 | n;

	if (d == TABLE_NONE || n == TABLE_NONE)
		return TABLE_NONE;
	i = idmap__get(&m->fn_ids, key);
	if (i != TABLE_NONE)
		return i;
	if (m->nfns >= TOP_MAX_ENTRIES || grow(&m->fns, &m->capfns, m->nfns + 1, sizeof(*m->fns)))
		return TABLE_NONE;
	m->fns[m->nfns] = (struct fn){ .dso = d, .sym = n };
	i = (uint32_t)m->nfns++;
	return idmap__put(&m->fn_ids, key, i) < 0 ? TABLE_NONE : i;
}

/* the address cache's key: kernel addresses as they are, user ones per process generation */
static bool addr_key(struct top_model *m, uint32_t pid, const struct callchain_ip *ip,
		     uint64_t *key)
{
	uint32_t g;

	if (ip->kernel || ip->ip >> 63) {
		*key = ip->ip | 1ULL << 63;
		return true;
	}
	if (ip->ip >> USER_ADDR_BITS)
		return false;
	g = idmap__get(&m->gen, pid);
	if (g == TABLE_NONE) {
		if (m->next_gen >= MAX_GEN || m->addr.n >= ADDR_CACHE_MAX) {
			/* long runs: start the cache again rather than grow it forever */
			idmap__clear(&m->addr);
			idmap__clear(&m->gen);
			m->next_gen = 0;
		}
		g = m->next_gen++;
		if (idmap__put(&m->gen, pid, g) < 0)
			return false;
	}
	*key = (uint64_t)g << USER_ADDR_BITS | ip->ip;
	return true;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

static uint32_t fn_at(struct top_model *m, struct symbolizer *sym, uint32_t pid,
		      const struct callchain_ip *ip)
{
	struct symbolizer_loc loc;
	char buf[SYMBOLIZER_FRAME_NAME_MAX];
	uint64_t key = 0;
	bool cached = addr_key(m, pid, ip, &key);
	uint32_t f = cached ? idmap__get(&m->addr, key) : TABLE_NONE;

	if (f != TABLE_NONE)
		return f;
	symbolizer__lookup(sym, pid, ip->ip, ip->kernel, &loc);
	/* one frame-name rule with report and the exports: FILE+0xOFFSET without a symbol */
	f = fn_of(m, loc.dso ? base_name(loc.dso) : "[unknown]", symbolizer_loc__frame(&loc, buf, sizeof(buf)));
	if (f != TABLE_NONE && cached)
		idmap__put(&m->addr, key, f);
	return f;
}

/* ---- samples ----------------------------------------------------------------------- */

static uint32_t comm_of(struct top_model *m, struct symbolizer *sym, uint32_t tid)
{
	uint32_t c = idmap__get(&m->comms, tid);
	const char *s;
	char buf[COMMNAME_LEN];

	if (c != TABLE_NONE)
		return c;
	s = comm_or_tid(symbolizer__comm(sym, tid), tid, buf);
	c = intern(m, s);
	if (m->comms.n >= ADDR_CACHE_MAX)
		idmap__clear(&m->comms);     /* threads come and go: start again */
	if (c != TABLE_NONE)
		idmap__put(&m->comms, tid, c);
	return c;
}

static struct entry *entry_of(struct top_model *m, uint32_t comm, uint32_t fn)
{
	uint64_t key = (uint64_t)comm << 32 | fn;
	uint32_t i = idmap__get(&m->ent_ids, key);

	if (i != TABLE_NONE)
		return &m->ents[i];
	if (m->nents >= TOP_MAX_ENTRIES || grow(&m->ents, &m->capents, m->nents + 1, sizeof(*m->ents)))
		return NULL;
	i = (uint32_t)m->nents;
	if (idmap__put(&m->ent_ids, key, i) < 0)
		return NULL;
	m->ents[m->nents++] = (struct entry){ .comm = comm, .fn = fn };
	return &m->ents[i];
}

static bool wanted(struct top_model *m, const struct perfread_sample *s)
{
	const char *name = s->event && s->event->name ? s->event->name : "samples";

	if (!m->have_event && (!m->o.event || !strcmp(m->o.event, name))) {
		snprintf(m->event, sizeof(m->event), "%s", name);
		m->have_event = true;
	}
	return m->have_event && !strcmp(m->event, name);
}

static void add_sample(struct top_model *m, struct symbolizer *sym, const struct perfread *r,
		       const struct perfread_sample *s)
{
	struct callchain_ip ips[CALLCHAIN_MAX];
	uint64_t period = s->period ? s->period : 1;
	size_t n = callchain__get(sym, r, s, ips, m->o.children ? CALLCHAIN_MAX : 1), i;
	uint32_t comm = comm_of(m, sym, s->tid);
	struct entry *e;

	m->window++;
	m->total++;
	m->stamp++;
	for (i = 0; i < n; i++) {
		uint32_t f = fn_at(m, sym, s->pid, &ips[i]);

		e = f == TABLE_NONE || comm == TABLE_NONE ? NULL : entry_of(m, comm, f);
		if (!e) {
			if (!i)
				m->refused++;
			continue;
		}
		if (!i)
			e->self += period;
		if (e->stamp != m->stamp) {     /* once per sample, however often it recurs */
			e->stamp = m->stamp;
			e->total += period;
		}
	}
}

int top_model__sample(struct top_model *m, struct symbolizer *sym, const struct perfread *r,
		      const struct perfread_sample *s)
{
	pthread_mutex_lock(&m->mu);
	if (s->time >= m->o.since && wanted(m, s))
		add_sample(m, sym, r, s);
	pthread_mutex_unlock(&m->mu);
	return 0;
}

/* a process's maps or command changed: its addresses are looked up again */
void top_model__sideband(struct top_model *m, struct symbolizer *sym,
			 const struct perf_event_header *rec)
{
	uint32_t ids[2];

	if (rec->size < sizeof(*rec) + sizeof(ids))
		return;
	memcpy(ids, rec + 1, sizeof(ids));      /* COMM, MMAP, MMAP2, FORK, EXIT: pid, tid/ppid */
	pthread_mutex_lock(&m->mu);
	switch (rec->type) {
	case PERF_RECORD_COMM: {
		const char *c = symbolizer__comm(sym, ids[1]);
		uint32_t id = c ? intern(m, c) : TABLE_NONE;

		if (id != TABLE_NONE)
			idmap__put(&m->comms, ids[1], id);
		__attribute__((fallthrough));   /* an exec maps other files */
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_EXIT:
		if (idmap__get(&m->gen, ids[0]) != TABLE_NONE && m->next_gen < MAX_GEN)
			idmap__put(&m->gen, ids[0], m->next_gen++);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&m->mu);
}

void top_model__lost(struct top_model *m, uint64_t n)
{
	pthread_mutex_lock(&m->mu);
	m->lost += n;
	pthread_mutex_unlock(&m->mu);
}

/* ---- ranges ------------------------------------------------------------------------ */

int top_model__range_end(struct top_model *m, const char *name, size_t len, uint64_t time,
			 uint64_t duration)
{
	uint32_t id, i;
	struct rng *r;
	int e = 0;

	pthread_mutex_lock(&m->mu);
	if (time < m->o.since)
		goto out;
	id = intern_n(m, name, len);
	i = id == TABLE_NONE ? TABLE_NONE : idmap__get(&m->rng_ids, id);
	if (id != TABLE_NONE && i == TABLE_NONE && m->nrngs < TOP_MAX_RANGES) {
		if (grow(&m->rngs, &m->caprngs, m->nrngs + 1, sizeof(*m->rngs)) ||
		    idmap__put(&m->rng_ids, id, (uint32_t)m->nrngs) < 0) {
			e = -ENOMEM;
			goto out;
		}
		i = (uint32_t)m->nrngs++;
		memset(&m->rngs[i], 0, sizeof(m->rngs[i]));
		m->rngs[i].name = id;
	}
	if (i == TABLE_NONE) {
		m->refused++;
		goto out;
	}
	r = &m->rngs[i];
	r->count++;
	r->window++;
	r->durs[r->head] = duration;
	r->head = (r->head + 1) % TOP_RANGE_KEEP;
	if (r->n < TOP_RANGE_KEEP)
		r->n++;
out:
	pthread_mutex_unlock(&m->mu);
	return e;
}

/* ---- views -------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* s, cut to fit len with its NUL, between characters (escaped when drawn) */
static void copy_name(char *dst, size_t len, const char *s)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t l = escape_utf8_len((const uint8_t *)s + i, n - i < 4 ? n - i : 4);

		l = l ? l : 1;      /* an invalid byte: one, as escape_term shows it */
		if (i + l > len - 1)
			break;
		i += l;
	}
	memcpy(dst, s, i);
	dst[i] = '\0';
}

static void view_range(const struct top_model *m, const struct rng *r, struct top_range *out)
{
	uint64_t d[TOP_RANGE_KEEP];

	copy_name(out->name, sizeof(out->name), strtab__str(&m->strs, r->name));
	out->rate = r->rated ? r->rate : -1;
	out->count = r->count;
	out->kept = r->n;
	out->p50_ns = out->p99_ns = out->max_ns = 0;
	if (!r->n)
		return;
	memcpy(d, r->durs, r->n * sizeof(d[0]));
	qsort(d, r->n, sizeof(d[0]), cmp_u64);
	out->p50_ns = d[(r->n - 1) / 2];
	out->p99_ns = d[(uint32_t)((r->n - 1) * 0.99 + 0.5)];
	out->max_ns = d[r->n - 1];
}

struct sort_ctx {
	const struct top_model *m;
	enum top_sort by;
};

static int cmp_view(const void *a, const void *b, void *ctx)
{
	const struct sort_ctx *c = ctx;
	const struct entry *x = &c->m->ents[*(const uint32_t *)a];
	const struct entry *y = &c->m->ents[*(const uint32_t *)b];
	uint64_t kx = c->by == TOP_SORT_TOTAL ? x->total : x->self;
	uint64_t ky = c->by == TOP_SORT_TOTAL ? y->total : y->self;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static bool in_zoom(const struct top_model *m, const struct entry *e, const struct top_query *q)
{
	return (q->comm == TABLE_NONE || e->comm == q->comm) &&
	       (q->dso == TABLE_NONE || m->fns[e->fn].dso == q->dso);
}

static void view_rows(struct top_model *m, const struct top_query *q, struct top_view *v,
		      uint32_t *idx)
{
	struct sort_ctx sc = { .m = m, .by = q->sort };
	uint64_t sum = 0;
	size_t n = 0, i, max = q->max_rows < TOP_VIEW_ROWS ? q->max_rows : TOP_VIEW_ROWS;

	for (i = 0; i < m->nents; i++) {
		const struct entry *e = &m->ents[i];

		if (!in_zoom(m, e, q))
			continue;
		sum += e->self;
		if (e->self || e->total)
			idx[n++] = (uint32_t)i;
	}
	qsort_r(idx, n, sizeof(*idx), cmp_view, &sc);
	v->nr_rows = n < max ? n : max;
	v->more = n - v->nr_rows;
	for (i = 0; i < v->nr_rows; i++) {
		const struct entry *e = &m->ents[idx[i]];
		struct top_row *r = &v->rows[i];

		r->comm = e->comm;
		r->dso = m->fns[e->fn].dso;
		r->self = sum ? 100.0 * e->self / sum : 0;
		r->total = sum ? 100.0 * e->total / sum : 0;
		copy_name(r->comm_s, sizeof(r->comm_s), strtab__str(&m->strs, e->comm));
		copy_name(r->dso_s, sizeof(r->dso_s), strtab__str(&m->strs, r->dso));
		copy_name(r->sym_s, sizeof(r->sym_s), strtab__str(&m->strs, m->fns[e->fn].sym));
	}
}

void top_model__view(struct top_model *m, const struct top_query *q, struct top_view *v)
{
	uint32_t *idx;
	size_t i;

	pthread_mutex_lock(&m->mu);
	snprintf(v->event, sizeof(v->event), "%s", m->have_event ? m->event :
		 m->o.event ? m->o.event : "");
	v->zoom_comm[0] = v->zoom_dso[0] = '\0';
	if (q->comm != TABLE_NONE && q->comm < m->strs.n)
		copy_name(v->zoom_comm, sizeof(v->zoom_comm), strtab__str(&m->strs, q->comm));
	if (q->dso != TABLE_NONE && q->dso < m->strs.n)
		copy_name(v->zoom_dso, sizeof(v->zoom_dso), strtab__str(&m->strs, q->dso));
	v->samples = m->last_window;
	v->total_samples = m->total;
	v->lost = m->lost;
	v->refused = m->refused;
	v->children = m->o.children;
	v->nr_rows = v->more = 0;
	idx = m->nents ? malloc(m->nents * sizeof(*idx)) : NULL;   /* once an interval */
	if (idx)
		view_rows(m, q, v, idx);
	free(idx);
	v->nr_ranges = 0;
	for (i = 0; i < m->nrngs && v->nr_ranges < TOP_VIEW_RANGES; i++)
		view_range(m, &m->rngs[i], &v->ranges[v->nr_ranges++]);
	pthread_mutex_unlock(&m->mu);
}

void top_model__tick(struct top_model *m, double secs)
{
	size_t i;

	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->nents; i++) {
		m->ents[i].self = m->ents[i].self / DECAY_DEN * DECAY_NUM;
		m->ents[i].total = m->ents[i].total / DECAY_DEN * DECAY_NUM;
	}
	for (i = 0; i < m->nrngs; i++) {
		m->rngs[i].rate = secs > 0 ? m->rngs[i].window / secs : 0;
		m->rngs[i].rated = true;
		m->rngs[i].window = 0;
	}
	m->last_window = m->window;
	m->window = 0;
	pthread_mutex_unlock(&m->mu);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* Events, their id index, and record decoding by sample_type: evlist.h */
#include "evlist.h"
#include "evnames.h"
#include "pdbuf.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

struct idslot {
	uint64_t id;
	uint32_t idx;       /* event index + 1; 0 = empty */
};

struct evlist {
	struct perfread_event *ev;
	size_t n, cap;
	struct idslot *slots;
	size_t nslots, nids;   /* nslots: a power of two, at least 2 x nids */
};

int evlist__new(struct evlist **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void evlist__free(struct evlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->ev[i].name);
		free(l->ev[i].ids);
	}
	free(l->ev);
	free(l->slots);
	free(l);
}

static size_t id_hash(uint64_t id, size_t nslots)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (size_t)id & (nslots - 1);
}

/* Insert unless present (the first event that claims an id keeps it). */
static void id_put(struct idslot *slots, size_t nslots, uint64_t id, uint32_t idx)
{
	size_t i;

	for (i = id_hash(id, nslots); slots[i].idx; i = (i + 1) & (nslots - 1))
		if (slots[i].id == id)
			return;
	slots[i] = (struct idslot){ id, idx };
}

static int id_grow(struct evlist *l, size_t more)
{
	size_t n = l->nslots ? l->nslots : 64;
	struct idslot *s;

	if (more > SIZE_MAX / 64 - l->nids)
		return -ENOMEM;
	while (n < 2 * (l->nids + more))
		n *= 2;
	if (n == l->nslots)
		return 0;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < l->nslots; i++)
		if (l->slots[i].idx)
			id_put(s, n, l->slots[i].id, l->slots[i].idx);
	free(l->slots);
	l->slots = s;
	l->nslots = n;
	return 0;
}

static const char *default_name(const struct perf_event_attr *a)
{
	const char *n = evname_of(a->type, a->config);

	return n ? n : "unknown";
}

int evlist__add(struct evlist *l, const void *attr, size_t attr_size, const char *name,
		const void *ids, uint32_t nr_ids)
{
	struct perfread_event *e;

	if (l->n >= EVLIST_MAX_EVENTS)
		return -E2BIG;
	if (grow_to(&l->ev, &l->cap, l->n + 1, sizeof(*l->ev), 8))
		return -ENOMEM;
	if (id_grow(l, nr_ids))
		return -ENOMEM;
	e = &l->ev[l->n];
	memset(e, 0, sizeof(*e));
	memcpy(&e->attr, attr, attr_size < sizeof(e->attr) ? attr_size : sizeof(e->attr));
	e->ids = malloc(nr_ids ? (size_t)nr_ids * 8 : 1);
	e->name = strdup(name ? name : default_name(&e->attr));
	if (!e->ids || !e->name) {
		free(e->ids);
		free(e->name);
		return -ENOMEM;
	}
	if (nr_ids)
		memcpy(e->ids, ids, (size_t)nr_ids * 8);
	e->nr_ids = nr_ids;
	l->n++;
	for (uint32_t i = 0; i < nr_ids; i++)
		id_put(l->slots, l->nslots, e->ids[i], (uint32_t)l->n);
	l->nids += nr_ids;
	return 0;
}

size_t evlist__nr(const struct evlist *l)
{
	return l->n;
}

struct perfread_event *evlist__event(const struct evlist *l, size_t i)
{
	return i < l->n ? &l->ev[i] : NULL;
}

struct perfread_event *evlist__find(const struct evlist *l, uint64_t id)
{
	if (!l->nslots)
		return NULL;
	for (size_t i = id_hash(id, l->nslots); l->slots[i].idx; i = (i + 1) & (l->nslots - 1))
		if (l->slots[i].id == id)
			return &l->ev[l->slots[i].idx - 1];
	return NULL;
}

int evlist__set_name(struct perfread_event *e, const char *name)
{
	char *n = strdup(name);

	if (!n)
		return -ENOMEM;
	free(e->name);
	e->name = n;
	return 0;
}

/* ---- which event ----------------------------------------------------------- */

/* u64 index of the id in a sample (after the header), -1 without one */
static int sample_id_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
	       !!(st & PERF_SAMPLE_ADDR);
}

/* u64 index of the id from a trailer's end (1 = the last), -1 without one */
static int trailer_id_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

/* The event of a record: the only one, or by the id at u64 slot pos. */
static const struct perfread_event *event_of(const struct evlist *l, const uint8_t *body,
					     size_t nbody, int pos, bool from_end)
{
	size_t at;

	if (l->n == 1)
		return &l->ev[0];
	if (!l->n || pos < 0 || (size_t)pos * 8 + (from_end ? 0 : 8) > nbody)
		return NULL;
	at = from_end ? nbody - (size_t)pos * 8 : (size_t)pos * 8;
	return evlist__find(l, pd_get_u64(body + at));
}

/* ---- samples ------------------------------------------------------------------ */

/* Bytes of a PERF_SAMPLE_READ field at p (avail bytes), 0 if malformed. */
static size_t read_field_size(uint64_t rf, const uint8_t *p, size_t avail)
{
	size_t per = 8 + ((rf & PERF_FORMAT_ID) ? 8 : 0) + ((rf & PERF_FORMAT_LOST) ? 8 : 0);
	size_t times = ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 8 : 0) +
		       ((rf & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 8 : 0);
	uint64_t nr;

	if (!(rf & PERF_FORMAT_GROUP))
		return per + times <= avail ? per + times : 0;
	if (avail < 8 + times)
		return 0;
	nr = pd_get_u64(p);
	if (nr > (avail - 8 - times) / per)
		return 0;
	return 8 + times + (size_t)nr * per;
}

static unsigned popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

int evlist__parse_sample(const struct evlist *l, const struct perf_event_header *rec,
			 struct perfread_sample *s)
{
	const uint8_t *p = (const uint8_t *)rec + 8, *end;
	const struct perfread_event *e;
	uint64_t st, v, v2;

	if (rec->type != PERF_RECORD_SAMPLE || rec->size < 8)
		return -EINVAL;
	end = (const uint8_t *)rec + rec->size;
	memset(s, 0, sizeof(*s));
	s->misc = rec->misc;
	e = l->n ? event_of(l, p, (size_t)(end - p), sample_id_pos(l->ev[0].attr.sample_type),
			    false) : NULL;
	if (!e)
		return -EINVAL;
	s->event = e;
	st = e->attr.sample_type;
	/* no PERIOD field: the attr's period is every sample's (perf reads it so) */
	s->period = e->attr.sample_period;

#define NEED(n) do { if ((size_t)(end - p) < (size_t)(n)) return -EINVAL; } while (0)
#define U64(dst) do { NEED(8); (dst) = pd_get_u64(p); p += 8; } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER)
		U64(s->id);
	if (st & PERF_SAMPLE_IP)
		U64(s->ip);
	if (st & PERF_SAMPLE_TID) {
		NEED(8);
		s->pid = pd_get_u32(p);
		s->tid = pd_get_u32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME)
		U64(s->time);
	if (st & PERF_SAMPLE_ADDR)
		U64(s->addr);
	if (st & PERF_SAMPLE_ID)
		U64(s->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		U64(v);
	if (st & PERF_SAMPLE_CPU) {
		NEED(8);
		s->cpu = pd_get_u32(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_PERIOD)
		U64(s->period);
	if (st & PERF_SAMPLE_READ) {
		size_t n = read_field_size(e->attr.read_format, p, (size_t)(end - p));

		if (!n)
			return -EINVAL;
		p += n;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		U64(v);
		if (v > (uint64_t)(end - p) / 8)
			return -EINVAL;
		s->nr_ips = (uint32_t)v;
		s->ips = (const uint64_t *)(const void *)p;
		p += v * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		NEED(4);
		s->raw_size = pd_get_u32(p);
		p += 4;
		NEED(s->raw_size);
		s->raw = p;
		p += s->raw_size;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		U64(v);
		if (e->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			U64(v2);
		if (v > (uint64_t)(end - p) / 24)
			return -EINVAL;
		p += v * 24;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		U64(s->regs_abi);
		if (s->regs_abi) {
			s->nr_regs = popcount64(e->attr.sample_regs_user);
			NEED((size_t)s->nr_regs * 8);
			s->regs = (const uint64_t *)(const void *)p;
			p += (size_t)s->nr_regs * 8;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		U64(v);
		if (v) {
			NEED(v);
			s->stack = p;
			p += v;
			U64(v2);        /* dyn_size: the bytes really copied */
			s->stack_size = v2 < v ? v2 : v;
		}
	}
#undef U64
#undef NEED
	/* what follows (weight, data_src, ... aux) perfmark does not use */
	return 0;
}

/* ---- sample_id ------------------------------------------------------------------ */

int evlist__sample_id(const struct evlist *l, const struct perf_event_header *rec,
		      struct perfread_sample_id *sid)
{
	const uint8_t *lo = (const uint8_t *)rec + 8, *p = (const uint8_t *)rec + rec->size;
	const struct perfread_event *e;
	uint64_t st;

	memset(sid, 0, sizeof(*sid));
	if (rec->size < 8)
		return -EINVAL;
	if (rec->type == PERF_RECORD_SAMPLE) {
		struct perfread_sample s;
		int r = evlist__parse_sample(l, rec, &s);

		if (r)
			return r;
		st = s.event->attr.sample_type;
		*sid = (struct perfread_sample_id){
			.event = s.event, .id = s.id, .time = s.time, .pid = s.pid, .tid = s.tid,
			.cpu = s.cpu, .have_time = !!(st & PERF_SAMPLE_TIME),
			.have_tid = !!(st & PERF_SAMPLE_TID), .have_cpu = !!(st & PERF_SAMPLE_CPU),
		};
		return 0;
	}
	/* perf's own record types (64 and up) carry no trailer */
	if (!l->n || !l->ev[0].attr.sample_id_all || rec->type >= 64)
		return -ENOENT;
	e = event_of(l, lo, rec->size - 8u, trailer_id_pos(l->ev[0].attr.sample_type), true);
	if (!e)
		return -EINVAL;
	sid->event = e;
	st = e->attr.sample_type;
	/* from the end: IDENTIFIER, CPU, STREAM_ID, ID, TIME, TID */
#define BACK(n) do { if ((size_t)(p - lo) < (size_t)(n)) return -EINVAL; p -= (n); } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER) {
		BACK(8);
		sid->id = pd_get_u64(p);
	}
	if (st & PERF_SAMPLE_CPU) {
		BACK(8);
		sid->cpu = pd_get_u32(p);
		sid->have_cpu = true;
	}
	if (st & PERF_SAMPLE_STREAM_ID)
		BACK(8);
	if (st & PERF_SAMPLE_ID) {
		BACK(8);
		sid->id = pd_get_u64(p);
	}
	if (st & PERF_SAMPLE_TIME) {
		BACK(8);
		sid->time = pd_get_u64(p);
		sid->have_time = true;
	}
	if (st & PERF_SAMPLE_TID) {
		BACK(8);
		sid->pid = pd_get_u32(p);
		sid->tid = pd_get_u32(p + 4);
		sid->have_tid = true;
	}
#undef BACK
	return 0;
}

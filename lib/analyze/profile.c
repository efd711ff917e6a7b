// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The analysis model: see profile.h.  profile__load() drives perfread ->
 * reorder -> on_record(); this file turns records into frames, call-tree
 * nodes, samples, range instances and counters.
 */
#include "profile.h"
#include "callchain.h"
#include "marker.h"
#include "perfdata.h"
#include "perfread.h"
#include "reorder.h"
#include "symbolize.h"
#include "uevent.h"
#include "grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EV_PRINTF "perfmark:printf"
#define EV_UEVENT "perfmark:uevent"
#define USER_ADDR_BITS 47
#define MAX_PROC_GEN (1u << 16)

/* A growing array of one element type. */
struct vec {
	void *v;
	size_t n, cap;
};

static void *vec_push(struct vec *a, size_t elsize)
{
	if (grow_to(&a->v, &a->cap, a->n + 1, elsize, 256))
		return NULL;
	return (char *)a->v + elsize * a->n++;
}

#define VEC_PUSH(a, type) ((type *)vec_push(&(a), sizeof(type)))
#define VEC_AT(a, type, i) (&((type *)(a).v)[i])

/* Per-thread reading state (kept beside struct profile_thread). */
struct thread_state {
	uint32_t top;           /* the innermost open range instance, or TABLE_NONE */
	uint32_t nopen;         /* open range instances */
	bool comm_dirty;
};

/*
 * Where an open range instance stands (kept beside struct profile_range
 * while reading): the open ranges of a thread are a list, innermost first,
 * and so are those of one name on one thread (open_ids: the innermost).
 * An end closes the innermost of its name in O(1), whatever else is open
 * (a scan of the open ones took 58 s for 100,000 ends matching no begin).
 */
struct range_link {
	uint32_t outer, inner;  /* the neighbours in the thread's list, or TABLE_NONE */
	uint32_t same;          /* the next outer open range of the same name + 1, 0 none */
};

#define PROFILE_MAX_EVENTS 64

struct profile {
	struct perfread *r;
	struct symbolizer *sym;
	struct profile_opts o;
	struct strtab strs;
	struct vec mappings, frames, nodes, samples, ranges, threads, tstate, counters, marks;
	struct vec links;           /* struct range_link per range, while reading */
	struct idmap open_ids;      /* thread << 32 | name -> its innermost open range + 1 */
	uint8_t *mark_data;
	size_t mark_len, mark_cap;
	struct idmap mapping_ids;   /* file string id -> mapping */
	struct idmap frame_ids;     /* name << 32 | mapping -> frame */
	struct idmap node_ids;      /* parent << 32 | frame -> node */
	struct idmap thread_ids;    /* tid -> thread */
	struct idmap counter_ids;   /* name -> counter */
	struct idmap addr_cache;    /* kernel addr, or gen << 47 | user addr -> frame */
	struct idmap proc_gen;      /* pid -> generation of its address cache entries */
	uint32_t next_gen;
	uint32_t unknown;           /* string id of "[unknown]" */
	const struct perfread_event *sample_event;
	/* sampling events seen, and their samples: few, searched in a line */
	const struct perfread_event *seen[PROFILE_MAX_EVENTS];
	struct profile_event seen_n[PROFILE_MAX_EVENTS];
	size_t nr_seen;
	uint64_t start, end;        /* of every record with a time (start valid once any) */
	bool any_time;
	uint64_t lost;              /* PERF_RECORD_LOST and LOST_SAMPLES counts */
	int err;
	char *errbuf;
	size_t errlen;
};

static int fail(struct profile *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct profile *p, int err, const char *fmt, ...)
{
	va_list ap;

	if (p->errbuf && p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->errbuf, p->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static uint32_t intern_len(struct profile *p, const char *s, size_t len)
{
	uint32_t id = strtab__intern(&p->strs, s, len);

	if (id == TABLE_NONE)
		p->err = -ENOMEM;
	return id;
}

static uint32_t intern(struct profile *p, const char *s)
{
	return intern_len(p, s, strlen(s));
}

/* ---- threads ------------------------------------------------------------------ */

static uint32_t thread_of(struct profile *p, uint32_t pid, uint32_t tid)
{
	uint32_t i = idmap__get(&p->thread_ids, tid);
	struct profile_thread *t;
	struct thread_state *ts;

	if (i != TABLE_NONE)
		return i;
	t = VEC_PUSH(p->threads, struct profile_thread);
	ts = VEC_PUSH(p->tstate, struct thread_state);
	if (!t || !ts)
		return TABLE_NONE;
	i = (uint32_t)(p->threads.n - 1);
	*t = (struct profile_thread){ .pid = pid, .tid = tid, .comm = TABLE_NONE,
				      .first = UINT64_MAX };
	*ts = (struct thread_state){ .top = TABLE_NONE, .comm_dirty = true };
	if (idmap__put(&p->thread_ids, tid, i) < 0)
		return TABLE_NONE;
	return i;
}

/* The thread of a record at time t; its comm as of now. */
static struct profile_thread *thread_at(struct profile *p, uint32_t pid, uint32_t tid,
					uint64_t time, uint32_t *idx)
{
	uint32_t i = thread_of(p, pid, tid);
	struct profile_thread *t;
	struct thread_state *ts;

	if (i == TABLE_NONE) {
		p->err = -ENOMEM;
		return NULL;
	}
	t = VEC_AT(p->threads, struct profile_thread, i);
	ts = VEC_AT(p->tstate, struct thread_state, i);
	if (ts->comm_dirty) {
		const char *c = symbolizer__comm(p->sym, tid);
		char buf[24];

		if (!c) {
			snprintf(buf, sizeof(buf), ":%u", tid);
			c = buf;
		}
		t->comm = intern(p, c);
		ts->comm_dirty = false;
	}
	t->pid = pid;
	if (time < t->first)
		t->first = time;
	if (time > t->last)
		t->last = time;
	*idx = i;
	return t;
}

/* ---- frames and the call tree --------------------------------------------------- */

static uint32_t mapping_of(struct profile *p, const struct symbolizer_loc *loc)
{
	const char *file = loc->dso ? loc->dso : "[unknown]";
	uint32_t fid = intern(p, file), i;
	struct profile_mapping *m;

	if (fid == TABLE_NONE)
		return TABLE_NONE;
	i = idmap__get(&p->mapping_ids, fid);
	if (i != TABLE_NONE)
		return i;
	m = VEC_PUSH(p->mappings, struct profile_mapping);
	if (!m)
		return TABLE_NONE;
	*m = (struct profile_mapping){ .file = fid, .build_id = TABLE_NONE,
		.start = loc->map_start, .end = loc->map_end, .pgoff = loc->map_pgoff };
	if (loc->build_id && loc->build_id_len) {
		char hex[2 * 32 + 1];

		for (uint32_t k = 0; k < loc->build_id_len && k < 32; k++)
			snprintf(hex + 2 * k, 3, "%02x", loc->build_id[k]);
		m->build_id = intern(p, hex);
	}
	i = (uint32_t)(p->mappings.n - 1);
	return idmap__put(&p->mapping_ids, fid, i) < 0 ? TABLE_NONE : i;
}

static uint32_t frame_of(struct profile *p, uint32_t name, uint32_t mapping, uint32_t kind,
			 uint64_t addr)
{
	uint64_t key = (uint64_t)name << 32 | mapping;
	uint32_t i = idmap__get(&p->frame_ids, key);
	struct profile_frame *f;

	if (i != TABLE_NONE)
		return i;
	f = VEC_PUSH(p->frames, struct profile_frame);
	if (!f)
		return TABLE_NONE;
	*f = (struct profile_frame){ .name = name, .mapping = mapping, .kind = kind, .addr = addr };
	i = (uint32_t)(p->frames.n - 1);
	return idmap__put(&p->frame_ids, key, i) < 0 ? TABLE_NONE : i;
}

/* The address cache key: kernel addresses as they are, user ones per process generation. */
static bool cache_key(struct profile *p, uint32_t pid, const struct callchain_ip *ip,
		      uint64_t *key)
{
	uint32_t gen;

	if (ip->kernel || ip->ip >> 63) {
		*key = ip->ip | (1ULL << 63);
		return true;
	}
	if (ip->ip >> USER_ADDR_BITS)
		return false;
	gen = idmap__get(&p->proc_gen, pid);
	if (gen == TABLE_NONE) {
		if (p->next_gen >= MAX_PROC_GEN)
			return false;
		gen = p->next_gen++;
		if (idmap__put(&p->proc_gen, pid, gen) < 0)
			return false;
	}
	*key = (uint64_t)gen << USER_ADDR_BITS | ip->ip;
	return true;
}

/* A user mapping changed in pid: its cached addresses may now mean other code. */
static void cache_forget(struct profile *p, uint32_t pid)
{
	if (idmap__get(&p->proc_gen, pid) == TABLE_NONE || p->next_gen >= MAX_PROC_GEN)
		return;
	idmap__put(&p->proc_gen, pid, p->next_gen++);
}

static uint32_t frame_at(struct profile *p, uint32_t pid, const struct callchain_ip *ip)
{
	struct symbolizer_loc loc;
	uint64_t key = 0;
	bool cached = cache_key(p, pid, ip, &key);
	uint32_t f = cached ? idmap__get(&p->addr_cache, key) : TABLE_NONE;
	uint32_t name, mapping;

	if (f != TABLE_NONE)
		return f;
	symbolizer__lookup(p->sym, pid, ip->ip, ip->kernel, &loc);
	name = intern(p, loc.name);
	mapping = mapping_of(p, &loc);
	if (name == TABLE_NONE || mapping == TABLE_NONE)
		return TABLE_NONE;
	f = frame_of(p, name, mapping, ip->kernel || (loc.dso && loc.dso[0] == '[' &&
				       !strcmp(loc.dso, "[kernel.kallsyms]")) ?
		     PROFILE_FRAME_KERNEL : PROFILE_FRAME_USER, ip->ip);
	if (f != TABLE_NONE && cached && idmap__put(&p->addr_cache, key, f) < 0)
		return TABLE_NONE;
	return f;
}

static uint32_t node_of(struct profile *p, uint32_t parent, uint32_t frame)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	uint32_t i = idmap__get(&p->node_ids, key);
	struct profile_node *n;

	if (i != TABLE_NONE)
		return i;
	n = VEC_PUSH(p->nodes, struct profile_node);
	if (!n)
		return TABLE_NONE;
	*n = (struct profile_node){ .parent = parent, .frame = frame };
	i = (uint32_t)(p->nodes.n - 1);
	return idmap__put(&p->node_ids, key, i) < 0 ? TABLE_NONE : i;
}

static const char *event_name(const struct perfread_event *e)
{
	return e && e->name ? e->name : "samples";
}

/* Count a sample of sampling event e; true if e is the one analysed. */
static bool is_analysed(struct profile *p, const struct perfread_event *e)
{
	size_t i;

	for (i = 0; i < p->nr_seen && p->seen[i] != e; i++)
		;
	if (i == p->nr_seen && i < PROFILE_MAX_EVENTS) {
		p->seen[i] = e;
		p->seen_n[i] = (struct profile_event){ .name = event_name(e) };
		p->nr_seen++;
		if (!p->sample_event && (!p->o.event || !strcmp(p->o.event, event_name(e))))
			p->sample_event = e;
	}
	if (i < p->nr_seen)
		p->seen_n[i].samples++;
	return e == p->sample_event;
}

/* The event asked for was not sampled: say which ones were. */
static int no_such_event(struct profile *p)
{
	char list[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < p->nr_seen && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					p->seen_n[i].name);
	if (!p->nr_seen)
		return fail(p, -ENOENT, "no samples of '%s' (no samples at all)", p->o.event);
	return fail(p, -ENOENT, "no samples of '%s' (sampled: %s)", p->o.event, list);
}

/* ---- samples ------------------------------------------------------------------- */

static int on_sample(struct profile *p, const struct perfread_sample *s)
{
	struct callchain_ip ips[CALLCHAIN_MAX];
	size_t n = callchain__get(p->sym, p->r, s, ips, CALLCHAIN_MAX);
	struct profile_thread *t;
	struct thread_state *ts;
	struct profile_sample *ps;
	uint32_t ti, node, f;

	t = thread_at(p, s->pid, s->tid, s->time, &ti);
	if (!t)
		return -ENOMEM;
	f = frame_of(p, t->comm, TABLE_NONE, PROFILE_FRAME_COMM, 0);
	node = f == TABLE_NONE ? TABLE_NONE : node_of(p, 0, f);
	while (n-- > 0 && node != TABLE_NONE) {
		f = frame_at(p, s->pid, &ips[n]);
		node = f == TABLE_NONE ? TABLE_NONE : node_of(p, node, f);
	}
	ps = VEC_PUSH(p->samples, struct profile_sample);
	if (node == TABLE_NONE || !ps)
		return -ENOMEM;
	ts = VEC_AT(p->tstate, struct thread_state, ti);
	*ps = (struct profile_sample){ .time = s->time, .period = s->period ? s->period : 1,
		.tid = s->tid, .node = node, .thread = ti,
		.range = ts->top };
	return 0;
}

/* ---- markers ------------------------------------------------------------------- */

static uint64_t open_key(uint32_t ti, uint32_t nid)
{
	return (uint64_t)ti << 32 | nid;
}

static int range_begin(struct profile *p, uint32_t ti, const char *name, size_t len,
		       uint64_t time)
{
	struct thread_state *ts = VEC_AT(p->tstate, struct thread_state, ti);
	struct profile_range *r;
	struct range_link *l;
	uint32_t nid = intern_len(p, name, len), ri, same;

	if (nid == TABLE_NONE)
		return -ENOMEM;
	if (p->ranges.n >= TABLE_NONE - 1)
		return 0;   /* ids must stay below TABLE_NONE: further ranges are dropped */
	same = idmap__get(&p->open_ids, open_key(ti, nid));
	r = VEC_PUSH(p->ranges, struct profile_range);
	l = VEC_PUSH(p->links, struct range_link);
	if (!r || !l)
		return -ENOMEM;
	ri = (uint32_t)(p->ranges.n - 1);
	if (idmap__put(&p->open_ids, open_key(ti, nid), ri + 1) < 0)
		return -ENOMEM;
	*r = (struct profile_range){ .name = nid, .thread = ti, .start = time, .end = time,
		.open = true, .depth = ts->nopen, .parent = ts->top };
	*l = (struct range_link){ .outer = ts->top, .inner = TABLE_NONE,
				  .same = same == TABLE_NONE ? 0 : same };
	if (ts->top != TABLE_NONE)
		VEC_AT(p->links, struct range_link, ts->top)->inner = ri;
	ts->top = ri;
	ts->nopen++;
	return 0;
}

/* Close the innermost open range of that name on the thread (an end without a begin is dropped). */
static void range_end(struct profile *p, uint32_t ti, const char *name, size_t len, uint64_t time)
{
	struct thread_state *ts = VEC_AT(p->tstate, struct thread_state, ti);
	uint32_t nid = strtab__find(&p->strs, name, len), top;
	struct profile_range *r;
	struct range_link *l;

	top = nid == TABLE_NONE ? TABLE_NONE : idmap__get(&p->open_ids, open_key(ti, nid));
	if (top == TABLE_NONE || top == 0)
		return;
	r = VEC_AT(p->ranges, struct profile_range, top - 1);
	l = VEC_AT(p->links, struct range_link, top - 1);
	r->end = time;
	r->open = false;
	if (l->inner != TABLE_NONE)
		VEC_AT(p->links, struct range_link, l->inner)->outer = l->outer;
	else
		ts->top = l->outer;
	if (l->outer != TABLE_NONE)
		VEC_AT(p->links, struct range_link, l->outer)->inner = l->inner;
	ts->nopen--;
	idmap__put(&p->open_ids, open_key(ti, nid), l->same);   /* an existing key: no allocation */
}

static int counter(struct profile *p, const char *name, size_t len, int64_t v)
{
	uint32_t nid = intern_len(p, name, len), i;
	struct profile_counter *c;

	if (nid == TABLE_NONE)
		return -ENOMEM;
	i = idmap__get(&p->counter_ids, nid);
	if (i == TABLE_NONE) {
		c = VEC_PUSH(p->counters, struct profile_counter);
		if (!c || idmap__put(&p->counter_ids, nid, (uint32_t)(p->counters.n - 1)) < 0)
			return -ENOMEM;
		*c = (struct profile_counter){ .name = nid, .min = v, .max = v };
	} else {
		c = VEC_AT(p->counters, struct profile_counter, i);
	}
	c->count++;
	c->min = v < c->min ? v : c->min;
	c->max = v > c->max ? v : c->max;
	c->last = v;
	return 0;
}

static int keep_mark(struct profile *p, uint32_t ti, uint64_t time, uint32_t type,
		     uint32_t flags, const uint8_t *d, uint32_t len)
{
	struct profile_mark *m;

	if (grow_to(&p->mark_data, &p->mark_cap, p->mark_len + len, 1, 65536))
		return -ENOMEM;
	m = VEC_PUSH(p->marks, struct profile_mark);
	if (!m)
		return -ENOMEM;
	*m = (struct profile_mark){ .time = time, .thread = ti, .type = type, .flags = flags,
		.len = len, .off = p->mark_len };
	memcpy(p->mark_data + p->mark_len, d, len);
	p->mark_len += len;
	return 0;
}

static int on_marker(struct profile *p, const struct perfread_sample *s, bool uevent)
{
	struct perfmark_uevent_hdr h = { .version = PERFMARK_UEVENT_VERSION,
					 .type = PERFMARK_TYPE_STRING };
	const uint8_t *d = s->raw;
	const char *name;
	size_t len = 0;
	uint32_t ti;
	int64_t v;

	if (!thread_at(p, s->pid, s->tid, s->time, &ti))
		return -ENOMEM;
	if (!s->raw)
		return 0;
	if (uevent) {
		if (s->raw_size < sizeof(h))
			return 0;
		memcpy(&h, s->raw, sizeof(h));
		d += sizeof(h);
		if (h.version != PERFMARK_UEVENT_VERSION || h.size > s->raw_size - sizeof(h))
			return 0;
	} else {
		h.size = (uint32_t)strnlen(s->raw, s->raw_size);
	}
	switch (h.type) {
	case PERFMARK_TYPE_RANGE_BEGIN:
		name = marker_name(d, h.size, &len);
		return name ? range_begin(p, ti, name, len, s->time) : 0;
	case PERFMARK_TYPE_RANGE_END:
		name = marker_name(d, h.size, &len);
		if (name)
			range_end(p, ti, name, len, s->time);
		return 0;
	case PERFMARK_TYPE_COUNTER:
		if (h.size < 9 || !(name = marker_name(d + 8, h.size - 8, &len)))
			return 0;
		memcpy(&v, d, 8);
		if (counter(p, name, len, v) < 0)
			return -ENOMEM;
		break;
	case PERFMARK_TYPE_JIT_CODE:
		if (h.size >= 17 && (name = marker_name(d + 16, h.size - 16, &len))) {
			char buf[PERFMARK_MAX_PAYLOAD + 1];
			uint64_t a, sz;

			memcpy(&a, d, 8);
			memcpy(&sz, d + 8, 8);
			len = len < PERFMARK_MAX_PAYLOAD ? len : PERFMARK_MAX_PAYLOAD;
			memcpy(buf, name, len);
			buf[len] = '\0';
			symbolizer__add_jit(p->sym, s->pid, a, sz, buf);
		}
		break;
	default:
		break;
	}
	return p->o.keep_marks ? keep_mark(p, ti, s->time, h.type, h.flags, d, h.size) : 0;
}

static bool is_marker(const struct perfread_sample *s, bool *uevent)
{
	const char *n = s->event ? s->event->name : NULL;

	if (!n || strncmp(n, "perfmark:", 9))
		return false;
	*uevent = !strcmp(n, EV_UEVENT);
	return *uevent || !strcmp(n, EV_PRINTF);
}

/* ---- records ------------------------------------------------------------------- */

static int on_record(void *ctx, const struct perf_event_header *rec)
{
	struct profile *p = ctx;
	struct perfread_sample s;
	uint32_t pid, tid;
	bool uevent;
	int err = 0;

	if (rec->type == PERF_RECORD_LOST || rec->type == PERF_RECORD_LOST_SAMPLES) {
		size_t off = rec->type == PERF_RECORD_LOST ? 16 : 8;
		uint64_t n;

		if (rec->size >= off + 8) {
			memcpy(&n, (const uint8_t *)rec + off, 8);
			p->lost += n;
		}
		return 0;
	}
	if (rec->type != PERF_RECORD_SAMPLE) {
		symbolizer__record(p->sym, rec);
		if (rec->size < 16)
			return 0;
		memcpy(&pid, (const uint8_t *)rec + 8, 4);
		memcpy(&tid, (const uint8_t *)rec + 12, 4);
		if (rec->type == PERF_RECORD_COMM) {
			uint32_t ti = idmap__get(&p->thread_ids, tid);

			if (ti != TABLE_NONE)
				VEC_AT(p->tstate, struct thread_state, ti)->comm_dirty = true;
			if (rec->misc & PERF_RECORD_MISC_COMM_EXEC)
				cache_forget(p, pid);
		} else if (rec->type == PERF_RECORD_MMAP || rec->type == PERF_RECORD_MMAP2) {
			cache_forget(p, pid);
		}
		return 0;
	}
	if (perfread__parse_sample(p->r, rec, &s) < 0)
		return 0;   /* malformed sample: skipped, as perf does */
	if (!p->any_time || s.time < p->start)
		p->start = s.time;
	if (!p->any_time || s.time > p->end)
		p->end = s.time;
	p->any_time = true;
	if (is_marker(&s, &uevent))
		err = on_marker(p, &s, uevent);
	else if (is_analysed(p, s.event))
		err = on_sample(p, &s);
	return err ? err : p->err;
}

static void close_open_ranges(struct profile *p)
{
	struct profile_range *rv = p->ranges.v;

	for (size_t i = 0; i < p->ranges.n; i++) {
		if (!rv[i].open)
			continue;
		rv[i].end = VEC_AT(p->threads, struct profile_thread, rv[i].thread)->last;
		if (rv[i].end < rv[i].start)
			rv[i].end = rv[i].start;
	}
}

static int read_all(struct profile *p)
{
	const struct perf_event_header *rec;
	struct reorder *ro = NULL;
	int r;

	r = reorder__new(&ro, p->r, on_record, p);
	if (r < 0)
		return fail(p, r, "out of memory");
	while ((r = perfread__next(p->r, &rec)) > 0) {
		/* FINISHED_ROUND too: reorder sorts per round */
		if (!perfread_for_samples(rec->type) && rec->type != PERFDATA_RECORD_FINISHED_ROUND)
			continue;
		r = reorder__add(ro, rec);
		if (r < 0)
			break;
	}
	if (r == 0)
		r = reorder__finish(ro);
	else if (r < 0 && perfread__error(p->r)[0] && strcmp(perfread__error(p->r), "no error"))
		fail(p, r, "%s", perfread__error(p->r));
	else if (r < 0)
		fail(p, r, "%s", strerror(-r));
	reorder__free(ro);
	close_open_ranges(p);
	/* what only reading needed */
	free(p->links.v);
	p->links = (struct vec){ 0 };
	idmap__free(&p->open_ids);
	return r;
}

int profile__load(struct profile **out, int fd, const struct profile_opts *opts,
		  char *err, size_t errlen)
{
	struct profile *p = calloc(1, sizeof(*p));
	struct profile_node *root;
	int r;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!p) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->errbuf = err;
	p->errlen = errlen;
	if (opts)
		p->o = *opts;
	root = VEC_PUSH(p->nodes, struct profile_node);
	p->unknown = intern(p, "[unknown]");
	if (!root || p->unknown == TABLE_NONE) {
		r = fail(p, -ENOMEM, "out of memory");
		goto fail;
	}
	*root = (struct profile_node){ .parent = TABLE_NONE, .frame = TABLE_NONE };
	r = perfread__open(&p->r, fd);
	if (r < 0) {
		r = fail(p, r, "%s", p->r ? perfread__error(p->r) : strerror(-r));
		goto fail;
	}
	r = symbolizer__new(&p->sym);
	if (r < 0) {
		r = fail(p, r, "%s", strerror(-r));
		goto fail;
	}
	r = read_all(p);
	if (r < 0)
		goto fail;
	if (p->o.event && !p->sample_event) {
		r = no_such_event(p);
		goto fail;
	}
	p->errbuf = NULL;
	*out = p;
	return 0;
fail:
	p->errbuf = NULL;
	profile__free(p);
	return r;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	free(p->links.v);
	idmap__free(&p->open_ids);
	free(p->mappings.v);
	free(p->frames.v);
	free(p->nodes.v);
	free(p->samples.v);
	free(p->ranges.v);
	free(p->threads.v);
	free(p->tstate.v);
	free(p->counters.v);
	free(p->marks.v);
	free(p->mark_data);
	idmap__free(&p->mapping_ids);
	idmap__free(&p->frame_ids);
	idmap__free(&p->node_ids);
	idmap__free(&p->thread_ids);
	idmap__free(&p->counter_ids);
	idmap__free(&p->addr_cache);
	idmap__free(&p->proc_gen);
	strtab__free(&p->strs);
	symbolizer__free(p->sym);
	perfread__free(p->r);
	free(p);
}

/* ---- accessors ------------------------------------------------------------------ */

const struct strtab *profile__strings(const struct profile *p)
{
	return &p->strs;
}

const char *profile__str(const struct profile *p, uint32_t id)
{
	return id == TABLE_NONE ? "" : strtab__str(&p->strs, id);
}

const char *profile__event_name(const struct profile *p)
{
	return event_name(p->sample_event);
}

const struct profile_event *profile__events(const struct profile *p, size_t *n)
{
	*n = p->nr_seen;
	return p->seen_n;
}

uint64_t profile__sample_freq(const struct profile *p)
{
	const struct perfread_event *e = p->sample_event;

	return e && e->attr.freq ? e->attr.sample_freq : 0;
}

uint64_t profile__lost(const struct profile *p)
{
	return p->lost;
}

uint64_t profile__start(const struct profile *p)
{
	return p->start;
}

uint64_t profile__end(const struct profile *p)
{
	return p->end;
}

#define PROFILE_ARRAY(type, name) \
	const struct profile_##type *profile__##name(const struct profile *p, size_t *n) \
	{ \
		*n = p->name.n; \
		return p->name.v; \
	}
PROFILE_ARRAY(mapping, mappings)
PROFILE_ARRAY(frame, frames)
PROFILE_ARRAY(node, nodes)
PROFILE_ARRAY(sample, samples)
PROFILE_ARRAY(range, ranges)
PROFILE_ARRAY(thread, threads)
PROFILE_ARRAY(counter, counters)
PROFILE_ARRAY(mark, marks)
#undef PROFILE_ARRAY

const uint8_t *profile__mark_data(const struct profile *p)
{
	return p->mark_data;
}

bool profile__range_within(const struct profile *p, uint32_t r, uint32_t name)
{
	const struct profile_range *rv = p->ranges.v;

	for (; r != TABLE_NONE; r = rv[r].parent)
		if (rv[r].name == name)
			return true;
	return false;
}

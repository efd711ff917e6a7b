// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The analysis model: see profile.h.  profile__load() replays the
 * recording (replay.h: time order, markers decoded, ranges paired) and
 * turns its records into threads, samples, range instances, counters and
 * kept markers; the call tree is profile_tree.c's.
 */
#include "commname.h"
#include "profile_int.h"
#include "offcpu.h"
#include "perfread.h"
#include "symbolize.h"
#include "grow.h"
#include "errline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	*ts = (struct thread_state){ .comm_dirty = true };
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
		char buf[COMMNAME_LEN];
		const char *c = comm_or_tid(symbolizer__comm(p->sym, tid), tid, buf);

		t->comm = profile_intern(p, c, strlen(c));
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

/* ---- sampling events ------------------------------------------------------------ */

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
		/* offcpu-time's period is time off the CPU: analysed only when asked for */
		if (!p->sample_event && (p->o.event ? !strcmp(p->o.event, event_name(e)) :
					 !offcpu__event(event_name(e))))
			p->sample_event = e;
	}
	if (i < p->nr_seen)
		p->seen_n[i].samples++;
	return e == p->sample_event;
}

/* The event asked for was not sampled: say which ones were. */
static int no_such_event(struct profile *p, char *err, size_t errlen)
{
	char list[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < p->nr_seen && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					p->seen_n[i].name);
	if (!p->nr_seen && p->dropped)
		return errline_code(err, errlen, -ENOENT,
				    "no samples of '%s' (none within --cpu/--time: all %llu outside)",
				    p->o.event, (unsigned long long)p->dropped);
	if (!p->nr_seen)
		return errline_code(err, errlen, -ENOENT, "no samples of '%s' (no samples at all)",
				    p->o.event);
	return errline_code(err, errlen, -ENOENT, "no samples of '%s' (sampled: %s)", p->o.event,
			    list);
}

/* ---- samples ------------------------------------------------------------------- */

/* Every sample, marker or not, widens the recording's time span. */
static void note_time(struct profile *p, const struct perfread_sample *s)
{
	if (!p->any_time || s->time < p->start)
		p->start = s->time;
	if (!p->any_time || s->time > p->end)
		p->end = s->time;
	p->any_time = true;
}

/*
 * keep_addrs: the frames by address as well, into *anode.  The leaf and the
 * first user frame under kernel ones are where the CPU was; every other one
 * is a return address.
 */
static uint32_t stack_node_addrs(struct profile *p, const struct perfread_sample *s,
				 uint32_t comm, uint32_t node, const struct callchain_ip *ips,
				 size_t n, uint32_t *anode)
{
	uint32_t l = comm == TABLE_NONE ? TABLE_NONE : profile_comm_loc(p, comm);
	uint32_t a = l == TABLE_NONE ? TABLE_NONE : profile_anode_of(p, 0, l);

	while (n-- > 0 && node != TABLE_NONE && a != TABLE_NONE) {
		bool call = n > 0 && !(ips[n - 1].kernel && !ips[n].kernel);

		l = profile_loc_at(p, s->pid, &ips[n], call);
		if (l == TABLE_NONE)
			return TABLE_NONE;
		node = profile_node_of(p, node, VEC_AT(p->locs, struct profile_loc, l)->frame);
		a = profile_anode_of(p, a, l);
	}
	*anode = a;
	return a == TABLE_NONE ? TABLE_NONE : node;
}

/*
 * The call-tree node of a sample's stack (comm, outermost frame, ..., leaf);
 * with keep_addrs its node in the tree by address goes to *anode.
 */
static uint32_t stack_node(struct profile *p, const struct perfread_sample *s, uint32_t *ti,
			   uint32_t *anode)
{
	struct callchain_ip ips[CALLCHAIN_MAX];
	size_t n = callchain__get(p->sym, replay__reader(p->rp), s, ips, CALLCHAIN_MAX);
	struct profile_thread *t;
	uint32_t node, f;

	*anode = TABLE_NONE;
	t = thread_at(p, s->pid, s->tid, s->time, ti);
	if (!t)
		return TABLE_NONE;
	f = profile_frame_of(p, t->comm, TABLE_NONE, PROFILE_FRAME_COMM, 0);
	node = f == TABLE_NONE ? TABLE_NONE : profile_node_of(p, 0, f);
	if (p->o.keep_addrs)
		return stack_node_addrs(p, s, f, node, ips, n, anode);
	while (n-- > 0 && node != TABLE_NONE) {
		f = profile_frame_at(p, s->pid, &ips[n]);
		node = f == TABLE_NONE ? TABLE_NONE : profile_node_of(p, node, f);
	}
	return node;
}

static int add_sample(struct profile *p, const struct perfread_sample *s)
{
	struct profile_sample *ps;
	uint32_t ti, anode, node = stack_node(p, s, &ti, &anode);

	ps = VEC_PUSH(p->samples, struct profile_sample);
	if (node == TABLE_NONE || !ps)
		return -ENOMEM;
	*ps = (struct profile_sample){ .time = s->time, .period = s->period ? s->period : 1,
		.tid = s->tid, .cpu = s->cpu, .node = node, .anode = anode, .thread = ti,
		.range = replay__range(p->rp, s->tid) };
	return 0;
}

/* An offcpu-time sample: an interval off the CPU, or a sum of shorter ones. */
static int add_offcpu(struct profile *p, const struct perfread_sample *s)
{
	struct profile_offcpu *po;
	struct offcpu o;
	uint32_t ti, anode, node = stack_node(p, s, &ti, &anode);

	offcpu__decode(&o, s->raw, s->raw_size);
	po = VEC_PUSH(p->offcpus, struct profile_offcpu);
	if (node == TABLE_NONE || !po)
		return -ENOMEM;
	*po = (struct profile_offcpu){ .time = s->time, .period = s->period, .tid = s->tid,
		.runq = o.runq_ns < s->period ? o.runq_ns : s->period,
		.node = node, .anode = anode, .thread = ti, .range = replay__range(p->rp, s->tid),
		.count = o.count, .runnable = o.runnable, .state = offcpu__state_letter(&o)[0],
		.waker = (uint8_t)o.waker_flags, .waker_tid = o.waker_tid };
	return 0;
}

static int on_sample(void *ctx, const struct perfread_sample *s)
{
	struct profile *p = ctx;
	int err = 0;

	note_time(p, s);
	if (is_analysed(p, s->event))
		err = add_sample(p, s);
	if (!err && offcpu__event(event_name(s->event)))
		err = add_offcpu(p, s);
	return err ? err : p->err;
}

/* A sample the filter hid: only counted, when it is of the analysed event. */
static int on_hidden(void *ctx, const struct perfread_sample *s)
{
	struct profile *p = ctx;

	if (is_analysed(p, s->event)) {
		p->hidden_samples++;
		p->hidden_period += s->period ? s->period : 1;
	}
	return 0;
}

/*
 * A sample outside --cpu or --time: counted nowhere, as if not recorded.
 * Its event is noted all the same, for a filter that keeps no sample of
 * any event: the report then names the event it would have analysed (not
 * "samples"), and -e's event is not "never sampled".
 */
static int on_dropped(void *ctx, const struct perfread_sample *s)
{
	struct profile *p = ctx;
	const char *name = event_name(s->event);

	p->dropped++;
	if (!p->dropped_event &&
	    (p->o.event ? !strcmp(p->o.event, name) : !offcpu__event(name)))
		p->dropped_event = s->event;
	return 0;
}

/* ---- markers ------------------------------------------------------------------- */

/* A range instance, numbered as the replay paired it. */
static int range_begin(struct profile *p, uint32_t ti, const struct marker *m,
		       const struct marker_pair *pair, uint64_t time)
{
	uint32_t nid = profile_intern(p, m->text, m->text_len);
	struct profile_range *r;

	if (nid == TABLE_NONE)
		return -ENOMEM;
	if (pair->id == MARKER_NO_RANGE)
		return 0;   /* past the ids' range: dropped */
	if (pair->id != p->ranges.n)
		return -EINVAL;
	r = VEC_PUSH(p->ranges, struct profile_range);
	if (!r)
		return -ENOMEM;
	*r = (struct profile_range){ .name = nid, .thread = ti, .start = time, .end = time,
		.open = true, .depth = pair->depth, .parent = pair->parent };
	return 0;
}

/* The instance an end closes (an end without a begin is dropped). */
static void range_end(struct profile *p, const struct marker_pair *pair, uint64_t time)
{
	struct profile_range *r;

	if (pair->id == MARKER_NO_RANGE || pair->id >= p->ranges.n)
		return;
	r = VEC_AT(p->ranges, struct profile_range, pair->id);
	r->end = time;
	r->open = false;
}

static int counter(struct profile *p, const char *name, size_t len, int64_t v)
{
	uint32_t nid = profile_intern(p, name, len), i;
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

static int keep_mark(struct profile *p, uint32_t ti, uint64_t time, const struct marker *mk)
{
	struct profile_mark *m;

	if (grow_to(&p->mark_data, &p->mark_cap, p->mark_len + mk->len, 1, 65536))
		return -ENOMEM;
	m = VEC_PUSH(p->marks, struct profile_mark);
	if (!m)
		return -ENOMEM;
	*m = (struct profile_mark){ .time = time, .thread = ti, .type = mk->type,
		.flags = mk->flags, .len = (uint32_t)mk->len, .off = p->mark_len };
	if (mk->len)
		memcpy(p->mark_data + p->mark_len, mk->data, mk->len);
	p->mark_len += mk->len;
	return 0;
}

/* Ranges and counters; with keep_marks, every other marker this reader can read. */
static int add_marker(struct profile *p, uint32_t ti, uint64_t time, const struct replay_marker *rm)
{
	const struct marker *m = &rm->m;

	switch (m->type) {
	case PERFMARK_TYPE_RANGE_BEGIN:
		return m->text ? range_begin(p, ti, m, &rm->pair, time) : 0;
	case PERFMARK_TYPE_RANGE_END:
		if (m->text)
			range_end(p, &rm->pair, time);
		return 0;
	case PERFMARK_TYPE_COUNTER:
		if (!m->has_value || !m->text)
			return 0;
		if (counter(p, m->text, m->text_len, m->value) < 0)
			return -ENOMEM;
		break;
	default:
		break;
	}
	return p->o.keep_marks ? keep_mark(p, ti, time, m) : 0;
}

static int on_marker(void *ctx, const struct perfread_sample *s, const struct replay_marker *rm)
{
	struct profile *p = ctx;
	uint32_t ti;
	int err = 0;

	note_time(p, s);
	if (!thread_at(p, s->pid, s->tid, s->time, &ti))
		return -ENOMEM;
	/* outside the filter's --cpu or --time: only its range's begin or end */
	if (s->raw && rm->m.state == MARKER_OK && (!rm->outside ||
	    rm->m.type == PERFMARK_TYPE_RANGE_BEGIN || rm->m.type == PERFMARK_TYPE_RANGE_END))
		err = add_marker(p, ti, s->time, rm);
	return err ? err : p->err;
}

/* ---- other records -------------------------------------------------------------- */

static int on_lost(void *ctx, const struct perf_event_header *rec, uint64_t n)
{
	struct profile *p = ctx;

	p->lost += n;
	return 0;
}

/* After the symbolizer saw it: comms to look up again, address caches to forget. */
static int on_sideband(void *ctx, const struct perf_event_header *rec)
{
	struct profile *p = ctx;
	uint32_t pid, tid;

	if (rec->size < 16)
		return 0;
	memcpy(&pid, (const uint8_t *)rec + 8, 4);
	memcpy(&tid, (const uint8_t *)rec + 12, 4);
	if (rec->type == PERF_RECORD_COMM) {
		uint32_t ti = idmap__get(&p->thread_ids, tid);

		if (ti != TABLE_NONE)
			VEC_AT(p->tstate, struct thread_state, ti)->comm_dirty = true;
		if (rec->misc & PERF_RECORD_MISC_COMM_EXEC)
			profile_cache_forget(p, pid);
	} else if (rec->type == PERF_RECORD_MMAP || rec->type == PERF_RECORD_MMAP2) {
		profile_cache_forget(p, pid);
	}
	return 0;
}

/* ---- loading --------------------------------------------------------------------- */

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

static int load(struct profile *p, int fd, char *err, size_t errlen)
{
	static const struct replay_ops ops = {
		.sample = on_sample, .marker = on_marker, .lost = on_lost, .sideband = on_sideband,
		.hidden = on_hidden, .dropped = on_dropped,
	};
	struct profile_node *root = VEC_PUSH(p->nodes, struct profile_node);
	int r;

	p->unknown = profile_intern(p, "[unknown]", strlen("[unknown]"));
	if (!root || p->unknown == TABLE_NONE)
		return errline_code(err, errlen, -ENOMEM, "out of memory");
	*root = (struct profile_node){ .parent = TABLE_NONE, .frame = TABLE_NONE };
	if (p->o.keep_addrs) {
		struct profile_anode *aroot = VEC_PUSH(p->anodes, struct profile_anode);

		if (!aroot)
			return errline_code(err, errlen, -ENOMEM, "out of memory");
		*aroot = (struct profile_anode){ .parent = TABLE_NONE, .loc = TABLE_NONE };
	}
	r = replay__open(&p->rp, fd, NULL);
	if (r < 0)
		return errline_code(err, errlen, r, "%s", replay__error(p->rp));
	p->sym = replay__symbolizer(p->rp);
	if (p->o.filter && (r = replay__set_filter(p->rp, p->o.filter)) < 0)
		return errline_code(err, errlen, r, "%s", replay__error(p->rp));
	r = replay__run(p->rp, &ops, p);
	if (r < 0)
		return errline_code(err, errlen, r, "%s", replay__error(p->rp));
	close_open_ranges(p);
	if (!p->sample_event)
		p->sample_event = p->dropped_event;
	if (p->o.event && !p->sample_event)
		return no_such_event(p, err, errlen);
	return 0;
}

int profile__load(struct profile **out, int fd, const struct profile_opts *opts,
		  char *err, size_t errlen)
{
	struct profile *p = calloc(1, sizeof(*p));
	int r;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!p)
		return errline_code(err, errlen, -ENOMEM, "out of memory");
	if (opts)
		p->o = *opts;
	r = load(p, fd, err, errlen);
	if (r < 0) {
		profile__free(p);
		return r;
	}
	*out = p;
	return 0;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	free(p->mappings.v);
	free(p->frames.v);
	free(p->nodes.v);
	free(p->samples.v);
	free(p->ranges.v);
	free(p->threads.v);
	free(p->tstate.v);
	free(p->counters.v);
	free(p->marks.v);
	free(p->offcpus.v);
	free(p->locs.v);
	free(p->anodes.v);
	free(p->mark_data);
	idmap__free(&p->mapping_ids);
	idmap__free(&p->frame_ids);
	idmap__free(&p->node_ids);
	idmap__free(&p->thread_ids);
	idmap__free(&p->counter_ids);
	idmap__free(&p->addr_cache);
	idmap__free(&p->proc_gen);
	idmap__free(&p->loc_exact);
	idmap__free(&p->loc_call);
	idmap__free(&p->comm_locs);
	idmap__free(&p->anode_ids);
	strtab__free(&p->strs);
	replay__free(p->rp);
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

uint64_t profile__oncpu_ns(const struct profile *p, bool *ns_per_period)
{
	const struct perfread_event *e = p->sample_event;

	*ns_per_period = false;
	if (!e)
		return 0;
	if (e->attr.type == PERF_TYPE_SOFTWARE && (e->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
						  e->attr.config == PERF_COUNT_SW_TASK_CLOCK)) {
		*ns_per_period = true;
		return 1;
	}
	return e->attr.freq && e->attr.sample_freq ? 1000000000ull / e->attr.sample_freq : 0;
}

uint64_t profile__hidden_samples(const struct profile *p)
{
	return p->hidden_samples;
}

uint64_t profile__hidden_period(const struct profile *p)
{
	return p->hidden_period;
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
PROFILE_ARRAY(loc, locs)
PROFILE_ARRAY(anode, anodes)
PROFILE_ARRAY(offcpu, offcpus)
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

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Range latency histograms per (range name, comm): see rangehist.h.
 * Nothing is allocated per marker: the tables grow by doubling, up to
 * their caps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "marker.h"
#include "rangehist.h"
#include "table.h"

struct open_range {
	uint64_t hash, time;
};

struct rthread {
	uint32_t depth, npend;
	struct open_range open[RANGEHIST_DEPTH];
	struct open_range pend[RANGEHIST_PENDING];   /* ends that came before their begins */
};

struct rset {
	uint32_t name, comm;              /* strtab ids */
	uint64_t count, sum_ns;
	uint64_t buckets[RANGEHIST_BUCKETS];
};

struct rcounter {
	uint32_t name, comm;
	int64_t last;
};

#define COUNTER_KEY (1ull << 63)          /* set_of keys of counters */

struct rpid {
	char comm[16];
};

struct rangehist {
	size_t max_sets;
	struct strtab strs;               /* names and comms of the sets only */
	struct idmap set_of;              /* name id << 32 | comm id -> set */
	struct rset *sets;
	size_t nsets, capsets;
	struct idmap thread_of;           /* tid -> thread */
	struct rthread *threads;
	size_t nthreads, capthreads;
	struct rcounter *counters;
	size_t ncounters, capcounters;
	struct idmap pid_of;              /* pid -> comm slot */
	struct rpid *pids;
	size_t npids, cappids;
	struct rangehist_totals t;
};

int rangehist__new(struct rangehist **out, size_t max_sets)
{
	struct rangehist *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return -ENOMEM;
	rs->max_sets = max_sets ? max_sets : RANGEHIST_DEFAULT_SETS;
	*out = rs;
	return 0;
}

void rangehist__free(struct rangehist *rs)
{
	if (!rs)
		return;
	strtab__free(&rs->strs);
	idmap__free(&rs->set_of);
	idmap__free(&rs->thread_of);
	idmap__free(&rs->pid_of);
	free(rs->sets);
	free(rs->counters);
	free(rs->threads);
	free(rs->pids);
	free(rs);
}

uint64_t rangehist__bound(size_t i)
{
	unsigned o;

	if (i == 0)
		return 1ull << RANGEHIST_MIN_SHIFT;
	if (i >= RANGEHIST_BUCKETS - 1)
		return UINT64_MAX;
	o = RANGEHIST_MIN_SHIFT + (unsigned)((i - 1) / RANGEHIST_SUB);
	return (1ull << o) + (uint64_t)((i - 1) % RANGEHIST_SUB + 1) * (1ull << (o - 3));
}

size_t rangehist__bucket(uint64_t ns)
{
	uint64_t v;
	unsigned o;

	if (ns <= 1ull << RANGEHIST_MIN_SHIFT)
		return 0;
	if (ns > 1ull << RANGEHIST_MAX_SHIFT)
		return RANGEHIST_BUCKETS - 1;
	v = ns - 1;
	o = 63u - (unsigned)__builtin_clzll(v);
	return 1 + (size_t)(o - RANGEHIST_MIN_SHIFT) * RANGEHIST_SUB + ((v >> (o - 3)) & 7);
}

/* FNV-1a, mixed: two names with one hash pair wrongly, nothing worse */
static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return table_mix(h);
}

/* The thread's open ranges; NULL when there is no room (counted). */
static struct rthread *thread_get(struct rangehist *rs, uint32_t tid)
{
	uint32_t i = idmap__get(&rs->thread_of, (uint64_t)tid + 1);

	if (i != TABLE_NONE)
		return &rs->threads[i];
	if (rs->nthreads >= RANGEHIST_THREADS) {
		/* start afresh: what was open there never pairs */
		for (size_t k = 0; k < rs->nthreads; k++)
			rs->t.unpaired += rs->threads[k].depth + rs->threads[k].npend;
		idmap__clear(&rs->thread_of);
		rs->nthreads = 0;
	}
	if (grow(&rs->threads, &rs->capthreads, rs->nthreads + 1, sizeof(*rs->threads)) ||
	    idmap__put(&rs->thread_of, (uint64_t)tid + 1, (uint32_t)rs->nthreads))
		return NULL;
	rs->threads[rs->nthreads].depth = 0;
	rs->threads[rs->nthreads].npend = 0;
	return &rs->threads[rs->nthreads++];
}

/* /proc/PID/comm once per pid; "" when the process is gone */
static const char *pid_comm(struct rangehist *rs, uint32_t pid)
{
	uint32_t i = idmap__get(&rs->pid_of, (uint64_t)pid + 1);
	char path[32], buf[32];
	ssize_t n = -1;
	int fd;

	if (i != TABLE_NONE)
		return rs->pids[i].comm;
	if (rs->npids >= RANGEHIST_PIDS) {
		idmap__clear(&rs->pid_of);
		rs->npids = 0;
	}
	if (grow(&rs->pids, &rs->cappids, rs->npids + 1, sizeof(*rs->pids)) ||
	    idmap__put(&rs->pid_of, (uint64_t)pid + 1, (uint32_t)rs->npids))
		return "";
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(rs->pids[0].comm) - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	memcpy(rs->pids[rs->npids].comm, buf, (size_t)n);
	rs->pids[rs->npids].comm[n] = '\0';
	return rs->pids[rs->npids++].comm;
}

/* The label set of (name, comm); NULL beyond the cap or out of memory. */
static struct rset *set_get(struct rangehist *rs, const char *name, size_t len, const char *comm)
{
	uint32_t nid = strtab__find(&rs->strs, name, len), cid = strtab__find(&rs->strs, comm, strlen(comm));
	uint32_t i = TABLE_NONE;
	struct rset *st;

	if (nid != TABLE_NONE && cid != TABLE_NONE)
		i = idmap__get(&rs->set_of, (uint64_t)nid << 32 | cid);
	if (i != TABLE_NONE)
		return &rs->sets[i];
	if (rs->nsets + rs->ncounters >= rs->max_sets)
		return NULL;
	nid = strtab__intern(&rs->strs, name, len);
	cid = strtab__intern(&rs->strs, comm, strlen(comm));
	if (nid == TABLE_NONE || cid == TABLE_NONE ||
	    grow(&rs->sets, &rs->capsets, rs->nsets + 1, sizeof(*rs->sets)) ||
	    idmap__put(&rs->set_of, (uint64_t)nid << 32 | cid, (uint32_t)rs->nsets))
		return NULL;
	st = &rs->sets[rs->nsets++];
	memset(st, 0, sizeof(*st));
	st->name = nid;
	st->comm = cid;
	rs->t.sets = rs->nsets + rs->ncounters;
	return st;
}

/* a range of d ns closed: counted in its label set */
static void count(struct rangehist *rs, uint32_t pid, const char *name, size_t len, uint64_t d)
{
	struct rset *st = set_get(rs, name, len, pid_comm(rs, pid));

	if (!st) {
		rs->t.overflow++;
		return;
	}
	st->count++;
	st->sum_ns += d;
	st->buckets[rangehist__bucket(d)]++;
	rs->t.ranges++;
}

/*
 * An end closes the innermost open range of its name.  One that finds none
 * waits (RANGEHIST_PENDING per thread) for a begin of its name that is
 * older: a thread's markers can reach the session by two ways (the fast
 * lane and the BPF ring) and so out of their order.
 */
static void range_end(struct rangehist *rs, struct rthread *th, uint64_t h, uint32_t pid,
		      uint64_t time, const char *name, size_t len)
{
	uint64_t d;
	uint32_t k;

	for (k = th->depth; k > 0 && th->open[k - 1].hash != h; k--)
		;
	if (!k) {
		if (th->npend == RANGEHIST_PENDING) {
			memmove(&th->pend[0], &th->pend[1], (RANGEHIST_PENDING - 1) * sizeof(th->pend[0]));
			th->npend--;
			rs->t.unpaired++;
		}
		th->pend[th->npend].hash = h;
		th->pend[th->npend++].time = time;
		return;
	}
	d = time > th->open[k - 1].time ? time - th->open[k - 1].time : 0;
	memmove(&th->open[k - 1], &th->open[k], (th->depth - k) * sizeof(th->open[0]));
	th->depth--;
	count(rs, pid, name, len, d);
}

/* A begin whose end already came (see range_end): true when it closed one. */
static bool begin_pending(struct rangehist *rs, struct rthread *th, uint64_t h, uint32_t pid,
			  uint64_t time, const char *name, size_t len)
{
	for (uint32_t k = 0; k < th->npend; k++) {
		if (th->pend[k].hash != h || th->pend[k].time < time)
			continue;
		count(rs, pid, name, len, th->pend[k].time - time);
		memmove(&th->pend[k], &th->pend[k + 1], (th->npend - k - 1) * sizeof(th->pend[0]));
		th->npend--;
		return true;
	}
	return false;
}

/* a counter's last value, per (name, comm) */
static void counter(struct rangehist *rs, uint32_t pid, const uint8_t *payload, size_t len)
{
	struct marker m;
	const char *comm;
	uint32_t nid, cid, i = TABLE_NONE;
	size_t n;

	marker__decode_payload(&m, PERFMARK_TYPE_COUNTER, 0, payload, len);
	if (!m.has_value)
		return;
	n = m.text ? (m.text_len > RANGEHIST_NAME_MAX ? RANGEHIST_NAME_MAX : m.text_len) : 0;
	comm = pid_comm(rs, pid);
	nid = strtab__find(&rs->strs, m.text ? m.text : "", n);
	cid = strtab__find(&rs->strs, comm, strlen(comm));
	if (nid != TABLE_NONE && cid != TABLE_NONE)
		i = idmap__get(&rs->set_of, COUNTER_KEY | (uint64_t)nid << 32 | cid);
	if (i == TABLE_NONE) {
		if (rs->nsets + rs->ncounters >= rs->max_sets) {
			rs->t.overflow++;
			return;
		}
		nid = strtab__intern(&rs->strs, m.text ? m.text : "", n);
		cid = strtab__intern(&rs->strs, comm, strlen(comm));
		if (nid == TABLE_NONE || cid == TABLE_NONE ||
		    grow(&rs->counters, &rs->capcounters, rs->ncounters + 1, sizeof(*rs->counters)) ||
		    idmap__put(&rs->set_of, COUNTER_KEY | (uint64_t)nid << 32 | cid, (uint32_t)rs->ncounters))
			return;
		i = (uint32_t)rs->ncounters++;
		rs->counters[i].name = nid;
		rs->counters[i].comm = cid;
		rs->t.sets = rs->nsets + rs->ncounters;
	}
	rs->counters[i].last = m.value;
}

void rangehist__marker(struct rangehist *rs, uint32_t type, uint32_t pid, uint32_t tid,
			uint64_t time, const uint8_t *payload, size_t len)
{
	struct rthread *th;
	const char *name;
	size_t n = 0;
	uint64_t h;

	if (type == PERFMARK_TYPE_COUNTER) {
		counter(rs, pid, payload, len);
		return;
	}
	if (type != PERFMARK_TYPE_RANGE_BEGIN && type != PERFMARK_TYPE_RANGE_END)
		return;
	name = marker__name(payload, len, &n);
	if (!name) {
		name = "";
		n = 0;
	}
	if (n > RANGEHIST_NAME_MAX)
		n = RANGEHIST_NAME_MAX;
	h = name_hash(name, n);
	th = thread_get(rs, tid);
	if (!th)
		return;
	if (type == PERFMARK_TYPE_RANGE_END) {
		range_end(rs, th, h, pid, time, name, n);
		return;
	}
	if (th->npend && begin_pending(rs, th, h, pid, time, name, n))
		return;
	if (th->depth >= RANGEHIST_DEPTH) {
		rs->t.unpaired++;
		return;
	}
	th->open[th->depth].hash = h;
	th->open[th->depth].time = time;
	th->depth++;
}

size_t rangehist__nr_sets(const struct rangehist *rs)
{
	return rs->nsets;
}

void rangehist__set(const struct rangehist *rs, size_t i, struct rangehist_set *out)
{
	const struct rset *st = &rs->sets[i];

	out->name = strtab__str(&rs->strs, st->name);
	out->name_len = strlen(out->name);
	out->comm = strtab__str(&rs->strs, st->comm);
	out->count = st->count;
	out->sum_ns = st->sum_ns;
	out->buckets = st->buckets;
}

void rangehist__totals(const struct rangehist *rs, struct rangehist_totals *t)
{
	*t = rs->t;
}

size_t rangehist__nr_counters(const struct rangehist *rs)
{
	return rs->ncounters;
}

void rangehist__counter(const struct rangehist *rs, size_t i, struct rangehist_counter *out)
{
	out->name = strtab__str(&rs->strs, rs->counters[i].name);
	out->name_len = strlen(out->name);
	out->comm = strtab__str(&rs->strs, rs->counters[i].comm);
	out->value = rs->counters[i].last;
}

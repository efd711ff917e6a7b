// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Sinks: one interface for every output of a session (see sinks.h).  This
 * file holds the sink itself, the perfdata and ring kinds and the kept
 * sideband; live readers are in readers.c, snapshots in sinksnap.c,
 * rotating files in sinkfile.c, copying records out in sinkcopy.c: calls
 * go down that list (tests/t-calls.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "perfdata.h"
#include "pring.h"
#include "sink-int.h"

#define MAX_EVENTS 16
#define MAX_IDS 64
#define NAME_MAX_LEN 64
#define READER_QUEUE_DEFAULT (4u << 20)
#define SB_HALF_MIN (4ull << 20)
#define SB_HALF_MAX (64ull << 20)
#define SB_HALF_FILE (16ull << 20)
#define META_VERSION 1

static bool is_sideband(uint32_t type)
{
	return type == PERF_RECORD_COMM || type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
	       type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT;
}

/* the process a sideband record is about: the first field of each of their bodies */
static uint32_t sideband_pid(const void *rec)
{
	uint32_t pid;

	memcpy(&pid, (const char *)rec + sizeof(struct perf_event_header), sizeof(pid));
	return pid;
}

/* --- the event description, copied and stored in a ring's header ----------- */

static int copy_events(struct sink *s, const struct perfdata_event *evs, size_t n)
{
	size_t i, nids = 0;

	if (!n || n > MAX_EVENTS)
		return -EINVAL;
	for (i = 0; i < n; i++)
		nids += evs[i].nr_ids;
	if (nids > MAX_IDS)
		return -EINVAL;
	s->evs = calloc(n, sizeof(*s->evs));
	s->ids = calloc(nids + 1, sizeof(*s->ids));
	if (!s->evs || !s->ids)
		return -ENOMEM;
	for (i = 0, nids = 0; i < n; i++) {
		s->evs[i] = evs[i];
		s->evs[i].name = strndup(evs[i].name ? evs[i].name : "", NAME_MAX_LEN - 1);
		if (!s->evs[i].name)
			return -ENOMEM;
		memcpy(s->ids + nids, evs[i].ids, evs[i].nr_ids * sizeof(uint64_t));
		s->evs[i].ids = s->ids + nids;
		nids += evs[i].nr_ids;
		s->nr_evs = i + 1;
	}
	s->first_id = nids ? s->ids[0] : 0;
	return 0;
}

/*
 * meta: u64 key, u32 version, u32 n; per event: attr (PERFDATA_ATTR_SIZE
 * bytes), u32 nr_ids, u32 name length, ids, name padded to 8.  The key
 * hashes what decides how records are encoded and named (sample_type, the
 * sample_id layout, ids, names) and leaves out what may change between two
 * runs of one session (the sampling rate clamped by the kernel, disabled):
 * a ring of the same key is taken over.
 */
struct meta_buf {
	uint8_t b[PRING_META_MAX];
	size_t len;
	bool full;
};

static void meta_put(struct meta_buf *m, const void *p, size_t n)
{
	if (m->full || m->len + n > sizeof(m->b)) {
		m->full = true;
		return;
	}
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static uint64_t events_key(const struct sink *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < s->nr_evs; i++) {
		const struct perf_event_attr *a = &s->evs[i].attr;
		uint64_t f[6] = { a->type, a->config, a->sample_type, a->read_format,
				  a->sample_id_all | (uint64_t)a->use_clockid << 1, a->clockid };

		h = fnv(h, f, sizeof(f));
		h = fnv(h, s->evs[i].ids, s->evs[i].nr_ids * sizeof(uint64_t));
		h = fnv(h, s->evs[i].name, strlen(s->evs[i].name) + 1);
	}
	return h;
}

static int events_to_meta(const struct sink *s, struct meta_buf *m)
{
	uint32_t v[2] = { META_VERSION, (uint32_t)s->nr_evs };
	uint64_t key = events_key(s);
	static const uint8_t zero[8];
	size_t i;

	m->len = 0;
	m->full = false;
	meta_put(m, &key, sizeof(key));
	meta_put(m, v, sizeof(v));
	for (i = 0; i < s->nr_evs; i++) {
		struct perf_event_attr a = s->evs[i].attr;
		uint32_t f[2] = { s->evs[i].nr_ids, (uint32_t)strlen(s->evs[i].name) };
		uint8_t attr[PERFDATA_ATTR_SIZE] = { 0 };

		a.size = PERFDATA_ATTR_SIZE;
		memcpy(attr, &a, sizeof(a) < sizeof(attr) ? sizeof(a) : sizeof(attr));
		meta_put(m, attr, sizeof(attr));
		meta_put(m, f, sizeof(f));
		meta_put(m, s->evs[i].ids, f[0] * sizeof(uint64_t));
		meta_put(m, s->evs[i].name, f[1]);
		meta_put(m, zero, (8 - (f[1] & 7)) & 7);
	}
	return m->full ? -E2BIG : 0;
}

static int events_from_meta(struct sink *s, const uint8_t *p, size_t len)
{
	struct perfdata_event evs[MAX_EVENTS];
	uint64_t ids[MAX_IDS];
	char names[MAX_EVENTS][NAME_MAX_LEN];
	size_t off = 16, i, nids = 0;
	uint32_t v[2];

	if (len < off)
		return -EINVAL;
	memcpy(v, p + 8, sizeof(v));
	if (v[0] != META_VERSION || !v[1] || v[1] > MAX_EVENTS)
		return -EINVAL;
	memset(evs, 0, sizeof(evs));
	for (i = 0; i < v[1]; i++) {
		uint32_t f[2];

		if (off + PERFDATA_ATTR_SIZE + sizeof(f) > len)
			return -EINVAL;
		memcpy(&evs[i].attr, p + off, sizeof(evs[i].attr) < PERFDATA_ATTR_SIZE ?
		       sizeof(evs[i].attr) : PERFDATA_ATTR_SIZE);
		off += PERFDATA_ATTR_SIZE;
		memcpy(f, p + off, sizeof(f));
		off += sizeof(f);
		if (f[0] > MAX_IDS - nids || f[1] >= NAME_MAX_LEN ||
		    off + f[0] * sizeof(uint64_t) + ((f[1] + 7) & ~7u) > len)
			return -EINVAL;
		memcpy(ids + nids, p + off, f[0] * sizeof(uint64_t));
		off += f[0] * sizeof(uint64_t);
		memcpy(names[i], p + off, f[1]);
		names[i][f[1]] = '\0';
		off += (f[1] + 7) & ~7u;
		evs[i].ids = ids + nids;
		evs[i].nr_ids = f[0];
		evs[i].name = names[i];
		nids += f[0];
	}
	return copy_events(s, evs, v[1]);
}

/* --- the kept sideband -------------------------------------------------------- */

struct compact {
	uint32_t *gone;          /* pids that exited before the oldest record held */
	size_t ngone, cap;
	uint64_t cutoff;
	uint64_t excess, dropped;
	bool oom;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int find_gone(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct compact *c = ctx;

	if (((const struct perf_event_header *)rec)->type != PERF_RECORD_EXIT || time >= c->cutoff)
		return 0;
	if (c->ngone == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		uint32_t *ng = realloc(c->gone, cap * sizeof(*ng));

		if (!ng) {
			c->oom = true;
			return 1;
		}
		c->gone = ng;
		c->cap = cap;
	}
	c->gone[c->ngone++] = sideband_pid(rec);
	return 0;
}

static bool keep_named(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct compact *c = ctx;
	uint32_t pid = sideband_pid(rec);

	return pid == (uint32_t)-1 || !c->ngone ||
	       !bsearch(&pid, c->gone, c->ngone, sizeof(pid), cmp_u32);
}

/* the kernel's records (pid -1) always stay */
static bool keep_newest(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct compact *c = ctx;

	if (c->dropped >= c->excess || sideband_pid(rec) == (uint32_t)-1)
		return true;
	c->dropped += len;
	return false;
}

/*
 * Drop what no longer names anything: processes that exited before the
 * oldest record held.  Still too full: the oldest per-process records go.
 */
static void sb_compact(struct sink *s)
{
	struct compact c = { 0 };
	struct pring_stats ps;

	c.cutoff = s->o.kind == SINK_RING ? pring__oldest(s->pr)
		 : s->file_first_time ? s->file_first_time : UINT64_MAX;
	pring__foreach(s->pr, true, find_gone, &c);
	if (!c.oom) {
		if (c.ngone > 1)
			qsort(c.gone, c.ngone, sizeof(*c.gone), cmp_u32);
		pring__sb_compact(s->pr, keep_named, &c);
	}
	free(c.gone);
	pring__stats(s->pr, &ps);
	if (ps.sb_used > ps.sb_capacity / 4 * 3) {
		c.excess = ps.sb_used - ps.sb_capacity / 2;
		pring__sb_compact(s->pr, keep_newest, &c);
	}
}

static int sb_add(struct sink *s, uint64_t time, const void *rec, size_t len)
{
	int e = pring__sb_append(s->pr, time, rec, len);

	if (e == -ENOSPC) {
		sb_compact(s);
		e = pring__sb_append(s->pr, time, rec, len);
	}
	if (e == -ENOSPC) {
		s->sb_dropped++;
		e = 0;
	}
	return e;
}

/* --- the sink ------------------------------------------------------------------- */

static uint64_t sb_half(uint64_t ring_size)
{
	uint64_t h = ring_size / 8;

	return h < SB_HALF_MIN ? SB_HALF_MIN : h > SB_HALF_MAX ? SB_HALF_MAX : h;
}

static int ring_init(struct sink *s, struct sink_recovery *rec)
{
	struct pring_opts po = {
		.dir_fd = s->o.ring_dir_fd,
		.name = s->o.ring_name,
		.data_size = s->o.ring_size,
		.sb_size = s->o.ring_sideband ? s->o.ring_sideband : sb_half(s->o.ring_size),
	};
	struct pring_recovery pr = { 0 };
	struct meta_buf *m = NULL;
	const void *meta;
	size_t len;
	int e;

	if (s->evs) {
		m = malloc(sizeof(*m));
		if (!m)
			return -ENOMEM;
		e = events_to_meta(s, m);
		if (e) {
			free(m);
			return e;
		}
		po.meta = m->b;
		po.meta_len = m->len;
		po.meta_key_len = 8;
	} else if (!po.name) {
		return -EINVAL;
	}
	e = pring__open(&s->pr, &po, &pr);
	free(m);
	if (e)
		return e;
	if (rec) {
		rec->found = pr.found;
		rec->replaced = pr.replaced;
		rec->records = pr.frames;
		rec->sideband = pr.sb_frames;
		rec->torn = pr.torn;
	}
	if (s->evs)
		return 0;
	meta = pring__meta(s->pr, &len);
	return events_from_meta(s, meta, len);
}

int sink__new(struct sink **out, const struct sink_opts *o, struct sink_recovery *rec)
{
	struct sink *s;
	int e = -EINVAL;

	*out = NULL;
	if (rec)
		memset(rec, 0, sizeof(*rec));
	if (o->kind == SINK_FILE && (o->dir_fd < 0 || !o->prefix))
		return -EINVAL;
	if (!o->events && (o->kind != SINK_RING || !o->ring_name))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->o.prefix = NULL;
	s->o.ring_name = NULL;
	s->o.events = NULL;
	s->dir_fd = s->file_fd = -1;
	if (!s->o.reader_queue)
		s->o.reader_queue = READER_QUEUE_DEFAULT;
	if (o->events) {
		e = copy_events(s, o->events, o->nr_events);
		if (e)
			goto fail;
	}
	switch (o->kind) {
	case SINK_PERFDATA:
		e = sink_new_writer(s, o->fd, o->pipe, o->zstd_level, &s->w);
		break;
	case SINK_RING:
		s->o.ring_name = o->ring_name;   /* only during ring_init */
		e = ring_init(s, rec);
		s->o.ring_name = NULL;
		break;
	case SINK_FILE: {
		struct pring_opts po = { .sb_size = SB_HALF_FILE };

		e = pring__open(&s->pr, &po, NULL);
		if (!e)
			e = file_sink_init(s, o->prefix);
		break;
	}
	default:
		e = -EINVAL;
	}
	if (e)
		goto fail;
	*out = s;
	return 0;
fail:
	sink__free(s);
	return e;
}

int sink__journal(struct sink *s, uint64_t time, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	int e;

	if (s->o.kind != SINK_RING)
		return 0;
	if (!sink_rec_ok(rec, len))
		return -EINVAL;
	if (is_sideband(h->type))
		return sb_add(s, time, rec, len);
	e = pring__append(s->pr, time, rec, len);
	if (e == -E2BIG) {           /* larger than a quarter of the ring */
		s->too_big++;
		e = 0;
	}
	return e;
}

/* --- records journaled before a restart ----------------------------------- */

/* a record's bytes (8-byte multiples) to 64 bits, never 0 (the empty slot) */
static uint64_t rec_hash(const void *rec, size_t len)
{
	const uint8_t *p = rec;
	uint64_t h = 0x6a09e667f3bcc909ull ^ len, w;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9fb21c651e98df25ull;
		h ^= h >> 29;
	}
	h ^= h >> 32;
	return h ? h : 1;
}

static bool before_put(struct sink *s, uint64_t h, bool add)
{
	size_t i = (size_t)h & s->before_mask;

	while (s->before[i]) {
		if (s->before[i] == h)
			return true;
		i = (i + 1) & s->before_mask;
	}
	if (add)
		s->before[i] = h;
	return false;
}

static int before_add(void *ctx, uint64_t time, const void *rec, size_t len)
{
	(void)time;
	before_put(ctx, rec_hash(rec, len), true);
	return 0;
}

bool sink__journaled_before(struct sink *s, const void *rec, size_t len)
{
	if (!s->pr || s->o.kind != SINK_RING)
		return false;
	if (!s->before_built) {
		s->before_built = true;
		s->before_mask = 2 * SINK_BEFORE_FRAMES - 1;
		s->before = calloc(s->before_mask + 1, sizeof(*s->before));
		if (s->before)
			pring__recovered_last(s->pr, SINK_BEFORE_FRAMES, before_add, s);
	}
	return s->before && before_put(s, rec_hash(rec, len), false);
}

void sink__forget_before(struct sink *s)
{
	free(s->before);
	s->before = NULL;
}

int sink__record(struct sink *s, uint64_t time, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	int e;

	if (!sink_rec_ok(rec, len))
		return -EINVAL;
	if (s->err)
		return s->err;
	if (s->closed)
		return -EBADF;
	s->records++;
	readers_record(s, time, rec, len);
	switch (s->o.kind) {
	case SINK_RING:
		return 0;
	case SINK_FILE:
		/* before sb_add: a new file starts with the sideband kept so far */
		e = file_ensure(s);
		if (!e && is_sideband(h->type))
			e = sb_add(s, time, rec, len);
		if (e)
			return e;
		if (!s->file_first_time)
			s->file_first_time = time ? time : 1;
		break;
	default:
		break;
	}
	e = perfdata_writer__add_timed(s->w, rec, len, time);
	if (e)
		s->err = e;
	return e;
}

int sink__round(struct sink *s)
{
	int e;

	readers_round(s);
	if (s->err)
		return s->err;
	switch (s->o.kind) {
	case SINK_RING:
		pring__sync(s->pr);
		return 0;
	case SINK_FILE:
		return file_round(s);
	default:
		if (s->closed)
			return -EBADF;
		e = perfdata_writer__round(s->w);
		if (e)
			s->err = e;
		return e;
	}
}

int sink__close(struct sink *s)
{
	int e = 0;

	if (s->closed)
		return s->err;
	switch (s->o.kind) {
	case SINK_FILE:
		e = file_close(s);
		break;
	case SINK_RING:
		pring__sync(s->pr);
		break;
	default:
		e = perfdata_writer__finish(s->w);
		break;
	}
	s->closed = true;
	if (e && !s->err)
		s->err = e;
	return s->err;
}

void sink__stats(const struct sink *s, struct sink_stats *st)
{
	struct perfdata_stats ws = { 0 };
	struct pring_stats ps = { 0 };
	memset(st, 0, sizeof(*st));
	st->kind = s->o.kind;
	st->records = s->records;
	st->reader_lost = s->reader_lost;
	st->readers = sink__readers(s, NULL, 0);
	if (s->pr) {
		pring__stats(s->pr, &ps);
		st->sideband_bytes = ps.sb_used;
	}
	st->sideband_dropped = s->sb_dropped;
	if (s->w)
		perfdata_writer__stats(s->w, &ws);
	switch (s->o.kind) {
	case SINK_RING:
		st->used = ps.used;
		st->capacity = ps.capacity;
		st->held = ps.frames;
		st->evicted = ps.evicted + s->too_big;
		st->torn = ps.torn;
		break;
	case SINK_FILE:
		st->bytes = s->bytes_done + ws.bytes;
		st->raw_bytes = s->raw_done + ws.raw_bytes;
		st->used = ws.bytes;
		st->capacity = s->o.rotate_size;
		st->files = s->files;
		st->seq = s->o.seq;
		snprintf(st->current, sizeof(st->current), "%s", s->current);
		break;
	default:
		st->bytes = ws.bytes;
		st->raw_bytes = ws.raw_bytes;
		break;
	}
}

size_t sink__events(const struct sink *s, const struct perfdata_event **evs)
{
	*evs = s->evs;
	return s->nr_evs;
}

void sink__free(struct sink *s)
{
	size_t i;

	if (!s)
		return;
	readers_free(s);
	if (s->o.kind == SINK_FILE)
		file_sink_free(s);
	perfdata_writer__free(s->w);
	pring__free(s->pr);
	free(s->before);
	for (i = 0; s->evs && i < s->nr_evs; i++)
		free((char *)s->evs[i].name);
	free(s->evs);
	free(s->ids);
	free(s);
}

int sink__remove_ring(int dir_fd, const char *name)
{
	return pring__unlink(dir_fd, name);
}

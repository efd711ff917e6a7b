// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading the rings: a pass walks each ring from our tail to the first
 * record not yet complete, copies that span into the spill buffer and moves
 * our tail, so the producers may reuse the space at once.  Delivery later
 * walks the private copy again, checking every field, and turns each record
 * into a PM_REC_MARKER record for the collector's subscribers.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigmem.h"
#include "clock.h"
#include "fastlane_int.h"
#include "testhold.h"
#include "heap.h"

#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Room for a chunk of bytes at the spill's tail (lock held): the tail
 * segment, or a new one (a spare if there is one; larger than
 * FL_SEG_SIZE only for the span of a larger ring).  NULL: the spill is full.
 * Segments are in huge pages (bigmem.h): the pass that copies a burst into
 * fresh ones took a page fault per 4 KiB, on the test VM ~13 us each, and
 * the rings it was emptying filled meanwhile (bench-markers (w)).
 */
static struct fl_chunk *chunk_room(struct fastlane *fl, uint32_t bytes)
{
	size_t need = sizeof(struct fl_chunk) + bytes;
	struct fl_seg *sg = fl->tail;

	if (!sg || sg->len + need > sg->cap) {
		size_t cap = need > FL_SEG_CAP ? need : FL_SEG_CAP;

		if (fl->spilled + need > FL_SPILL_MAX)
			return NULL;
		sg = cap == FL_SEG_CAP ? fl->spare : NULL;
		if (sg) {
			fl->spare = sg->next;
			fl->nr_spare--;
		} else {
			sg = bigmem_alloc(sizeof(*sg) + cap);
			if (!sg)
				return NULL;
			sg->cap = cap;
		}
		sg->next = NULL;
		sg->len = 0;
		if (fl->tail)
			fl->tail->next = sg;
		else
			fl->head = sg;
		fl->tail = sg;
	}
	return (struct fl_chunk *)(void *)(sg->data + sg->len);
}

/* still one of the area's consumers?  A producer lets a silent one go */
static bool still_joined(const struct fastlane *fl, const struct area *a)
{
	const struct pm_fl_hdr *h = a->hdr;

	return __atomic_load_n(&h->consumer[a->cons].token, __ATOMIC_ACQUIRE) == fl->token &&
	       (__atomic_load_n(&h->joined, __ATOMIC_ACQUIRE) & (1u << a->cons));
}

/*
 * The span of complete records from our tail in slot s: its end position,
 * or UINT64_MAX when the ring makes no sense.  recs: the markers in it
 * (fillers not counted) before the ring's end, and after it.
 *
 * RULE (issue 18 case 10): every position and length is bounded by the
 * slot it lives in.  Positions are multiples of 8 (tail and head are
 * checked by copy_ring, lengths here), so the 8-byte word read at a
 * position lies wholly inside the ring: a head set to 4 bytes before the
 * ring's end once made the first read straddle into the next slot, or run
 * past the mapping for the last one.
 */
static uint64_t complete_end(const struct area *a, const struct pm_fl_slot *sl, uint64_t tail,
			     uint64_t head, uint32_t recs[2])
{
	const char *ring = (const char *)sl + PM_FL_CTL_SIZE;
	uint32_t rs = a->ring_size;
	uint64_t pos = tail, wrap = tail - (tail & (rs - 1)) + rs;

	recs[0] = recs[1] = 0;
	while (pos < head) {
		uint32_t off = (uint32_t)(pos & (rs - 1)), len, n;
		uint64_t w;

		w = __atomic_load_n((const uint64_t *)(const void *)(ring + off), __ATOMIC_ACQUIRE);
		len = (uint32_t)w;
		if ((uint32_t)(w >> 32) != pm_fl_tag(pos))
			break;                  /* not complete yet */
		n = len & PM_FL_LEN_MASK;
		if (len & PM_FL_F_PAD) {
			if (n != rs - off)      /* off < rs, 8-aligned: n >= 8, a multiple of 8 */
				return UINT64_MAX;
		} else if (n < sizeof(struct pm_fl_rec) || (n & 7) ||
			   n > pm_fl_rec_bytes(PM_FL_MAX_PAYLOAD) || off + n > rs) {
			return UINT64_MAX;
		}
		if (pos + n > head)
			return UINT64_MAX;
		if (!(len & PM_FL_F_PAD))
			recs[pos >= wrap]++;
		pos += n;
	}
	return pos;
}

/*
 * The slot's tail we publish (RULE: what a recorder has seen, it never
 * loses): what a recorder copied out of a ring is in its memory only until
 * it has handed it on (the session journals each record to its sink at
 * once).  So the tail in the slot's word moves as records are handed on
 * (publish), not as they are copied: a recorder killed between the copy
 * and the hand-on leaves its successor (perfmarkd restarted, with our
 * token) the records where they were, in the ring.  Publishing at the
 * copy left 40 ms of every process's markers to a kill -9 that came
 * between a drain's copy and its delivery (t-daemon-takeover).
 *
 * A ring in a burst is the exception (copy_ring): its producer must have
 * the room back at once, so what is copied of it is published at once,
 * and the records copied but not handed on yet are counted in the slot's
 * held word (a successor counts them lost, the one case left where a
 * recorder's death loses markers).  Handed on later, they come off it.
 *
 * unpub[s]: records copied past pub[s].  All with the fastlane's lock held.
 */
static void publish_early(struct area *a, uint32_t s)
{
	struct pm_fl_slot *sl = area_slot(a, s);

	if (a->unpub[s])
		__atomic_fetch_add(&sl->held[a->cons], a->unpub[s], __ATOMIC_RELAXED);
	a->unpub[s] = 0;
	a->pub[s] = a->tails[s];
	__atomic_store_n(&sl->tail[a->cons], a->pub[s], __ATOMIC_RELEASE);
}

/* n fewer records held in *held (never below 0: the word is in shared memory) */
static void unhold(uint64_t *held, uint64_t n)
{
	uint64_t old = __atomic_load_n(held, __ATOMIC_RELAXED);

	while (n && !__atomic_compare_exchange_n(held, &old, old > n ? old - n : 0, true,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * The n records of ch's slot up to position end are handed on: the tail
 * published goes to end, or, where the pump published past them already,
 * they come off the held count.  Not once we are no longer that slot's
 * consumer (let go, or joined again as another).
 */
static void publish(struct fastlane *fl, const struct fl_chunk *ch, uint64_t end, uint64_t n)
{
	struct area *a = ch->area;
	struct pm_fl_slot *sl;

	if (!n && end <= ch->pos)
		return;
	pthread_mutex_lock(&fl->lock);
	if (ch->cons >= 0 && ch->cons == a->cons && ch->slot < a->nr_slots) {
		sl = area_slot(a, ch->slot);
		if (a->pub[ch->slot] >= end) {
			unhold(&sl->held[ch->cons], n);
		} else if (end <= a->tails[ch->slot]) {
			a->pub[ch->slot] = end;
			a->unpub[ch->slot] = a->unpub[ch->slot] > n ? a->unpub[ch->slot] - n : 0;
			__atomic_store_n(&sl->tail[ch->cons], end, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&fl->lock);
}

/*
 * Copy what is complete in slot s; returns how full its producer saw the
 * ring (head less our published tail, /1024 of it).  pressure: the pump's
 * pass, which leaves a ring alone while the producer sees it less than a
 * quarter full: what is still in a ring survives a kill -9 of the recorder
 * (its successor reads on from our published tail).
 *
 * A ring in a burst (a quarter full at the pump's pass, a sixteenth at a
 * drain's) is published as it is copied (publish_early): its producer has
 * the room back now, not once the session has taken the copy.  Held until
 * the hand-on, as every copy was in e10aa67, a process that emits 10^6
 * markers at once sent three times as many of them to the trap lane (ring
 * full) and spent twice the time per marker (bench-markers (w)).
 */
static uint64_t copy_ring(struct fastlane *fl, struct area *a, uint32_t s, bool pressure)
{
	struct pm_fl_slot *sl = area_slot(a, s);
	const char *ring = (const char *)sl + PM_FL_CTL_SIZE;
	uint64_t tail = a->tails[s], head, end, seen, used;
	uint32_t rs = a->ring_size, recs[2];
	unsigned part = 0;
	bool burst;

	head = __atomic_load_n(&sl->head, __ATOMIC_ACQUIRE);
	if (head == a->pub[s])
		return 0;
	/* producers reserve multiples of 8: anything else is not a position */
	if (head < tail || head - tail > rs || ((head | tail) & 7)) {
		a->corrupt = true;
		return 0;
	}
	used = head - a->pub[s];        /* pub <= tail: at most twice rs */
	burst = used >= (pressure ? rs / 4 : rs / 16);
	used = used >= rs ? 1024 : used * 1024 / rs;
	if (head == tail || (pressure && !burst)) {
		if (burst)
			publish_early(a, s);    /* all copied, not yet handed on */
		return used;
	}
	end = complete_end(a, sl, tail, head, recs);
	if (end == UINT64_MAX) {
		a->corrupt = true;
		return 0;
	}
	/* every record up to end was complete before now: none can be younger */
	seen = clock_mono_ns();
	/* at most two chunks (head - tail <= rs): up to the ring's end, and on from 0 */
	while (tail < end && part < 2) {
		uint32_t off = (uint32_t)(tail & (rs - 1));
		uint32_t bytes = (uint32_t)(end - tail < rs - off ? end - tail : rs - off);
		struct fl_chunk *ch = chunk_room(fl, bytes);

		if (!ch)
			break;          /* full: leave it, the ring fills and the trap lane takes over */
		ch->area = a;
		ch->pos = tail;
		ch->hi = seen;
		ch->lo = a->since < seen ? a->since : seen;
		ch->bytes = bytes;
		ch->slot = s;
		ch->cons = a->cons;
		memcpy(ch + 1, ring + off, bytes);
		ch->recs = recs[part++];
		a->unpub[s] += ch->recs;
		fl->tail->len += sizeof(*ch) + bytes;
		fl->spilled += sizeof(*ch) + bytes;
		a->queued++;
		tail += bytes;
	}
	a->tails[s] = tail;
	if (burst)
		publish_early(a, s);
	return used;
}

/*
 * An area offered early whose owner is not confirmed yet: read it anyway
 * (as PM_UID_PRIVILEGED's) once records have waited FL_CONFIRM_NS: the
 * offer of its first marker was lost.  Until then its rings hold them.
 */
static bool unconfirmed_due(struct area *a, uint32_t used, uint64_t now)
{
	bool pending = false;

	for (uint32_t s = 0; s < used && !pending; s++)
		pending = __atomic_load_n(&area_slot(a, s)->head, __ATOMIC_ACQUIRE) != a->tails[s];
	if (!pending)
		return false;
	if (!a->waiting_since)
		a->waiting_since = now;
	if (now - a->waiting_since < FL_CONFIRM_NS)
		return false;
	a->uid = PM_UID_PRIVILEGED;
	a->read_anyway = true;
	return true;
}

uint64_t fastlane_pass(struct fastlane *fl, uint64_t wait_ns, bool pressure)
{
	uint64_t now = clock_mono_ns(), most = 0;   /* the fullest ring, /1024 of it */

	for (struct area *a = fl->areas; a; a = a->next) {
		uint32_t used;

		if (a->corrupt || a->cons < 0)
			continue;
		if (!still_joined(fl, a)) {
			a->cons = -1;           /* fastlane__register joins again when offered */
			fl->stats.evicted++;
			continue;
		}
		__atomic_store_n(&a->hdr->consumer[a->cons].heartbeat_ns, now, __ATOMIC_RELAXED);
		if (!a->reading)
			continue;
		used = __atomic_load_n(&a->hdr->slots_used, __ATOMIC_ACQUIRE);
		if (used > a->nr_slots)
			used = a->nr_slots;
		if (!a->confirmed && !a->read_anyway && !unconfirmed_due(a, used, now))
			continue;
		for (uint32_t s = 0; s < used && !a->corrupt; s++) {
			uint64_t share = copy_ring(fl, a, s, pressure);

			if (share > most)
				most = share;
		}
		if (a->corrupt)
			fl->stats.corrupt++;
	}
	/* come back when the busiest ring is about an eighth full */
	if (most > 128)
		wait_ns = wait_ns * 128 / most;
	else if (most < 32)
		wait_ns *= 2;
	if (wait_ns < FL_PUMP_BUSY_NS)
		wait_ns = FL_PUMP_BUSY_NS;
	return wait_ns > FL_PUMP_IDLE_NS ? FL_PUMP_IDLE_NS : wait_ns;
}

/* --- delivery -------------------------------------------------------------- */

/*
 * Thread ids as the process numbers them (its own pid namespace) to ours:
 * the NSpid lines of /proc/PID/task/TID/status.  Read again on a miss.
 */
static void load_tids(struct area *a)
{
	char path[64], line[256];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", a->pid);
	d = opendir(path);
	if (!d)
		return;
	a->nr_tids = 0;
	while ((de = readdir(d))) {
		unsigned tid, outer, inner;
		void *nt;
		FILE *f;

		if (sscanf(de->d_name, "%u", &tid) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/status", a->pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *last;

			if (strncmp(line, "NSpid:", 6))
				continue;
			last = strrchr(line, '\t');
			if (sscanf(line + 6, "%u", &outer) == 1 && last && sscanf(last, "%u", &inner) == 1) {
				nt = realloc(a->tids, (a->nr_tids + 1) * sizeof(*a->tids));
				if (nt) {
					a->tids = nt;
					a->tids[a->nr_tids].local = inner;
					a->tids[a->nr_tids++].tid = outer;
				}
			}
			break;
		}
		fclose(f);
	}
	closedir(d);
}

static uint32_t map_tid(struct area *a, uint32_t local, bool *reloaded)
{
	if (a->local_pid == a->pid)
		return local;           /* the same pid namespace */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < a->nr_tids; i++)
			if (a->tids[i].local == local)
				return a->tids[i].tid;
		if (*reloaded)
			break;
		load_tids(a);
		*reloaded = true;
	}
	return a->pid;
}

/*
 * One marker of area a as a PM_REC_MARKER record, to the collector, at
 * time (its own, clamped: see stream_next).
 */
static void emit(struct fastlane *fl, struct area *a, uint32_t slot, const struct pm_fl_rec *r,
		 uint32_t len, uint64_t time, bool clamped, bool *reloaded, struct pm_marker *m)
{
	m->rec_type = PM_REC_MARKER;
	m->cpu = r->cpu;
	m->pid = a->pid;
	m->tid = map_tid(a, r->tid, reloaded);
	m->time = time;
	m->type = r->type;
	m->size = r->size;
	m->orig_size = r->orig_size;
	m->flags = (len & PM_FL_F_TRUNCATED ? PM_F_TRUNCATED : 0) |
		   (len & PM_FL_F_FAULT ? PM_F_FAULT : 0);
	m->ip = r->ip;
	m->uid = a->uid;
	m->ext = clamped ? PM_X_CLAMPED : 0;
	if (unlikely(a->redo_left) && slot < a->nr_slots && a->redo[slot]) {
		a->redo[slot]--;
		a->redo_left--;
		m->ext |= PM_X_REDELIVERED;
	}
	memcpy(m->data, r->data, r->size);
	fl->deliver(fl->ctx, m, sizeof(*m) + r->size);
	fl->stats.markers++;
}

/* a chunk's place in delivery: its ring, then the order it was copied in */
struct chunk_ref {
	struct area *area;
	uint32_t slot;
	size_t seq;
	const struct fl_chunk *ch;
};

static int chunk_cmp(const void *x, const void *y)
{
	const struct chunk_ref *a = x, *b = y;

	if (a->area != b->area)
		return (uintptr_t)a->area < (uintptr_t)b->area ? -1 : 1;
	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* one ring's records of this consume (its chunks, in order), one at a time */
struct stream {
	const struct chunk_ref *ref, *end;
	const char *p;
	uint64_t pos, left;
	const struct pm_fl_rec *cur;  /* NULL: no more */
	uint32_t len;
	uint64_t time;                /* cur's time, clamped into [ch->lo, ch->hi] */
	bool clamped;                 /* ... and it had to be */
	bool reloaded;
	const struct fl_chunk *ch;    /* the chunk being read */
	uint32_t emitted, published;  /* its records handed on: not yet published, published */
	struct fastlane_counts *counts;
	struct fastlane *fl;
};

/*
 * Records of the stream's chunk handed on (all of it: done) are published
 * (publish) every FL_PUBLISH_BATCH of them (a lock each): a kill -9 between
 * a record's hand-on and its batch's publication leaves it to be read
 * again.  The successor flags the first FL_PUBLISH_BATCH records it reads
 * of each ring so (join(), PM_X_REDELIVERED), and a session drops one it
 * finds among the records it journaled before (sink__journaled_before).
 */
static void stream_publish(struct stream *s, bool done)
{
	const struct fl_chunk *ch = s->ch;
	uint32_t n = s->emitted;

	if (!ch)
		return;
	if (done) {
		n = ch->recs > s->published ? ch->recs - s->published : 0;
		/* what the copy held less than the ring had when checked: not handed on */
		if (n > s->emitted)
			s->counts->dropped += n - s->emitted;
	}
	publish(s->fl, ch, done ? ch->pos + ch->bytes : s->pos, n);
	s->published += n;
	s->emitted = 0;
	if (!done)
		return;
	s->ch = NULL;
	/* read past what was written before we joined: nothing after can repeat */
	if (unlikely(ch->area->redo_left) && ch->slot < ch->area->nr_slots &&
	    ch->pos + ch->bytes >= ch->area->redo_end[ch->slot]) {
		ch->area->redo_left -= ch->area->redo[ch->slot];
		ch->area->redo[ch->slot] = 0;
	}
}

/*
 * The next marker (fillers skipped), checked again on our private copy.
 * The one before it, if any, has been handed on.
 *
 * RULE (issue 18 case 4): what a traced process writes is data, never
 * control.  Its times are clamped into what we saw: no earlier than when
 * we joined the area (or it was made, for a backlog an earlier recorder
 * left), no later than when the pass found the record complete; each one
 * clamped is counted (and flagged PM_X_CLAMPED for the sessions).  A time
 * of now + 10^15 used to hold the record in every session's reorder window
 * until the recording ended (root's recorder grew without bound) and put
 * it past everyone else's markers on the timeline.  Lengths and sizes are
 * bounded by the chunk (the slot's copy) they live in.
 */
static void stream_next(struct stream *s)
{
	const struct fl_chunk *ch;

	if (s->cur && ++s->emitted >= FL_PUBLISH_BATCH)
		stream_publish(s, false);
	for (;;) {
		while (s->left >= 8) {
			const struct pm_fl_rec *r = (const void *)s->p;
			uint32_t len = r->len, n = len & PM_FL_LEN_MASK;

			if (r->tag != pm_fl_tag(s->pos) || n < 8 || n > s->left || (n & 7))
				break;          /* changed under our copy: the rest is not trusted */
			if (!(len & PM_FL_F_PAD) &&
			    (n < sizeof(*r) || r->size > PM_FL_MAX_PAYLOAD || r->size > n - sizeof(*r)))
				break;
			s->p += n;
			s->pos += n;
			s->left -= n;
			if (!(len & PM_FL_F_PAD)) {
				uint64_t t = r->time;

				s->clamped = t < s->ch->lo || t > s->ch->hi;
				if (unlikely(s->clamped)) {
					t = t < s->ch->lo ? s->ch->lo : s->ch->hi;
					s->counts->clamped++;
				}
				s->cur = r;
				s->len = len;
				s->time = t;
				return;
			}
		}
		stream_publish(s, true);
		if (s->ref == s->end) {
			s->cur = NULL;
			return;
		}
		ch = s->ref->ch;
		s->ref++;
		s->ch = ch;
		s->published = 0;
		s->p = (const char *)(ch + 1);
		s->pos = ch->pos;
		s->left = ch->bytes;
	}
}

/* heap of streams by the time of their next marker (then stream order) */
static bool earlier(const void *ctx, uint32_t x, uint32_t y)
{
	const struct stream *st = ctx;
	uint64_t a = st[x].time, b = st[y].time;

	return a < b || (a == b && x < y);
}

/*
 * The passes copied a little of each ring in turn.  Each ring's chunks are
 * read in order as one stream, and the streams merged by time: the reorder
 * window gets the consume's markers as one sorted run (a thread's own
 * order kept), not thousands of short runs to sort again.
 */
void fastlane_deliver(struct fastlane *fl, const struct fl_seg *list, struct fastlane_counts *counts)
{
	union {
		struct pm_marker m;
		char bytes[sizeof(struct pm_marker) + PM_FL_MAX_PAYLOAD];
	} rec;
	struct chunk_ref *refs = NULL;
	struct stream *st = NULL;
	uint32_t *h = NULL;
	const struct fl_seg *sg;
	size_t off, n = 0, cap = 0, ns = 0, nh = 0;
	bool hold;

	for (sg = list; sg; sg = sg->next)
		for (off = 0; off < sg->len; cap++)
			off += sizeof(struct fl_chunk) +
			       ((const struct fl_chunk *)(const void *)(sg->data + off))->bytes;
	if (!cap)
		return;
	refs = malloc(cap * sizeof(*refs));
	st = malloc(cap * sizeof(*st));
	h = malloc(cap * sizeof(*h));
	for (sg = list; sg; sg = sg->next) {
		for (off = 0; off < sg->len; n++) {
			const struct fl_chunk *ch = (const void *)(sg->data + off);
			struct chunk_ref one = { ch->area, ch->slot, n, ch };
			struct stream s1 = { .ref = &one, .end = &one + 1, .counts = counts, .fl = fl };

			off += sizeof(*ch) + ch->bytes;
			if (refs && st && h) {
				refs[n] = one;
				continue;
			}
			/* no memory to merge: chunk by chunk, as copied */
			for (stream_next(&s1); s1.cur; stream_next(&s1))
				emit(fl, ch->area, ch->slot, s1.cur, s1.len, s1.time, s1.clamped, &s1.reloaded,
				     &rec.m);
		}
	}
	if (!refs || !st || !h)
		goto out;
	qsort(refs, n, sizeof(*refs), chunk_cmp);
	for (size_t i = 0; i < n; ns++) {
		size_t j = i + 1;

		while (j < n && refs[j].area == refs[i].area && refs[j].slot == refs[i].slot)
			j++;
		st[ns] = (struct stream){ .ref = &refs[i], .end = &refs[j], .counts = counts, .fl = fl };
		stream_next(&st[ns]);
		if (st[ns].cur)
			h[nh++] = (uint32_t)ns;
		i = j;
	}
	heap_build(h, nh, earlier, st);
	hold = test_hold_armed("handed");
	while (nh) {
		struct stream *s = &st[h[0]];

		emit(fl, s->ref[-1].area, s->ref[-1].slot, s->cur, s->len, s->time, s->clamped,
		     &s->reloaded, &rec.m);
		/* tests: a kill here repeats what was handed on since the last publication */
		if (unlikely(hold) && s->emitted + 1 == FL_PUBLISH_BATCH / 4) {
			test_hold_wait("handed", true);
			hold = false;
		}
		stream_next(s);
		if (!s->cur)
			h[0] = h[--nh];
		heap_sift(h, nh, 0, earlier, st);
	}
out:
	free(refs);
	free(st);
	free(h);
}

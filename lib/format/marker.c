// SPDX-License-Identifier: LGPL-2.1-or-later
/* Markers decoded and ranges paired: see marker.h. */
#include "marker.h"
#include "grow.h"
#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- decoding ------------------------------------------------------------------ */

enum marker_event marker__event(const char *name)
{
	if (!name || strncmp(name, "perfmark:", 9))
		return MARKER_NOT;
	if (!strcmp(name, PERFMARK_EV_UEVENT))
		return MARKER_UEVENT;
	if (!strcmp(name, PERFMARK_EV_PRINTF))
		return MARKER_PRINTF;
	return MARKER_NOT;
}

const char *marker__name(const uint8_t *d, size_t n, size_t *len)
{
	const uint8_t *nul;

	if (!d || !n)
		return NULL;
	nul = memchr(d, '\0', n);
	*len = nul ? (size_t)(nul - d) : n;
	return (const char *)d;
}

/* The fields of the well-known types, from the payload. */
static void decode_fields(struct marker *m)
{
	const uint8_t *d = m->data;
	size_t n = m->len;

	switch (m->type) {
	case PERFMARK_TYPE_STRING:
		m->text = (const char *)d;
		m->text_len = d ? strnlen((const char *)d, n) : 0;
		break;
	case PERFMARK_TYPE_RANGE_BEGIN:
	case PERFMARK_TYPE_RANGE_END:
		m->text = marker__name(d, n, &m->text_len);
		break;
	case PERFMARK_TYPE_COUNTER:
		if (n < 8)
			break;
		m->has_value = true;
		memcpy(&m->value, d, 8);
		m->text = marker__name(d + 8, n - 8, &m->text_len);
		break;
	case PERFMARK_TYPE_JIT_CODE:
		if (n < 16)
			break;
		m->has_code = true;
		memcpy(&m->code_addr, d, 8);
		memcpy(&m->code_size, d + 8, 8);
		m->text = marker__name(d + 16, n - 16, &m->text_len);
		break;
	default:
		break;
	}
}

void marker__decode_payload(struct marker *m, uint32_t type, uint32_t flags,
			    const uint8_t *data, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->event = MARKER_UEVENT;
	m->state = MARKER_OK;
	m->version = PERFMARK_UEVENT_VERSION;
	m->type = type;
	m->flags = flags;
	m->data = data;
	m->len = len;
	m->size = m->orig_size = (uint32_t)len;
	decode_fields(m);
}

static void decode_printf(struct marker *m, const char *raw, size_t raw_size)
{
	size_t n = raw ? strnlen(raw, raw_size) : 0;

	m->state = MARKER_OK;
	m->type = PERFMARK_TYPE_STRING;
	m->version = PERFMARK_UEVENT_VERSION;
	m->data = (const uint8_t *)raw;
	m->len = n;
	m->size = m->orig_size = (uint32_t)(n < raw_size ? n + 1 : n);
	decode_fields(m);
}

void marker__decode(struct marker *m, enum marker_event ev, const void *raw, size_t raw_size)
{
	struct perfmark_uevent_hdr h;

	memset(m, 0, sizeof(*m));
	m->event = ev;
	if (!raw)
		raw_size = 0;
	if (ev == MARKER_PRINTF) {
		decode_printf(m, raw, raw_size);
		return;
	}
	if (raw_size >= sizeof(h))
		memcpy(&h, raw, sizeof(h));
	if (raw_size < sizeof(h) || h.size > raw_size - sizeof(h)) {
		/* what is there, as bytes */
		m->state = MARKER_MALFORMED;
		m->type = MARKER_TYPE_NONE;
		m->data = raw;
		m->len = raw_size;
		return;
	}
	m->version = h.version;
	m->type = h.type;
	m->flags = h.flags;
	m->size = h.size;
	m->orig_size = h.orig_size;
	m->data = (const uint8_t *)raw + sizeof(h);
	m->len = h.size;
	m->state = h.version == PERFMARK_UEVENT_VERSION ? MARKER_OK : MARKER_VERSION;
	if (m->state == MARKER_OK)
		decode_fields(m);
}

/* ---- ranges ---------------------------------------------------------------------- */

/*
 * An open range.  The open ranges of a thread are a list, innermost first
 * (outer, inner), and so are those of one name on one thread (same: the
 * head is in pairs->open).  Slots of closed ranges are reused (free list
 * through outer).
 */
struct pair_slot {
	uint64_t start;
	uint32_t id;
	uint32_t thread;        /* index into threads */
	uint32_t outer, inner;  /* slots, or TABLE_NONE */
	uint32_t same;          /* the next outer open one of its name + 1, 0: none */
};

struct pair_thread {
	uint32_t top;           /* the innermost open slot, or TABLE_NONE */
	uint32_t nopen;
};

struct marker_pairs {
	struct strtab names;        /* the names begun */
	struct idmap open;          /* thread << 32 | name -> its innermost open slot + 1 (0: none) */
	struct idmap thread_ids;    /* the caller's thread -> index into threads */
	struct pair_thread *threads;
	size_t nthreads, capthreads;
	struct pair_slot *slots;
	size_t nslots, capslots;
	uint32_t free;              /* a slot to reuse, or TABLE_NONE */
	uint32_t next_id;
};

int marker_pairs__new(struct marker_pairs **out)
{
	struct marker_pairs *mp = calloc(1, sizeof(*mp));

	*out = mp;
	if (!mp)
		return -ENOMEM;
	mp->free = TABLE_NONE;
	return 0;
}

void marker_pairs__free(struct marker_pairs *mp)
{
	if (!mp)
		return;
	strtab__free(&mp->names);
	idmap__free(&mp->open);
	idmap__free(&mp->thread_ids);
	free(mp->threads);
	free(mp->slots);
	free(mp);
}

/* The index of thread (added when add is set), or TABLE_NONE. */
static uint32_t thread_index(struct marker_pairs *mp, uint32_t thread, bool add)
{
	uint32_t i = idmap__get(&mp->thread_ids, thread);

	if (i != TABLE_NONE || !add)
		return i;
	if (grow_to(&mp->threads, &mp->capthreads, mp->nthreads + 1, sizeof(*mp->threads), 16))
		return TABLE_NONE;
	i = (uint32_t)mp->nthreads;
	if (idmap__put(&mp->thread_ids, thread, i) < 0)
		return TABLE_NONE;
	mp->threads[mp->nthreads++] = (struct pair_thread){ .top = TABLE_NONE };
	return i;
}

static uint32_t slot_new(struct marker_pairs *mp)
{
	uint32_t s = mp->free;

	if (s != TABLE_NONE) {
		mp->free = mp->slots[s].outer;
		return s;
	}
	if (mp->nslots >= TABLE_NONE - 1 ||
	    grow_to(&mp->slots, &mp->capslots, mp->nslots + 1, sizeof(*mp->slots), 64))
		return TABLE_NONE;
	return (uint32_t)mp->nslots++;
}

static uint64_t open_key(uint32_t ti, uint32_t name)
{
	return (uint64_t)ti << 32 | name;
}

int marker_pairs__begin(struct marker_pairs *mp, uint32_t thread, const char *name, size_t len,
			uint64_t time, struct marker_pair *out)
{
	uint32_t nid, ti, same, s;
	struct pair_thread *t;

	*out = (struct marker_pair){ .id = MARKER_NO_RANGE, .parent = MARKER_NO_RANGE };
	if (mp->next_id >= MARKER_NO_RANGE - 1)
		return 0;   /* ids stay below MARKER_NO_RANGE: further ranges are dropped */
	nid = strtab__intern(&mp->names, name, len);
	ti = nid == TABLE_NONE ? TABLE_NONE : thread_index(mp, thread, true);
	s = ti == TABLE_NONE ? TABLE_NONE : slot_new(mp);
	if (s == TABLE_NONE)
		return -ENOMEM;
	same = idmap__get(&mp->open, open_key(ti, nid));
	if (idmap__put(&mp->open, open_key(ti, nid), s + 1) < 0) {
		mp->slots[s].outer = mp->free;
		mp->free = s;
		return -ENOMEM;
	}
	t = &mp->threads[ti];
	mp->slots[s] = (struct pair_slot){ .start = time, .id = mp->next_id++, .thread = ti,
		.outer = t->top, .inner = TABLE_NONE, .same = same == TABLE_NONE ? 0 : same };
	out->id = mp->slots[s].id;
	out->depth = t->nopen;
	if (t->top != TABLE_NONE) {
		out->parent = mp->slots[t->top].id;
		mp->slots[t->top].inner = s;
	}
	t->top = s;
	t->nopen++;
	return 0;
}

bool marker_pairs__end(struct marker_pairs *mp, uint32_t thread, const char *name, size_t len,
		       uint64_t time, struct marker_pair *out)
{
	uint32_t nid = strtab__find(&mp->names, name, len);
	uint32_t ti = nid == TABLE_NONE ? TABLE_NONE : thread_index(mp, thread, false);
	uint32_t top = ti == TABLE_NONE ? TABLE_NONE : idmap__get(&mp->open, open_key(ti, nid));
	struct pair_thread *t;
	struct pair_slot *sl;

	if (top == TABLE_NONE || top == 0)
		return false;
	sl = &mp->slots[top - 1];
	t = &mp->threads[ti];
	*out = (struct marker_pair){ .id = sl->id, .parent = MARKER_NO_RANGE, .begin = sl->start,
		.duration = time >= sl->start ? time - sl->start : 0 };
	if (sl->inner != TABLE_NONE)
		mp->slots[sl->inner].outer = sl->outer;
	else
		t->top = sl->outer;
	if (sl->outer != TABLE_NONE)
		mp->slots[sl->outer].inner = sl->inner;
	t->nopen--;
	idmap__put(&mp->open, open_key(ti, nid), sl->same);   /* an existing key: no allocation */
	sl->outer = mp->free;
	mp->free = top - 1;
	return true;
}

uint32_t marker_pairs__top(const struct marker_pairs *mp, uint32_t thread)
{
	uint32_t ti = idmap__get(&mp->thread_ids, thread);

	if (ti == TABLE_NONE || mp->threads[ti].top == TABLE_NONE)
		return MARKER_NO_RANGE;
	return mp->slots[mp->threads[ti].top].id;
}

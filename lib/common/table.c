// SPDX-License-Identifier: LGPL-2.1-or-later
/* idmap and strtab: see table.h. */
#include "table.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/*
 * RULE (issue 8 case 6): a hash over keys taken from the input is keyed
 * with a secret, so no file can be crafted to put its keys in one probe
 * run (quadratic time).  One random key per process.
 */
static uint64_t table_key(void)
{
	static uint64_t key;

	if (!key && getrandom(&key, sizeof(key), GRND_NONBLOCK) != sizeof(key))
		key = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
	return key | 1;
}

static size_t slot_of(const struct idmap *m, uint64_t key)
{
	return (size_t)table_mix(key ^ table_key()) & (m->cap - 1);
}

uint32_t idmap__get(const struct idmap *m, uint64_t key)
{
	if (!m->cap)
		return TABLE_NONE;
	for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].val == TABLE_NONE)
			return TABLE_NONE;
		if (m->slots[i].key == key)
			return m->slots[i].val;
	}
}

static int idmap_grow(struct idmap *m)
{
	struct idmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 1024;
	m->slots = malloc(m->cap * sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	memset(m->slots, 0xff, m->cap * sizeof(*m->slots));
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].val != TABLE_NONE)
			idmap__put(m, old.slots[i].key, old.slots[i].val);
	free(old.slots);
	return 0;
}

int idmap__put(struct idmap *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 4 > m->cap * 3 && idmap_grow(m) < 0)
		return -ENOMEM;
	for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		struct idmap_slot *s = &m->slots[i];

		if (s->val == TABLE_NONE) {
			s->key = key;
			s->val = val;
			m->n++;
			return 0;
		}
		if (s->key == key) {
			s->val = val;
			return 0;
		}
	}
}

void idmap__clear(struct idmap *m)
{
	if (m->cap)
		memset(m->slots, 0xff, m->cap * sizeof(*m->slots));
	m->n = 0;
}

void idmap__free(struct idmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ table_key();   /* FNV-1a, keyed */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	return h;
}

static int strtab_reserve(struct strtab *t, size_t len)
{
	if (t->len + len + 1 > UINT32_MAX)
		return -E2BIG;
	if (grow_to(&t->arena, &t->cap, t->len + len + 1, 1, 65536))
		return -ENOMEM;
	if (t->n == t->capoff) {
		uint32_t cap = t->capoff ? t->capoff * 2 : 1024;
		uint32_t *o = realloc(t->off, cap * sizeof(*o));
		uint32_t *nx;

		if (!o)
			return -ENOMEM;
		t->off = o;
		nx = realloc(t->next, cap * sizeof(*nx));
		if (!nx)
			return -ENOMEM;
		t->next = nx;
		t->capoff = cap;
	}
	return 0;
}

/* The id of s among the strings of hash h, else TABLE_NONE */
static uint32_t strtab_lookup(const struct strtab *t, uint64_t h, const char *s, size_t len)
{
	for (uint32_t id = idmap__get(&t->index, h); id != TABLE_NONE; id = t->next[id]) {
		const char *c = t->arena + t->off[id];

		if (!strncmp(c, s, len) && c[len] == '\0')
			return id;
	}
	return TABLE_NONE;
}

uint32_t strtab__find(const struct strtab *t, const char *s, size_t len)
{
	return strtab_lookup(t, str_hash(s, len), s, len);
}

uint32_t strtab__intern(struct strtab *t, const char *s, size_t len)
{
	uint64_t h = str_hash(s, len);
	uint32_t first = idmap__get(&t->index, h), id = strtab_lookup(t, h, s, len);

	if (id != TABLE_NONE)
		return id;
	if (strtab_reserve(t, len) < 0)
		return TABLE_NONE;
	id = t->n;
	if (idmap__put(&t->index, h, id) < 0)
		return TABLE_NONE;
	t->off[id] = (uint32_t)t->len;
	t->next[id] = first;
	memcpy(t->arena + t->len, s, len);
	t->arena[t->len + len] = '\0';
	t->len += len + 1;
	t->n++;
	return id;
}

void strtab__free(struct strtab *t)
{
	free(t->arena);
	free(t->off);
	free(t->next);
	idmap__free(&t->index);
	memset(t, 0, sizeof(*t));
}

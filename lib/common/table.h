/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two small tables the readers are built from (the analysis model, marker
 * ranges):
 *
 *   idmap   u64 key -> u32 value, open addressing (caches, interning by key)
 *   strtab  string -> u32 id, the strings kept in one growing arena
 *
 * Neither allocates per entry: both grow by doubling.
 */
#ifndef PERFMARK_TABLE_H
#define PERFMARK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TABLE_NONE UINT32_MAX

struct idmap_slot {
	uint64_t key;
	uint32_t val;   /* TABLE_NONE: empty */
};

struct idmap {
	struct idmap_slot *slots;
	size_t cap, n;  /* cap: a power of two */
};

/* The value stored for key, or TABLE_NONE. */
uint32_t idmap__get(const struct idmap *m, uint64_t key);
/* Store key -> val (val != TABLE_NONE).  0 or -ENOMEM. */
int idmap__put(struct idmap *m, uint64_t key, uint32_t val);
void idmap__clear(struct idmap *m);
void idmap__free(struct idmap *m);

struct strtab {
	char *arena;
	size_t len, cap;
	uint32_t *off;      /* id -> offset in arena */
	uint32_t n, capoff;
	struct idmap index; /* hash(string) -> id of the first string with that hash */
	uint32_t *next;     /* id -> next id with the same hash, TABLE_NONE ends */
};

/* The id of s (length len), added when new.  TABLE_NONE when out of memory. */
uint32_t strtab__intern(struct strtab *t, const char *s, size_t len);
/* The id of s (length len) when it is there, else TABLE_NONE. */
uint32_t strtab__find(const struct strtab *t, const char *s, size_t len);
static inline const char *strtab__str(const struct strtab *t, uint32_t id)
{
	return t->arena + t->off[id];
}
void strtab__free(struct strtab *t);

/* 64-bit mixer used by both tables (and by callers combining keys). */
static inline uint64_t table_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif

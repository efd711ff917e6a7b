// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The call tree of the analysis model (profile_int.h): strings, mappings,
 * frames interned per (function name, file), and nodes per (parent,
 * frame).  An address is symbolized once per (process generation,
 * address): a process's generation changes when its user mappings do.
 */
#include "profile_int.h"
#include "symbolize.h"
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define USER_ADDR_BITS 47
#define MAX_PROC_GEN (1u << 16)

void *profile_vec_push(struct vec *a, size_t elsize)
{
	if (grow_to(&a->v, &a->cap, a->n + 1, elsize, 256))
		return NULL;
	return (char *)a->v + elsize * a->n++;
}

uint32_t profile_intern(struct profile *p, const char *s, size_t len)
{
	uint32_t id = strtab__intern(&p->strs, s, len);

	if (id == TABLE_NONE)
		p->err = -ENOMEM;
	return id;
}

static uint32_t intern(struct profile *p, const char *s)
{
	return profile_intern(p, s, strlen(s));
}

static uint32_t mapping_of(struct profile *p, const struct symbolizer_loc *loc)
{
	const char *file = loc->dso ? loc->dso : "[unknown]";
	uint32_t fid = intern(p, file), i;
	struct profile_mapping *m;

	if (fid == TABLE_NONE)
		return TABLE_NONE;
	i = idmap__get(&p->mapping_ids, fid);
	if (i != TABLE_NONE) {
		if (loc->exe)
			VEC_AT(p->mappings, struct profile_mapping, i)->exe = true;
		return i;
	}
	m = VEC_PUSH(p->mappings, struct profile_mapping);
	if (!m)
		return TABLE_NONE;
	*m = (struct profile_mapping){ .file = fid, .build_id = TABLE_NONE,
		.start = loc->map_start, .end = loc->map_end, .pgoff = loc->map_pgoff,
		.exe = loc->exe };
	if (loc->build_id && loc->build_id_len) {
		char hex[2 * 32 + 1];

		for (uint32_t k = 0; k < loc->build_id_len && k < 32; k++)
			snprintf(hex + 2 * k, 3, "%02x", loc->build_id[k]);
		m->build_id = intern(p, hex);
	}
	i = (uint32_t)(p->mappings.n - 1);
	return idmap__put(&p->mapping_ids, fid, i) < 0 ? TABLE_NONE : i;
}

uint32_t profile_frame_of(struct profile *p, uint32_t name, uint32_t mapping, uint32_t kind,
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

void profile_cache_forget(struct profile *p, uint32_t pid)
{
	if (idmap__get(&p->proc_gen, pid) == TABLE_NONE || p->next_gen >= MAX_PROC_GEN)
		return;
	idmap__put(&p->proc_gen, pid, p->next_gen++);
}

uint32_t profile_frame_at(struct profile *p, uint32_t pid, const struct callchain_ip *ip)
{
	struct symbolizer_loc loc;
	char buf[SYMBOLIZER_FRAME_NAME_MAX];
	uint64_t key = 0;
	bool cached = cache_key(p, pid, ip, &key);
	uint32_t f = cached ? idmap__get(&p->addr_cache, key) : TABLE_NONE;
	uint32_t name, mapping;

	if (f != TABLE_NONE)
		return f;
	symbolizer__lookup(p->sym, pid, ip->ip, ip->kernel, &loc);
	name = intern(p, symbolizer_loc__frame(&loc, buf, sizeof(buf)));
	mapping = mapping_of(p, &loc);
	if (name == TABLE_NONE || mapping == TABLE_NONE)
		return TABLE_NONE;
	f = profile_frame_of(p, name, mapping, ip->kernel || (loc.dso && loc.dso[0] == '[' &&
					       !strcmp(loc.dso, "[kernel.kallsyms]")) ?
			     PROFILE_FRAME_KERNEL : PROFILE_FRAME_USER, ip->ip);
	if (f != TABLE_NONE && cached && idmap__put(&p->addr_cache, key, f) < 0)
		return TABLE_NONE;
	return f;
}

/*
 * An address's loc: cached per (process generation, address) as frames
 * are, apart for a leaf and a caller (the same bytes may be both).
 */
uint32_t profile_loc_at(struct profile *p, uint32_t pid, const struct callchain_ip *ip, bool call)
{
	struct idmap *cache = call ? &p->loc_call : &p->loc_exact;
	struct symbolizer_loc sl;
	struct profile_loc *l;
	uint64_t key = 0, off;
	bool cached = cache_key(p, pid, ip, &key);
	uint32_t i = cached ? idmap__get(cache, key) : TABLE_NONE, f;

	if (i != TABLE_NONE)
		return i;
	f = profile_frame_at(p, pid, ip);
	if (f == TABLE_NONE)
		return TABLE_NONE;
	symbolizer__lookup(p->sym, pid, ip->ip, ip->kernel, &sl);
	off = sl.map_end && ip->ip >= sl.map_start ? ip->ip - sl.map_start + sl.map_pgoff : ip->ip;
	l = VEC_PUSH(p->locs, struct profile_loc);
	if (!l)
		return TABLE_NONE;
	*l = (struct profile_loc){ .frame = f, .call = call, .addr = ip->ip - call,
				   .offset = off - call };
	i = (uint32_t)(p->locs.n - 1);
	if (cached && idmap__put(cache, key, i) < 0)
		return TABLE_NONE;
	return i;
}

uint32_t profile_comm_loc(struct profile *p, uint32_t frame)
{
	uint32_t i = idmap__get(&p->comm_locs, frame);
	struct profile_loc *l;

	if (i != TABLE_NONE)
		return i;
	l = VEC_PUSH(p->locs, struct profile_loc);
	if (!l)
		return TABLE_NONE;
	*l = (struct profile_loc){ .frame = frame };
	i = (uint32_t)(p->locs.n - 1);
	return idmap__put(&p->comm_locs, frame, i) < 0 ? TABLE_NONE : i;
}

uint32_t profile_anode_of(struct profile *p, uint32_t parent, uint32_t loc)
{
	uint64_t key = (uint64_t)parent << 32 | loc;
	uint32_t i = idmap__get(&p->anode_ids, key);
	struct profile_anode *n;

	if (i != TABLE_NONE)
		return i;
	n = VEC_PUSH(p->anodes, struct profile_anode);
	if (!n)
		return TABLE_NONE;
	*n = (struct profile_anode){ .parent = parent, .loc = loc };
	i = (uint32_t)(p->anodes.n - 1);
	return idmap__put(&p->anode_ids, key, i) < 0 ? TABLE_NONE : i;
}

uint32_t profile_node_of(struct profile *p, uint32_t parent, uint32_t frame)
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

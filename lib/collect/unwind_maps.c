// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The unwinder's BPF maps (see unwind.h): each collector's LPM trie of
 * mappings, its set of installed processes and its array of pools, every
 * change written to every collector's maps.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "unwind_int.h"

/*
 * The BPF side unwinds p's stacks itself (on: with the mappings of p's image
 * since p->born) or copies them for us (off).
 */
void unwind_set_installed(struct unwinder *u, const struct uw_proc *p, bool on)
{
	struct pm_uw_pid v = { .since = p->born };

	for (size_t k = 0; k < u->nr_sets; k++) {
		if (on)
			bpf_map_update_elem(u->sets[k].pids_fd, &p->pid, &v, BPF_ANY);
		else
			bpf_map_delete_elem(u->sets[k].pids_fd, &p->pid);
	}
}

/*
 * [start, end) as aligned power-of-two blocks, one LPM prefix each: set
 * (val) or delete (val NULL) them.
 */
int unwind_set_range(struct unwinder *u, const struct uw_set *only, uint32_t pid,
		     uint64_t start, uint64_t end, const struct pm_uw_map *val)
{
	uint64_t a = start;
	int err = 0;

	while (a < end) {
		unsigned bits = a ? (unsigned)__builtin_ctzll(a) : 63;
		struct pm_uw_map_key k;

		while (bits > 0 && (a + (1ull << bits) > end || a + (1ull << bits) < a))
			bits--;
		k.prefixlen = 32 + 64 - bits;
		k.pid = htobe32(pid);
		k.addr = htobe64(a);
		for (size_t i = 0; i < u->nr_sets; i++) {
			const struct uw_set *s = only ? only : &u->sets[i];

			if (val && bpf_map_update_elem(s->maps_fd, &k, val, BPF_ANY))
				err = -errno;
			else if (!val)
				bpf_map_delete_elem(s->maps_fd, &k);
			if (only)
				break;
		}
		a += 1ull << bits;
	}
	return err;
}

int unwind_install_mapping(struct unwinder *u, const struct uw_set *only, uint32_t pid,
			   const struct uw_mapping *m)
{
	struct pm_uw_map v = { .bias = m->bias, .start = m->start, .end = m->end };

	/* without a table too: the BPF walk tells a mapping it has none for from one not read yet */
	if (m->slot >= 0) {
		const struct uw_table *t = &u->tables[m->slot];

		v.pool = t->pool;
		v.first = t->first;
		v.nr_rows = t->nr_rows;
		v.gen = t->gen;
	}
	return unwind_set_range(u, only, pid, m->start, m->end, &v);
}
static void clear_map(int fd, size_t key_size)
{
	uint8_t k[32], next[32];

	if (key_size > sizeof(k))
		return;
	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(k, next, key_size);
		if (bpf_map_delete_elem(fd, k))
			break;
	}
}

static uint32_t map_value_size(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.value_size;
}

/* whether the array of pools takes ours (its inner map's value is a block) */
static bool pools_fit(const struct unwinder *u, int pools_fd)
{
	uint32_t last = u->nr_pools - 1;   /* where add_maps puts it anyway */

	return !u->nr_pools || !bpf_map_update_elem(pools_fd, &last, &u->pools[last].fd, BPF_ANY);
}

int unwinder__add_maps(struct unwinder *u, int pools_fd, int maps_fd, int pids_fd)
{
	struct uw_set *s;
	int *fds;
	uint32_t *keys, n = u->nr_pools;

	if (u->nr_sets == MAX_SETS)
		return -ENOSPC;
	/* maps pinned by a perfmark whose tables had another layout */
	if (map_value_size(maps_fd) != sizeof(struct pm_uw_map) ||
	    map_value_size(pids_fd) != sizeof(struct pm_uw_pid) || !pools_fit(u, pools_fd))
		return -EPROTO;
	clear_map(maps_fd, sizeof(struct pm_uw_map_key));
	clear_map(pids_fd, sizeof(uint32_t));
	s = &u->sets[u->nr_sets++];
	s->pools_fd = pools_fd;
	s->maps_fd = maps_fd;
	s->pids_fd = pids_fd;
	/* all pools in one batch: one grace period */
	keys = calloc(n + 1, sizeof(*keys));
	fds = calloc(n + 1, sizeof(*fds));
	for (uint32_t i = 0; keys && fds && i < n; i++) {
		keys[i] = i;
		fds[i] = u->pools[i].fd;
	}
	if (keys && fds && n)
		bpf_map_update_batch(pools_fd, keys, fds, &n, NULL);
	free(keys);
	free(fds);
	/* an adopted collector's maps: the pools of the process that pinned them go */
	for (uint32_t i = u->nr_pools; i < PM_UW_MAX_POOLS; i++)
		bpf_map_delete_elem(pools_fd, &i);
	for (size_t b = 0; b < PROC_BUCKETS; b++)
		for (struct uw_proc *p = u->procs[b]; p; p = p->next) {
			struct pm_uw_pid v = { .since = p->born };

			for (size_t i = 0; i < p->nr; i++)
				if (p->maps[i].installed)
					unwind_install_mapping(u, s, p->pid, &p->maps[i]);
			if (p->active)
				bpf_map_update_elem(pids_fd, &p->pid, &v, BPF_ANY);
		}
	return 0;
}

void unwinder__remove_maps(struct unwinder *u, int pools_fd)
{
	for (size_t i = 0; i < u->nr_sets; i++) {
		if (u->sets[i].pools_fd != pools_fd)
			continue;
		u->sets[i] = u->sets[--u->nr_sets];
		return;
	}
}


// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The processes the unwinder knows, their executable mappings, and the BPF
 * maps that point them at tables.  See unwind.h; where tables live is
 * unwind_pool.c.
 *
 * A process is "active" once the unwinder installs its mappings in the BPF
 * LPM trie: on its first sample, or at once when the collector says it is
 * wanted (a target).  Until then its mappings are only listed, so a fork
 * that execs right away costs nothing.  A mapping's table is resolved when
 * it is installed (unwind_resolve()), while the process still lives.
 */
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#include <bpf/bpf.h>

#include "evspec.h"
#include "grow.h"
#include "synth.h"
#include "unwind_int.h"

static struct unwinder *the_unwinder;

/* --- BPF side: every change goes to every collector's maps ---------------------- */

/* the BPF side unwinds pid's stacks itself (on) or copies them for us (off) */
static void set_installed(struct unwinder *u, uint32_t pid, bool on)
{
	uint8_t one = 1;

	for (size_t k = 0; k < u->nr_sets; k++) {
		if (on)
			bpf_map_update_elem(u->sets[k].pids_fd, &pid, &one, BPF_ANY);
		else
			bpf_map_delete_elem(u->sets[k].pids_fd, &pid);
	}
}

/*
 * [start, end) as aligned power-of-two blocks, one LPM prefix each: set
 * (val) or delete (val NULL) them.
 */
static int set_range(struct unwinder *u, const struct uw_set *only, uint32_t pid,
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

static int install_mapping(struct unwinder *u, const struct uw_set *only, uint32_t pid,
			   const struct uw_mapping *m)
{
	const struct uw_table *t = &u->tables[m->slot];
	struct pm_uw_map v = {
		.pool = t->pool,
		.first = t->first,
		.nr_rows = t->nr_rows,
		.gen = t->gen,
		.bias = m->bias,
		.start = m->start,
		.end = m->end,
	};

	return set_range(u, only, pid, m->start, m->end, &v);
}
/* --- processes ------------------------------------------------------------------- */

static struct uw_proc *proc_find(struct unwinder *u, uint32_t pid, bool create)
{
	struct uw_proc **pp = &u->procs[pid % PROC_BUCKETS], *p;

	for (p = *pp; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->next = *pp;
	*pp = p;
	u->st.procs++;
	return p;
}

static void unuse(struct unwinder *u, uint32_t pid, struct uw_mapping *m)
{
	if (!m->installed)
		return;
	set_range(u, NULL, pid, m->start, m->end, NULL);
	m->installed = false;
	u->st.mappings--;
	if (--u->tables[m->slot].refs == 0)
		u->tables[m->slot].last_use = ++u->clock;
}

/* m's table still the one it was resolved to (an evicted slot may hold another) */
static bool resolved(const struct unwinder *u, const struct uw_mapping *m)
{
	return m->slot >= 0 && u->tables[m->slot].used && u->tables[m->slot].gen == m->gen;
}

/* find m's table and bias, reading the file now (while the process lives) */
static void prepare(struct unwinder *u, uint32_t pid, struct uw_mapping *m)
{
	if (m->slot == BAD_TABLE || resolved(u, m))
		return;
	m->slot = unwind_resolve(u, pid, m);
	if (m->slot >= 0 && !unwind_mapping_bias(&u->tables[m->slot], m))
		m->slot = BAD_TABLE;
	if (m->slot >= 0)
		m->gen = u->tables[m->slot].gen;
}

static void use(struct unwinder *u, struct uw_proc *p, struct uw_mapping *m)
{
	if (m->installed)
		return;
	prepare(u, p->pid, m);
	if (m->slot < 0)
		return;
	install_mapping(u, NULL, p->pid, m);
	m->installed = true;
	u->st.mappings++;
	u->tables[m->slot].refs++;
}

static void activate(struct unwinder *u, struct uw_proc *p)
{
	p->active = true;
	for (size_t i = 0; i < p->nr; i++)
		use(u, p, &p->maps[i]);
	set_installed(u, p->pid, true);
}

/* an exec: until its new mappings are in, the BPF side copies its stacks */
static void proc_clear(struct unwinder *u, struct uw_proc *p)
{
	set_installed(u, p->pid, false);
	for (size_t i = 0; i < p->nr; i++)
		unuse(u, p->pid, &p->maps[i]);
	p->nr = 0;
}

/*
 * The process exited: its entries go, but its mappings stay listed a drain
 * longer, for the walks of its last copied stacks (unwinder__tick frees it).
 */
static void proc_exit(struct unwinder *u, struct uw_proc *p)
{
	set_installed(u, p->pid, false);
	for (size_t i = 0; i < p->nr; i++)
		unuse(u, p->pid, &p->maps[i]);
	p->exited = true;
	p->active = false;
	p->exit_tick = u->tick;
}

static void proc_free(struct unwinder *u, uint32_t pid)
{
	struct uw_proc **pp = &u->procs[pid % PROC_BUCKETS], *p;

	for (; (p = *pp); pp = &p->next) {
		if (p->pid != pid)
			continue;
		proc_clear(u, p);
		*pp = p->next;
		free(p->maps);
		free(p);
		u->st.procs--;
		return;
	}
}

/* a new executable mapping replaces what it overlaps */
static struct uw_mapping *proc_add(struct unwinder *u, struct uw_proc *p, const struct uw_mapping *m)
{
	size_t i, j;

	for (i = j = 0; i < p->nr; i++) {
		if (p->maps[i].start < m->end && m->start < p->maps[i].end)
			unuse(u, p->pid, &p->maps[i]);
		else
			p->maps[j++] = p->maps[i];
	}
	p->nr = j;
	if (grow_to(&p->maps, &p->cap, p->nr + 1, sizeof(*p->maps), 32))
		return NULL;
	p->maps[p->nr] = *m;
	return &p->maps[p->nr++];
}

/* perf's MMAP2 body after the header (the uapi documents it in a comment) */
struct mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct { uint32_t maj, min; uint64_t ino, ino_generation; };
		struct { uint8_t build_id_size, res1; uint16_t res2; uint8_t build_id[20]; };
	};
	uint32_t prot, flags;
	char filename[];
};

static void on_mmap2(struct unwinder *u, const struct perf_event_header *h, int how)
{
	const struct mmap2_body *b = (const void *)(h + 1);
	struct uw_mapping m = { .slot = NO_TABLE };
	size_t room = h->size - sizeof(*h) - sizeof(*b);
	struct uw_proc *p;
	struct uw_mapping *nm;

	if (h->size < sizeof(*h) + sizeof(*b) + 1 || !(b->prot & PROT_EXEC) || !b->len)
		return;
	m.vdso = !strncmp(b->filename, "[vdso]", room);
	if (b->filename[0] != '/' && !m.vdso)
		return;                 /* anonymous (JIT): the frame-pointer fallback */
	m.start = b->addr;
	m.end = b->addr + b->len;
	m.pgoff = b->pgoff;
	if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m.maj = b->maj;
		m.min = b->min;
		m.ino = b->ino;
	}
	p = proc_find(u, b->pid, false);
	if (p && p->exited)             /* the pid is somebody else's now */
		proc_free(u, b->pid);
	p = proc_find(u, b->pid, true);
	if (!p || !(nm = proc_add(u, p, &m)))
		return;
	if (p->active) {
		use(u, p, nm);
		set_installed(u, p->pid, true);
	} else if (how == UNWIND_INSTALL) {
		activate(u, p);
	} else if (how == UNWIND_RESOLVE) {
		prepare(u, p->pid, nm);
	}
}

static int synth_mmap(void *ctx, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;

	if (len >= sizeof(*h) && h->type == PERF_RECORD_MMAP2)
		on_mmap2(ctx, h, UNWIND_LIST);
	return 0;
}

void unwinder__sample(struct unwinder *u, uint32_t pid)
{
	struct synth_opts so = { .uid_filter = (uint32_t)-1 };
	struct uw_proc *p = proc_find(u, pid, false);

	if (p && (p->active || p->exited))
		return;
	if (!p) {                   /* there before we were: its mappings from /proc */
		p = proc_find(u, pid, true);
		if (!p)
			return;
		synth_process((pid_t)pid, &so, synth_mmap, u);
	}
	activate(u, p);
}

void unwinder__sideband(struct unwinder *u, const struct perf_event_header *h, int how)
{
	const uint32_t *b = (const uint32_t *)(h + 1);
	struct uw_proc *parent, *child;

	if (h->size < sizeof(*h) + 16)
		return;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		on_mmap2(u, h, how);
		break;
	case PERF_RECORD_COMM:              /* pid, tid, comm: an exec replaces the image */
		if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && (child = proc_find(u, b[0], false)))
			proc_clear(u, child);
		break;
	case PERF_RECORD_FORK:              /* pid, ppid, tid, ptid */
		if (b[0] == b[1] || !(parent = proc_find(u, b[1], false)))
			break;
		proc_free(u, b[0]);         /* a reused pid */
		child = proc_find(u, b[0], true);
		if (!child || !parent->nr || !(child->maps = malloc(parent->nr * sizeof(*child->maps))))
			break;
		memcpy(child->maps, parent->maps, parent->nr * sizeof(*child->maps));
		child->nr = child->cap = parent->nr;
		for (size_t i = 0; i < child->nr; i++)
			child->maps[i].installed = false;
		break;
	case PERF_RECORD_EXIT:
		if (b[0] == b[2] && (child = proc_find(u, b[0], false)))
			proc_exit(u, child);
		break;
	}
}

/* --- stacks the BPF side copied ------------------------------------------------------- */

struct stack_copy {
	uint64_t sp, size;
	const uint8_t *bytes;
};

static bool read_copy(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct stack_copy *c = ctx;

	if (addr < c->sp || addr - c->sp > c->size || c->size - (addr - c->sp) < sizeof(*val))
		return false;
	memcpy(val, c->bytes + (addr - c->sp), sizeof(*val));
	return true;
}

/* the row for pc in p's installed mappings (NULL: the frame-pointer fallback) */
static const struct pm_uw_row *proc_row(struct unwinder *u, const struct uw_proc *p,
					uint64_t pc, bool exact)
{
	for (size_t i = 0; i < p->nr; i++) {
		const struct uw_mapping *m = &p->maps[i];
		const struct uw_table *t;

		if (!resolved(u, m) || pc < m->start || pc >= m->end)
			continue;
		t = &u->tables[m->slot];
		return unwind_rows_find(u->pools[t->pool].mem + t->first, t->nr_rows,
					pc - m->bias - (exact ? 0 : 1));
	}
	return NULL;
}

size_t unwinder__walk(struct unwinder *u, uint32_t pid, const uint64_t *regs,
		      const uint8_t *stack, uint64_t size, uint64_t *pcs, size_t max)
{
	struct unwind_regs r = { .pc = regs[8], .sp = regs[7], .bp = regs[6], .regs = regs,
				 .exact = true };
	struct stack_copy c = { .sp = regs[7], .size = size, .bytes = stack };
	struct uw_proc *p = proc_find(u, pid, false);
	const struct pm_uw_row *row;
	size_t n = 0;
	int end = 0;

	while (!end && n < max) {
		pcs[n++] = r.pc;
		row = p ? proc_row(u, p, r.pc, r.exact) : NULL;
		end = unwind_step(row ? row->rule : PM_UW_RULE(PM_UW_NONE, 0, 0), &r, read_copy, &c);
	}
	u->st.walks++;
	u->st.walk_ends[end ? end - 1 : PM_UW_END_DEPTH]++;
	return n;
}

void unwinder__tick(struct unwinder *u)
{
	u->tick++;
	for (size_t b = 0; b < PROC_BUCKETS; b++)
		for (struct uw_proc *p = u->procs[b], *next; p; p = next) {
			next = p->next;
			if (p->exited && u->tick > p->exit_tick + 1)
				proc_free(u, p->pid);
		}
}

/* --- life cycle ------------------------------------------------------------------ */

int unwinder__get(struct unwinder **out)
{
	struct unwinder *u = the_unwinder;

	if (u) {
		u->refs++;
		*out = u;
		return 0;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->tables = calloc(MAX_TABLES, sizeof(*u->tables));
	if (!u->tables) {
		free(u);
		return -ENOMEM;
	}
	elf_version(EV_CURRENT);
	/*
	 * Table generations start anywhere: the BPF walk caches rows by
	 * generation, and programs adopted from a daemon that died still hold
	 * the cache that daemon's generations filled.
	 */
	if (getrandom(&u->gen, sizeof(u->gen), GRND_NONBLOCK) != sizeof(u->gen))
		u->gen = (uint32_t)time(NULL) * 2654435761u;
	u->refs = 1;
	u->cap = UNWIND_DEFAULT_CAP;
	if (getenv("PERFMARK_UNWIND_CAP")) {
		char err[128];
		uint64_t cap;

		if (!evspec_parse_size(getenv("PERFMARK_UNWIND_CAP"), &cap, err, sizeof(err)) &&
		    cap >= 4096)
			u->cap = cap;
	}
	u->st.cap = u->cap;
	unwind_pool_new(u, unwind_pool_rows(u, 0));  /* before any collector: no grace period to wait */
	the_unwinder = u;
	*out = u;
	return 0;
}

void unwinder__put(struct unwinder *u)
{
	if (!u || --u->refs > 0)
		return;
	for (size_t i = 0; i < PROC_BUCKETS; i++)
		while (u->procs[i])
			proc_free(u, u->procs[i]->pid);
	unwind_pools_free(u);
	free(u->tables);
	free(u);
	the_unwinder = NULL;
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
	uint8_t one = 1;

	if (u->nr_sets == MAX_SETS)
		return -ENOSPC;
	/* maps pinned by a perfmark whose tables had another layout */
	if (map_value_size(maps_fd) != sizeof(struct pm_uw_map) || !pools_fit(u, pools_fd))
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
			for (size_t i = 0; i < p->nr; i++)
				if (p->maps[i].installed)
					install_mapping(u, s, p->pid, &p->maps[i]);
			if (p->active)
				bpf_map_update_elem(pids_fd, &p->pid, &one, BPF_ANY);
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

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->st;
}

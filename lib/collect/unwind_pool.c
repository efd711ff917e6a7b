// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where the unwinder's tables live (see unwind.h): MAX_TABLES slots, each a
 * run of rows in one of a few large BPF arrays ("pools", mmap'ed here):
 * loading a table is a memcpy plus its LPM entries.  A new pool is the only
 * change of the BPF array of maps, which costs the caller an RCU grace
 * period (about 10 ms here); the first one is made at start.  Pools double
 * up to the memory cap; past it, tables no mapping uses are evicted, least
 * recently used first.  A mapping's table is found through the very file
 * mapped (/proc/PID/map_files): by the file, its build-id (and its owner:
 * see uw_build_id_key), or a build of that file already queued; else the
 * file goes to the builder's workers (unwind_build.c) and the mapping waits
 * (PENDING_TABLE) until
 * unwind_collect() finds the table built, keyed by its build-id or a hash
 * of its CFI, and loads it here.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "unwind_int.h"

/* a new pool goes into every collector's array of pools */
static void set_pool(struct unwinder *u, uint32_t i, int fd)
{
	for (size_t k = 0; k < u->nr_sets; k++)
		bpf_map_update_elem(u->sets[k].pools_fd, &i, &fd, BPF_ANY);
}

uint64_t unwind_pool_rows(const struct unwinder *u, uint32_t n)
{
	uint64_t size = POOL_MIN_ROWS, room;

	if (u->nr_pools)
		size = 2ull * u->pools[u->nr_pools - 1].cap;
	while (size < n)
		size *= 2;
	room = u->cap > u->st.pool_bytes ? (u->cap - u->st.pool_bytes) / sizeof(struct pm_uw_row) : 0;
	room -= room % PM_UW_BLOCK_ROWS;     /* pools hold whole blocks */
	return size < room ? size : room;
}

int unwind_pool_new(struct unwinder *u, uint32_t rows)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct uw_pool *p = &u->pools[u->nr_pools];
	size_t len = (size_t)rows * sizeof(struct pm_uw_row);
	int e;

	if (u->nr_pools == PM_UW_MAX_POOLS)
		return -ENOSPC;
	if (!rows || rows % PM_UW_BLOCK_ROWS)
		return -EINVAL;
	p->fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pm_uw_pool", sizeof(uint32_t),
			       sizeof(struct pm_uw_block), rows / PM_UW_BLOCK_ROWS, &o);
	if (p->fd < 0)
		return -errno;
	p->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (p->mem == MAP_FAILED) {
		e = -errno;
		close(p->fd);
		return e;
	}
	p->cap = rows;
	set_pool(u, u->nr_pools++, p->fd);
	u->st.pool_bytes += len;
	return 0;
}

static int extent_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* first fit for n rows in pool p, between the tables it holds */
static bool pool_fit(struct unwinder *u, uint32_t p, uint32_t n, uint32_t *first)
{
	uint32_t (*ext)[2] = malloc(MAX_TABLES * sizeof(*ext)), at = 0;
	size_t nr = 0;
	bool ok = false;

	if (!ext)
		return false;
	for (uint32_t i = 0; i < MAX_TABLES; i++)
		if (u->tables[i].used && u->tables[i].pool == p) {
			ext[nr][0] = u->tables[i].first;
			ext[nr++][1] = u->tables[i].nr_rows;
		}
	qsort(ext, nr, sizeof(*ext), extent_cmp);
	for (size_t i = 0; i <= nr && !ok; i++) {
		uint32_t end = i < nr ? ext[i][0] : u->pools[p].cap;

		if (end >= at && end - at >= n) {
			*first = at;
			ok = true;
		} else if (i < nr) {
			at = ext[i][0] + ext[i][1];
		}
	}
	free(ext);
	return ok;
}

static void drop_table(struct unwinder *u, uint32_t slot)
{
	struct uw_table *t = &u->tables[slot];

	u->st.tables--;
	u->st.table_bytes -= (uint64_t)t->nr_rows * sizeof(struct pm_uw_row);
	memset(t, 0, sizeof(*t));
}

/* the least recently used table no mapping uses, dropped; false if none */
static bool evict_one(struct unwinder *u)
{
	int32_t victim = -1;

	for (uint32_t i = 0; i < MAX_TABLES; i++) {
		struct uw_table *t = &u->tables[i];

		if (t->used && !t->refs && (victim < 0 || t->last_use < u->tables[victim].last_use))
			victim = (int32_t)i;
	}
	if (victim < 0)
		return false;
	drop_table(u, (uint32_t)victim);
	u->st.evicted++;
	return true;
}

/*
 * Room for n rows: in a pool, else in a new pool while the pools stay
 * under the cap, else where unused tables are evicted (oldest first).
 */
static int alloc_rows(struct unwinder *u, uint32_t n, uint32_t *pool, uint32_t *first)
{
	for (;;) {
		uint64_t size;

		for (uint32_t p = 0; p < u->nr_pools; p++)
			if (pool_fit(u, p, n, first)) {
				*pool = p;
				return 0;
			}
		size = unwind_pool_rows(u, n);
		if (size >= n && size >= 1024 && u->nr_pools < PM_UW_MAX_POOLS &&
		    !unwind_pool_new(u, (uint32_t)size))
			continue;
		if (!evict_one(u))
			return -ENOSPC;
	}
}

static int32_t free_slot(struct unwinder *u)
{
	for (uint32_t i = 0; i < MAX_TABLES; i++)
		if (!u->tables[i].used)
			return (int32_t)i;
	return evict_one(u) ? free_slot(u) : -1;
}

static int32_t find_key(struct unwinder *u, const char *key)
{
	for (uint32_t i = 0; i < MAX_TABLES; i++)
		if (u->tables[i].used && !strcmp(u->tables[i].key, key))
			return (int32_t)i;
	return -1;
}

static int32_t find_file(struct unwinder *u, const struct stat *sb)
{
	for (uint32_t i = 0; i < MAX_TABLES; i++) {
		struct uw_table *t = &u->tables[i];

		if (t->used && t->dev == sb->st_dev && t->ino == sb->st_ino &&
		    t->size == sb->st_size && t->mtime == sb->st_mtim.tv_sec)
			return (int32_t)i;
	}
	return -1;
}

/*
 * Files refused for their CFI (unwind_table.h's budgets) are counted once
 * and remembered, so a hostile file mapped by many processes is not read
 * again for each.
 */
static bool was_refused(const struct unwinder *u, const struct stat *sb)
{
	for (uint32_t i = 0; i < MAX_REFUSED; i++) {
		const struct uw_refused *r = &u->refused[i];

		if (r->ino == sb->st_ino && r->dev == sb->st_dev && r->size == sb->st_size &&
		    r->mtime == sb->st_mtim.tv_sec && r->ino)
			return true;
	}
	return false;
}

_Static_assert(sizeof(((struct unwind_stats *)0)->refused) == UNWIND_REFUSED_NR * sizeof(uint64_t),
	       "unwind_stats.refused: one counter per enum unwind_refusal");

static int32_t refuse(struct unwinder *u, const struct stat *sb, int why)
{
	if (why >= 0 && why < UNWIND_REFUSED_NR)
		u->st.refused[why]++;
	if (sb->st_ino)
		u->refused[u->next_refused++ % MAX_REFUSED] = (struct uw_refused){
			sb->st_dev, sb->st_ino, sb->st_size, sb->st_mtim.tv_sec };
	return BAD_TABLE;
}

/* the slot of key's table, its file now sb (an ino 0: not a file) with these segments */
static int32_t found(struct unwinder *u, int32_t slot, const struct stat *sb,
		     const struct uw_load *loads, size_t nr_loads)
{
	struct uw_table *ut = &u->tables[slot];

	ut->dev = sb->st_dev;
	ut->ino = sb->st_ino;
	ut->size = sb->st_size;
	ut->mtime = sb->st_mtim.tv_sec;
	memcpy(ut->loads, loads, nr_loads * sizeof(*loads));
	ut->nr_loads = nr_loads;
	return slot;
}

/* A built table (freed) in a slot: the one of its key, or loaded into a pool.  BAD_TABLE if none. */
static int32_t load_table(struct unwinder *u, struct unwind_table *t, const char *key,
			  const struct stat *sb, const struct uw_load *loads, size_t nr_loads)
{
	struct uw_table *ut;
	uint32_t pool, first;
	int32_t slot = find_key(u, key);

	if (slot >= 0)
		goto out;
	if ((slot = free_slot(u)) < 0 || alloc_rows(u, (uint32_t)t->nr_rows, &pool, &first)) {
		u->st.over_cap++;
		unwind_table__free(t);
		return BAD_TABLE;
	}
	memcpy(u->pools[pool].mem + first, t->rows, t->nr_rows * sizeof(*t->rows));
	ut = &u->tables[slot];
	ut->used = true;
	if (!++u->gen)     /* 0: uncached (bpf/unwind_wire.h) */
		++u->gen;
	ut->gen = u->gen;
	snprintf(ut->key, sizeof(ut->key), "%s", key);
	ut->pool = pool;
	ut->first = first;
	ut->nr_rows = (uint32_t)t->nr_rows;
	u->st.tables++;
	u->st.table_bytes += unwind_table__bytes(t);
	u->st.built++;
out:
	unwind_table__free(t);
	return found(u, slot, sb, loads, nr_loads);
}

bool unwind_collect_next(struct unwinder *u, uint32_t *jp, uint32_t *gen, int32_t *slotp)
{
	int32_t j;

	if ((j = uw_build_next_done(u)) >= 0) {
		struct uw_job *job = &u->b->jobs[j];
		int32_t slot = BAD_TABLE;

		if (job->ns > u->st.build_max_ns)
			u->st.build_max_ns = job->ns;
		if (job->err == -E2BIG) {
			refuse(u, &job->sb, job->why);
		} else if (job->err == -ECANCELED) {
			/* stopping */
		} else if (job->err) {
			u->st.failed++;
		} else {
			slot = load_table(u, job->t, job->key, &job->sb, job->loads, job->nr_loads);
			job->t = NULL;
		}
		*jp = (uint32_t)j;
		*gen = job->gen;
		*slotp = slot;
		uw_build_release(u, (uint32_t)j);
		return true;
	}
	return false;
}

/* runtime address - ELF address for the mapping of file offset pgoff at start */
bool unwind_mapping_bias(const struct uw_table *t, struct uw_mapping *m)
{
	for (size_t i = 0; i < t->nr_loads; i++) {
		const struct uw_load *l = &t->loads[i];

		if ((l->off & ~4095ull) <= m->pgoff && m->pgoff < l->off + l->filesz) {
			m->bias = m->start - (l->vaddr + m->pgoff - l->off);
			return true;
		}
	}
	return false;
}

/* size of our own [vdso] mapping, from /proc/self/maps */
static size_t vdso_size(void)
{
	char line[256];
	uint64_t a, b;
	size_t n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && !n && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%" SCNx64 "-%" SCNx64, &a, &b) == 2)
			n = b - a;
	if (f)
		fclose(f);
	return n;
}

/* the vDSO is the same in every process: read our own */
static int32_t vdso_table(struct unwinder *u)
{
	struct stat sb = { .st_size = -1 };
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	int32_t slot = find_key(u, "vdso");
	size_t size;
	Elf *elf;

	if (slot >= 0 || !base || !(size = vdso_size()))
		return slot >= 0 ? slot : BAD_TABLE;
	struct unwind_table *t = NULL;
	struct uw_load loads[MAX_LOADS];
	size_t nr_loads = 0;

	elf = elf_memory((char *)base, size);
	if (!elf)
		return BAD_TABLE;
	/* a page or two of our own memory, not a file: built here, at once */
	if (unwind_table__build(elf, &t, NULL)) {
		elf_end(elf);
		u->st.failed++;
		return BAD_TABLE;
	}
	uw_elf_loads(elf, loads, &nr_loads);
	elf_end(elf);
	return load_table(u, t, "vdso", &sb, loads, nr_loads);
}

/* m waits for job j */
static int32_t pending(struct unwinder *u, struct uw_mapping *m, int32_t j, uint64_t prio)
{
	uw_build_raise(u, (uint32_t)j, prio, 0);
	m->job = (uint32_t)j;
	m->gen = u->b->jobs[j].gen;
	return PENDING_TABLE;
}

/* the file at fd (closed), sb: its cached table, a job building it, or a new job */
static int32_t resolve_file(struct unwinder *u, struct uw_mapping *m, int fd,
			    const struct stat *sb, uint64_t prio)
{
	struct uw_load loads[MAX_LOADS];
	char key[KEY_LEN];
	size_t nr_loads;
	int32_t slot = find_file(u, sb), j;
	Elf *elf;
	int e;

	if (slot >= 0)
		;
	else if (was_refused(u, sb))
		slot = BAD_TABLE;
	else if ((j = uw_build_find(u, sb, NULL)) >= 0)
		slot = pending(u, m, j, prio);
	else if ((e = unwind_table__check_fd(fd)) == -E2BIG)
		slot = refuse(u, sb, UNWIND_REFUSED_SIZE);
	else if (e)                  /* not an ELF file the builder reads */
		slot = (u->st.failed++, BAD_TABLE);
	else
		slot = NO_TABLE;
	if (slot != NO_TABLE) {
		close(fd);
		return slot;
	}
	/* read, not mapped: the file's owner may truncate it (a SIGBUS) or change it */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		u->st.failed++;
		return BAD_TABLE;
	}
	/* the same build under another name (a copy, another container's): no build */
	uw_build_id_key(elf, sb->st_uid, key);
	if (key[0] && (slot = find_key(u, key)) >= 0) {
		uw_elf_loads(elf, loads, &nr_loads);
		elf_end(elf);
		close(fd);
		return found(u, slot, sb, loads, nr_loads);
	}
	if (key[0] && (j = uw_build_find(u, NULL, key)) >= 0) {
		elf_end(elf);
		close(fd);
		return pending(u, m, j, prio);
	}
	e = uw_build_submit(u, fd, elf, sb, key, prio, &m->job);
	if (e == -ENOSPC)
		u->retry = true;         /* asked again when the queue has room (unwinder__tick) */
	if (e)
		return e == -ENOSPC ? NO_TABLE : BAD_TABLE;
	m->gen = u->b->jobs[m->job].gen;
	return PENDING_TABLE;
}

int32_t unwind_resolve(struct unwinder *u, uint32_t pid, struct uw_mapping *m, uint64_t prio)
{
	char path[96];
	struct stat sb;
	int32_t j;
	int fd;

	if (m->vdso)
		return vdso_table(u);
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* gone already (a short-lived process): the table of the same file, if read before ... */
		for (uint32_t i = 0; m->ino && i < MAX_TABLES; i++)
			if (u->tables[i].used && u->tables[i].ino == m->ino &&
			    u->tables[i].dev == makedev(m->maj, m->min))
				return (int32_t)i;
		/* ... or being built */
		sb.st_ino = m->ino;
		sb.st_dev = makedev(m->maj, m->min);
		for (j = 0; m->ino && j < UNWIND_BUILD_QUEUE; j++)
			if (u->b->jobs[j].live && u->b->jobs[j].sb.st_ino == sb.st_ino &&
			    u->b->jobs[j].sb.st_dev == sb.st_dev)
				return pending(u, m, j, prio);
		return BAD_TABLE;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
	    (m->ino && (sb.st_ino != m->ino || major(sb.st_dev) != m->maj ||
			minor(sb.st_dev) != m->min))) {
		close(fd);
		return BAD_TABLE;
	}
	return resolve_file(u, m, fd, &sb, prio);
}

void unwind_pools_free(struct unwinder *u)
{
	for (uint32_t i = 0; i < u->nr_pools; i++) {
		munmap(u->pools[i].mem, (size_t)u->pools[i].cap * sizeof(struct pm_uw_row));
		close(u->pools[i].fd);
	}
}

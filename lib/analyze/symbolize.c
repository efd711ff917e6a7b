/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Address -> symbol for `perfmark script`, report, flamegraph and export.
 *
 *   threads:  tid -> comm                      (COMM, inherited on FORK)
 *   procs:    pid -> maps, JIT code            (MMAP/MMAP2, FORK, exec COMM)
 *   dsos:     path -> PT_LOAD table + symbols  (dso.c, loaded once)
 *   kernel:   /proc/kallsyms, on the first kernel address (shared, symtab.h)
 *
 * A user address goes: map -> file offset (addr - start + pgoff) -> ELF
 * vaddr through the PT_LOAD that holds that offset -> symbol.  Addresses in
 * no map, or in an anonymous one, go to the JIT code announced with
 * symbolizer__add_jit() and /tmp/perf-PID.map (read lazily).
 *
 * DESIGN (issue 8 case 6): everything here is fed by a file someone else
 * wrote, so every structure costs O(log n) or O(1) per record whatever the
 * order of the records: pids, tids and paths in keyed hash tables (table.h),
 * maps and JIT code in persistent treaps (maptree.h: a FORK shares its
 * parent's maps instead of copying them), and at most SYM_MAX_RANGES ranges
 * in all (past it symbolizer__error() says so).  A path named by the input
 * is opened only through fsafe_open_regular().
 */
#include "symbolize.h"
#include "dsocache.h"
#include "dso.h"
#include "fsafe.h"
#include "maptree.h"
#include "symtab.h"
#include "table.h"
#include "grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYM_UNKNOWN "[unknown]"
#define SYM_KERNEL_MIN 0xffff800000000000ULL
#define SYM_KERNEL_MAX_GAP (256u << 10)
/* 4 M ranges of 64 bytes: 256 MiB; a real system has at most 65530 maps per process */
#define SYM_MAX_RANGES (4u << 20)

struct proc {
	uint32_t pid;
	struct mapnode *maps;   /* maprange.val: struct dso *, NULL for no file */
	struct mapnode *jit;    /* maprange.val: the name (in s->jitnames) */
	struct dso *exe;        /* the first file mapped since its exec: the executable */
	bool jit_loaded;
	uint64_t gen;           /* changed with maps or JIT code: symbolizer__version() */
};

struct thread {
	char comm[32];
	bool has_comm;
};

struct symbolizer {
	struct idmap proc_idx, thread_idx;   /* pid/tid -> index */
	struct proc **procs;                 /* each allocated once: pointers stay valid */
	struct thread **threads;
	uint32_t nprocs, capprocs, nthreads, capthreads;
	char **jitnames;                     /* JIT code names (stable pointers) */
	size_t njitnames, capjitnames;
	struct strtab paths;                 /* dso path -> index in dsos */
	struct dso **dsos;
	size_t capdsos;
	struct maptree ranges;               /* counts maps and JIT code */
	uint64_t gen, kernel_gen;            /* the last change anywhere, to the kernel's map */
	char err[128];
	struct dso *vdso;       /* our own vdso: the same kernel's */
	bool vdso_tried;
	/* kernel */
	uint64_t kernel_start;  /* from the kernel MMAP, 0 if none */
	bool kallsyms_loaded;
	const struct ksyms *ksyms;    /* shared (symtab.h), NULL: out of memory */
};

int symbolizer__new(struct symbolizer **out)
{
	struct symbolizer *s;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	maptree__init(&s->ranges, SYM_MAX_RANGES);
	*out = s;
	return 0;
}

const char *symbolizer__error(const struct symbolizer *s)
{
	return s && s->err[0] ? s->err : NULL;
}

static void range_error(struct symbolizer *s, int err)
{
	if (s->err[0])
		return;
	if (err == -E2BIG)
		snprintf(s->err, sizeof(s->err), "more than %u memory maps and JIT ranges "
			 "across processes: refused", SYM_MAX_RANGES);
	else
		snprintf(s->err, sizeof(s->err), "out of memory for memory maps");
}

/* The element of key (allocated, sz bytes, zeroed, when create), or NULL */
static void *slot_get(struct idmap *idx, void ***arr, uint32_t *n, uint32_t *cap, size_t sz,
		      uint32_t key, bool create)
{
	uint32_t i = idmap__get(idx, key);
	void *e;

	if (i != TABLE_NONE)
		return (*arr)[i];
	if (!create || *n == TABLE_NONE - 1)
		return NULL;
	if (*n == *cap) {
		size_t c = *cap;

		if (grow_to(arr, &c, (size_t)*n + 1, sizeof(void *), 64))
			return NULL;
		*cap = (uint32_t)c;
	}
	e = calloc(1, sz);
	if (!e || idmap__put(idx, key, *n) < 0) {
		free(e);
		return NULL;
	}
	(*arr)[(*n)++] = e;
	return e;
}

static struct proc *proc_get(struct symbolizer *s, uint32_t pid, bool create)
{
	struct proc *p = slot_get(&s->proc_idx, (void ***)&s->procs, &s->nprocs, &s->capprocs,
				  sizeof(*p), pid, create);

	if (p)
		p->pid = pid;
	return p;
}

static struct thread *thread_get(struct symbolizer *s, uint32_t tid, bool create)
{
	return slot_get(&s->thread_idx, (void ***)&s->threads, &s->nthreads, &s->capthreads,
			sizeof(struct thread), tid, create);
}

static struct dso *dso_get(struct symbolizer *s, const char *path, const uint8_t *bid,
			   size_t bid_len)
{
	uint32_t id = strtab__intern(&s->paths, path, strlen(path));

	if (id == TABLE_NONE)
		return NULL;
	if (id >= s->capdsos) {
		size_t old = s->capdsos;

		if (grow_to(&s->dsos, &s->capdsos, (size_t)id + 1, sizeof(*s->dsos), 64))
			return NULL;
		memset(s->dsos + old, 0, (s->capdsos - old) * sizeof(*s->dsos));
	}
	if (!s->dsos[id])
		s->dsos[id] = dsocache__get(path, bid, bid_len);
	return s->dsos[id];
}

static struct dso *vdso_get(struct symbolizer *s)
{
	if (!s->vdso_tried)
		s->vdso = dso__new_vdso();
	s->vdso_tried = true;
	return s->vdso;
}

static bool name_is_anon(const char *name)
{
	return !*name || !strcmp(name, "//anon") || !strncmp(name, "[anon", 5) ||
	       !strncmp(name, "/memfd:", 7) || !strcmp(name, "[heap]") ||
	       !strncmp(name, "[stack", 6) || !strncmp(name, "/dev/zero", 9) ||
	       !strncmp(name, "/anon_hugepage", 14);
}

static void record_mmap(struct symbolizer *s, uint32_t pid, uint64_t start, uint64_t len,
			uint64_t pgoff, const char *name, uint16_t misc,
			const uint8_t *bid, size_t bid_len)
{
	struct maprange m = { .start = start, .end = start + len, .pgoff = pgoff };
	struct proc *p;
	int err;

	if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL || pid == UINT32_MAX) {
		if (!strncmp(name, "[kernel.kallsyms]", 17)) {
			s->kernel_start = start;
			s->kernel_gen = ++s->gen;
		}
		return;   /* modules: kallsyms has their symbols too */
	}
	if (start + len < start)
		m.end = UINT64_MAX;
	if (!strcmp(name, "[vdso]"))
		m.val = vdso_get(s);
	else if (name[0] == '/' && !name_is_anon(name))
		m.val = dso_get(s, name, bid, bid_len);
	p = proc_get(s, pid, true);
	if (p)
		p->gen = ++s->gen;
	if (p && (err = maptree__insert(&s->ranges, &p->maps, &m)))
		range_error(s, err);
	/* exec maps the executable before its interpreter; perf's synthesized maps come by address */
	if (p && !err && !p->exe && m.val && m.val != s->vdso)
		p->exe = m.val;
}

static void record_comm(struct symbolizer *s, uint32_t pid, uint32_t tid, const char *comm,
			bool exec)
{
	struct thread *t = thread_get(s, tid, true);
	struct proc *p;

	if (t) {
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		t->has_comm = true;
	}
	/*
	 * An exec keeps the old image's maps until the new image's cut them,
	 * as perf does: a sample taken in the exec after its COMM, and before
	 * the new image runs, still has the old image's user registers (its pc
	 * in the old libc's execve).  The new image's code is always in maps
	 * it recorded, which replace whatever they overlap.
	 */
	if (exec && (p = proc_get(s, pid, false))) {
		maptree__drop(&s->ranges, p->jit);
		p->jit = NULL;
		p->exe = NULL;
		p->jit_loaded = false;
		p->gen = ++s->gen;
	}
}

static void record_fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint32_t tid,
			uint32_t ptid)
{
	struct thread *pt = thread_get(s, ptid, false);
	struct thread *t = thread_get(s, tid, true);
	struct proc *parent, *child;

	if (t && pt && pt->has_comm && !t->has_comm) {
		memcpy(t->comm, pt->comm, sizeof(t->comm));
		t->has_comm = true;
	}
	if (pid == ppid || !(parent = proc_get(s, ppid, false)))
		return;
	child = proc_get(s, pid, true);
	/* the child starts with its parent's maps: shared, O(1) */
	if (child && parent && !child->maps) {
		child->maps = maptree__share(parent->maps);
		child->exe = parent->exe;
		child->gen = ++s->gen;
	}
}

/* NUL-terminated string at off within a record of size len, or NULL. */
static const char *rec_str(const struct perf_event_header *rec, size_t off)
{
	const char *p = (const char *)rec + off;

	if (off >= rec->size || !memchr(p, '\0', rec->size - off))
		return NULL;
	return p;
}

static uint32_t rec_u32(const struct perf_event_header *rec, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)rec + off, sizeof(v));
	return v;
}

static uint64_t rec_u64(const struct perf_event_header *rec, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)rec + off, sizeof(v));
	return v;
}

void symbolizer__record(struct symbolizer *s, const struct perf_event_header *rec)
{
	const char *name;

	if (!s || !rec)
		return;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
		/* pid tid addr len pgoff filename */
		if (rec->size < 40 || !(name = rec_str(rec, 40)))
			return;
		record_mmap(s, rec_u32(rec, 8), rec_u64(rec, 16), rec_u64(rec, 24),
			    rec_u64(rec, 32), name, rec->misc, NULL, 0);
		break;
	case PERF_RECORD_MMAP2: {
		/* pid tid addr len pgoff {maj min ino ino_gen | bid} prot flags filename */
		const uint8_t *bid = NULL;
		size_t bid_len = 0;

		if (rec->size < 72 || !(name = rec_str(rec, 72)))
			return;
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			bid = (const uint8_t *)rec + 44;
			bid_len = *((const uint8_t *)rec + 40);
		}
		record_mmap(s, rec_u32(rec, 8), rec_u64(rec, 16), rec_u64(rec, 24),
			    rec_u64(rec, 32), name, rec->misc, bid, bid_len);
		break;
	}
	case PERF_RECORD_COMM:
		if (rec->size < 16 || !(name = rec_str(rec, 16)))
			return;
		record_comm(s, rec_u32(rec, 8), rec_u32(rec, 12), name,
			    rec->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_FORK:
		if (rec->size < 24)
			return;
		record_fork(s, rec_u32(rec, 8), rec_u32(rec, 12), rec_u32(rec, 16),
			    rec_u32(rec, 20));
		break;
	default:
		break;
	}
}

/* ---- JIT ------------------------------------------------------------------- */

static int jit_add(struct symbolizer *s, struct proc *p, uint64_t addr, uint64_t size,
		   const char *name)
{
	struct maprange m = { .start = addr, .end = addr + size };
	char *n;
	int err;

	if (grow_to(&s->jitnames, &s->capjitnames, s->njitnames + 1, sizeof(char *), 64))
		return -ENOMEM;
	n = strdup(name);
	if (!n)
		return -ENOMEM;
	s->jitnames[s->njitnames++] = n;
	m.val = n;
	if (m.end < m.start)
		m.end = UINT64_MAX;
	p->gen = ++s->gen;
	err = maptree__insert(&s->ranges, &p->jit, &m);
	if (err)
		range_error(s, err);
	return err;
}

/* /tmp/perf-PID.map: "START SIZE NAME" per line, hex; only a regular file is read */
static void proc_load_perf_map(struct symbolizer *s, struct proc *p)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int fd;

	p->jit_loaded = true;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->pid);
	fd = fsafe_open_regular(path);
	if (fd < 0)
		return;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char *end, *name;
		uint64_t start = strtoull(line, &end, 16), size;

		if (end == line || *end != ' ')
			continue;
		name = end + 1;
		size = strtoull(name, &end, 16);
		if (end == name || *end != ' ')
			continue;
		name = end + 1;
		name[strcspn(name, "\n")] = '\0';
		if (*name && jit_add(s, p, start, size, name) < 0)
			break;
	}
	free(line);
	fclose(f);
}

int symbolizer__add_jit(struct symbolizer *s, uint32_t pid, uint64_t addr, uint64_t size,
			const char *name)
{
	struct proc *p;

	if (!s || !name)
		return -EINVAL;
	p = proc_get(s, pid, true);
	return p ? jit_add(s, p, addr, size, name) : -ENOMEM;
}

/* ---- lookup ---------------------------------------------------------------- */

static const struct sym *kernel_sym(struct symbolizer *s, uint64_t addr)
{
	const struct sym *sym;

	if (!s->kallsyms_loaded)
		s->ksyms = ksyms__get();
	s->kallsyms_loaded = true;
	if (!s->ksyms)
		return NULL;
	sym = symtab__find(&s->ksyms->t, addr, true);
	/*
	 * kallsyms has no sizes: a symbol reaches to the next one, but not
	 * across the gaps between text, modules and BPF programs.
	 */
	if (!sym || addr - sym->addr > SYM_KERNEL_MAX_GAP)
		return NULL;
	return sym;
}

static void lookup_kernel(struct symbolizer *s, uint64_t addr, struct symbolizer_loc *out)
{
	const struct sym *sym = kernel_sym(s, addr);

	out->dso = "[kernel.kallsyms]";
	out->dso_off = addr;
	out->map_start = s->kernel_start ? s->kernel_start : SYM_KERNEL_MIN;
	out->map_end = UINT64_MAX;
	if (sym) {
		out->name = sym->name;
		out->sym_start = sym->addr;
	}
}

static void lookup_jit(struct symbolizer *s, struct proc *p, uint64_t addr,
		       struct symbolizer_loc *out)
{
	const struct maprange *j;

	if (!p->jit_loaded)
		proc_load_perf_map(s, p);
	j = maptree__find(p->jit, addr);
	if (j) {
		out->name = j->val;
		out->sym_start = j->start;
	}
}

void symbolizer__lookup(struct symbolizer *s, uint32_t pid, uint64_t addr, int kernel,
			struct symbolizer_loc *out)
{
	const struct maprange *m;
	const struct sym *sym;
	struct proc *p;
	struct dso *d;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	out->name = SYM_UNKNOWN;
	if (!s)
		return;
	if (kernel || addr >= SYM_KERNEL_MIN || (s->kernel_start && addr >= s->kernel_start)) {
		lookup_kernel(s, addr, out);
		return;
	}
	p = proc_get(s, pid, true);
	if (!p)
		return;
	m = maptree__find(p->maps, addr);
	if (m) {
		out->map_start = m->start;
		out->map_end = m->end;
		out->map_pgoff = m->pgoff;
	}
	if (!m || !m->val) {
		lookup_jit(s, p, addr, out);
		return;
	}
	d = m->val;
	out->dso = d->path;
	out->exe = d == p->exe;
	if (!d->loaded)
		dsocache__load(d);
	if (d->build_id_len) {
		out->build_id = d->build_id;
		out->build_id_len = d->build_id_len;
	}
	out->dso_off = addr - m->start + m->pgoff;
	if (!dso__offset_to_vaddr(d, out->dso_off, &vaddr))
		return;
	sym = symtab__find(&d->syms, vaddr, true);
	if (sym) {
		out->name = sym->name;
		out->sym_start = addr - (vaddr - sym->addr);
	}
}

uint64_t symbolizer__version(struct symbolizer *s, uint32_t pid, int kernel)
{
	struct proc *p = s && !kernel ? proc_get(s, pid, false) : NULL;

	if (!s)
		return 0;
	/* one counter numbers every change: the later of the two is the newer state */
	return p && p->gen > s->kernel_gen ? p->gen : s->kernel_gen;
}

bool symbolizer_loc__has_sym(const struct symbolizer_loc *loc)
{
	return loc->name && strcmp(loc->name, SYM_UNKNOWN);
}

const char *symbolizer_dso_short(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

const char *symbolizer__frame_name(const char *name, const char *dso, uint64_t offset,
				   char *buf, size_t size)
{
	if (name && strcmp(name, SYM_UNKNOWN))
		return name;
	if (!dso || !size)
		return SYM_UNKNOWN;
	/* a base name is at most NAME_MAX: SYMBOLIZER_FRAME_NAME_MAX holds it and the offset */
	snprintf(buf, size, "%s+0x%" PRIx64, symbolizer_dso_short(dso), offset);
	return buf;
}

const char *symbolizer_loc__frame(const struct symbolizer_loc *loc, char *buf, size_t size)
{
	return symbolizer__frame_name(loc->name, loc->dso, loc->dso_off, buf, size);
}

const char *symbolizer__name(struct symbolizer *s, uint32_t pid, uint64_t addr, int kernel)
{
	struct symbolizer_loc loc;

	symbolizer__lookup(s, pid, addr, kernel, &loc);
	return loc.name;
}

const char *symbolizer__comm(struct symbolizer *s, uint32_t tid)
{
	struct thread *t;

	if (!s)
		return NULL;
	t = thread_get(s, tid, false);
	return t && t->has_comm ? t->comm : NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nprocs; i++) {
		maptree__drop(&s->ranges, s->procs[i]->maps);
		maptree__drop(&s->ranges, s->procs[i]->jit);
		free(s->procs[i]);
	}
	for (uint32_t i = 0; i < s->nthreads; i++)
		free(s->threads[i]);
	for (size_t i = 0; i < s->njitnames; i++)
		free(s->jitnames[i]);
	free(s->jitnames);
	free(s->procs);
	free(s->threads);
	idmap__free(&s->proc_idx);
	idmap__free(&s->thread_idx);
	for (size_t i = 0; i < s->capdsos; i++)
		dsocache__put(s->dsos[i]);
	free(s->dsos);
	strtab__free(&s->paths);
	dso__free(s->vdso);
	if (s->ksyms)
		ksyms__put(s->ksyms);
	free(s);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Address -> symbol for `perfmark script`.
 *
 *   threads:  tid -> comm                        (COMM, inherited on FORK)
 *   procs:    pid -> sorted maps, JIT symbols    (MMAP/MMAP2, FORK, exec COMM)
 *   dsos:     path -> PT_LOAD table + sorted function symbols, loaded once
 *   kernel:   /proc/kallsyms, loaded once on the first kernel address
 *
 * A user address goes: map -> file offset (addr - start + pgoff) -> ELF
 * vaddr through the PT_LOAD that holds that offset -> symbol.  Addresses in
 * no map, or in an anonymous one, go to /tmp/perf-PID.map (read lazily) and
 * to code announced with symbolizer__add_jit().
 */
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define SYM_UNKNOWN "[unknown]"
#define SYM_KERNEL_MIN 0xffff800000000000ULL
#define SYM_KERNEL_MAX_GAP (256u << 10)
#define SYM_BUILD_ID_MAX 20
#define SYM_DEBUG_DIR "/usr/lib/debug/.build-id"

/* ---- u32-keyed hash table (open addressing, linear probing) ---------------- */

struct u32map_slot {
	uint32_t key;
	bool used;
	void *val;
};

struct u32map {
	struct u32map_slot *slots;
	size_t cap, n;   /* cap is a power of two */
};

static size_t u32map_hash(uint32_t k, size_t cap)
{
	return (size_t)((k * 2654435761u) & (cap - 1));
}

static void *u32map_get(const struct u32map *m, uint32_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = u32map_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].used)
			return NULL;
		if (m->slots[i].key == key)
			return m->slots[i].val;
	}
}

static int u32map_put(struct u32map *m, uint32_t key, void *val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct u32map_slot *s = calloc(cap, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++) {
			size_t j;

			if (!m->slots[i].used)
				continue;
			for (j = u32map_hash(m->slots[i].key, cap); s[j].used; j = (j + 1) & (cap - 1))
				;
			s[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = s;
		m->cap = cap;
	}
	for (size_t i = u32map_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].used) {
			m->slots[i].used = true;
			m->slots[i].key = key;
			m->slots[i].val = val;
			m->n++;
			return 0;
		}
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return 0;
		}
	}
}

/* ---- symbol tables ------------------------------------------------------- */

struct sym {
	uint64_t addr, size;
	const char *name;
	int prio;   /* lower wins among aliases: global < local < weak */
};

struct symtab {
	struct sym *v;
	size_t n, cap;
	char **strs;      /* owned names (JIT tables) */
	size_t nstrs, capstrs;
};

static int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, int prio)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct sym *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct sym){ .addr = addr, .size = size, .name = name, .prio = prio };
	return 0;
}

/* Add with an owned copy of name (kept until the table is freed). */
static int symtab_add_dup(struct symtab *t, uint64_t addr, uint64_t size, const char *name)
{
	char *s;

	if (t->nstrs == t->capstrs) {
		size_t cap = t->capstrs ? t->capstrs * 2 : 64;
		char **v = realloc(t->strs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->strs = v;
		t->capstrs = cap;
	}
	s = strdup(name);
	if (!s)
		return -ENOMEM;
	if (symtab_add(t, addr, size, s, 0) < 0) {
		free(s);
		return -ENOMEM;
	}
	t->strs[t->nstrs++] = s;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * By address; among aliases the one perf would show first: with a size,
 * not weak, global, fewer leading underscores, longer name.
 */
static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	if (x->prio != y->prio)
		return x->prio - y->prio;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sort and keep one symbol per address. */
static void symtab_finish(struct symtab *t)
{
	size_t out = 0;

	if (!t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), sym_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (out && t->v[out - 1].addr == t->v[i].addr)
			continue;
		t->v[out++] = t->v[i];
	}
	t->n = out;
}

/*
 * The symbol covering addr.  A sized symbol covers [addr, addr+size); a
 * zero-sized one covers up to the next symbol when unbounded is set.
 */
static const struct sym *symtab_find(const struct symtab *t, uint64_t addr, bool unbounded)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo = first symbol above addr; look back a little for nested ones */
	for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
		const struct sym *s = &t->v[lo - 1];

		if (s->size ? addr - s->addr < s->size : (k == 0 && unbounded))
			return s;
	}
	return NULL;
}

static void symtab_free(struct symtab *t)
{
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- DSOs ------------------------------------------------------------------ */

struct load_seg {
	uint64_t offset, vaddr, filesz;
};

struct dso {
	char *path;
	bool loaded;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	uint8_t build_id_len;
	struct load_seg *segs;
	size_t nsegs;
	struct symtab syms;
	char *names;        /* name storage for syms */
	size_t names_len, names_cap;
	void *image;        /* in-memory ELF (vdso), or NULL */
	size_t image_size;
};

/* Append a name to the DSO's arena; returns its offset or -1. */
static ssize_t dso_store_name(struct dso *d, const char *name)
{
	size_t len = strlen(name) + 1, off = d->names_len;

	if (d->names_len + len > d->names_cap) {
		size_t cap = d->names_cap ? d->names_cap * 2 : 16384;
		char *n;

		while (cap < d->names_len + len)
			cap *= 2;
		n = realloc(d->names, cap);
		if (!n)
			return -1;
		d->names = n;
		d->names_cap = cap;
	}
	memcpy(d->names + off, name, len);
	d->names_len += len;
	return (ssize_t)off;
}

static int dso_read_segs(struct dso *d, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -EINVAL;
	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	if (!d->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->segs[d->nsegs++] = (struct load_seg){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr,
			.filesz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz,
		};
	}
	return 0;
}

static int sym_prio(unsigned bind)
{
	switch (bind) {
	case STB_GLOBAL: return 0;
	case STB_WEAK: return 2;
	default: return 1;
	}
}

/*
 * Function symbols of one symbol table section.  Names are stored as arena
 * offsets first (the arena moves while it grows) and turned into pointers
 * by dso_fix_names().
 */
static int dso_read_symtab(struct dso *d, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count, nsec = 0;
	uint8_t *exec = NULL;
	int r = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	/* which sections hold code: zero-sized NOTYPE labels count there (as in perf) */
	if (elf_getshdrnum(elf, &nsec) == 0 && nsec > 0 && (exec = calloc(nsec, 1))) {
		for (size_t i = 0; i < nsec; i++) {
			GElf_Shdr ssh;
			Elf_Scn *sc = elf_getscn(elf, i);

			exec[i] = sc && gelf_getshdr(sc, &ssh) && (ssh.sh_flags & SHF_EXECINSTR);
		}
	}
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type;
		ssize_t off;

		if (!gelf_getsym(data, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_value == 0)
			continue;
		if (type == STT_NOTYPE) {
			if (s.st_size || !exec || s.st_shndx >= nsec || !exec[s.st_shndx])
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		off = dso_store_name(d, name);
		if (off < 0 ||
		    symtab_add(&d->syms, s.st_value, s.st_size, (const char *)(uintptr_t)off,
			       sym_prio(GELF_ST_BIND(s.st_info))) < 0) {
			r = -ENOMEM;
			break;
		}
	}
	free(exec);
	return r;
}

/* .symtab if it has functions, else .dynsym. */
static int dso_read_syms(struct dso *d, Elf *elf)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr dynsh;
	size_t before = d->syms.n;
	int r;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			r = dso_read_symtab(d, elf, scn, &sh);
			if (r < 0)
				return r;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsh = sh;
		}
	}
	if (d->syms.n == before && dynsym)
		return dso_read_symtab(d, elf, dynsym, &dynsh);
	return 0;
}

static bool dso_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

static int dso_elf_build_id(Elf *elf, uint8_t *buf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, next, no, dof;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &no, &dof)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + no, "GNU", 4) &&
			    nh.n_descsz > 0 && nh.n_descsz <= SYM_BUILD_ID_MAX) {
				memcpy(buf, (char *)data->d_buf + dof, nh.n_descsz);
				return (int)nh.n_descsz;
			}
			off = next;
		}
	}
	return 0;
}

/* Symbols from a separate debug file, /usr/lib/debug/.build-id/xx/yyyy.debug */
static void dso_load_debug_file(struct dso *d)
{
	char path[sizeof(SYM_DEBUG_DIR) + 2 * SYM_BUILD_ID_MAX + 16];
	size_t len;
	Elf *elf;
	int fd;

	if (d->build_id_len < 2)
		return;
	len = (size_t)snprintf(path, sizeof(path), SYM_DEBUG_DIR "/%02x/", d->build_id[0]);
	for (size_t i = 1; i < d->build_id_len; i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", d->build_id[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		size_t before = d->syms.n, before_names = d->names_len;

		if (dso_has_symtab(elf) && dso_read_syms(d, elf) < 0) {
			d->syms.n = before;   /* keep what the main file gave */
			d->names_len = before_names;
		}
		elf_end(elf);
	}
	close(fd);
}

static void dso_fix_names(struct dso *d)
{
	for (size_t i = 0; i < d->syms.n; i++)
		d->syms.v[i].name = d->names + (uintptr_t)d->syms.v[i].name;
	symtab_finish(&d->syms);
}

static void dso_load(struct dso *d)
{
	Elf *elf = NULL;
	int fd = -1;
	bool has_symtab = false;

	d->loaded = true;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	if (d->image) {
		elf = elf_memory(d->image, d->image_size);
	} else {
		fd = open(d->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	if (dso_read_segs(d, elf) < 0)
		goto out;
	if (!d->build_id_len) {
		int n = dso_elf_build_id(elf, d->build_id);

		d->build_id_len = n > 0 ? (uint8_t)n : 0;
	}
	has_symtab = dso_has_symtab(elf);
	if (dso_read_syms(d, elf) < 0) {
		d->syms.n = 0;
		d->names_len = 0;
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (!has_symtab && !d->image)
		dso_load_debug_file(d);
	dso_fix_names(d);
}

static void dso_free(struct dso *d)
{
	if (!d)
		return;
	free(d->path);
	free(d->segs);
	symtab_free(&d->syms);
	free(d->names);
	free(d->image);
	free(d);
}

/* File offset -> ELF virtual address via PT_LOAD; false when no segment holds it. */
static bool dso_offset_to_vaddr(const struct dso *d, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct load_seg *s = &d->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

/* ---- processes, threads ---------------------------------------------------- */

struct map {
	uint64_t start, end, pgoff;
	struct dso *dso;   /* NULL: anonymous / no file */
};

struct proc {
	uint32_t pid;
	struct map *maps;
	size_t nmaps, capmaps;
	bool jit_loaded;
	struct symtab jit;
};

struct thread {
	uint32_t tid;
	char comm[32];
	bool has_comm;
};

struct symbolizer {
	struct u32map procs, threads;
	struct dso **dsos;
	size_t ndsos, capdsos;
	struct dso *vdso;       /* our own vdso: the same kernel's */
	bool vdso_tried;
	/* kernel */
	uint64_t kernel_start;  /* from the kernel MMAP, 0 if none */
	bool kallsyms_loaded;
	struct symtab kallsyms;
	char *knames;
};

int symbolizer__new(struct symbolizer **out)
{
	struct symbolizer *s;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

static struct proc *proc_get(struct symbolizer *s, uint32_t pid, bool create)
{
	struct proc *p = u32map_get(&s->procs, pid);

	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (u32map_put(&s->procs, pid, p) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static struct thread *thread_get(struct symbolizer *s, uint32_t tid, bool create)
{
	struct thread *t = u32map_get(&s->threads, tid);

	if (t || !create)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	if (u32map_put(&s->threads, tid, t) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

static struct dso *dso_get(struct symbolizer *s, const char *path, const uint8_t *bid,
			   size_t bid_len)
{
	struct dso *d;

	for (size_t i = 0; i < s->ndsos; i++)
		if (!strcmp(s->dsos[i]->path, path))
			return s->dsos[i];
	if (s->ndsos == s->capdsos) {
		size_t cap = s->capdsos ? s->capdsos * 2 : 32;
		struct dso **v = realloc(s->dsos, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->dsos = v;
		s->capdsos = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->path = strdup(path);
	if (!d->path) {
		free(d);
		return NULL;
	}
	if (bid && bid_len > 0 && bid_len <= SYM_BUILD_ID_MAX) {
		memcpy(d->build_id, bid, bid_len);
		d->build_id_len = (uint8_t)bid_len;
	}
	s->dsos[s->ndsos++] = d;
	return d;
}

/* Our own vdso image: samples of any process on this kernel run the same code. */
static struct dso *vdso_get(struct symbolizer *s)
{
	unsigned long base;
	uint64_t start = 0, end = 0;
	char line[512];
	FILE *f;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return NULL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2)
			break;
		start = end = 0;
	}
	fclose(f);
	if (start != base || end <= start)
		return NULL;
	s->vdso = calloc(1, sizeof(*s->vdso));
	if (!s->vdso)
		return NULL;
	s->vdso->path = strdup("[vdso]");
	s->vdso->image = malloc(end - start);
	if (!s->vdso->path || !s->vdso->image) {
		dso_free(s->vdso);
		s->vdso = NULL;
		return NULL;
	}
	memcpy(s->vdso->image, (const void *)base, end - start);
	s->vdso->image_size = end - start;
	return s->vdso;
}

static bool name_is_anon(const char *name)
{
	return !*name || !strcmp(name, "//anon") || !strncmp(name, "[anon", 5) ||
	       !strncmp(name, "/memfd:", 7) || !strcmp(name, "[heap]") ||
	       !strncmp(name, "[stack", 6) || !strncmp(name, "/dev/zero", 9) ||
	       !strncmp(name, "/anon_hugepage", 14);
}

/* Insert [start, end), trimming or dropping what it overlaps. */
static int proc_add_map(struct proc *p, const struct map *m)
{
	size_t i = 0;

	if (m->end <= m->start)
		return 0;
	/* worst case one map splits in two, plus the new one */
	if (p->nmaps + 2 > p->capmaps) {
		size_t cap = p->capmaps ? p->capmaps * 2 : 32;
		struct map *v = realloc(p->maps, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->maps = v;
		p->capmaps = cap;
	}
	while (i < p->nmaps) {
		struct map *o = &p->maps[i];

		if (o->end <= m->start || o->start >= m->end) {
			i++;
			continue;
		}
		if (o->start < m->start && o->end > m->end) {
			/* split: left stays, right part becomes a new entry */
			struct map right = *o;

			right.pgoff += m->end - o->start;
			right.start = m->end;
			o->end = m->start;
			p->maps[p->nmaps++] = right;
			i++;
		} else if (o->start < m->start) {
			o->end = m->start;
			i++;
		} else if (o->end > m->end) {
			o->pgoff += m->end - o->start;
			o->start = m->end;
			i++;
		} else {
			p->maps[i] = p->maps[--p->nmaps];
		}
	}
	/* the new map, a split-off right part and removals leave it nearly sorted */
	p->maps[p->nmaps++] = *m;
	for (size_t a = 1; a < p->nmaps; a++) {
		struct map t = p->maps[a];
		size_t b = a;

		while (b > 0 && p->maps[b - 1].start > t.start) {
			p->maps[b] = p->maps[b - 1];
			b--;
		}
		p->maps[b] = t;
	}
	return 0;
}

static const struct map *proc_find_map(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	free(p->maps);
	symtab_free(&p->jit);
	free(p);
}

static void record_mmap(struct symbolizer *s, uint32_t pid, uint64_t start, uint64_t len,
			uint64_t pgoff, const char *name, uint16_t misc,
			const uint8_t *bid, size_t bid_len)
{
	struct proc *p;
	struct map m = { .start = start, .end = start + len, .pgoff = pgoff };

	if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL || pid == UINT32_MAX) {
		if (!strncmp(name, "[kernel.kallsyms]", 17))
			s->kernel_start = start;
		return;   /* modules: kallsyms has their symbols too */
	}
	if (start + len < start)
		m.end = UINT64_MAX;
	if (!strcmp(name, "[vdso]"))
		m.dso = vdso_get(s);
	else if (name[0] == '/' && !name_is_anon(name))
		m.dso = dso_get(s, name, bid, bid_len);
	p = proc_get(s, pid, true);
	if (p)
		proc_add_map(p, &m);
}

static void record_comm(struct symbolizer *s, uint32_t pid, uint32_t tid, const char *comm,
			bool exec)
{
	struct thread *t = thread_get(s, tid, true);

	if (t) {
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		t->has_comm = true;
	}
	if (exec) {
		struct proc *p = proc_get(s, pid, false);

		if (p) {
			p->nmaps = 0;
			symtab_free(&p->jit);
			p->jit_loaded = false;
		}
	}
}

static void record_fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint32_t tid,
			uint32_t ptid)
{
	struct thread *pt = thread_get(s, ptid, false);
	struct thread *t = thread_get(s, tid, true);

	if (t && pt && pt->has_comm && !t->has_comm) {
		memcpy(t->comm, pt->comm, sizeof(t->comm));
		t->has_comm = true;
	}
	if (pid != ppid) {
		struct proc *parent = proc_get(s, ppid, false);
		struct proc *child = proc_get(s, pid, true);

		if (parent && child && child->nmaps == 0 && parent->nmaps > 0) {
			child->maps = malloc(parent->capmaps * sizeof(*child->maps));
			if (child->maps) {
				memcpy(child->maps, parent->maps, parent->nmaps * sizeof(*child->maps));
				child->nmaps = parent->nmaps;
				child->capmaps = parent->capmaps;
			} else {
				child->capmaps = 0;
			}
		}
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

static void proc_load_perf_map(struct proc *p)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	p->jit_loaded = true;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->pid);
	f = fopen(path, "re");
	if (f) {
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
			if (!*name)
				continue;
			if (symtab_add_dup(&p->jit, start, size, name) < 0)
				break;
		}
		free(line);
		fclose(f);
	}
	symtab_finish(&p->jit);
}

int symbolizer__add_jit(struct symbolizer *s, uint32_t pid, uint64_t addr, uint64_t size,
			const char *name)
{
	struct proc *p;
	int r;

	if (!s || !name)
		return -EINVAL;
	p = proc_get(s, pid, true);
	if (!p)
		return -ENOMEM;
	r = symtab_add_dup(&p->jit, addr, size, name);
	if (r < 0)
		return r;
	if (p->jit_loaded)
		symtab_finish(&p->jit);
	/* else sorted when the perf map is read, on the first lookup */
	return 0;
}

/* ---- kernel ---------------------------------------------------------------- */

static void kallsyms_load(struct symbolizer *s)
{
	char *line = NULL;
	size_t cap = 0, len = 0, ncap = 0;
	size_t *offs = NULL, noffs = 0, capoffs = 0;
	struct symtab *t = &s->kallsyms;
	FILE *f;

	s->kallsyms_loaded = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		uint64_t addr;
		char type, *name;
		int n = 0;
		size_t nlen;

		if (sscanf(line, "%" SCNx64 " %c %n", &addr, &type, &n) != 2 || !n || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = line + n;
		nlen = strcspn(name, " \t\n");
		if (!nlen)
			continue;
		if (len + nlen + 1 > ncap) {
			size_t c = ncap ? ncap * 2 : 1 << 20;
			char *v;

			while (c < len + nlen + 1)
				c *= 2;
			v = realloc(s->knames, c);
			if (!v)
				break;
			s->knames = v;
			ncap = c;
		}
		if (noffs == capoffs) {
			size_t c = capoffs ? capoffs * 2 : 65536;
			size_t *v = realloc(offs, c * sizeof(*v));

			if (!v)
				break;
			offs = v;
			capoffs = c;
		}
		memcpy(s->knames + len, name, nlen);
		s->knames[len + nlen] = '\0';
		/*
		 * Among aliases perf shows the last one listed (its end fix-up
		 * leaves the others empty): a later line gets a lower prio.
		 */
		if (noffs >= INT_MAX || symtab_add(t, addr, 0, NULL, -(int)noffs) < 0)
			break;
		offs[noffs++] = len;
		len += nlen + 1;
	}
	free(line);
	fclose(f);
	for (size_t i = 0; i < t->n && i < noffs; i++)
		t->v[i].name = s->knames + offs[i];
	t->n = t->n < noffs ? t->n : noffs;
	free(offs);
	symtab_finish(t);
}

static const char *kernel_name(struct symbolizer *s, uint64_t addr)
{
	const struct sym *sym;

	if (!s->kallsyms_loaded)
		kallsyms_load(s);
	sym = symtab_find(&s->kallsyms, addr, true);
	/*
	 * kallsyms has no sizes: a symbol reaches to the next one, but not
	 * across the gaps between text, modules and BPF programs.
	 */
	if (!sym || addr - sym->addr > SYM_KERNEL_MAX_GAP)
		return SYM_UNKNOWN;
	return sym->name;
}

/* ---- lookup ---------------------------------------------------------------- */

static const char *jit_name(struct proc *p, uint64_t addr)
{
	const struct sym *sym;

	if (!p->jit_loaded)
		proc_load_perf_map(p);
	sym = symtab_find(&p->jit, addr, false);
	return sym ? sym->name : NULL;
}

const char *symbolizer__name(struct symbolizer *s, uint32_t pid, uint64_t addr, int kernel)
{
	const struct map *m;
	const struct sym *sym;
	struct proc *p;
	uint64_t vaddr;

	if (!s)
		return SYM_UNKNOWN;
	if (kernel || addr >= SYM_KERNEL_MIN || (s->kernel_start && addr >= s->kernel_start))
		return kernel_name(s, addr);

	p = proc_get(s, pid, true);
	if (!p)
		return SYM_UNKNOWN;
	m = proc_find_map(p, addr);
	if (!m || !m->dso) {
		const char *n = jit_name(p, addr);

		return n ? n : SYM_UNKNOWN;
	}
	if (!m->dso->loaded)
		dso_load(m->dso);
	if (!dso_offset_to_vaddr(m->dso, addr - m->start + m->pgoff, &vaddr))
		return SYM_UNKNOWN;
	sym = symtab_find(&m->dso->syms, vaddr, true);
	return sym ? sym->name : SYM_UNKNOWN;
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
	for (size_t i = 0; i < s->procs.cap; i++)
		if (s->procs.slots[i].used)
			proc_free(s->procs.slots[i].val);
	for (size_t i = 0; i < s->threads.cap; i++)
		if (s->threads.slots[i].used)
			free(s->threads.slots[i].val);
	free(s->procs.slots);
	free(s->threads.slots);
	for (size_t i = 0; i < s->ndsos; i++)
		dso_free(s->dsos[i]);
	free(s->dsos);
	dso_free(s->vdso);
	symtab_free(&s->kallsyms);
	free(s->knames);
	free(s);
}

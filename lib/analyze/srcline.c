// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Source lines from DWARF: see srcline.h.
 *
 * An address goes: file offset -> ELF address (the file's PT_LOADs) ->
 * compile unit (our index of the units' address ranges, built once per
 * file: .debug_aranges is often missing) -> its line (dwarf_getsrc_die,
 * libdw's table of that unit) -> the function holding it (our index of the
 * unit's functions, built on the unit's first lookup) -> the inlined
 * subroutines around the address, walked down from that function.
 */
#include "srcline.h"
#include "fsafe.h"
#include "grow.h"
#include "table.h"
#include "unwind_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUG_DIR "/usr/lib/debug/.build-id"
#define BUILD_ID_MAX 64
#define MAX_LOADS 64

struct range {
	uint64_t lo, hi;
	uint32_t idx;              /* unit (cu ranges) or function (fn ranges) */
};

struct unit {
	Dwarf_Die die;
	bool indexed;              /* its functions are in fns */
	size_t fn_lo, fn_hi;       /* its function ranges: fns[fn_lo .. fn_hi) */
};

/* one ELF file open for libdw */
struct elfref {
	int fd;
	Elf *elf;
};

struct srcfile {
	struct elfref main, debug, alt;
	Dwarf *dw, *altdw;
	struct load { uint64_t off, vaddr, size; } loads[MAX_LOADS];
	size_t nloads;
	struct unit *units;
	size_t nunits, capunits;
	struct range *cus;         /* unit address ranges, sorted */
	size_t ncus, capcus;
	struct range *fns;         /* per unit, its functions' ranges, sorted */
	Dwarf_Die *fndies;         /* the functions, fns[].idx the index */
	size_t nfns, capfns, ndies, capdies;
	uint64_t work, work_max;
	bool work_noted;
	struct strtab paths;       /* relative source paths joined to their unit's directory */
	Elf_Data *line_data;       /* .debug_line as libdw reads it (inflated) */
	struct srcline_stats *st;
};

/* ---- files ------------------------------------------------------------------------ */

static void elfref_close(struct elfref *r)
{
	if (r->elf)
		elf_end(r->elf);
	if (r->fd >= 0)
		close(r->fd);
	r->elf = NULL;
	r->fd = -1;
}

/* path through fsafe and the ELF header budget; 0, or the stats counter to bump */
static int elfref_open(struct elfref *r, const char *path, struct srcline_stats *st)
{
	r->elf = NULL;
	r->fd = fsafe_open_regular(path);
	if (r->fd < 0)
		return -ENOENT;
	if (unwind_table__check_fd(r->fd) ||
	    !(r->elf = elf_begin(r->fd, ELF_C_READ, NULL)) || elf_kind(r->elf) != ELF_K_ELF) {
		st->refused_elf++;
		elfref_close(r);
		return -EINVAL;
	}
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstr;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstr))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstr, sh->sh_name)) && !strcmp(n, name))
			return scn;
	return NULL;
}

/* The GNU build id note of elf as hex, or "" */
static void build_id_hex(Elf *elf, char *hex, size_t size)
{
	Elf_Scn *scn = NULL;

	hex[0] = '\0';
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, next, no, dof;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &no, &dof)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + no, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= BUILD_ID_MAX && 2 * nh.n_descsz < size) {
				for (size_t i = 0; i < nh.n_descsz; i++)
					snprintf(hex + 2 * i, 3, "%02x", ((uint8_t *)d->d_buf)[dof + i]);
				return;
			}
			off = next;
		}
	}
}

/* /usr/lib/debug/.build-id/xx/yyyy.debug for a hex build id */
static int debug_path(char *path, size_t size, const char *hex)
{
	size_t n = strlen(hex);

	if (n < 4 || n > 2 * BUILD_ID_MAX || strspn(hex, "0123456789abcdef") != n)
		return -EINVAL;
	snprintf(path, size, DEBUG_DIR "/%.2s/%s.debug", hex, hex + 2);
	return 0;
}

static bool has_dwarf(Elf *elf)
{
	GElf_Shdr sh;

	return (find_section(elf, ".debug_info", &sh) || find_section(elf, ".zdebug_info", &sh)) &&
	       (find_section(elf, ".debug_line", &sh) || find_section(elf, ".zdebug_line", &sh)) &&
	       sh.sh_type != SHT_NOBITS;
}

/*
 * Its string sections end with a NUL (after libdw inflated them in place):
 * libdw 0.188's line table reader takes strlen() of a name at any offset
 * in them, past the section's end when its last string is unterminated.
 */
static bool strings_end(Elf *elf)
{
	static const char *const names[] = { ".debug_str", ".debug_line_str" };
	GElf_Shdr sh;

	for (size_t i = 0; i < 2 * sizeof(names) / sizeof(names[0]); i++) {
		char z[32];
		Elf_Scn *scn;
		Elf_Data *d;

		snprintf(z, sizeof(z), "%s%s", i % 2 ? ".z" : ".", names[i / 2] + 1);
		scn = find_section(elf, z, &sh);
		if (!scn || sh.sh_type == SHT_NOBITS)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && d->d_size && ((const char *)d->d_buf)[d->d_size - 1])
			return false;
	}
	return true;
}

/*
 * The bytes libdw will hold of r's DWARF sections (it loads and inflates
 * them all at dwarf_begin_elf): their sizes as the headers say, read here
 * without inflating anything.  0, or -E2BIG over a budget.
 */
static int dwarf_bytes(const struct elfref *r, uint64_t *total, uint64_t *info)
{
	Elf_Scn *scn = NULL;
	uint64_t line = 0;
	size_t shstr;
	struct stat sb;

	*total = *info = 0;
	if (elf_getshdrstrndx(r->elf, &shstr) || fstat(r->fd, &sb))
		return -EINVAL;
	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		uint64_t size;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(r->elf, shstr, sh.sh_name)) ||
		    sh.sh_type == SHT_NOBITS || (strncmp(n, ".debug_", 7) && strncmp(n, ".zdebug_", 8)))
			continue;
		if (sh.sh_offset > (uint64_t)sb.st_size || sh.sh_size > (uint64_t)sb.st_size - sh.sh_offset)
			return -EINVAL;
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;

			if (pread(r->fd, &ch, sizeof(ch), (off_t)sh.sh_offset) != (ssize_t)sizeof(ch))
				return -EINVAL;
			size = ch.ch_size;
		} else if (n[1] == 'z') {
			uint8_t h[12];

			if (pread(r->fd, h, sizeof(h), (off_t)sh.sh_offset) != (ssize_t)sizeof(h) ||
			    memcmp(h, "ZLIB", 4))
				return -EINVAL;
			size = 0;
			for (int i = 4; i < 12; i++)
				size = size << 8 | h[i];
		}
		if (size > sh.sh_size && size / UNWIND_CFI_MAX_ZRATIO > sh.sh_size)
			return -E2BIG;
		if (size > SRCLINE_MAX_DWARF_BYTES)
			return -E2BIG;
		*total += size;
		if (!strcmp(n + 1 + (n[1] == 'z'), "debug_line"))
			line += size;
		if (!strcmp(n + 1 + (n[1] == 'z'), "debug_info"))
			*info += size;
	}
	return *total > SRCLINE_MAX_DWARF_BYTES || line > SRCLINE_MAX_LINE_BYTES ? -E2BIG : 0;
}

/*
 * dwz's supplementary file, when r's DWARF refers to one: opened by us
 * (libdw would open the path the file names), only from the debug
 * directory by its build id.  0 (none needed, or set), or the error.
 */
static int open_alt(struct srcfile *f, const struct elfref *r, uint64_t *total, uint64_t *info)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(r->elf, ".gnu_debugaltlink", &sh);
	char hex[2 * BUILD_ID_MAX + 1] = "", path[sizeof(DEBUG_DIR) + 2 * BUILD_ID_MAX + 16];
	Elf_Data *d;
	const uint8_t *nul;
	uint64_t t2, i2;
	size_t idlen;

	if (!scn) {
		GElf_Shdr sup;

		return find_section(r->elf, ".debug_sup", &sup) ? -ENOENT : 0;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !(nul = memchr(d->d_buf, '\0', d->d_size)))
		return -ENOENT;
	idlen = d->d_size - (size_t)(nul + 1 - (const uint8_t *)d->d_buf);
	if (idlen < 2 || idlen > BUILD_ID_MAX)
		return -ENOENT;
	for (size_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", nul[1 + i]);
	if (debug_path(path, sizeof(path), hex) || elfref_open(&f->alt, path, f->st))
		return -ENOENT;
	if (dwarf_bytes(&f->alt, &t2, &i2) || t2 > SRCLINE_MAX_DWARF_BYTES - *total)
		return -E2BIG;
	*total += t2;
	*info += i2;
	f->altdw = dwarf_begin_elf(f->alt.elf, DWARF_C_READ, NULL);
	if (!f->altdw)
		return -ENOENT;
	return 0;
}

/* ---- indexes -------------------------------------------------------------------- */

static bool spend(struct srcfile *f, uint64_t units)
{
	f->work += units;
	if (f->work <= f->work_max)
		return true;
	if (!f->work_noted)
		f->st->work_out++;
	f->work_noted = true;
	return false;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* each range of die as (lo, hi, idx) in *v; -E2BIG over the budgets */
static int add_ranges(struct srcfile *f, Dwarf_Die *die, uint32_t idx, struct range **v,
		      size_t *n, size_t *cap)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!spend(f, 1) || f->ncus + f->nfns >= SRCLINE_MAX_RANGES)
			return -E2BIG;
		if (lo >= hi)
			continue;
		if (grow_to(v, cap, *n + 1, sizeof(**v), 256))
			return -ENOMEM;
		(*v)[(*n)++] = (struct range){ .lo = lo, .hi = hi, .idx = idx };
	}
	return 0;
}

/* Whether the unit's line program is within its budget (read before libdw decodes it) */
static bool unit_lines_ok(struct srcfile *f, Dwarf_Die *cu)
{
	const uint8_t *d = f->line_data ? f->line_data->d_buf : NULL;
	size_t size = d ? f->line_data->d_size : 0;
	Dwarf_Attribute a;
	Dwarf_Word off;
	uint64_t len;
	uint32_t l32;

	if (!dwarf_attr(cu, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off) || size < 4 ||
	    off > size - 4)
		return false;
	memcpy(&l32, d + off, 4);
	len = l32;
	if (l32 == 0xffffffffu) {
		if (off > size - 12)
			return false;
		memcpy(&len, d + off + 4, 8);
	}
	if (len <= SRCLINE_MAX_UNIT_LINE_BYTES)
		return true;
	f->st->refused_units++;
	return false;
}

/* The compile units and their address ranges (skeletons of split DWARF left out) */
static int index_units(struct srcfile *f)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die die;
	uint8_t type;
	int r;

	while (dwarf_get_units(f->dw, cu, &cu, NULL, &type, &die, NULL) == 0) {
		if (!spend(f, 1))
			return -E2BIG;
		if (type != DW_UT_compile || !unit_lines_ok(f, &die))
			continue;
		if (grow_to(&f->units, &f->capunits, f->nunits + 1, sizeof(*f->units), 64))
			return -ENOMEM;
		f->units[f->nunits] = (struct unit){ .die = die };
		r = add_ranges(f, &die, (uint32_t)f->nunits, &f->cus, &f->ncus, &f->capcus);
		if (r == -ENOMEM)
			return r;
		if (r)
			break;          /* what fits is indexed */
		f->nunits++;
	}
	if (f->ncus)
		qsort(f->cus, f->ncus, sizeof(*f->cus), range_cmp);
	return 0;
}

/* The function definitions among die's children (into namespaces and classes) */
static int index_functions(struct srcfile *f, Dwarf_Die *parent, int nest)
{
	Dwarf_Die die;
	int r = dwarf_child(parent, &die);

	for (; r == 0; r = dwarf_siblingof(&die, &die)) {
		if (!spend(f, 1))
			return -E2BIG;
		switch (dwarf_tag(&die)) {
		case DW_TAG_subprogram:
			if (grow_to(&f->fndies, &f->capdies, f->ndies + 1, sizeof(*f->fndies), 256))
				return -ENOMEM;
			f->fndies[f->ndies] = die;
			r = add_ranges(f, &die, (uint32_t)f->ndies++, &f->fns, &f->nfns, &f->capfns);
			if (r)
				return r;
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			if (nest < SRCLINE_MAX_NEST && dwarf_haschildren(&die) &&
			    (r = index_functions(f, &die, nest + 1)) < 0)
				return r;
			break;
		default:
			break;
		}
	}
	return 0;
}

static const struct range *find_range(const struct range *v, size_t lo, size_t hi, uint64_t addr)
{
	/* the last range starting at or before addr, then back over overlapping ones */
	size_t a = lo, b = hi;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m].lo <= addr)
			a = m + 1;
		else
			b = m;
	}
	for (size_t k = a, seen = 0; k-- > lo && seen < 8; seen++)
		if (addr < v[k].hi)
			return &v[k];
	return NULL;
}

static int unit_functions(struct srcfile *f, struct unit *u)
{
	size_t first = f->nfns;
	int r;

	if (u->indexed)
		return 0;
	u->indexed = true;
	u->fn_lo = u->fn_hi = first;
	r = index_functions(f, &u->die, 0);
	if (r == -ENOMEM)
		return r;
	u->fn_hi = f->nfns;
	if (f->nfns > first)    /* none: f->fns may be NULL still */
		qsort(f->fns + first, f->nfns - first, sizeof(*f->fns), range_cmp);
	return 0;
}

/* ---- lookups -------------------------------------------------------------------- */

static bool die_has(struct srcfile *f, Dwarf_Die *die, uint64_t addr)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!spend(f, 1))
			return false;
		if (lo <= addr && addr < hi)
			return true;
	}
	return false;
}

/* The inlined subroutines around addr, outermost first, under the function fn */
static size_t inlined(struct srcfile *f, Dwarf_Die *fn, uint64_t addr, Dwarf_Die *out, size_t max)
{
	Dwarf_Die cur = *fn, die;
	size_t n = 0;
	bool deeper = true;

	while (deeper && n < max) {
		int r = dwarf_child(&cur, &die);

		deeper = false;
		for (; r == 0 && spend(f, 1); r = dwarf_siblingof(&die, &die)) {
			int tag = dwarf_tag(&die);

			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
				continue;
			if (!die_has(f, &die, addr))
				continue;
			if (tag == DW_TAG_inlined_subroutine)
				out[n++] = die;
			cur = die;
			deeper = true;
			break;
		}
	}
	return n;
}

static uint32_t udata(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) || w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

static uint32_t decl_line(Dwarf_Die *die)
{
	int line = 0;

	return dwarf_decl_line(die, &line) == 0 && line > 0 ? (uint32_t)line : 0;
}

/* where the inlined subroutine die was called from */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Files *files;
	size_t nfiles;
	uint32_t i = udata(die, DW_AT_call_file);

	if (dwarf_getsrcfiles(cu, &files, &nfiles) || i >= nfiles)
		return NULL;
	return dwarf_filesrc(files, i, NULL, NULL);
}

/*
 * A source path as the unit names it: a relative one (a build from its
 * build directory) joined to the unit's DW_AT_comp_dir, as an id in
 * f->paths (its arena moves as it grows: pointers are taken at the end),
 * else TABLE_NONE with *abs the path itself.
 */
static uint32_t source_path(struct srcfile *f, Dwarf_Die *cu, const char *file, const char **abs)
{
	Dwarf_Attribute a;
	const char *dir;
	char buf[4096];
	int n;

	*abs = file;
	if (!file || file[0] == '/' || !dwarf_attr(cu, DW_AT_comp_dir, &a) ||
	    !(dir = dwarf_formstring(&a)) || dir[0] != '/')
		return TABLE_NONE;
	n = snprintf(buf, sizeof(buf), "%s/%s", dir, file[0] == '.' && file[1] == '/' ? file + 2 : file);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return TABLE_NONE;
	return strtab__intern(&f->paths, buf, (size_t)n);
}

/* Each line's file, made absolute where the unit says from where */
static void absolute_paths(struct srcfile *f, Dwarf_Die *cu, struct srcline *out, size_t n)
{
	uint32_t ids[SRCLINE_MAX_INLINE + 1];

	for (size_t i = 0; i < n && i < SRCLINE_MAX_INLINE + 1; i++)
		ids[i] = source_path(f, cu, out[i].file, &out[i].file);
	for (size_t i = 0; i < n && i < SRCLINE_MAX_INLINE + 1; i++)
		if (ids[i] != TABLE_NONE)
			out[i].file = strtab__str(&f->paths, ids[i]);
}

size_t srcfile__find(struct srcfile *f, uint64_t off, struct srcline *out, size_t max)
{
	Dwarf_Die inl[SRCLINE_MAX_INLINE], *fn = NULL;
	const struct range *cr, *fr;
	struct unit *u;
	Dwarf_Line *line;
	uint64_t addr = 0;
	size_t i, n = 0, k;
	int lineno = 0;
	bool found = false;

	if (!f || !max)
		return 0;
	for (i = 0; i < f->nloads && !found; i++)
		if (off >= f->loads[i].off && off - f->loads[i].off < f->loads[i].size) {
			addr = off - f->loads[i].off + f->loads[i].vaddr;
			found = true;
		}
	if (!found || !(cr = find_range(f->cus, 0, f->ncus, addr)))
		return 0;
	u = &f->units[cr->idx];
	line = dwarf_getsrc_die(&u->die, addr);
	if (!line || dwarf_lineno(line, &lineno) || lineno <= 0)
		return 0;
	if (unit_functions(f, u) == 0 && (fr = find_range(f->fns, u->fn_lo, u->fn_hi, addr)))
		fn = &f->fndies[fr->idx];
	k = fn && f->work <= f->work_max ? inlined(f, fn, addr, inl, max - 1 < SRCLINE_MAX_INLINE ?
						       max - 1 : SRCLINE_MAX_INLINE) : 0;
	/* innermost first: the address's own line, then each call site outwards */
	out[n++] = (struct srcline){ .func = k ? dwarf_diename(&inl[k - 1]) : NULL,
		.file = dwarf_linesrc(line, NULL, NULL), .line = (uint32_t)lineno,
		.func_line = k ? decl_line(&inl[k - 1]) : fn ? decl_line(fn) : 0 };
	for (i = k; i-- > 0;) {
		Dwarf_Die *outer = i ? &inl[i - 1] : fn;

		out[n++] = (struct srcline){ .func = i ? dwarf_diename(outer) : NULL,
			.file = call_file(&u->die, &inl[i]), .line = udata(&inl[i], DW_AT_call_line),
			.func_line = decl_line(outer) };
	}
	/* an inlined frame without a name cannot be shown: the lines without them */
	for (i = 0; i + 1 < n; i++)
		if (!out[i].func) {
			out[0] = (struct srcline){ .file = out[0].file, .line = out[0].line,
						   .func_line = fn ? decl_line(fn) : 0 };
			n = 1;
			break;
		}
	absolute_paths(f, &u->die, out, n);
	return n;
}

/* ---- open and close ------------------------------------------------------------- */

static int read_loads(struct srcfile *f)
{
	size_t n;

	if (elf_getphdrnum(f->main.elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n && f->nloads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(f->main.elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nloads++] = (struct load){ .off = ph.p_offset,
				.vaddr = ph.p_vaddr, .size = ph.p_filesz };
	}
	return 0;
}

/* the ELF holding f's DWARF: the file itself or its debug file; NULL (st counted) */
static struct elfref *dwarf_file(struct srcfile *f, const char *build_id)
{
	char hex[2 * BUILD_ID_MAX + 1], dhex[2 * BUILD_ID_MAX + 1];
	char path[sizeof(DEBUG_DIR) + 2 * BUILD_ID_MAX + 16];

	build_id_hex(f->main.elf, hex, sizeof(hex));
	if (build_id && *build_id && strcmp(build_id, hex)) {
		f->st->stale++;
		return NULL;
	}
	if (has_dwarf(f->main.elf))
		return &f->main;
	if (!hex[0] || debug_path(path, sizeof(path), hex) || elfref_open(&f->debug, path, f->st)) {
		f->st->no_dwarf++;
		return NULL;
	}
	build_id_hex(f->debug.elf, dhex, sizeof(dhex));
	if (strcmp(hex, dhex) || !has_dwarf(f->debug.elf)) {
		f->st->no_dwarf++;
		return NULL;
	}
	return &f->debug;
}

struct srcfile *srcfile__open(const char *path, const char *build_id, struct srcline_stats *st)
{
	struct srcfile *f;
	struct elfref *src;
	uint64_t total, info;
	Elf_Scn *scn;
	GElf_Shdr sh;
	int r;

	if (!path || path[0] != '/' || elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->main.fd = f->debug.fd = f->alt.fd = -1;
	f->st = st;
	if (elfref_open(&f->main, path, st))
		goto fail;
	if (read_loads(f)) {
		st->refused_elf++;      /* no program headers to place its code by */
		goto fail;
	}
	if (!(src = dwarf_file(f, build_id)))
		goto fail;
	st->files++;
	r = dwarf_bytes(src, &total, &info);
	if (!r)
		r = open_alt(f, src, &total, &info);
	if (r) {
		if (r == -E2BIG)
			st->refused_size++;
		else
			st->refused_alt++;
		goto fail;
	}
	f->work_max = SRCLINE_WORK_PER_BYTE * info + SRCLINE_WORK_FLOOR;
	f->dw = dwarf_begin_elf(src->elf, DWARF_C_READ, NULL);
	if (!f->dw) {
		st->no_dwarf++;
		goto fail;
	}
	if (!strings_end(src->elf) || (f->altdw && !strings_end(f->alt.elf))) {
		st->refused_elf++;
		goto fail;
	}
	if (f->altdw)
		dwarf_setalt(f->dw, f->altdw);
	/* libdw inflated the sections in place: the data is what it decodes */
	if ((scn = find_section(src->elf, ".debug_line", &sh)) ||
	    (scn = find_section(src->elf, ".zdebug_line", &sh)))
		f->line_data = elf_getdata(scn, NULL);
	if (index_units(f) < 0 || !f->ncus) {
		st->no_dwarf += !f->ncus;
		goto fail;
	}
	return f;
fail:
	srcfile__close(f);
	return NULL;
}

void srcfile__close(struct srcfile *f)
{
	if (!f)
		return;
	if (f->dw)
		dwarf_end(f->dw);
	if (f->altdw)
		dwarf_end(f->altdw);
	elfref_close(&f->main);
	elfref_close(&f->debug);
	elfref_close(&f->alt);
	free(f->units);
	free(f->cus);
	free(f->fns);
	free(f->fndies);
	strtab__free(&f->paths);
	free(f);
}

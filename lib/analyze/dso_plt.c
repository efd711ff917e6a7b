// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * PLT stubs named as perf names them: "clock_gettime@plt" (dso.h).
 *
 * A stripped file has no symbol for its PLT, and an unstripped one has
 * only _init before it, which then covered every stub ("_init" where perf
 * says "clock_gettime@plt", issue 22).  On x86-64 every stub that calls
 * through the GOT holds "jmp *DISP(%rip)" (ff 25 disp32), in .plt (the
 * lazy stubs), .plt.sec (their IBT form) and .plt.got (functions whose
 * address is also taken): the slot it jumps through is the r_offset of a
 * dynamic relocation, JUMP_SLOT or GLOB_DAT naming the function, or
 * IRELATIVE whose addend is the resolver of an ifunc in this same file
 * (named after the symbol there, "*ABS*+0xADDR@plt" when there is none).
 * The header stub (PLT0) jumps through a slot no relocation names: it is
 * left unnamed.
 *
 * The file is anyone's (named by an MMAP record): the sections are read
 * through libelf within their sizes, at most DSO_PLT_MAX stubs and
 * DSO_PLT_MAX_RELOCS relocations are looked at, names are bounded by
 * the ELF string tables libelf checks, and a stub or relocation that does
 * not parse is skipped.
 */
#include "dso.h"
#include "grow.h"

#include <errno.h>
#include <stdbool.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DSO_PLT_MAX (1u << 18)
#define DSO_PLT_MAX_RELOCS (1u << 20)
#define PLT_ENT_MAX 64

struct plt_reloc {
	uint64_t slot;          /* r_offset: the GOT slot */
	uint64_t addend;
	uint32_t sym;           /* dynsym index, 0 for IRELATIVE */
	uint32_t type;
	size_t symtab;          /* which dynsym (section index) */
};

struct dso_plt {
	struct dso_plt_stub {
		uint64_t addr, size, addend;
		ssize_t name;   /* offset in d->plt_names, -1: an IRELATIVE named later */
	} *v;
	size_t n, cap;
};

static int reloc_cmp(const void *a, const void *b)
{
	const struct plt_reloc *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* "NAME@plt" (or "*ABS*+0xADDR@plt" without a name) into d->plt_names: its offset, or -1 */
static ssize_t store(struct dso *d, const char *name, uint64_t addr)
{
	char buf[1024];
	size_t len, off = d->plt_names_len;

	if (name)
		snprintf(buf, sizeof(buf), "%s@plt", name);
	else
		snprintf(buf, sizeof(buf), "*ABS*+0x%" PRIx64 "@plt", addr);
	len = strlen(buf) + 1;
	if (grow_to(&d->plt_names, &d->plt_names_cap, off + len, 1, 4096))
		return -1;
	memcpy(d->plt_names + off, buf, len);
	d->plt_names_len += len;
	return (ssize_t)off;
}

/* JUMP_SLOT, GLOB_DAT and IRELATIVE relocations of every section tied to a dynamic symbol table */
static int read_relocs(Elf *elf, struct plt_reloc **out, size_t *nout)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	*out = NULL;
	*nout = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, lsh;
		Elf_Scn *link;
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		link = elf_getscn(elf, sh.sh_link);
		if (!link || !gelf_getshdr(link, &lsh) || lsh.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = data->d_size / sh.sh_entsize;
		for (size_t i = 0; i < count && *nout < DSO_PLT_MAX_RELOCS; i++) {
			GElf_Rela r;
			uint32_t type;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			type = (uint32_t)GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
			    type != R_X86_64_IRELATIVE)
				continue;
			if (grow_to(out, &cap, *nout + 1, sizeof(**out), 256))
				return -ENOMEM;
			(*out)[(*nout)++] = (struct plt_reloc){
				.slot = r.r_offset, .addend = (uint64_t)r.r_addend,
				.sym = (uint32_t)GELF_R_SYM(r.r_info), .type = type,
				.symtab = sh.sh_link,
			};
		}
	}
	if (*nout)
		qsort(*out, *nout, sizeof(**out), reloc_cmp);
	return 0;
}

static const struct plt_reloc *reloc_at(const struct plt_reloc *v, size_t n, uint64_t slot)
{
	struct plt_reloc key = { .slot = slot };

	return bsearch(&key, v, n, sizeof(*v), reloc_cmp);
}

/* The name of dynamic symbol idx of section symtab, or NULL */
static const char *dynsym_name(Elf *elf, size_t symtab, uint32_t idx)
{
	Elf_Scn *scn = elf_getscn(elf, symtab);
	GElf_Shdr sh;
	Elf_Data *data;
	GElf_Sym s;

	if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)) ||
	    !gelf_getsym(data, (int)idx, &s))
		return NULL;
	return elf_strptr(elf, sh.sh_link, s.st_name);
}

static int add_stub(struct dso *d, uint64_t addr, uint64_t size, uint64_t addend, ssize_t name)
{
	struct dso_plt *p = d->plt;

	if (p->n >= DSO_PLT_MAX)
		return 0;
	if (grow_to(&p->v, &p->cap, p->n + 1, sizeof(*p->v), 64))
		return -ENOMEM;
	p->v[p->n++] = (struct dso_plt_stub){ .addr = addr, .size = size, .addend = addend,
					      .name = name };
	return 0;
}

/* The stubs of one PLT section: each entry's "jmp *DISP(%rip)" and the slot it reads */
static int scan_plt(struct dso *d, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t ent,
		    const struct plt_reloc *rv, size_t nr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const uint8_t *b;
	size_t n;

	if (!data || !data->d_buf || sh->sh_type != SHT_PROGBITS)
		return 0;
	b = data->d_buf;
	n = data->d_size / ent;
	for (size_t k = 0; k < n && d->plt->n < DSO_PLT_MAX; k++) {
		const uint8_t *e = b + k * ent;
		uint64_t addr = sh->sh_addr + k * ent;
		const struct plt_reloc *r = NULL;
		int32_t disp;
		ssize_t name;

		for (size_t j = 0; j + 6 <= ent && !r; j++) {
			if (e[j] != 0xff || e[j + 1] != 0x25)
				continue;
			memcpy(&disp, e + j + 2, 4);
			r = reloc_at(rv, nr, addr + j + 6 + (uint64_t)(int64_t)disp);
		}
		if (!r)
			continue;   /* PLT0, or a stub of another form */
		if (r->type == R_X86_64_IRELATIVE || !r->sym) {
			name = -1;
		} else {
			const char *s = dynsym_name(elf, r->symtab, r->sym);

			if (!s || !*s)
				continue;
			name = store(d, s, 0);
			if (name < 0)
				return -ENOMEM;
		}
		if (add_stub(d, addr, ent, r->addend, name) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void drop_pending(struct dso *d)
{
	if (d->plt)
		free(d->plt->v);
	free(d->plt);
	d->plt = NULL;
}

void dso_plt_collect(struct dso *d, Elf *elf)
{
	struct plt_reloc *rv = NULL;
	size_t nr = 0, shstrndx;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	int err;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	err = read_relocs(elf, &rv, &nr);
	if (!err && nr)
		d->plt = calloc(1, sizeof(*d->plt));
	if (!d->plt) {
		free(rv);
		return;
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		uint64_t ent;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec"))
			ent = sh.sh_entsize ? sh.sh_entsize : 16;
		else if (!strcmp(name, ".plt.got"))
			ent = sh.sh_entsize ? sh.sh_entsize : 8;
		else
			continue;
		if (ent < 6 || ent > PLT_ENT_MAX)
			continue;
		err = scan_plt(d, elf, scn, &sh, ent, rv, nr);
	}
	free(rv);
	if (err)
		drop_pending(d);   /* out of memory: the stubs stay unnamed */
}

void dso_plt_add(struct dso *d)
{
	struct dso_plt *p = d->plt;
	bool named = true;
	size_t i;

	if (!p)
		return;
	/* ifunc stubs by their resolver's symbol, now that the symbols are sorted */
	for (i = 0; i < p->n && named; i++) {
		const struct sym *s;

		if (p->v[i].name >= 0)
			continue;
		s = symtab__find(&d->syms, p->v[i].addend, false);
		p->v[i].name = store(d, s ? s->name : NULL, p->v[i].addend);
		named = p->v[i].name >= 0;
	}
	/* the arena is final: its pointers stay valid until dso__free() */
	for (i = 0; i < p->n && named; i++)
		if (symtab__add(&d->syms, p->v[i].addr, p->v[i].size,
				d->plt_names + p->v[i].name, 1) < 0)
			break;
	symtab__finish(&d->syms);
	drop_pending(d);
}

void dso_plt_free(struct dso *d)
{
	drop_pending(d);
	free(d->plt_names);
	d->plt_names = NULL;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The CFI section, vetted against the budgets, copied and opened with
 * libdw.  See cfi_image.h, and unwind_table.h for the budgets.
 *
 * One pass over the entries (dwarf_next_cfi() over the copy) notes every
 * CIE (its encodings, and a scan of its initial instructions) and every FDE
 * (where it is, the code it covers); the FDEs are sorted and those
 * overlapping another dropped; each one kept has its program scanned
 * (cfi_scan()).  Only then, if the object is within its budget, does libdw
 * see anything.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_image.h"
#include "cfi_scan.h"
#include "grow.h"

/* bytes libdw keeps (estimates, rounded up from 0.188's structs and malloc's overhead) */
#define LIBDW_FDE_BYTES   128         /* struct dwarf_fde and its search tree node */
#define LIBDW_CIE_BYTES   256         /* struct dwarf_cie, its node, its initial state ... */
#define LIBDW_REG_BYTES   8           /* ... and per register of that state, once run */
#define LIBDW_EXPR_BYTES  96          /* an interned expression, per byte of it */
#define FRAME_BYTES(nregs) (96 + 8 * (uint64_t)(nregs))   /* a Dwarf_Frame */
#define PAD               16          /* zeros after the section's bytes */

struct cfi_cie {
	uint32_t off;
	uint8_t enc;               /* FDE pointer encoding ('R') */
	bool z;                    /* FDEs carry augmentation data */
	bool ok;                   /* usable: its FDEs can be kept */
	bool used;                 /* by an FDE kept */
	uint64_t caf;              /* code alignment factor */
	uint64_t cost, expr;       /* of its initial instructions: one run, expression bytes */
	uint32_t reg;              /* the largest register it names */
};

#define IMAGE_LOADS 16

/*
 * The image: ELF header, the file's PT_LOAD headers (addresses only: for a
 * libdwfl module's range), section headers (null, the CFI, .shstrtab),
 * names, the bytes.
 */
struct image_head {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[IMAGE_LOADS];
	Elf64_Shdr sh[3];
	char names[32];
};

static const char names_eh[] = "\0.eh_frame\0.shstrtab";
static const char names_dbg[] = "\0.debug_frame\0.shstrtab";

/* over the budget: why */
static int refused(struct unwind_budget *b, int why)
{
	b->why = why;
	return -E2BIG;
}

/* --- the section ---------------------------------------------------------------- */

static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/*
 * The bytes of the CFI section: 0, -ENOENT, or -E2BIG.  Sizes are checked
 * before libelf reads or inflates anything.
 */
static int section_bytes(struct cfi_image *im, Elf *elf, Elf_Data **out, struct unwind_budget *b)
{
	GElf_Shdr sh;
	GElf_Chdr ch;
	Elf_Scn *scn = find_section(elf, ".eh_frame", &sh);
	Elf_Data *d;

	im->eh = scn != NULL;
	im->source = im->eh ? ".eh_frame" : ".debug_frame";
	if (!scn && !(scn = find_section(elf, ".debug_frame", &sh)))
		return -ENOENT;
	b->bytes = sh.sh_size;
	if (b->bytes > UNWIND_CFI_MAX_BYTES)
		return refused(b, UNWIND_REFUSED_SIZE);
	/* a compressed .debug_frame: the size it inflates to is the file's choice */
	if (!im->eh && (sh.sh_flags & SHF_COMPRESSED)) {
		if (!gelf_getchdr(scn, &ch))
			return -ENOENT;
		b->bytes = ch.ch_size;
		if (ch.ch_size > UNWIND_CFI_MAX_BYTES || ch.ch_size / UNWIND_CFI_MAX_ZRATIO > sh.sh_size)
			return refused(b, UNWIND_REFUSED_SIZE);
		if (elf_compress(scn, 0, 0) < 0)
			return -ENOENT;
	}
	/* .debug_frame's pc-relative pointers: libdw takes its address as 0 */
	im->addr = im->eh ? sh.sh_addr : 0;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -ENOENT;
	b->bytes = d->d_size;
	if (d->d_size > UNWIND_CFI_MAX_BYTES)
		return refused(b, UNWIND_REFUSED_SIZE);
	*out = d;
	return 0;
}

/* elf's PT_LOAD headers into h: addresses and sizes in memory, no file bytes */
static void copy_loads(struct image_head *h, Elf *elf)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && h->eh.e_phnum < IMAGE_LOADS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		h->ph[h->eh.e_phnum++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = ph.p_flags,
						       .p_vaddr = ph.p_vaddr, .p_paddr = ph.p_paddr,
						       .p_memsz = ph.p_memsz, .p_align = ph.p_align };
	}
	if (h->eh.e_phnum) {
		h->eh.e_phoff = offsetof(struct image_head, ph);
		h->eh.e_phentsize = sizeof(Elf64_Phdr);
	}
}

/* The image, its section the copy of d's bytes (the size set once they are read). */
static int make_image(struct cfi_image *im, const Elf_Data *d, Elf *elf)
{
	struct image_head *h;
	const char *names = im->eh ? names_eh : names_dbg;
	size_t names_len = im->eh ? sizeof(names_eh) : sizeof(names_dbg);

	im->img_len = sizeof(*h) + d->d_size + PAD;
	im->img = calloc(1, im->img_len);
	if (!im->img)
		return -ENOMEM;
	h = (struct image_head *)im->img;
	memcpy(h->eh.e_ident, im->ident, EI_NIDENT);
	h->eh.e_type = ET_DYN;
	h->eh.e_machine = EM_X86_64;         /* libdw's default rules: x86-64's */
	h->eh.e_version = EV_CURRENT;
	h->eh.e_ehsize = sizeof(Elf64_Ehdr);
	h->eh.e_shoff = offsetof(struct image_head, sh);
	h->eh.e_shentsize = sizeof(Elf64_Shdr);
	h->eh.e_shnum = 3;
	h->eh.e_shstrndx = 2;
	h->sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
				 .sh_flags = im->eh ? SHF_ALLOC : 0, .sh_addr = im->addr,
				 .sh_offset = sizeof(*h), .sh_addralign = 8 };
	h->sh[2] = (Elf64_Shdr){ .sh_name = (Elf64_Word)(names_len - sizeof(".shstrtab")),
				 .sh_type = SHT_STRTAB, .sh_offset = offsetof(struct image_head, names),
				 .sh_size = names_len, .sh_addralign = 1 };
	memcpy(h->names, names, names_len);
	copy_loads(h, elf);
	im->data = im->img + sizeof(*h);
	memcpy(im->data, d->d_buf, d->d_size);
	im->size = d->d_size;
	return 0;
}

/* --- entries ----------------------------------------------------------------------- */

/* The FDE pointer encoding a CIE names; false if it cannot be told. */
static bool cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	uint64_t skip;

	*enc = PE_ABSPTR;
	if (!a || !*a)
		return true;
	if (*a != 'z' || !p)
		return false;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return false;
			*enc = *p;
			return true;
		case 'L':
			p++;
			break;
		case 'P':
			if (p >= end)
				return false;
			p++;
			if (!cfi_read_encoded(p[-1] & 0x7f, &p, end, 0, false, &skip))
				return false;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return false;
		}
	}
	return true;   /* no 'R': absolute pointers */
}

static uint64_t addr_of(const void *ctx, const uint8_t *p)
{
	const struct cfi_image *im = ctx;

	return im->addr + (uint64_t)(p - im->data);
}

static int add_cie(struct cfi_image *im, Dwarf_Off off, const Dwarf_CIE *e)
{
	struct cfi_cie *c;
	struct cfi_cost cost;

	if (grow_to(&im->cies, &im->cap_cies, im->nr_cies + 1, sizeof(*im->cies), 16))
		return -ENOMEM;
	c = &im->cies[im->nr_cies++];
	*c = (struct cfi_cie){ .off = (uint32_t)off, .caf = e->code_alignment_factor };
	c->z = e->augmentation && e->augmentation[0] == 'z';
	c->ok = cie_fde_encoding(e, &c->enc);
	cfi_scan(&(struct cfi_prog){ .p = e->initial_instructions, .end = e->initial_instructions_end,
				     .cie = true, .caf = c->caf }, &cost);
	if (!cfi_cost_ok(&cost))
		return -E2BIG;
	/* a CIE whose run fails is run again for every row: its FDEs are not kept */
	c->ok = c->ok && !cost.fail;
	c->cost = cost.cost;
	c->expr = cost.expr;
	c->reg = (uint32_t)cost.reg;
	return 0;
}

static struct cfi_cie *cie_at(struct cfi_image *im, Dwarf_Off off)
{
	size_t lo = 0, hi = im->nr_cies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->cies[mid].off == off)
			return &im->cies[mid];
		if (im->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* f from the entry: its CIE, range and program; false if it cannot be kept */
static bool read_fde(struct cfi_image *im, const Dwarf_FDE *e, struct cfi_fde *f)
{
	struct cfi_cie *c = cie_at(im, e->CIE_pointer);
	const uint8_t *p = e->start, *end = e->end;
	uint64_t lo, len, alen;

	if (!c || !c->ok || p < im->data || end > im->data + im->size || p > end)
		return false;
	if (!cfi_read_encoded(c->enc, &p, end, addr_of(im, p), true, &lo) ||
	    !cfi_read_encoded(c->enc, &p, end, 0, false, &len))
		return false;
	if (!len || lo > UINT32_MAX || len > UINT32_MAX - lo)
		return false;
	if (c->z && (!cfi_read_leb(&p, end, false, &alen) || alen > (uint64_t)(end - p)))
		return false;
	if (c->z)
		p += alen;
	f->cie = (uint32_t)(c - im->cies);
	f->lo = lo;
	f->hi = lo + len;
	f->prog = (uint32_t)(p - im->data);
	f->end = (uint32_t)(end - im->data);
	return true;
}

/*
 * The memory so far and to come must stay in the budget: the image, libelf's
 * copy of the section (read, not mapped), our lists, and more.
 */
static bool mem_ok(struct cfi_image *im, struct unwind_budget *b, uint64_t more)
{
	b->mem = 2 * im->img_len + im->cap_fdes * sizeof(*im->fdes) + im->cap_cies * sizeof(*im->cies) +
		 more;
	return b->mem <= b->mem_max;
}

/*
 * Every entry: CIEs noted, FDEs listed (prog = 0 for one not kept).  Stops
 * at the first entry libdw cannot read, or the end: the image ends there.
 */
static int read_entries(struct cfi_image *im, struct unwind_budget *b)
{
	Elf_Data d = { .d_buf = im->data, .d_size = im->size, .d_type = ELF_T_BYTE };
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry ent;
	size_t seen = 0;
	int r;

	while ((r = dwarf_next_cfi(im->ident, &d, im->eh, off, &next, &ent)) == 0 && next > off) {
		if (dwarf_cfi_cie_p(&ent)) {
			r = add_cie(im, off, &ent.cie);
			if (r == -E2BIG)
				return refused(b, UNWIND_REFUSED_RULES);
		} else if (++seen > UNWIND_TABLE_MAX_FDES) {
			return refused(b, UNWIND_REFUSED_SIZE);
		} else {
			r = grow_to(&im->fdes, &im->cap_fdes, im->nr_fdes + 1, sizeof(*im->fdes), 256);
			if (!r) {
				struct cfi_fde *f = &im->fdes[im->nr_fdes++];

				f->off = (uint32_t)off;
				if (!read_fde(im, &ent.fde, f))
					f->prog = 0;
			}
		}
		if (r)
			return r;
		if (!mem_ok(im, b, 0))
			return refused(b, UNWIND_REFUSED_SIZE);
		off = next;
	}
	im->size = off;
	return 0;
}

static int fde_cmp(const void *x, const void *y)
{
	const struct cfi_fde *a = x, *b = y;

	if (!a->prog || !b->prog)          /* those not kept last */
		return !a->prog - !b->prog;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* --- what libdw sees --------------------------------------------------------------- */

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *p, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* the entry at off (read by dwarf_next_cfi: its header is there): 32- or 64-bit format */
static size_t offset_size(const struct cfi_image *im, uint32_t off)
{
	return get_le(im->data + off, 4) == 0xffffffffu ? 8 : 4;
}

/*
 * An FDE libdw must not use: its CIE pointer points at itself (no CIE
 * there: libdw skips it).  In .eh_frame the pointer is the distance back
 * from the field, in .debug_frame an offset.
 */
static void hide_fde(struct cfi_image *im, uint32_t off)
{
	size_t n = offset_size(im, off), field = off + (n == 8 ? 12 : 4);

	put_le(im->data + field, n, im->eh ? field - off : off);
}

/*
 * Scan every FDE kept and add up the budget: 0 or -E2BIG.  The ops where
 * libdw must stop are overwritten (the scan runs on the copy).
 */
static int scan_fdes(struct cfi_image *im, struct unwind_budget *b)
{
	/* libdw interns every CIE it passes; the initial state of those used */
	uint64_t libdw = im->nr_cies * LIBDW_CIE_BYTES, expr = 0, reg = 0, depth = 0;

	b->rows = 1;
	for (size_t i = 0; i < im->nr_fdes; i++) {
		struct cfi_fde *f = &im->fdes[i];
		struct cfi_cie *c = &im->cies[f->cie];
		struct cfi_cost cost;

		cfi_scan(&(struct cfi_prog){ .p = im->data + f->prog, .end = im->data + f->end,
					     .caf = c->caf, .fde_enc = c->enc, .addr_of = addr_of,
					     .ctx = im, .lo = f->lo, .hi = f->hi,
					     .max_calls = UNWIND_TABLE_MAX_FDE_ROWS }, &cost);
		if (!cfi_cost_ok(&cost))
			return refused(b, UNWIND_REFUSED_RULES);
		if (cost.fail)
			*(uint8_t *)cost.fail = CFI_BAD_OP;
		if (!c->used) {
			c->used = true;
			b->work += c->cost;
			expr += c->expr;
			libdw += LIBDW_REG_BYTES * (c->reg + 1ull);
		}
		b->work += cost.work;
		b->calls += cost.calls;
		if (cost.cost + c->cost + CFI_CALL_COST > b->call_max)
			b->call_max = cost.cost + c->cost + CFI_CALL_COST;
		b->rows += cost.calls + 1;         /* and the gap after it */
		expr += cost.expr;
		libdw += LIBDW_FDE_BYTES;
		reg = cost.reg > reg ? cost.reg : reg;
		reg = c->reg > reg ? c->reg : reg;
		depth = cost.depth > depth ? cost.depth : depth;
		if (expr > CFI_MAX_EXPR_TOTAL)
			return refused(b, UNWIND_REFUSED_RULES);
	}
	if (b->work > b->work_max || b->call_max > UNWIND_CFI_CALL_WORK_MAX)
		return refused(b, UNWIND_REFUSED_WORK);
	if (b->rows > b->rows_max)
		return refused(b, UNWIND_REFUSED_ROWS);
	/* the rows (doubling), libdw's caches, a run's remembered states */
	libdw += b->rows * 2 * sizeof(struct pm_uw_row) + expr * LIBDW_EXPR_BYTES +
		 (depth + 2) * FRAME_BYTES(reg + 1);
	return mem_ok(im, b, libdw) ? 0 : refused(b, UNWIND_REFUSED_SIZE);
}

/* keep the FDEs that overlap none kept before them, in order; hide the others */
static void keep_fdes(struct cfi_image *im)
{
	uint64_t prev_end = 0;
	size_t n = 0;

	if (im->nr_fdes)
		qsort(im->fdes, im->nr_fdes, sizeof(*im->fdes), fde_cmp);
	for (size_t i = 0; i < im->nr_fdes; i++) {
		struct cfi_fde *f = &im->fdes[i];

		if (!f->prog || (n && f->lo < prev_end)) {
			hide_fde(im, f->off);
			im->bad_fdes++;
			continue;
		}
		prev_end = f->hi;
		im->fdes[n++] = *f;
	}
	im->nr_fdes = n;
}

/* libdw on the image, its section cut where the entries were read */
static int open_libdw(struct cfi_image *im)
{
	struct image_head *h = (struct image_head *)im->img;

	h->sh[1].sh_size = im->size;
	im->elf = elf_memory((char *)im->img, im->img_len);
	if (!im->elf)
		return -ENOMEM;
	if (im->eh) {
		im->cfi = dwarf_getcfi_elf(im->elf);
	} else {
		im->dw = dwarf_begin_elf(im->elf, DWARF_C_READ, NULL);
		im->cfi = im->dw ? dwarf_getcfi(im->dw) : NULL;
	}
	return im->cfi ? 0 : -ENOENT;
}

int cfi_image__open(struct cfi_image *im, Elf *elf, struct unwind_budget *b)
{
	Elf_Data *d = NULL;
	char *ident = elf_getident(elf, NULL);
	int e;

	memset(im, 0, sizeof(*im));
	b->why = -1;
	memcpy(im->ident, ident, EI_NIDENT);
	e = section_bytes(im, elf, &d, b);
	if (e)
		return e;
	b->work_max = UNWIND_CFI_WORK_PER_BYTE * b->bytes + UNWIND_CFI_WORK_FLOOR;
	if (b->work_max > UNWIND_CFI_WORK_MAX)
		b->work_max = UNWIND_CFI_WORK_MAX;
	b->mem_max = UNWIND_CFI_MEM_PER_BYTE * b->bytes + UNWIND_CFI_MEM_FLOOR;
	b->rows_max = UNWIND_TABLE_MAX_ROWS;
	e = make_image(im, d, elf);
	if (!e)
		e = read_entries(im, b);
	if (e)
		return e;
	keep_fdes(im);
	e = scan_fdes(im, b);
	if (e)
		return e;
	return open_libdw(im);
}

int cfi_image__take(struct cfi_image *im, void **img, size_t *len)
{
	if (!im->img || !im->cfi)
		return -ENOENT;
	if (im->eh)
		dwarf_cfi_end(im->cfi);
	dwarf_end(im->dw);
	elf_end(im->elf);
	im->cfi = NULL;
	im->dw = NULL;
	im->elf = NULL;
	*img = im->img;
	*len = sizeof(struct image_head) + im->size + PAD;
	im->img = NULL;
	return 0;
}

void cfi_image__close(struct cfi_image *im)
{
	if (im->eh && im->cfi)
		dwarf_cfi_end(im->cfi);
	dwarf_end(im->dw);
	elf_end(im->elf);
	free(im->img);
	free(im->fdes);
	free(im->cies);
	memset(im, 0, sizeof(*im));
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ELF call frame information -> unwind table rows.  See unwind_table.h.
 *
 * libdw has no public iterator over FDEs, so the FDE list comes from
 * dwarf_next_cfi() (the raw entries) plus the one thing it leaves to its
 * caller: decoding an FDE's initial location and range with the pointer
 * encoding its CIE's 'R' augmentation names.  Everything else (running the
 * CFA programs, the ABI's default rules) is libdw's dwarf_cfi_addrframe().
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_table.h"
#include "grow.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16

/* DW_EH_PE_* pointer encodings (LSB: .eh_frame) */
#define PE_OMIT     0xff
#define PE_FMT_MASK 0x0f
#define PE_APP_MASK 0x70
#define PE_ABSPTR   0x00
#define PE_ULEB128  0x01
#define PE_UDATA2   0x02
#define PE_UDATA4   0x03
#define PE_UDATA8   0x04
#define PE_SLEB128  0x09
#define PE_SDATA2   0x0a
#define PE_SDATA4   0x0b
#define PE_SDATA8   0x0c
#define PE_PCREL    0x10

struct fde_range {
	uint64_t lo, hi;
};

struct builder {
	Elf_Data *data;          /* the CFI section's bytes */
	uint64_t sh_addr;        /* its address, for pc-relative encodings */
	bool eh;                 /* .eh_frame (else .debug_frame) */
	unsigned char ident[EI_NIDENT];
	Dwarf_CFI *cfi;
	struct fde_range *fdes;
	size_t nr_fdes, cap_fdes;
	struct unwind_table *t;
	size_t cap_rows;
};

/* --- pointer encodings ------------------------------------------------------- */

static bool read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return false;
		b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	*out = v;
	return true;
}

/* little-endian fixed-size value (x86-64 only) */
static bool read_fixed(const uint8_t **p, const uint8_t *end, size_t n, bool sign, uint64_t *out)
{
	uint64_t v = 0;

	if ((size_t)(end - *p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	*p += n;
	*out = v;
	return true;
}

/*
 * One encoded value at *p; field_addr is the field's own address (for
 * pc-relative values).  Only the forms compilers emit for FDEs are taken.
 */
static bool read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end,
			 uint64_t field_addr, bool with_app, uint64_t *out)
{
	static const struct { uint8_t fmt, size; bool sign; } fixed[] = {
		{ PE_ABSPTR, 8, false }, { PE_UDATA2, 2, false }, { PE_UDATA4, 4, false },
		{ PE_UDATA8, 8, false }, { PE_SDATA2, 2, true }, { PE_SDATA4, 4, true },
		{ PE_SDATA8, 8, true },
	};
	uint8_t fmt = enc & PE_FMT_MASK, app = enc & PE_APP_MASK;
	bool ok = false;
	size_t i;

	if (enc == PE_OMIT || (enc & 0x80))   /* omitted, or indirect: not for FDEs */
		return false;
	if (fmt == PE_ULEB128 || fmt == PE_SLEB128) {
		ok = read_leb(p, end, fmt == PE_SLEB128, out);
	} else {
		for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			if (fixed[i].fmt == fmt)
				ok = read_fixed(p, end, fixed[i].size, fixed[i].sign, out);
	}
	if (!ok || !with_app)
		return ok;
	if (app == PE_PCREL)
		*out += field_addr;
	else if (app != 0)
		return false;
	return true;
}

/* size of an encoded value (to skip a personality pointer), 0 if unknown */
static size_t encoded_size(uint8_t enc, const uint8_t *p, const uint8_t *end)
{
	const uint8_t *q = p;
	uint64_t v;

	if (!read_encoded(enc & 0x7f, &q, end, 0, false, &v))
		return 0;
	return (size_t)(q - p);
}

/* The FDE address encoding named by a CIE; false if it cannot be told. */
static bool cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	size_t n;

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
			n = encoded_size(p[0], p + 1, end);
			if (!n)
				return false;
			p += 1 + n;
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

/* [lo, hi) of the FDE whose encoded location starts at fde->start */
static bool fde_range(struct builder *b, const Dwarf_FDE *fde, struct fde_range *r)
{
	Dwarf_CFI_Entry cie;
	Dwarf_Off next;
	const uint8_t *p = fde->start, *end = fde->end;
	const uint8_t *base = b->data->d_buf;
	uint64_t lo, len;
	uint8_t enc;

	if (dwarf_next_cfi(b->ident, b->data, b->eh, fde->CIE_pointer, &next, &cie) != 0 ||
	    !dwarf_cfi_cie_p(&cie) || !cie_fde_encoding(&cie.cie, &enc))
		return false;
	if (p < base || p > base + b->data->d_size)
		return false;
	if (!read_encoded(enc, &p, end, b->sh_addr + (uint64_t)(p - base), true, &lo) ||
	    !read_encoded(enc, &p, end, 0, false, &len))
		return false;
	if (!len || lo > UINT32_MAX || len > UINT32_MAX - lo)
		return false;
	r->lo = lo;
	r->hi = lo + len;
	return true;
}

/* --- rules ------------------------------------------------------------------- */

/* a location "CFA + n", as libdw spells it */
static bool cfa_offset(const Dwarf_Op *ops, size_t nops, int64_t *n)
{
	if (nops < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*n = 0;
		return true;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*n = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* base register and offset of a CFA "reg + off" */
static bool cfa_breg(const Dwarf_Op *op, unsigned *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = (unsigned)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* rsp + off + ((rip & 15) >= lim) << 3: the lazy-binding .plt stub rule */
static bool is_plt(const Dwarf_Op *o, size_t n, int64_t *off, int *lim)
{
	unsigned reg;
	int64_t ripoff;

	if (n != 9 || !cfa_breg(&o[0], &reg, off) || reg != REG_RSP ||
	    !cfa_breg(&o[1], &reg, &ripoff) || reg != REG_RIP || ripoff != 0 ||
	    o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15 || o[5].atom != DW_OP_ge ||
	    o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return false;
	*lim = o[4].atom - DW_OP_lit0;
	return true;
}

static bool off_fits(int64_t off)
{
	return off >= PM_UW_OFF_MIN && off <= PM_UW_OFF_MAX;
}

/* The CFA part of a rule; arg is the rbp rule, replaced where the form needs it. */
static uint32_t cfa_rule(Dwarf_Frame *f, bool signal, int arg)
{
	Dwarf_Op *ops;
	size_t nops;
	unsigned reg;
	int64_t off;
	int lim;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		return PM_UW_RULE(PM_UW_UNSUPPORTED, 0, 0);
	if (signal) {
		if (nops == 2 && cfa_breg(&ops[0], &reg, &off) && reg == REG_RSP &&
		    off == PM_UW_SIGFRAME_RSP && ops[1].atom == DW_OP_deref)
			return PM_UW_RULE(PM_UW_SIGNAL, 0, 0);
		return PM_UW_RULE(PM_UW_UNSUPPORTED, 0, 0);
	}
	if (nops == 1 && cfa_breg(&ops[0], &reg, &off) && off_fits(off)) {
		if (reg == REG_RSP)
			return PM_UW_RULE(PM_UW_RSP, off, arg);
		if (reg == REG_RBP)
			return PM_UW_RULE(PM_UW_RBP, off, arg);
		if (reg < 16 && arg == 0)
			return PM_UW_RULE(PM_UW_REG, off, reg);
	}
	if (nops == 2 && cfa_breg(&ops[0], &reg, &off) && reg == REG_RBP && off_fits(off) &&
	    ops[1].atom == DW_OP_deref)
		return PM_UW_RULE(PM_UW_DEREF_RBP, off, arg);
	if (is_plt(ops, nops, &off, &lim) && off_fits(off) && arg == 0)
		return PM_UW_RULE(PM_UW_PLT, off, lim);
	return PM_UW_RULE(PM_UW_UNSUPPORTED, 0, 0);
}

/* The rule in force in frame state f. */
static uint32_t classify(Dwarf_Frame *f, bool signal)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t n;
	int rbp = 0;

	if (dwarf_frame_register(f, REG_RIP, mem, &ops, &nops) != 0)
		return PM_UW_RULE(PM_UW_UNSUPPORTED, 0, 0);
	if (nops == 0 && ops)                   /* undefined: the outermost frame */
		return PM_UW_RULE(PM_UW_END, 0, 0);
	if (!signal && (!cfa_offset(ops, nops, &n) || n != -8))
		return PM_UW_RULE(PM_UW_UNSUPPORTED, 0, 0);
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops) != 0)
		rbp = PM_UW_RBP_LOST;
	else if (nops == 0)                     /* same value, or undefined */
		rbp = 0;
	else if (cfa_offset(ops, nops, &n) && n < 0 && n % 8 == 0 && n / 8 > PM_UW_RBP_LOST)
		rbp = (int)(n / 8);
	else
		rbp = PM_UW_RBP_LOST;
	return cfa_rule(f, signal, rbp);
}

/* --- rows -------------------------------------------------------------------- */

static int push_row(struct builder *b, uint64_t pc, uint32_t rule)
{
	struct unwind_table *t = b->t;

	if (t->nr_rows && t->rows[t->nr_rows - 1].rule == rule)
		return 0;
	if (t->nr_rows && t->rows[t->nr_rows - 1].pc == pc) {   /* an empty row before */
		t->rows[t->nr_rows - 1].rule = rule;
		if (t->nr_rows > 1 && t->rows[t->nr_rows - 2].rule == rule)
			t->nr_rows--;
		return 0;
	}
	if (t->nr_rows == UNWIND_TABLE_MAX_ROWS)
		return -E2BIG;
	if (grow_to(&t->rows, &b->cap_rows, t->nr_rows + 1, sizeof(*t->rows), 1024))
		return -ENOMEM;
	t->rows[t->nr_rows].pc = (uint32_t)pc;
	t->rows[t->nr_rows].rule = rule;
	t->nr_rows++;
	return 0;
}

/* rows of one FDE, [r->lo, r->hi), each as libdw's interpreter sees it */
static int fde_rows(struct builder *b, const struct fde_range *r)
{
	uint64_t a = r->lo;
	size_t n = 0;
	int e;

	while (a < r->hi) {
		Dwarf_Frame *f = NULL;
		Dwarf_Addr start, end;
		bool signal = false;
		uint32_t rule;

		if (n++ == UNWIND_TABLE_MAX_FDE_ROWS ||
		    dwarf_cfi_addrframe(b->cfi, a, &f) != 0 ||
		    dwarf_frame_info(f, &start, &end, &signal) < 0 || start > a || end <= a) {
			free(f);
			b->t->bad_fdes++;
			return push_row(b, a, PM_UW_RULE(PM_UW_UNSUPPORTED, 0, 0));
		}
		rule = classify(f, signal);
		free(f);
		if (PM_UW_TYPE(rule) == PM_UW_UNSUPPORTED)
			b->t->unsupported++;
		e = push_row(b, a, rule);
		if (e)
			return e;
		a = end < r->hi ? end : r->hi;
	}
	return 0;
}

static int range_cmp(const void *x, const void *y)
{
	const struct fde_range *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int collect_fdes(struct builder *b)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry ent;
	size_t seen = 0;
	int r;

	while ((r = dwarf_next_cfi(b->ident, b->data, b->eh, off, &next, &ent)) >= 0) {
		if (r == 1 || next <= off)
			break;
		off = next;
		if (dwarf_cfi_cie_p(&ent))
			continue;
		if (++seen > UNWIND_TABLE_MAX_FDES)
			break;
		if (grow_to(&b->fdes, &b->cap_fdes, b->nr_fdes + 1, sizeof(*b->fdes), 256))
			return -ENOMEM;
		if (fde_range(b, &ent.fde, &b->fdes[b->nr_fdes]))
			b->nr_fdes++;
		else
			b->t->bad_fdes++;
	}
	if (b->nr_fdes)
		qsort(b->fdes, b->nr_fdes, sizeof(*b->fdes), range_cmp);
	return 0;
}

static int build_rows(struct builder *b)
{
	uint64_t prev_end = 0;
	size_t i;
	int e;

	for (i = 0; i < b->nr_fdes; i++) {
		const struct fde_range *r = &b->fdes[i];

		if (i && r->lo < prev_end) {            /* overlaps the one before */
			b->t->bad_fdes++;
			continue;
		}
		if (i && r->lo > prev_end) {
			e = push_row(b, prev_end, PM_UW_RULE(PM_UW_NONE, 0, 0));
			if (e)
				return e;
		}
		e = fde_rows(b, r);
		if (e)
			return e;
		b->t->nr_fdes++;
		prev_end = r->hi;
	}
	if (!b->t->nr_rows)
		return -ENOENT;
	return push_row(b, prev_end, PM_UW_RULE(PM_UW_NONE, 0, 0));
}

/* --- the CFI section ---------------------------------------------------------- */

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

static int open_cfi(struct builder *b, Elf *elf, Dwarf **dw)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, ".eh_frame", &sh);

	b->eh = scn != NULL;
	if (scn) {
		b->cfi = dwarf_getcfi_elf(elf);
		b->t->source = ".eh_frame";
	} else {
		scn = find_section(elf, ".debug_frame", &sh);
		if (!scn)
			return -ENOENT;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return -ENOENT;
		*dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		b->cfi = *dw ? dwarf_getcfi(*dw) : NULL;
		b->t->source = ".debug_frame";
	}
	b->data = elf_getdata(scn, NULL);
	if (!b->cfi || !b->data || !b->data->d_buf || !b->data->d_size)
		return -ENOENT;
	b->sh_addr = sh.sh_addr;
	return 0;
}

int unwind_table__build(Elf *elf, struct unwind_table **out)
{
	struct builder b = { 0 };
	Dwarf *dw = NULL;
	char *ident;
	int e;

	*out = NULL;
	ident = elf ? elf_getident(elf, NULL) : NULL;
	if (!ident || elf_kind(elf) != ELF_K_ELF || ident[EI_CLASS] != ELFCLASS64 ||
	    ident[EI_DATA] != ELFDATA2LSB)
		return -EINVAL;
	memcpy(b.ident, ident, EI_NIDENT);
	b.t = calloc(1, sizeof(*b.t));
	if (!b.t)
		return -ENOMEM;
	e = open_cfi(&b, elf, &dw);
	if (!e)
		e = collect_fdes(&b);
	if (!e)
		e = build_rows(&b);
	if (b.eh && b.cfi)
		dwarf_cfi_end(b.cfi);
	dwarf_end(dw);
	free(b.fdes);
	if (e) {
		unwind_table__free(b.t);
		return e;
	}
	*out = b.t;
	return 0;
}

int unwind_table__build_fd(int fd, struct unwind_table **out)
{
	Elf *elf;
	int e;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	e = unwind_table__build(elf, out);
	elf_end(elf);
	return e;
}

const struct pm_uw_row *unwind_rows_find(const struct pm_uw_row *rows, size_t nr, uint64_t pc)
{
	size_t lo = 0, hi = nr;

	if (!nr || pc < rows[0].pc || pc > UINT32_MAX)
		return NULL;
	while (hi - lo > 1) {            /* last row with row.pc <= pc */
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return PM_UW_TYPE(rows[lo].rule) == PM_UW_NONE ? NULL : &rows[lo];
}

const struct pm_uw_row *unwind_table__find(const struct unwind_table *t, uint64_t pc)
{
	return unwind_rows_find(t->rows, t->nr_rows, pc);
}

/* --- the BPF unwinder's step, in C --------------------------------------------------- */

#define STACK_SPAN (8ull << 20)   /* as bpf/unwind.bpf.c: a frame pointer further is junk */

static int stop(int why)
{
	return why + 1;
}

static int fp_step(struct unwind_regs *r, unwind_read_fn read, void *ctx)
{
	uint64_t bp, ra;

	if (!r->bp)
		return stop(PM_UW_END_OK);
	if (r->bp < r->sp || r->bp - r->sp > STACK_SPAN || (r->bp & 7))
		return stop(PM_UW_END_NO_TABLE);
	if (!read(ctx, r->bp, &bp) || !read(ctx, r->bp + 8, &ra))
		return stop(PM_UW_END_READ);
	r->sp = r->bp + 16;
	r->bp = bp;
	r->pc = ra;
	r->exact = false;
	r->regs = NULL;
	return ra ? 0 : stop(PM_UW_END_OK);
}

/* DWARF x86-64 register number (ax dx cx bx si di bp sp r8..r15) -> perf's order */
static unsigned perf_reg_of(unsigned dwarf)
{
	if (dwarf == 1 || dwarf == 3)
		return 4 - dwarf;
	return dwarf < 8 ? dwarf : dwarf + 4;
}

int unwind_step(uint32_t rule, struct unwind_regs *r, unwind_read_fn read, void *ctx)
{
	int32_t off = PM_UW_OFF(rule), arg = PM_UW_ARG(rule);
	uint64_t cfa, ra;

	switch (PM_UW_TYPE(rule)) {
	case PM_UW_NONE:
		return fp_step(r, read, ctx);
	case PM_UW_RSP:
		cfa = r->sp + off;
		break;
	case PM_UW_RBP:
		cfa = r->bp + off;
		break;
	case PM_UW_PLT:
		cfa = r->sp + off + ((r->pc & 15) >= (uint32_t)arg ? 8 : 0);
		arg = 0;
		break;
	case PM_UW_DEREF_RBP:
		if (!read(ctx, r->bp + off, &cfa))
			return stop(PM_UW_END_READ);
		break;
	case PM_UW_REG:
		if (!r->regs || arg < 0 || arg > 15)
			return stop(PM_UW_END_RULE);
		cfa = r->regs[perf_reg_of((unsigned)arg)] + off;
		arg = 0;
		break;
	case PM_UW_END:
		return stop(PM_UW_END_OK);
	case PM_UW_SIGNAL: {
		uint64_t bp, sp, pc;

		if (!read(ctx, r->sp + PM_UW_SIGFRAME_RBP, &bp) ||
		    !read(ctx, r->sp + PM_UW_SIGFRAME_RSP, &sp) ||
		    !read(ctx, r->sp + PM_UW_SIGFRAME_RIP, &pc))
			return stop(PM_UW_END_READ);
		r->bp = bp;
		r->sp = sp;
		r->pc = pc;
		r->exact = true;
		r->regs = NULL;
		return pc ? 0 : stop(PM_UW_END_OK);
	}
	default:
		return stop(PM_UW_END_RULE);
	}
	if (cfa <= r->sp)                      /* a caller's frame is always above */
		return stop(PM_UW_END_RULE);
	if (!read(ctx, cfa - 8, &ra))
		return stop(PM_UW_END_READ);
	if (arg == PM_UW_RBP_LOST)
		r->bp = 0;
	else if (arg < 0 && !read(ctx, cfa + (int64_t)arg * 8, &r->bp))
		return stop(PM_UW_END_READ);
	r->sp = cfa;
	r->pc = ra;
	r->exact = false;
	r->regs = NULL;
	return ra ? 0 : stop(PM_UW_END_OK);
}

size_t unwind_table__bytes(const struct unwind_table *t)
{
	return t ? t->nr_rows * sizeof(struct pm_uw_row) : 0;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

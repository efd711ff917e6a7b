// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ELF call frame information -> unwind table rows.  See unwind_table.h.
 *
 * libdw has no public iterator over FDEs, so the FDE list comes from
 * cfi_image.c (dwarf_next_cfi() over the raw entries, the pointer encoding
 * of each FDE's range, the budgets); running the CFA programs and the ABI's
 * default rules are libdw's dwarf_cfi_addrframe(), on cfi_image's copy.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi_image.h"
#include "grow.h"
#include "unwind_table.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16

struct builder {
	struct cfi_image im;
	struct unwind_table *t;
	size_t cap_rows;
	const atomic_bool *stop;     /* given up when true (unwind_table__build_until) */
};

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

/*
 * Rows of one FDE, [f->lo, f->hi), each as libdw's interpreter sees it: a
 * call per row, from the FDE's start (cfi_scan() counts exactly these).
 */
static int fde_rows(struct builder *b, const struct cfi_fde *f)
{
	uint64_t a = f->lo;
	size_t n = 0;
	int e;

	while (a < f->hi) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr start, end;
		bool signal = false;
		uint32_t rule;
		int r = -1;

		if (n++ < UNWIND_TABLE_MAX_FDE_ROWS) {
			b->t->calls++;
			r = dwarf_cfi_addrframe(b->im.cfi, a, &fr);
		}
		if (r != 0 || dwarf_frame_info(fr, &start, &end, &signal) < 0 || start > a || end <= a) {
			free(fr);
			b->t->bad_fdes++;
			return push_row(b, a, PM_UW_RULE(PM_UW_UNSUPPORTED, 0, 0));
		}
		rule = classify(fr, signal);
		free(fr);
		if (PM_UW_TYPE(rule) == PM_UW_UNSUPPORTED)
			b->t->unsupported++;
		e = push_row(b, a, rule);
		if (e)
			return e;
		a = end < f->hi ? end : f->hi;
	}
	return 0;
}

static int build_rows(struct builder *b)
{
	uint64_t prev_end = 0;
	int e;

	for (size_t i = 0; i < b->im.nr_fdes; i++) {
		const struct cfi_fde *f = &b->im.fdes[i];

		if (b->stop && atomic_load_explicit(b->stop, memory_order_relaxed))
			return -ECANCELED;
		if (i && f->lo > prev_end) {
			e = push_row(b, prev_end, PM_UW_RULE(PM_UW_NONE, 0, 0));
			if (e)
				return e;
		}
		e = fde_rows(b, f);
		if (e)
			return e;
		b->t->nr_fdes++;
		prev_end = f->hi;
	}
	if (!b->t->nr_rows)
		return -ENOENT;
	return push_row(b, prev_end, PM_UW_RULE(PM_UW_NONE, 0, 0));
}

/* an ELF file this builder reads: 64-bit little-endian */
static bool elf_ok(Elf *elf)
{
	char *ident = elf ? elf_getident(elf, NULL) : NULL;

	return ident && elf_kind(elf) == ELF_K_ELF && ident[EI_CLASS] == ELFCLASS64 &&
	       ident[EI_DATA] == ELFDATA2LSB;
}

int unwind_table__image(Elf *elf, void **img, size_t *len, struct unwind_budget *b)
{
	struct cfi_image im;
	int e;

	memset(b, 0, sizeof(*b));
	b->why = -1;
	if (!elf_ok(elf))
		return -EINVAL;
	e = cfi_image__open(&im, elf, b);
	if (!e)
		e = cfi_image__take(&im, img, len);
	cfi_image__close(&im);
	return e;
}

int unwind_table__build(Elf *elf, struct unwind_table **out, struct unwind_budget *bud)
{
	return unwind_table__build_until(elf, out, bud, NULL);
}

int unwind_table__build_until(Elf *elf, struct unwind_table **out, struct unwind_budget *bud,
			      const atomic_bool *stop)
{
	struct unwind_budget local;
	struct builder b = { .stop = stop };
	int e;

	*out = NULL;
	if (!bud)
		bud = &local;
	memset(bud, 0, sizeof(*bud));
	bud->why = -1;
	if (!elf_ok(elf))
		return -EINVAL;
	b.t = calloc(1, sizeof(*b.t));
	if (!b.t)
		return -ENOMEM;
	e = cfi_image__open(&b.im, elf, bud);
	if (!e) {
		b.t->source = b.im.source;
		b.t->bad_fdes = b.im.bad_fdes;
		e = build_rows(&b);
	}
	if (e == -E2BIG && bud->why < 0)      /* past the rows: the scan's bound is exact */
		bud->why = UNWIND_REFUSED_ROWS;
	cfi_image__close(&b.im);
	if (e) {
		unwind_table__free(b.t);
		return e;
	}
	*out = b.t;
	return 0;
}

int unwind_table__check_fd(int fd)
{
	Elf64_Ehdr eh;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -EINVAL;
	/* libelf allocates a few hundred bytes per section header at elf_begin() */
	if ((eh.e_shoff && (eh.e_shnum == 0 || eh.e_shstrndx == SHN_XINDEX)) ||
	    eh.e_shnum > UNWIND_ELF_MAX_SECTIONS || eh.e_phnum > UNWIND_ELF_MAX_SEGMENTS)
		return -E2BIG;
	return 0;
}

int unwind_table__build_fd(int fd, struct unwind_table **out, struct unwind_budget *b)
{
	Elf *elf;
	int e;

	*out = NULL;
	if (b) {
		memset(b, 0, sizeof(*b));
		b->why = -1;
	}
	e = unwind_table__check_fd(fd);
	if (e == -E2BIG && b)
		b->why = UNWIND_REFUSED_SIZE;
	if (e)
		return e;
	elf_version(EV_CURRENT);
	/* read, not mapped: a file truncated under a mapping would be a SIGBUS */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	e = unwind_table__build(elf, out, b);
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

/* --- the BPF unwinder's step (bpf/unwind_step.h), over a copy ---------------------- */

struct step_read {
	unwind_read_fn read;
	void *ctx;
};

/* len bytes (8 or 16) at addr through the caller's 8-byte reader; 0 when read */
static int step_read(void *ctx, void *dst, unsigned len, uint64_t addr)
{
	struct step_read *sr = ctx;
	uint64_t *w = dst;

	for (unsigned i = 0; i < len / 8; i++)
		if (!sr->read(sr->ctx, addr + 8 * i, &w[i]))
			return -EFAULT;
	return 0;
}

#define UW_STEP_READ(ctx, dst, len, addr) step_read((ctx), (dst), (len), (addr))
#define UW_STEP_BARRIER(x) ((void)0)
#include "unwind_step.h"

int unwind_step(uint32_t rule, struct unwind_regs *r, unwind_read_fn read, void *ctx)
{
	struct step_read sr = { .read = read, .ctx = ctx };
	struct pm_uw_cursor c = { .pc = r->pc, .sp = r->sp, .bp = r->bp, .exact = r->exact };
	int end = pm_uw_step(&c, rule, r->regs != NULL, (const __u64 *)r->regs, &sr);

	if (!end) {
		r->pc = c.pc;
		r->sp = c.sp;
		r->bp = c.bp;
		r->exact = c.exact;
		r->regs = NULL;
	}
	return end;
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

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bounded, linear pre-scan of call frame information, before libdw runs
 * any of it (unwind_table.c).
 *
 * The rule (issue 18) for every parser of a file a user controls: time
 * linear in its input, memory bounded by a stated multiple of it, and a
 * per-object budget past which the object is refused, counted, and its code
 * unwound by frame pointer instead.
 *
 * libdw's CFI interpreter is neither, on hostile input: each
 * dwarf_cfi_addrframe() runs the FDE's program from its start (rows x
 * program: quadratic), keeps a malloc'ed copy of the whole register state
 * per DW_CFA_remember_state (8 M of them, one 8 MB FDE: 1.9 GB), grows that
 * state to the largest register number named (one 6-byte op naming register
 * 200 M: 1.6 GB), and interns each CFA expression at ~80 bytes per byte.  So
 * this scan decodes every CFA program first, op by op as libdw 0.188's
 * execute_cfi() does, and tells:
 *   - where libdw's run of it stops with an error (and marks anything it
 *     cannot decode the way libdw would as that error: the caller writes
 *     CFI_BAD_OP there, so both agree on every op libdw executes);
 *   - the deepest remember_state nesting, the largest register number, the
 *     bytes of DWARF expressions (limits below: over one, the object is
 *     refused);
 *   - exactly how many dwarf_cfi_addrframe() calls the table builder makes
 *     for the FDE and how much program they run between them (its "work").
 */
#ifndef PERFMARK_CFI_SCAN_H
#define PERFMARK_CFI_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* per program (CIE or FDE): over any of these, the object is refused */
#define CFI_MAX_DEPTH      64          /* DW_CFA_remember_state nesting */
#define CFI_MAX_REG        255         /* a register number a rule names (x86-64 uses < 150) */
#define CFI_MAX_EXPR       1024        /* bytes of one DWARF expression */
/* per object */
#define CFI_MAX_EXPR_TOTAL (64u << 10) /* bytes of all its DWARF expressions */

/*
 * Work units: a byte of CFA program libdw interprets is one (about 1.3 ns
 * here), a DW_CFA_remember_state it executes (a malloc and a copy of the
 * register state) CFI_REMEMBER_COST more, each dwarf_cfi_addrframe() call
 * and the classification of its rules CFI_CALL_COST.
 */
#define CFI_REMEMBER_COST  32
#define CFI_CALL_COST      64

/* an opcode libdw 0.188 does not know: its run of a program stops there, an error */
#define CFI_BAD_OP         0x3f

/* DW_EH_PE_* pointer encodings (LSB: .eh_frame) */
#define PE_OMIT     0xff
#define PE_ABSPTR   0x00
#define PE_PCREL    0x10

/*
 * One encoded pointer at *p (the forms compilers emit for FDEs: absolute or
 * pc-relative; fixed size or LEB128).  field_addr is the field's own
 * address, for pc-relative values (with_app: apply it).  false: not one of
 * those, or past end.
 */
bool cfi_read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end,
		      uint64_t field_addr, bool with_app, uint64_t *out);
/* A strict LEB128 as libdw reads it (at most 10 bytes); false if it runs past end or longer. */
bool cfi_read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *out);

struct cfi_prog {
	const uint8_t *p, *end;    /* the program */
	bool cie;                  /* a CIE's initial instructions (no row may start there) */
	uint64_t caf;              /* the CIE's code alignment factor */
	uint8_t fde_enc;           /* DW_CFA_set_loc's encoding (the CIE's 'R') */
	uint64_t (*addr_of)(const void *ctx, const uint8_t *p);   /* p's address, for pc-relative */
	const void *ctx;
	uint64_t lo, hi;           /* an FDE's range */
	uint32_t max_calls;        /* the builder's cap on calls for one FDE */
};

struct cfi_cost {
	const uint8_t *fail;       /* the op where libdw's run stops with an error, or NULL */
	bool undecodable;          /* fail is an op libdw would read otherwise: overwrite it */
	uint32_t depth;            /* deepest remember_state nesting */
	uint64_t reg;              /* largest register number a rule names */
	uint64_t expr, expr_max;   /* bytes of DWARF expressions, the longest one */
	uint64_t calls;            /* dwarf_cfi_addrframe() calls for the FDE's rows */
	uint64_t work;             /* what they interpret, in work units, calls included */
	uint64_t cost;             /* work units of one run of the whole program */
};

/* Scan one program; linear in its length, no allocation. */
void cfi_scan(const struct cfi_prog *pr, struct cfi_cost *c);
/* Whether a scanned program stays under the per-program limits above. */
bool cfi_cost_ok(const struct cfi_cost *c);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unwind tables: an ELF file's call frame information (.eh_frame, else
 * .debug_frame) turned into the compact rows the BPF unwinder searches
 * (struct pm_uw_row, bpf/unwind_wire.h).  libdw reads and interprets the
 * CFI (dwarf_next_cfi to list the FDEs, dwarf_cfi_addrframe /
 * dwarf_frame_cfa / dwarf_frame_register for the rules at each address);
 * this module only classifies the rules it gets.
 *
 * The input may be hostile (any file a traced process maps): every size is
 * bounded, overlapping or out-of-range FDEs are dropped, and a rule the
 * unwinder cannot follow becomes PM_UW_UNSUPPORTED, which ends a chain.
 */
#ifndef PERFMARK_UNWIND_TABLE_H
#define PERFMARK_UNWIND_TABLE_H

#include <libelf.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_wire.h"

/*
 * Budgets against hostile input (issue 18).  The rule, for every parser of
 * a file a user controls: time linear in its input, memory bounded by a
 * stated multiple of it, and past a per-object budget the object is
 * refused, counted (unwind_stats.refused), and its code unwound by frame
 * pointer instead.  Here, for a CFI section of B bytes (cfi_image.c checks
 * all of it before libdw runs any of it, cfi_scan.h says how):
 *   - B <= UNWIND_CFI_MAX_BYTES (a compressed .debug_frame: also at most
 *     UNWIND_CFI_MAX_ZRATIO times its compressed size), at most
 *     UNWIND_TABLE_MAX_FDES FDEs;
 *   - the work libdw does to give every row, counted exactly before it
 *     runs: <= UNWIND_CFI_WORK_PER_BYTE * B + UNWIND_CFI_WORK_FLOOR units,
 *     and never over UNWIND_CFI_WORK_MAX (a unit is 0.5 to 2.5 ns here: a
 *     few seconds at most for any object); no single call over
 *     UNWIND_CFI_CALL_WORK_MAX (the --call-graph dwarf analysis pays one
 *     call per frame).  libdw runs an FDE's program from its start for each
 *     row, so real objects are not cheap: over the 2753 ELF files with CFI
 *     on this Debian 12, those with more than 64 KiB of it cost 21 units a
 *     byte (median), 83 (99th percentile), 564 at most (valgrind's tools:
 *     100 M units, 0.3 s); their costliest call, 41 K units;
 *   - rows <= UNWIND_TABLE_MAX_ROWS (and UNWIND_TABLE_MAX_FDE_ROWS per FDE,
 *     past which the FDE's rows end in PM_UW_UNSUPPORTED);
 *   - the memory to build it (the copy, libdw's caches, our arrays; an
 *     estimate from the scan, upper bounds of each) <= UNWIND_CFI_MEM_PER_BYTE
 *     * B + UNWIND_CFI_MEM_FLOOR;
 *   - every CFA program within cfi_scan.h's limits (remember_state nesting,
 *     register numbers, expression bytes).
 * The scan itself is one pass, no allocation per op; the ELF headers are
 * checked before libelf reads the rest (unwind_table__check_fd).
 */
#define UNWIND_CFI_MAX_BYTES       (32u << 20)
#define UNWIND_CFI_MAX_ZRATIO      64
#define UNWIND_CFI_WORK_PER_BYTE   1024
#define UNWIND_CFI_WORK_FLOOR      (16u << 20)
#define UNWIND_CFI_WORK_MAX        (1ull << 30)
#define UNWIND_CFI_CALL_WORK_MAX   (256u << 10)
#define UNWIND_CFI_MEM_PER_BYTE    12
#define UNWIND_CFI_MEM_FLOOR       (8u << 20)
#define UNWIND_TABLE_MAX_FDES      (1u << 20)
#define UNWIND_TABLE_MAX_FDE_ROWS  4096
#define UNWIND_TABLE_MAX_ROWS      (1u << 22)
#define UNWIND_ELF_MAX_SECTIONS    4096      /* more section headers: refused */
#define UNWIND_ELF_MAX_SEGMENTS    256       /* more program headers: refused */

/* why an object was refused (unwind_table__build returned -E2BIG) */
enum unwind_refusal {
	UNWIND_REFUSED_SIZE,       /* the CFI section, its FDEs, or the memory to build it */
	UNWIND_REFUSED_WORK,       /* what libdw would run to give every row */
	UNWIND_REFUSED_ROWS,       /* rows */
	UNWIND_REFUSED_RULES,      /* remember_state nesting, register numbers, expressions */
	UNWIND_REFUSED_NR
};

/* what the builder saw of an object, against its budget */
struct unwind_budget {
	uint64_t bytes;            /* of the CFI section */
	uint64_t work, work_max;
	uint64_t rows, rows_max;   /* rows: an upper bound, before building */
	uint64_t calls;            /* dwarf_cfi_addrframe() calls the build makes (at most) */
	uint64_t call_max;         /* work of the costliest single call (a whole program) */
	uint64_t mem, mem_max;
	int why;                   /* enum unwind_refusal if refused, else -1 */
};

struct unwind_table {
	struct pm_uw_row *rows;   /* sorted by pc; the last one is PM_UW_NONE */
	size_t nr_rows;
	/* what the builder saw */
	size_t nr_fdes;           /* FDEs turned into rows */
	size_t bad_fdes;          /* unreadable, overlapping, out of range, too long */
	size_t unsupported;       /* rows with a rule the unwinder cannot follow */
	size_t calls;             /* dwarf_cfi_addrframe() calls made */
	const char *source;       /* ".eh_frame" or ".debug_frame" */
};

/*
 * Build the table of elf.  0, -ENOENT (no CFI at all), -ENOMEM, -EINVAL
 * (not an ELF libdw can read), or -E2BIG (over a budget: b->why says which).
 * b may be NULL.
 */
int unwind_table__build(Elf *elf, struct unwind_table **out, struct unwind_budget *b);
/* The same, given up (-ECANCELED) between two FDEs once *stop is true (another thread's). */
int unwind_table__build_until(Elf *elf, struct unwind_table **out, struct unwind_budget *b,
			      const atomic_bool *stop);
/*
 * Whether the ELF file at fd has headers libelf can open within the
 * budget (64-bit little-endian, at most UNWIND_ELF_MAX_SECTIONS sections and
 * UNWIND_ELF_MAX_SEGMENTS program headers, no extended numbering):
 * 0, -EINVAL (not such an ELF file), or -E2BIG.
 */
int unwind_table__check_fd(int fd);
/* The same from a file descriptor (read, not kept; not mapped). */
int unwind_table__build_fd(int fd, struct unwind_table **out, struct unwind_budget *b);
/*
 * For another user of libdw's CFI interpreter (lib/analyze/unwind_dwarf.c
 * gives it to libdwfl): elf's CFI vetted against the same budgets, as a
 * standalone ELF image holding only what the budgets let libdw run (see
 * cfi_image.h) and elf's PT_LOAD addresses.  0 (*img malloc'ed, *len its
 * bytes), -ENOENT, -EINVAL, -E2BIG (b->why) or -ENOMEM.
 */
int unwind_table__image(Elf *elf, void **img, size_t *len, struct unwind_budget *b);
/* The row covering ELF address pc, or NULL (outside every FDE, or a gap). */
const struct pm_uw_row *unwind_table__find(const struct unwind_table *t, uint64_t pc);
/* The same over a bare array of rows (a table in a pool). */
const struct pm_uw_row *unwind_rows_find(const struct pm_uw_row *rows, size_t nr, uint64_t pc);

/*
 * One frame up by the rules bpf/unwind.bpf.c follows, in user space: for
 * stacks the BPF side copied instead (a process it had no tables for yet),
 * and for the tests.  regs: the sampled frame's 20 registers in perf's
 * order (PM_UREGS_MASK), NULL for the frames above it.
 */
struct unwind_regs {
	uint64_t pc, sp, bp;
	const uint64_t *regs;
	bool exact;             /* pc is where the frame was, not a return address */
};
/* read 8 bytes of the stack at addr; false when they are not there */
typedef bool (*unwind_read_fn)(void *ctx, uint64_t addr, uint64_t *val);
/* rule: the row's (PM_UW_NONE: the frame pointer).  0 to go on, else enum pm_uw_end + 1. */
int unwind_step(uint32_t rule, struct unwind_regs *r, unwind_read_fn read, void *ctx);
size_t unwind_table__bytes(const struct unwind_table *t);
void unwind_table__free(struct unwind_table *t);

#endif

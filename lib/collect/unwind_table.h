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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_wire.h"

/* limits against hostile input */
#define UNWIND_TABLE_MAX_FDES      (1u << 20)
#define UNWIND_TABLE_MAX_FDE_ROWS  4096
#define UNWIND_TABLE_MAX_ROWS      (1u << 22)

struct unwind_table {
	struct pm_uw_row *rows;   /* sorted by pc; the last one is PM_UW_NONE */
	size_t nr_rows;
	/* what the builder saw */
	size_t nr_fdes;           /* FDEs turned into rows */
	size_t bad_fdes;          /* unreadable, overlapping, out of range, too long */
	size_t unsupported;       /* rows with a rule the unwinder cannot follow */
	const char *source;       /* ".eh_frame" or ".debug_frame" */
};

/*
 * Build the table of elf.  0, -ENOENT (no CFI at all), -ENOMEM, or -EINVAL
 * (not an ELF libdw can read).
 */
int unwind_table__build(Elf *elf, struct unwind_table **out);
/* The same from a file descriptor (read, not kept). */
int unwind_table__build_fd(int fd, struct unwind_table **out);
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

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An ELF file's call frame information, vetted and copied for libdw (used by
 * unwind_table.c; the budgets are in unwind_table.h, the scan of each CFA
 * program in cfi_scan.h).
 *
 * libdw is never handed the file itself: it gets a private ELF image in
 * memory holding one section, a copy of the file's .eh_frame (else
 * .debug_frame) where
 *   - every FDE the builder does not keep (unreadable, overlapping another,
 *     its CIE unusable) is made one libdw skips (its CIE pointer points at
 *     itself), so libdw can only ever run the programs scanned here; the
 *     file's own .eh_frame_hdr, which could make libdw pick another FDE for
 *     an address, is not there;
 *   - the first op where libdw's run of a program must stop (one it would
 *     fail on, or one this scan cannot decode the way libdw would) is
 *     overwritten with an opcode libdw fails on, so libdw and the scan agree
 *     on every op libdw executes;
 *   - the section ends where the scan stopped;
 *   - the bytes scanned are the bytes libdw reads (the file may change under
 *     a mapping of it; the copy does not).
 */
#ifndef PERFMARK_CFI_IMAGE_H
#define PERFMARK_CFI_IMAGE_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_table.h"

struct cfi_fde {
	uint32_t off;              /* the entry, in the section */
	uint32_t prog, end;        /* its CFA program */
	uint32_t cie;              /* index of its CIE */
	uint64_t lo, hi;           /* the code it covers */
};

struct cfi_image {
	Dwarf_CFI *cfi;            /* libdw's, over the image */
	const char *source;        /* ".eh_frame" or ".debug_frame" */
	struct cfi_fde *fdes;      /* the FDEs kept: sorted by lo, not overlapping */
	size_t nr_fdes;
	size_t bad_fdes;           /* FDEs not kept */
	/* private */
	size_t cap_fdes;
	struct cfi_cie *cies;
	size_t nr_cies, cap_cies;
	uint8_t *img;              /* the ELF image libdw reads */
	size_t img_len;
	uint8_t *data;             /* its section's bytes, in img */
	size_t size;               /* up to where the entries were read */
	uint64_t addr;             /* the section's address (pc-relative encodings) */
	bool eh;
	unsigned char ident[EI_NIDENT];
	Elf *elf;
	Dwarf *dw;
};

/*
 * Vet elf's CFI against the budgets (b: what the scan saw, and why it was
 * refused) and open libdw on the copy.  0; -ENOENT: no CFI; -E2BIG: over a
 * budget; -ENOMEM.  cfi_image__close() in every case.
 */
int cfi_image__open(struct cfi_image *im, Elf *elf, struct unwind_budget *b);
/* The image (malloc'ed) out of an open im, its libdw handles closed. */
int cfi_image__take(struct cfi_image *im, void **img, size_t *len);
void cfi_image__close(struct cfi_image *im);

#endif

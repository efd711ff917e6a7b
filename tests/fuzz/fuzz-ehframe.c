// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: the unwind table builder end to end (the budgets and
 * pre-scan of lib/collect/cfi_image.c and cfi_scan.c, libdw on the vetted
 * copy, the rows of unwind_table.c) on hostile call frame information.
 * Every file a traced process maps reaches it, so its .eh_frame may be
 * anything.
 *
 * Input: { u8 flags, u64 section address (little endian), bytes }.  The
 * bytes become the .eh_frame (flags bit 0: .debug_frame) of a small ELF
 * built here, at that address, next to a .text section, so the seeds (real
 * sections, taken at their own addresses) keep their pc-relative FDEs.
 * Flags bit 1: the bytes are a whole ELF file instead (section headers,
 * compressed .debug_frame, ...).  Whatever the bytes:
 *   - building returns and never touches memory it should not (ASan); no
 *     allocation over 64 MB (-malloc_limit_mb in ehframe.options: libdw's
 *     register state grown to a hostile register number would be one);
 *   - refused (-E2BIG) says why; built, it stayed within every budget, and
 *     libdw was called at most as often as the scan counted (the work bound
 *     rests on that count);
 *   - a table it returns has rows in strictly rising order, no more than
 *     the scan's bound, ends with a PM_UW_NONE row, and has only rule types
 *     the unwinder knows;
 *   - unwind_step() on each row, from registers that point into a stack
 *     buffer, only reads through its callback and always stops or moves up;
 *   - the vetted image (unwind_table__image, what --call-graph dwarf gives
 *     libdwfl) gets the same verdict, and the table built from the image is
 *     the table: hiding FDEs and cutting programs short changed nothing
 *     libdw gives.
 */
#include <elf.h>
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "unwind_table.h"

#define MAX_CFI   (1u << 20)
#define TEXT_ADDR 0x1000ull
#define TEXT_SIZE 0x100000ull

/* .shstrtab: "", ".text", ".eh_frame" / ".debug_frame", ".shstrtab" */
static const char strtab_eh[] = "\0.text\0.eh_frame\0.shstrtab";
static const char strtab_dbg[] = "\0.text\0.debug_frame\0.shstrtab";

struct image {
	Elf64_Ehdr eh;
	Elf64_Shdr sh[4];
	char strtab[32];
	uint8_t cfi[];
};

static uint8_t buf[sizeof(struct image) + MAX_CFI];

static size_t build(const uint8_t *cfi, size_t len, uint64_t addr, bool debug)
{
	struct image *im = (struct image *)buf;
	const char *st = debug ? strtab_dbg : strtab_eh;
	size_t stlen = debug ? sizeof(strtab_dbg) : sizeof(strtab_eh);
	size_t cfi_name = 7, shstr_name = debug ? 20 : 17;

	memset(im, 0, sizeof(*im));
	memcpy(im->eh.e_ident, ELFMAG, SELFMAG);
	im->eh.e_ident[EI_CLASS] = ELFCLASS64;
	im->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	im->eh.e_ident[EI_VERSION] = EV_CURRENT;
	im->eh.e_type = ET_DYN;
	im->eh.e_machine = EM_X86_64;
	im->eh.e_version = EV_CURRENT;
	im->eh.e_ehsize = sizeof(Elf64_Ehdr);
	im->eh.e_shoff = offsetof(struct image, sh);
	im->eh.e_shentsize = sizeof(Elf64_Shdr);
	im->eh.e_shnum = 4;
	im->eh.e_shstrndx = 3;
	im->sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_NOBITS,
				  .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				  .sh_addr = TEXT_ADDR, .sh_size = TEXT_SIZE, .sh_addralign = 16 };
	im->sh[2] = (Elf64_Shdr){ .sh_name = (Elf64_Word)cfi_name, .sh_type = SHT_PROGBITS,
				  .sh_flags = debug ? 0 : SHF_ALLOC, .sh_addr = debug ? 0 : addr,
				  .sh_offset = offsetof(struct image, cfi), .sh_size = len,
				  .sh_addralign = 8 };
	im->sh[3] = (Elf64_Shdr){ .sh_name = (Elf64_Word)shstr_name, .sh_type = SHT_STRTAB,
				  .sh_offset = offsetof(struct image, strtab), .sh_size = stlen,
				  .sh_addralign = 1 };
	memcpy(im->strtab, st, stlen);
	memcpy(im->cfi, cfi, len);
	return sizeof(*im) + len;
}

/* a stack of 4 KiB the registers point into; reads outside it fail */
static uint64_t stack[512];
#define STACK_BASE 0x7ff000000000ull

static bool read_stack(void *ctx, uint64_t addr, uint64_t *val)
{
	uint64_t off = addr - STACK_BASE;

	CHECK(ctx == stack, "callback context");
	if (addr < STACK_BASE || off > sizeof(stack) - sizeof(*val) || (off & 7))
		return false;
	*val = stack[off / 8];
	return true;
}

static void check_budget(int r, const struct unwind_budget *b, const struct unwind_table *t)
{
	if (r == -E2BIG) {
		CHECK(b->why >= 0 && b->why < UNWIND_REFUSED_NR, "refused, why %d", b->why);
		return;
	}
	CHECK(b->why == -1, "not refused, why %d", b->why);
	if (!t)
		return;
	CHECK(b->bytes <= UNWIND_CFI_MAX_BYTES && b->work <= b->work_max && b->rows <= b->rows_max &&
	      b->mem <= b->mem_max, "built over a budget: work %llu/%llu rows %llu/%llu mem %llu/%llu",
	      (unsigned long long)b->work, (unsigned long long)b->work_max,
	      (unsigned long long)b->rows, (unsigned long long)b->rows_max,
	      (unsigned long long)b->mem, (unsigned long long)b->mem_max);
	CHECK(t->calls <= b->calls, "%zu libdw calls, the scan counted %llu", t->calls,
	      (unsigned long long)b->calls);
	CHECK(t->nr_rows <= b->rows, "%zu rows, the scan's bound %llu", t->nr_rows,
	      (unsigned long long)b->rows);
}

static void check_table(const struct unwind_table *t)
{
	uint64_t regs[20];

	CHECK(t->nr_rows > 0 && t->nr_rows <= UNWIND_TABLE_MAX_ROWS, "%zu rows", t->nr_rows);
	CHECK(PM_UW_TYPE(t->rows[t->nr_rows - 1].rule) == PM_UW_NONE, "last row not a gap");
	for (size_t i = 0; i < t->nr_rows; i++) {
		struct unwind_regs r;
		int end;

		CHECK(i == 0 || t->rows[i].pc > t->rows[i - 1].pc, "row %zu out of order", i);
		CHECK(PM_UW_TYPE(t->rows[i].rule) <= PM_UW_UNSUPPORTED, "row %zu type %u", i,
		      PM_UW_TYPE(t->rows[i].rule));
		for (size_t k = 0; k < 20; k++)
			regs[k] = STACK_BASE + 8 * (i + k) % sizeof(stack);
		r = (struct unwind_regs){ .pc = t->rows[i].pc, .sp = STACK_BASE + 64,
					  .bp = STACK_BASE + 128, .regs = regs, .exact = true };
		end = unwind_step(t->rows[i].rule, &r, read_stack, stack);
		CHECK(end >= 0 && end <= PM_UW_END_NR, "step returned %d", end);
		CHECK(end || r.sp > STACK_BASE + 64 || PM_UW_TYPE(t->rows[i].rule) == PM_UW_SIGNAL,
		      "row %zu: a step that went on without moving up", i);
	}
	CHECK(unwind_table__find(t, t->rows[t->nr_rows - 1].pc) == NULL, "found in the end gap");
}

/* the table of the vetted image: the same rows */
static void check_image(Elf *e, int r, const struct unwind_table *t)
{
	struct unwind_table *t2 = NULL;
	struct unwind_budget b;
	void *img = NULL;
	size_t len = 0;
	Elf *e2;
	int r2 = unwind_table__image(e, &img, &len, &b);

	CHECK((r == -E2BIG) == (r2 == -E2BIG), "build %d, image %d", r, r2);
	if (r2 || !t) {
		free(img);
		return;
	}
	e2 = elf_memory(img, len);
	CHECK(e2 != NULL, "elf_memory of the image: %s", elf_errmsg(-1));
	CHECK(unwind_table__build(e2, &t2, &b) == 0, "the image builds no table");
	CHECK(t2->nr_rows == t->nr_rows && !memcmp(t2->rows, t->rows, t->nr_rows * sizeof(*t->rows)),
	      "the image's table differs: %zu rows, %zu", t2->nr_rows, t->nr_rows);
	unwind_table__free(t2);
	elf_end(e2);
	free(img);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct unwind_table *t = NULL;
	struct unwind_budget b;
	uint64_t addr = 0;
	size_t len;
	Elf *e;
	int r;

	if (size < 9 || size - 9 > MAX_CFI)
		return 0;
	memcpy(&addr, data + 1, 8);
	for (size_t i = 0; i < sizeof(stack) / 8; i++)
		stack[i] = STACK_BASE + (i * 0x9e3779b97f4a7c15ull) % sizeof(stack);
	elf_version(EV_CURRENT);
	if (data[0] & 2) {                 /* a whole ELF file */
		len = size - 9;
		memcpy(buf, data + 9, len);
	} else {
		len = build(data + 9, size - 9, addr, data[0] & 1);
	}
	e = elf_memory((char *)buf, len);
	if (!e && (data[0] & 2))
		return 0;
	CHECK(e != NULL, "elf_memory: %s", elf_errmsg(-1));
	r = unwind_table__build(e, &t, &b);
	CHECK(r == 0 || r == -ENOENT || r == -EINVAL || r == -E2BIG || r == -ENOMEM, "build: %d", r);
	CHECK((r == 0) == (t != NULL), "table %p with %d", (void *)t, r);
	check_budget(r, &b, t);
	if (t)
		check_table(t);
	check_image(e, r, t);
	unwind_table__free(t);
	elf_end(e);
	return 0;
}

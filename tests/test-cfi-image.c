/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for the budgets of the unwind table builder against hostile
 * call frame information (lib/collect/cfi_image.c, cfi_scan.c; the limits
 * in unwind_table.h and cfi_scan.h): each limit taken exactly and refused
 * one past it, the reason told, the scan's count of libdw calls equal to
 * the calls made, an FDE the builder drops invisible to libdw, a
 * decompression bomb refused before it is inflated, ELF headers refused
 * before libelf reads them.
 */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cfi_scan.h"
#include "unwind_table.h"

/* --- a .eh_frame written here: one CIE, then FDEs with absolute 8-byte pointers ----- */

struct sec {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct sec *s, const void *b, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->p = realloc(s->p, s->cap);
		assert_non_null(s->p);
	}
	memcpy(s->p + s->len, b, n);
	s->len += n;
}

static void put_u32(struct sec *s, uint32_t v) { put(s, &v, 4); }
static void put_u64(struct sec *s, uint64_t v) { put(s, &v, 8); }

static void put_uleb(struct sec *s, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		b |= v ? 0x80 : 0;
		put(s, &b, 1);
	} while (v);
}

/* the entry started at `at`: its length, padded to 8 */
static void close_entry(struct sec *s, size_t at)
{
	static const uint8_t zero[8];
	uint32_t len;

	put(s, zero, (8 - (s->len - at) % 8) % 8);
	len = (uint32_t)(s->len - at - 4);
	memcpy(s->p + at, &len, 4);
}

/* CIE: version 1, no augmentation, code alignment 1, data -8, RA r16; CFA rsp+8, RA at CFA-8 */
static struct sec section(void)
{
	static const uint8_t body[] = { 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1 };
	struct sec s = { 0 };

	put_u32(&s, 0);
	put_u32(&s, 0);
	put(&s, body, sizeof(body));
	close_entry(&s, 0);
	return s;
}

static void fde(struct sec *s, uint64_t lo, uint64_t len, const void *prog, size_t n)
{
	size_t at = s->len;

	put_u32(s, 0);
	put_u32(s, (uint32_t)(at + 4));     /* back to the CIE at 0 */
	put_u64(s, lo);
	put_u64(s, len);
	put(s, prog, n);
	close_entry(s, at);
}

/* n copies of op (len bytes) then tail */
static uint8_t *prog_of(const void *op, size_t len, size_t n, const void *tail, size_t tlen, size_t *out)
{
	uint8_t *p = malloc(len * n + tlen + 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		memcpy(p + i * len, op, len);
	if (tlen)
		memcpy(p + len * n, tail, tlen);
	*out = len * n + tlen;
	return p;
}

/* --- an ELF image holding it ------------------------------------------------------- */

struct image {
	Elf64_Ehdr eh;
	Elf64_Shdr sh[3];
	char names[32];
};

static uint8_t *elf_of(const void *data, size_t len, const char *name, uint64_t flags, size_t *out)
{
	size_t nlen = strlen(name) + 1, hdr = (sizeof(struct image) + 7) & ~7ul;
	uint8_t *buf = calloc(1, hdr + len);
	struct image *im = (struct image *)buf;

	assert_non_null(buf);
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
	im->eh.e_shnum = 3;
	im->eh.e_shstrndx = 2;
	im->sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = flags,
				  .sh_offset = hdr, .sh_size = len, .sh_addralign = 8 };
	im->sh[2] = (Elf64_Shdr){ .sh_name = (Elf64_Word)(1 + nlen), .sh_type = SHT_STRTAB,
				  .sh_offset = offsetof(struct image, names), .sh_size = 32,
				  .sh_addralign = 1 };
	memcpy(im->names + 1, name, nlen);
	memcpy(im->names + 1 + nlen, ".shstrtab", 10);
	memcpy(buf + hdr, data, len);
	*out = hdr + len;
	return buf;
}

/* build the table of an ELF image holding sec as name; the result, t and b filled */
static int build(const struct sec *sec, const char *name, uint64_t flags, struct unwind_table **t,
		 struct unwind_budget *b)
{
	size_t len;
	uint8_t *img = elf_of(sec->p, sec->len, name, flags, &len);
	Elf *e;
	int r;

	elf_version(EV_CURRENT);
	e = elf_memory((char *)img, len);
	assert_non_null(e);
	r = unwind_table__build(e, t, b);
	elf_end(e);
	free(img);
	return r;
}

/* one FDE over [0x1000, 0x2000) with program prog: the result; refused: why */
static int one_fde(const void *prog, size_t n, int *why)
{
	struct sec s = section();
	struct unwind_table *t = NULL;
	struct unwind_budget b;
	int r;

	fde(&s, 0x1000, 0x1000, prog, n);
	put_u32(&s, 0);
	r = build(&s, ".eh_frame", SHF_ALLOC, &t, &b);
	*why = b.why;
	if (!r) {
		assert_non_null(t);
		assert_int_equal(t->calls, b.calls);
	}
	unwind_table__free(t);
	free(s.p);
	return r;
}

/* --- the per-program limits: taken exactly, refused one past ------------------------ */

static void test_remember_depth(void **state)
{
	static const uint8_t rem = DW_CFA_remember_state, adv = 0x41;
	size_t n;
	uint8_t *p;
	int why;

	p = prog_of(&rem, 1, CFI_MAX_DEPTH, &adv, 1, &n);
	assert_int_equal(one_fde(p, n, &why), 0);
	free(p);
	p = prog_of(&rem, 1, CFI_MAX_DEPTH + 1, &adv, 1, &n);
	assert_int_equal(one_fde(p, n, &why), -E2BIG);
	assert_int_equal(why, UNWIND_REFUSED_RULES);
	free(p);
}

static void test_register_number(void **state)
{
	/* DW_CFA_offset_extended REG, 1 (ULEB128 REG: two bytes for 128..16383) */
	uint8_t ok[] = { 0x05, (CFI_MAX_REG & 0x7f) | 0x80, CFI_MAX_REG >> 7, 1, 0x41 };
	uint8_t over[] = { 0x05, ((CFI_MAX_REG + 1) & 0x7f) | 0x80, (CFI_MAX_REG + 1) >> 7, 1, 0x41 };
	uint8_t huge[] = { 0x05, 0x80, 0x80, 0x80, 0x64, 1, 0x41 };   /* register 200 M */
	int why;

	assert_int_equal(one_fde(ok, sizeof(ok), &why), 0);
	assert_int_equal(one_fde(over, sizeof(over), &why), -E2BIG);
	assert_int_equal(why, UNWIND_REFUSED_RULES);
	assert_int_equal(one_fde(huge, sizeof(huge), &why), -E2BIG);
}

static void test_expression_length(void **state)
{
	static const uint8_t lit0 = 0x30, adv = 0x41;
	size_t n;
	uint8_t *p;
	int why;

	for (size_t len = CFI_MAX_EXPR; len <= CFI_MAX_EXPR + 1; len++) {
		struct sec prog = { 0 };
		uint8_t op = DW_CFA_def_cfa_expression;

		put(&prog, &op, 1);
		put_uleb(&prog, len);
		p = prog_of(&lit0, 1, len, &adv, 1, &n);
		put(&prog, p, n);
		free(p);
		assert_int_equal(one_fde(prog.p, prog.len, &why), len == CFI_MAX_EXPR ? 0 : -E2BIG);
		if (len > CFI_MAX_EXPR)
			assert_int_equal(why, UNWIND_REFUSED_RULES);
		free(prog.p);
	}
}

/* --- the per-object budgets ------------------------------------------------------------ */

/* rows of one byte each: libdw's work grows with the square of an FDE's rows */
static void test_work_budget(void **state)
{
	static const uint8_t adv = 0x41;
	struct sec s = section();
	struct unwind_table *t = NULL;
	struct unwind_budget b;
	size_t n, nr = 0;
	uint8_t *p = prog_of(&adv, 1, 4000, NULL, 0, &n);

	/* many rows in few FDEs: over the work budget long before the row budget */
	while (nr < 1000)
		fde(&s, 0x10000 + 0x1000 * nr++, 0x1000, p, n);
	put_u32(&s, 0);
	assert_int_equal(build(&s, ".eh_frame", SHF_ALLOC, &t, &b), -E2BIG);
	assert_int_equal(b.why, UNWIND_REFUSED_WORK);
	assert_true(b.work > b.work_max && b.rows <= b.rows_max);
	assert_null(t);
	free(s.p);
	/* the same rows in 64 times as many FDEs (short programs): built, within the budget */
	s = section();
	for (nr = 0; nr < 8000; nr++)
		fde(&s, 0x10000 + 0x100 * nr, 0x100, p, 62);
	put_u32(&s, 0);
	assert_int_equal(build(&s, ".eh_frame", SHF_ALLOC, &t, &b), 0);
	assert_true(b.work <= b.work_max);
	assert_int_equal(t->calls, b.calls);
	assert_int_equal(t->nr_fdes, 8000);
	unwind_table__free(t);
	free(s.p);
	free(p);
}

static void test_row_budget(void **state)
{
	static const uint8_t adv = 0x41;
	struct sec s = section();
	struct unwind_table *t = NULL;
	struct unwind_budget b;
	size_t n;
	uint8_t *p = prog_of(&adv, 1, 16, NULL, 0, &n);

	for (size_t i = 0; i < UNWIND_TABLE_MAX_ROWS / 17 + 1; i++)
		fde(&s, 0x1000 + 32 * i, 32, p, n);
	put_u32(&s, 0);
	assert_int_equal(build(&s, ".eh_frame", SHF_ALLOC, &t, &b), -E2BIG);
	assert_int_equal(b.why, UNWIND_REFUSED_ROWS);
	assert_true(b.rows > b.rows_max && b.work <= b.work_max);
	free(s.p);
	free(p);
}

/*
 * FDE B comes first in the section and overlaps A, which starts lower: the
 * builder keeps A and drops B.  libdw must not see B: given both, it takes
 * A for a duplicate of B and finds no FDE at A's start.  A's rows must be
 * A's rules.
 */
static void test_dropped_fde_hidden(void **state)
{
	/* A: advance 0x90, CFA rsp+16; B: CFA rsp+4000 at once */
	static const uint8_t a[] = { 0x02, 0x90, 0x0e, 16 }, bb[] = { 0x0e, 0xa0, 0x1f };
	struct sec s = section();
	struct unwind_table *t = NULL;
	struct unwind_budget b;
	const struct pm_uw_row *r;

	fde(&s, 0x1080, 0x180, bb, sizeof(bb));
	fde(&s, 0x1000, 0x100, a, sizeof(a));
	put_u32(&s, 0);
	assert_int_equal(build(&s, ".eh_frame", SHF_ALLOC, &t, &b), 0);
	assert_int_equal(t->nr_fdes, 1);
	assert_int_equal(t->bad_fdes, 1);
	r = unwind_table__find(t, 0x1000);
	assert_non_null(r);
	assert_int_equal(PM_UW_TYPE(r->rule), PM_UW_RSP);
	assert_int_equal(PM_UW_OFF(r->rule), 8);
	r = unwind_table__find(t, 0x10a0);
	assert_non_null(r);
	assert_int_equal(PM_UW_TYPE(r->rule), PM_UW_RSP);
	assert_int_equal(PM_UW_OFF(r->rule), 16);
	assert_null(unwind_table__find(t, 0x1100));
	unwind_table__free(t);
	free(s.p);
}

/* an op libdw would read past the program: the rows before it stand, then the FDE ends */
static void test_truncated_op(void **state)
{
	static const uint8_t p[] = { 0x41, 0x0e, 16, 0x41, 0x0e, 0x80 };   /* ULEB128 cut off */
	struct sec s = section();
	struct unwind_table *t = NULL;
	struct unwind_budget b;
	const struct pm_uw_row *r;

	fde(&s, 0x1000, 0x10, p, sizeof(p));
	/* close_entry pads with zeros (DW_CFA_nop): cut the entry right after the op */
	s.len -= (8 - (4 + 4 + 16 + sizeof(p)) % 8) % 8;
	memcpy(s.p + 0x18, &(uint32_t){ (uint32_t)(s.len - 0x18 - 4) }, 4);
	put_u32(&s, 0);
	assert_int_equal(build(&s, ".eh_frame", SHF_ALLOC, &t, &b), 0);
	r = unwind_table__find(t, 0x1001);
	assert_non_null(r);
	assert_int_equal(PM_UW_OFF(r->rule), 16);
	r = unwind_table__find(t, 0x1002);
	assert_non_null(r);
	assert_int_equal(PM_UW_TYPE(r->rule), PM_UW_UNSUPPORTED);
	assert_true(t->calls <= b.calls);
	unwind_table__free(t);
	free(s.p);
}

/* --- sizes ------------------------------------------------------------------------------- */

/* a compressed .debug_frame that says it inflates to 1 GiB, or 1000 times itself */
static void test_decompression_bomb(void **state)
{
	const uint64_t sizes[] = { 1ull << 30, 64 * 1000 };
	struct unwind_table *t = NULL;
	struct unwind_budget b;

	for (size_t i = 0; i < 2; i++) {
		Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = sizes[i], .ch_addralign = 8 };
		struct sec s = { 0 };
		uint8_t junk[40] = { 0x78, 0x9c };

		put(&s, &ch, sizeof(ch));
		put(&s, junk, sizeof(junk));
		assert_int_equal(build(&s, ".debug_frame", SHF_COMPRESSED, &t, &b), -E2BIG);
		assert_int_equal(b.why, UNWIND_REFUSED_SIZE);
		free(s.p);
	}
}

/* ELF headers that would have libelf allocate per section header, for too many */
static void test_check_fd(void **state)
{
	char path[] = "/tmp/test-cfi-image.XXXXXX";
	int fd = mkstemp(path);
	Elf64_Ehdr eh = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				       EV_CURRENT },
			  .e_shoff = 64, .e_shentsize = sizeof(Elf64_Shdr) };
	struct unwind_table *t = NULL;
	struct unwind_budget b;

	assert_true(fd >= 0);
	unlink(path);
	eh.e_shnum = UNWIND_ELF_MAX_SECTIONS;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(unwind_table__check_fd(fd), 0);
	eh.e_shnum = UNWIND_ELF_MAX_SECTIONS + 1;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(unwind_table__check_fd(fd), -E2BIG);
	assert_int_equal(unwind_table__build_fd(fd, &t, &b), -E2BIG);
	assert_int_equal(b.why, UNWIND_REFUSED_SIZE);
	eh.e_shnum = 1;
	eh.e_phnum = UNWIND_ELF_MAX_SEGMENTS + 1;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(unwind_table__check_fd(fd), -E2BIG);
	eh.e_phnum = 0;
	eh.e_shnum = 0;                         /* the count in section 0: extended numbering */
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(unwind_table__check_fd(fd), -E2BIG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(unwind_table__check_fd(fd), -EINVAL);
	close(fd);
}

/* the scan's count of libdw calls is exact on a real object (our own) */
static void test_calls_exact(void **state)
{
	struct unwind_table *t = NULL;
	struct unwind_budget b;
	FILE *f = fopen("/proc/self/exe", "r");

	assert_non_null(f);
	assert_int_equal(unwind_table__build_fd(fileno(f), &t, &b), 0);
	assert_true(t->calls > 10);
	assert_int_equal(t->calls, b.calls);
	assert_true(t->nr_rows <= b.rows && b.work <= b.work_max && b.mem <= b.mem_max);
	unwind_table__free(t);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remember_depth),
		cmocka_unit_test(test_register_number),
		cmocka_unit_test(test_expression_length),
		cmocka_unit_test(test_work_budget),
		cmocka_unit_test(test_row_budget),
		cmocka_unit_test(test_dropped_fde_hidden),
		cmocka_unit_test(test_truncated_op),
		cmocka_unit_test(test_decompression_bomb),
		cmocka_unit_test(test_check_fd),
		cmocka_unit_test(test_calls_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

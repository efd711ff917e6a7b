/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/collect/unwind_table.c.  The strongest check walks our
 * own stack with the tables, by the rules bpf/unwind.bpf.c follows, and
 * compares every return address with glibc's backtrace() (libgcc's
 * unwinder, reading the same .eh_frame): from plain calls, and from inside
 * a signal handler through the kernel's signal frame.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "unwind_table.h"

/* --- our own mappings and their tables ------------------------------------------ */

struct map {
	uint64_t start, end, bias;
	struct unwind_table *t;
};

static struct map maps[64];
static size_t nr_maps;

static uint64_t elf_bias(const char *path, uint64_t start, uint64_t pgoff)
{
	GElf_Phdr ph;
	uint64_t bias = 0;
	size_t n = 0;
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;

	if (e && !elf_getphdrnum(e, &n))
		for (size_t i = 0; i < n; i++)
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_offset & ~4095ull) <= pgoff && pgoff < ph.p_offset + ph.p_filesz)
				bias = start - (ph.p_vaddr + pgoff - ph.p_offset);
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return bias;
}

static void load_maps(void)
{
	char line[512], path[400], perms[8];
	uint64_t s, e, off;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	elf_version(EV_CURRENT);
	while (fgets(line, sizeof(line), f) && nr_maps < 64) {
		path[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %399s",
			   &s, &e, perms, &off, path) < 4 || perms[2] != 'x' || path[0] != '/')
			continue;
		int fd = open(path, O_RDONLY);

		if (fd < 0)
			continue;
		maps[nr_maps].start = s;
		maps[nr_maps].end = e;
		maps[nr_maps].bias = elf_bias(path, s, off);
		if (!unwind_table__build_fd(fd, &maps[nr_maps].t, NULL))
			nr_maps++;
		close(fd);
	}
	fclose(f);
	assert_true(nr_maps >= 2);   /* this program and libc at least */
}

static void free_maps(void)
{
	for (size_t i = 0; i < nr_maps; i++)
		unwind_table__free(maps[i].t);
	nr_maps = 0;
}

/* --- unwind_step(): the BPF unwinder's rules, over our own memory ---------------------- */

static bool peek(void *ctx, uint64_t a, uint64_t *v)
{
	*v = *(const uint64_t *)(uintptr_t)a;
	return true;
}

/*
 * One frame up with the tables: 0 at the end (or where the rules do not
 * go on, or no table covers the pc: the frame-pointer fallback is not
 * tested here), else 1 (2: out of a signal frame, the next pc is exact).
 */
static int step(struct unwind_regs *r)
{
	const struct pm_uw_row *row = NULL;

	for (size_t i = 0; i < nr_maps; i++)
		if (r->pc >= maps[i].start && r->pc < maps[i].end)
			row = unwind_table__find(maps[i].t, r->pc - maps[i].bias - (r->exact ? 0 : 1));
	if (!row || unwind_step(row->rule, r, peek, NULL))
		return 0;
	return r->exact ? 2 : 1;
}

static int bt_depth;

/*
 * Unwind from here and compare with backtrace(), which starts here too.
 * Returns the frames that matched (bt_depth: how many backtrace() saw).
 */
static __attribute__((noinline)) int compare_with_backtrace(void)
{
	void *bt[64];
	int n = backtrace(bt, 64), matched = 0, i, first;
	struct unwind_regs r = { .exact = true };

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(r.pc), "=r"(r.sp), "=r"(r.bp));
	/* backtrace()'s frame for this function (ASan's interceptor adds one before) */
	for (first = 0; first < n; first++)
		if ((uintptr_t)bt[first] >= (uintptr_t)compare_with_backtrace &&
		    (uintptr_t)bt[first] < r.pc + 256)
			break;
	bt_depth = n - first;
	/* walk the rest in step */
	for (i = first + 1; i < n; i++) {
		uint64_t prev_pc = r.pc;

		if (!step(&r))
			break;
		if (r.pc != (uint64_t)(uintptr_t)bt[i] && r.pc + 1 != (uint64_t)(uintptr_t)bt[i]) {
			print_error("frame %d: tables say %#" PRIx64 ", backtrace %p (from %#" PRIx64 ")\n",
				    i, r.pc, bt[i], prev_pc);
			break;
		}
		matched++;
	}
	return matched;
}

/* frames that stay on the stack: work is left after each call */
static volatile int sink;

static __attribute__((noinline)) int level3(int x)
{
	volatile int pad[37];
	int r;

	pad[x % 37] = x;
	r = compare_with_backtrace();
	sink = pad[x % 37];
	return r;
}

static __attribute__((noinline)) int level2(int x)
{
	char *buf = __builtin_alloca(64 + (x & 255));   /* a frame sized at run time */
	int r;

	buf[0] = (char)x;
	r = level3(x + buf[0]);
	sink = buf[0];
	return r;
}

static __attribute__((noinline)) int level1(int x)
{
	int r = level2(x * 3);

	sink = x;
	return r;
}

static void test_own_stack_matches_backtrace(void **state)
{
	void *bt[64];
	int depth = backtrace(bt, 64), matched;

	load_maps();
	matched = level1(7);
	/* compare_with_backtrace, level3, level2, level1, this test, cmocka..., main, libc */
	assert_true(bt_depth >= depth + 3);   /* ASan adds a frame to depth */
	assert_int_equal(matched, bt_depth - 1);
	free_maps();
}

static volatile int sig_matched;

static void on_signal(int sig)
{
	sig_matched = compare_with_backtrace();
}

static __attribute__((noinline)) void spin_until_signal(void)
{
	raise(SIGUSR1);
	sink = 1;
}

static void test_through_signal_frame(void **state)
{
	struct sigaction sa = { .sa_handler = on_signal };
	void *bt[64];
	int depth = backtrace(bt, 64);

	load_maps();
	sigaction(SIGUSR1, &sa, NULL);
	spin_until_signal();
	/* handler, __restore_rt, raise..., spin_until_signal, this test, ... */
	assert_true(bt_depth >= depth + 3);
	assert_int_equal(sig_matched, bt_depth - 1);
	signal(SIGUSR1, SIG_DFL);
	free_maps();
}

/* --- the table itself -------------------------------------------------------------- */

static struct unwind_table *own_table(void)
{
	struct unwind_table *t = NULL;
	int fd = open("/proc/self/exe", O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(unwind_table__build_fd(fd, &t, NULL), 0);
	close(fd);
	return t;
}

static void test_rows_sorted_and_closed(void **state)
{
	struct unwind_table *t = own_table();

	assert_true(t->nr_rows > 10);
	assert_string_equal(t->source, ".eh_frame");
	for (size_t i = 1; i < t->nr_rows; i++)
		assert_true(t->rows[i].pc > t->rows[i - 1].pc);
	assert_int_equal(PM_UW_TYPE(t->rows[t->nr_rows - 1].rule), PM_UW_NONE);
	assert_int_equal(t->bad_fdes, 0);
	unwind_table__free(t);
}

/* a function's first instruction: the return address is at the top of the stack */
static void test_function_entry_rule(void **state)
{
	struct unwind_table *t = own_table();
	uint64_t bias = (uint64_t)(uintptr_t)level1;
	const struct pm_uw_row *r;

	load_maps();
	for (size_t i = 0; i < nr_maps; i++)
		if (bias >= maps[i].start && bias < maps[i].end)
			bias = maps[i].bias;
	r = unwind_table__find(t, (uint64_t)(uintptr_t)level1 - bias);
	assert_non_null(r);
	assert_int_equal(PM_UW_TYPE(r->rule), PM_UW_RSP);
	assert_int_equal(PM_UW_OFF(r->rule), 8);
	assert_int_equal(PM_UW_ARG(r->rule), 0);
	assert_null(unwind_table__find(t, 0));
	free_maps();
	unwind_table__free(t);
}

/* libc has a signal trampoline (__restore_rt) and the rbp-based rules of its FDEs */
static void test_libc_rule_kinds(void **state)
{
	size_t kinds[16] = { 0 };
	struct map *libc = NULL;

	load_maps();
	for (size_t i = 0; i < nr_maps; i++)    /* the largest table with a signal frame */
		for (size_t j = 0; j < maps[i].t->nr_rows; j++)
			if (PM_UW_TYPE(maps[i].t->rows[j].rule) == PM_UW_SIGNAL &&
			    (!libc || maps[i].t->nr_rows > libc->t->nr_rows))
				libc = &maps[i];
	assert_non_null(libc);
	for (size_t j = 0; j < libc->t->nr_rows; j++)
		kinds[PM_UW_TYPE(libc->t->rows[j].rule)]++;
	assert_true(kinds[PM_UW_RSP] > 1000);
	assert_true(kinds[PM_UW_RBP] > 10);
	assert_true(kinds[PM_UW_END] >= 1);     /* clone3 / _start: the outermost frames */
	free_maps();
}

/* --- bad input ----------------------------------------------------------------------- */

static void *read_self(size_t *len)
{
	struct stat sb;
	int fd = open("/proc/self/exe", O_RDONLY);
	void *buf;

	assert_true(fd >= 0 && !fstat(fd, &sb));
	buf = malloc(sb.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, sb.st_size), sb.st_size);
	close(fd);
	*len = sb.st_size;
	return buf;
}

/* offset and size of a section in an ELF image */
static bool find_section(void *img, size_t len, const char *want, size_t *off, size_t *size,
			 size_t *name_off)
{
	Elf *e = elf_memory(img, len);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	bool found = false;

	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while (!found && (scn = elf_nextscn(e, scn))) {
		const char *name;

		gelf_getshdr(scn, &sh);
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want)) {
			GElf_Shdr str;

			gelf_getshdr(elf_getscn(e, shstrndx), &str);
			*off = sh.sh_offset;
			*size = sh.sh_size;
			*name_off = str.sh_offset + sh.sh_name;
			found = true;
		}
	}
	elf_end(e);
	return found;
}

static int build_mem(void *img, size_t len, struct unwind_table **t)
{
	Elf *e = elf_memory(img, len);
	int r;

	assert_non_null(e);
	r = unwind_table__build(e, t, NULL);
	elf_end(e);
	return r;
}

/* no .eh_frame (renamed away) and no .debug_frame: nothing to build, no crash */
static void test_no_cfi(void **state)
{
	size_t len, off, size, name_off;
	char *img = read_self(&len);
	struct unwind_table *t = NULL;

	assert_true(find_section(img, len, ".eh_frame", &off, &size, &name_off));
	memcpy(img + name_off, ".xx_frame", 9);
	assert_int_equal(build_mem(img, len, &t), -ENOENT);
	assert_null(t);
	assert_int_equal(unwind_table__build(NULL, &t, NULL), -EINVAL);
	free(img);
}

/*
 * Corrupted .eh_frame: flip bytes at random (a fixed seed) many times.  The
 * builder must return, and what it returns must still be a sorted table.
 */
static void test_corrupted_cfi(void **state)
{
	size_t len, off, size, name_off, built = 0;
	char *img = read_self(&len), *copy = malloc(len);
	unsigned seed = 12;

	assert_non_null(copy);
	assert_true(find_section(img, len, ".eh_frame", &off, &size, &name_off));
	for (int round = 0; round < 300; round++) {
		struct unwind_table *t = NULL;

		memcpy(copy, img, len);
		for (int k = 0; k < 1 + round % 16; k++)
			copy[off + rand_r(&seed) % size] ^= (char)(1 + rand_r(&seed) % 255);
		if (build_mem(copy, len, &t) == 0) {
			built++;
			for (size_t i = 1; i < t->nr_rows; i++)
				assert_true(t->rows[i].pc > t->rows[i - 1].pc);
			assert_int_equal(PM_UW_TYPE(t->rows[t->nr_rows - 1].rule), PM_UW_NONE);
			unwind_table__free(t);
		}
	}
	assert_true(built > 0);
	free(copy);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_sorted_and_closed),
		cmocka_unit_test(test_function_entry_rule),
		cmocka_unit_test(test_own_stack_matches_backtrace),
		cmocka_unit_test(test_through_signal_frame),
		cmocka_unit_test(test_libc_rule_kinds),
		cmocka_unit_test(test_no_cfi),
		cmocka_unit_test(test_corrupted_cfi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

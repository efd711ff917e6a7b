// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of frame names and source lines (lib/analyze/srcline.h), on
 * this test program itself (built with -g) and on libc through its debug
 * file (libc6-dbg, /usr/lib/debug/.build-id):
 *   - symbolizer__frame_name: the symbol, else DSO+0xOFFSET, else [unknown];
 *   - an address of a function gives its file and line, an address inside
 *     code inlined into it gives the inlined function first, then the call
 *     site in the function itself;
 *   - profile__load with keep_addrs on a recording of this program's
 *     addresses: a leaf and a caller's loc (the return address - 1), their
 *     file offsets, the executable's mapping marked;
 *   - a file whose build id is not the recorded one gives no lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata.h"
#include "profile.h"
#include "srcline.h"
#include "symbolize.h"

static void test_frame_name(void **state)
{
	char buf[SYMBOLIZER_FRAME_NAME_MAX];

	(void)state;
	assert_string_equal(symbolizer__frame_name("main", "/usr/bin/xz", 0x10, buf, sizeof(buf)), "main");
	assert_string_equal(symbolizer__frame_name("[unknown]", "/usr/lib/liblzma.so.5", 0x15bc9, buf,
						   sizeof(buf)), "liblzma.so.5+0x15bc9");
	assert_string_equal(symbolizer__frame_name(NULL, "[vdso]", 0x9ff, buf, sizeof(buf)), "[vdso]+0x9ff");
	assert_string_equal(symbolizer__frame_name(NULL, NULL, 0x9ff, buf, sizeof(buf)), "[unknown]");
	assert_string_equal(symbolizer__frame_name(NULL, "/a/dir/", 1, buf, sizeof(buf)), "/a/dir/+0x1");
}

/* ---- code to look up ------------------------------------------------------------ */

static volatile uintptr_t probe_ret;

enum { CAPTURE_LINE = __LINE__ + 1 };
__attribute__((noinline)) static void capture(void)
{
	probe_ret = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

enum { INNER_CALL_LINE = __LINE__ + 3 };
static inline __attribute__((always_inline)) void probe_inner(void)
{
	capture();
	__asm__ volatile("" ::: "memory");
}

enum { OUTER_CALL_LINE = __LINE__ + 3 };
__attribute__((noinline)) static void probe_outer(void)
{
	probe_inner();
	__asm__ volatile("" ::: "memory");
}

/* this program's file and the offset of addr in it, from /proc/self/maps */
static void where(uintptr_t addr, char *path, size_t size, uint64_t *off, uint64_t *start,
		  uint64_t *end, uint64_t *pgoff)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi, pg;
		char file[512] = "";

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %511s", &lo, &hi,
			   &pg, file) >= 3 && lo <= addr && addr < hi) {
			snprintf(path, size, "%s", file);
			*off = addr - lo + pg;
			if (start) {
				*start = lo;
				*end = hi;
				*pgoff = pg;
			}
			found = true;
		}
	}
	fclose(f);
	assert_true(found);
	assert_true(path[0] == '/');
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void test_own_lines(void **state)
{
	struct srcline_stats st = { 0 };
	struct srcline l[SRCLINE_MAX_INLINE + 1];
	char path[512];
	uint64_t off;
	struct srcfile *f;
	size_t n;

	(void)state;
	probe_outer();
	where(probe_ret - 1, path, sizeof(path), &off, NULL, NULL, NULL);
	f = srcfile__open(path, NULL, &st);
	assert_non_null(f);
	assert_int_equal(st.files, 1);
	/* the call to capture() inside probe_inner, inlined into probe_outer */
	n = srcfile__find(f, off, l, SRCLINE_MAX_INLINE + 1);
	assert_int_equal(n, 2);
	assert_non_null(l[0].func);
	assert_string_equal(l[0].func, "probe_inner");
	assert_int_equal(l[0].line, INNER_CALL_LINE);
	assert_string_equal(base(l[0].file), "test-srcline.c");
	assert_true(l[0].file[0] == '/');
	assert_null(l[1].func);
	assert_int_equal(l[1].line, OUTER_CALL_LINE);
	assert_string_equal(base(l[1].file), "test-srcline.c");
	/* capture() itself: no inlining, its own line */
	where((uintptr_t)capture, path, sizeof(path), &off, NULL, NULL, NULL);
	n = srcfile__find(f, off, l, SRCLINE_MAX_INLINE + 1);
	assert_int_equal(n, 1);
	assert_null(l[0].func);
	assert_in_range(l[0].line, CAPTURE_LINE, CAPTURE_LINE + 2);
	assert_int_equal(l[0].func_line, CAPTURE_LINE);
	/* an offset outside every segment */
	assert_int_equal(srcfile__find(f, 1ull << 40, l, 4), 0);
	srcfile__close(f);

	/* the recording saw another build of this file: no lines from this one */
	assert_null(srcfile__open(path, "00112233445566778899aabbccddeeff00112233", &st));
	assert_int_equal(st.stale, 1);
	/* not regular files, never opened (a FIFO's open would block) */
	char fifo[64] = "/tmp/test-srcline-XXXXXX";
	assert_non_null(mkdtemp(fifo));
	strcat(fifo, "/f");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(srcfile__open(fifo, NULL, &st));
	unlink(fifo);
	*strrchr(fifo, '/') = '\0';
	assert_null(srcfile__open(fifo, NULL, &st));
	rmdir(fifo);
	assert_null(srcfile__open("[vdso]", NULL, &st));
	assert_null(srcfile__open("/proc/kcore", NULL, &st));
}

/* libc's lines come from its debug file, found by build id */
static void test_debug_file(void **state)
{
	struct srcline_stats st = { 0 };
	struct srcline l[SRCLINE_MAX_INLINE + 1];
	char path[512];
	uint64_t off;
	struct srcfile *f;
	size_t n;

	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), *fn;

	(void)state;
	/* libc's own qsort (not a sanitizer's interceptor of it) */
	assert_non_null(libc);
	fn = dlsym(libc, "qsort");
	assert_non_null(fn);
	where((uintptr_t)fn, path, sizeof(path), &off, NULL, NULL, NULL);
	dlclose(libc);
	assert_non_null(strstr(path, "libc.so"));
	f = srcfile__open(path, NULL, &st);
	if (!f && st.no_dwarf)
		skip();         /* libc6-dbg is a test dependency (make check-deps) */
	assert_non_null(f);
	n = srcfile__find(f, off, l, SRCLINE_MAX_INLINE + 1);
	assert_true(n >= 1);
	assert_non_null(l[n - 1].file);
	assert_non_null(strstr(l[n - 1].file, "msort.c"));
	assert_true(l[n - 1].line > 0);
	srcfile__close(f);
}

/* ---- a recording of this program's addresses ------------------------------------- */

#define ST_CHAIN (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
static const uint64_t chain_ids[] = { 21 };

static size_t mmap2_rec(uint8_t *p, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
			const char *file)
{
	size_t flen = (strlen(file) + 1 + 7) & ~(size_t)7, size = 8 + 64 + flen + PERFDATA_SAMPLE_ID_SIZE;
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, (uint16_t)size };
	struct perfdata_sample_id sid = { pid, pid, 10, 0, 21 };
	uint32_t prot = 5, flags = 2;

	memset(p, 0, size);
	memcpy(p, &h, 8);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, &pid, 4);
	memcpy(p + 16, &addr, 8);
	memcpy(p + 24, &len, 8);
	memcpy(p + 32, &pgoff, 8);
	memcpy(p + 64, &prot, 4);
	memcpy(p + 68, &flags, 4);
	memcpy(p + 72, file, strlen(file));
	perfdata_encode_sample_id(p + 72 + flen, &sid);
	return size;
}

static void test_keep_addrs(void **state)
{
	struct perfdata_event ev = { 0 };
	struct perfdata_writer_opts o = { .pipe = true, .clock_ref_mono_ns = 1, .clock_ref_real_ns = 1 };
	struct perfdata_writer *w;
	struct profile_opts po = { .keep_addrs = true };
	struct profile *p = NULL;
	uint8_t rec[1024];
	char path[512], err[200];
	uint64_t off, start, end, pgoff, leaf = (uintptr_t)capture + 1, ret;
	int fd = memfd_create("srcline", 0);

	(void)state;
	probe_outer();
	ret = probe_ret;
	where(ret, path, sizeof(path), &off, &start, &end, &pgoff);
	assert_true(fd >= 0);
	o.fd = fd;
	ev.attr.type = PERF_TYPE_SOFTWARE;
	ev.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	ev.attr.sample_type = ST_CHAIN;
	ev.attr.sample_id_all = 1;
	ev.name = "cpu-clock";
	ev.ids = chain_ids;
	ev.nr_ids = 1;
	assert_int_equal(perfdata_writer__new(&w, &o, &ev, 1), 0);
	assert_int_equal(perfdata_writer__add(w, rec, mmap2_rec(rec, 77, start, end - start, pgoff, path)), 0);
	uint64_t ips[] = { (uint64_t)PERF_CONTEXT_USER, leaf, ret };
	struct perfdata_sample s = { .id = 21, .ip = leaf, .pid = 77, .tid = 77, .time = 20,
				     .period = 1, .nr_ips = 3, .ips = ips, .misc = PERF_RECORD_MISC_USER };
	assert_int_equal(perfdata_writer__add(w, rec, perfdata_encode_sample(rec, ST_CHAIN, &s)), 0);
	assert_int_equal(perfdata_writer__finish(w), 0);
	perfdata_writer__free(w);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(profile__load(&p, fd, &po, err, sizeof(err)), 0);
	close(fd);

	size_t ns, na, nl, nf, nm;
	const struct profile_sample *sv = profile__samples(p, &ns);
	const struct profile_anode *an = profile__anodes(p, &na);
	const struct profile_loc *lv = profile__locs(p, &nl);
	const struct profile_frame *fv = profile__frames(p, &nf);
	const struct profile_mapping *mv = profile__mappings(p, &nm);
	assert_int_equal(ns, 1);
	/* leaf, caller, comm, root */
	const struct profile_loc *l0 = &lv[an[sv[0].anode].loc];
	const struct profile_loc *l1 = &lv[an[an[sv[0].anode].parent].loc];
	assert_false(l0->call);
	assert_int_equal(l0->addr, leaf);
	assert_int_equal(l0->offset, leaf - start + pgoff);
	assert_true(l1->call);
	assert_int_equal(l1->addr, ret - 1);
	assert_int_equal(l1->offset, off - 1);
	assert_string_equal(profile__str(p, fv[l0->frame].name), "capture");
	assert_string_equal(profile__str(p, fv[l1->frame].name), "probe_outer");
	assert_string_equal(profile__str(p, mv[fv[l1->frame].mapping].file), path);
	assert_true(mv[fv[l1->frame].mapping].exe);
	assert_int_equal(an[an[an[sv[0].anode].parent].parent].parent, 0);
	/* without keep_addrs: no anodes */
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_name),
		cmocka_unit_test(test_own_lines),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_keep_addrs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

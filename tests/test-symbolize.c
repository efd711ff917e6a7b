/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/analyze/symbolize.c: feed it our own synthesized sideband
 * and resolve addresses of this program, of libc and of the kernel.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "symbolize.h"
#include "synth.h"
#include "test-util.h"

/* Non-static so it lands in .symtab under this name. */
__attribute__((noinline)) int symbolize_test_target(int x);
__attribute__((noinline)) int symbolize_test_target(int x)
{
	return x * 3 + 1;
}

static int feed(void *ctx, const void *rec, size_t len)
{
	(void)len;
	symbolizer__record(ctx, rec);
	return 0;
}

static struct symbolizer *new_fed(void)
{
	struct synth_opts o = { .id = 1, .time = 1, .uid_filter = UINT32_MAX };
	struct symbolizer *s = NULL;

	assert_int_equal(symbolizer__new(&s), 0);
	assert_non_null(s);
	assert_int_equal(synth_process(getpid(), &o, feed, s), 0);
	return s;
}

static void test_own_function(void **state)
{
	struct symbolizer *s = new_fed();
	uint64_t a = (uint64_t)(uintptr_t)&symbolize_test_target;

	(void)state;
	assert_string_equal(symbolizer__name(s, getpid(), a, 0), "symbolize_test_target");
	assert_string_equal(symbolizer__name(s, getpid(), a + 1, 0), "symbolize_test_target");
	assert_string_equal(symbolizer__name(s, getpid(), (uintptr_t)&new_fed, 0), "new_fed");
	/* cached: the same pointer on the second lookup */
	assert_ptr_equal(symbolizer__name(s, getpid(), a, 0), symbolizer__name(s, getpid(), a, 0));
	/* another pid knows nothing */
	assert_string_equal(symbolizer__name(s, getpid() + 100000, a, 0), "[unknown]");
	symbolizer__free(s);
}

static void test_libc(void **state)
{
	struct symbolizer *s = new_fed();
	void *p = dlsym(RTLD_DEFAULT, "getpid");
	void *q = dlsym(RTLD_DEFAULT, "qsort");
	const char *n;

	(void)state;
	assert_non_null(p);
	n = symbolizer__name(s, getpid(), (uintptr_t)p, 0);
	if (!strstr(n, "getpid"))
		fail_msg("getpid resolved to '%s'", n);
	assert_non_null(q);
	n = symbolizer__name(s, getpid(), (uintptr_t)q + 2, 0);
	if (!strstr(n, "qsort"))
		fail_msg("qsort+2 resolved to '%s'", n);
	symbolizer__free(s);
}

static void test_comm(void **state)
{
	struct symbolizer *s = new_fed();
	char comm[32] = "";
	FILE *f = fopen("/proc/self/comm", "r");

	(void)state;
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	assert_string_equal(symbolizer__comm(s, getpid()), comm);
	assert_null(symbolizer__comm(s, 0x7ffffff0));
	symbolizer__free(s);
}

static void test_kernel(void **state)
{
	struct symbolizer *s;
	uint64_t a;

	(void)state;
	if (geteuid() != 0 || !kallsyms_lookup("schedule", &a))
		skip_because("no kernel addresses in /proc/kallsyms (not root, or kptr_restrict)");
	assert_int_equal(symbolizer__new(&s), 0);
	assert_string_equal(symbolizer__name(s, 0, a, 1), "schedule");
	assert_string_equal(symbolizer__name(s, 1234, a + 4, 0), "schedule");  /* by address */
	if (kallsyms_lookup("do_sys_openat2", &a))
		assert_string_equal(symbolizer__name(s, 1, a + 1, 1), "do_sys_openat2");
	symbolizer__free(s);
}

static void test_jit_perf_map(void **state)
{
	struct symbolizer *s = new_fed();
	char path[64];
	FILE *f;
	void *anon;
	uint64_t base;

	(void)state;
	/* an anonymous executable mapping, synthesized as //anon */
	anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (anon == MAP_FAILED)
		skip_because("no anonymous executable mapping: %s", strerror(errno));
	base = (uintptr_t)anon;
	symbolizer__free(s);
	s = new_fed();

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%" PRIx64 " 40 jit_fn_one\n", base);
	fprintf(f, "%" PRIx64 " 20 jit fn two (args)\n", base + 0x100);
	fprintf(f, "garbage line\n");
	fprintf(f, "dead00000000 10 jit_far_away\n");
	fclose(f);

	assert_string_equal(symbolizer__name(s, getpid(), base + 0x10, 0), "jit_fn_one");
	assert_string_equal(symbolizer__name(s, getpid(), base + 0x105, 0), "jit fn two (args)");
	assert_string_equal(symbolizer__name(s, getpid(), base + 0x50, 0), "[unknown]");
	/* in no map at all */
	assert_string_equal(symbolizer__name(s, getpid(), 0xdead00000004ULL, 0), "jit_far_away");
	assert_string_equal(symbolizer__name(s, getpid(), 0x10, 0), "[unknown]");

	/* code announced by a marker */
	assert_int_equal(symbolizer__add_jit(s, getpid(), base + 0x200, 0x10, "marker_jit"), 0);
	assert_string_equal(symbolizer__name(s, getpid(), base + 0x208, 0), "marker_jit");
	assert_string_equal(symbolizer__name(s, getpid(), base + 0x10, 0), "jit_fn_one");

	unlink(path);
	munmap(anon, 8192);
	symbolizer__free(s);
}

struct rec_buf {
	uint8_t b[256] __attribute__((aligned(8)));
};

static const struct perf_event_header *mk_fork(struct rec_buf *r, uint32_t pid, uint32_t ppid,
					       uint32_t tid, uint32_t ptid)
{
	struct perf_event_header *h = (void *)r->b;
	uint32_t v[4] = { pid, ppid, tid, ptid };

	memset(r->b, 0, sizeof(r->b));
	h->type = PERF_RECORD_FORK;
	h->size = 8 + 16 + 8;
	memcpy(r->b + 8, v, sizeof(v));
	return h;
}

static const struct perf_event_header *mk_comm(struct rec_buf *r, uint32_t pid, uint32_t tid,
					       const char *comm, bool exec)
{
	struct perf_event_header *h = (void *)r->b;

	memset(r->b, 0, sizeof(r->b));
	h->type = PERF_RECORD_COMM;
	h->misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
	memcpy(r->b + 8, &pid, 4);
	memcpy(r->b + 12, &tid, 4);
	strcpy((char *)r->b + 16, comm);
	h->size = (uint16_t)(16 + ((strlen(comm) + 8) & ~7u));
	return h;
}

static const struct perf_event_header *mk_mmap(struct rec_buf *r, uint32_t pid, uint64_t addr,
					       uint64_t len, uint64_t pgoff, const char *name)
{
	struct perf_event_header *h = (void *)r->b;

	memset(r->b, 0, sizeof(r->b));
	h->type = PERF_RECORD_MMAP;
	h->misc = PERF_RECORD_MISC_USER;
	memcpy(r->b + 8, &pid, 4);
	memcpy(r->b + 12, &pid, 4);
	memcpy(r->b + 16, &addr, 8);
	memcpy(r->b + 24, &len, 8);
	memcpy(r->b + 32, &pgoff, 8);
	strcpy((char *)r->b + 40, name);
	h->size = (uint16_t)(40 + ((strlen(name) + 8) & ~7u));
	return h;
}

static void test_fork_exec(void **state)
{
	struct symbolizer *s = new_fed();
	struct rec_buf r;
	uint64_t a = (uint64_t)(uintptr_t)&symbolize_test_target;
	uint32_t me = (uint32_t)getpid(), child = 0x3ffff0;

	(void)state;
	/* a forked child inherits the parent's maps and comm */
	symbolizer__record(s, mk_fork(&r, child, me, child, me));
	assert_string_equal(symbolizer__name(s, child, a, 0), "symbolize_test_target");
	assert_string_equal(symbolizer__comm(s, child), symbolizer__comm(s, me));
	/* a thread of the child gets the child's comm */
	symbolizer__record(s, mk_comm(&r, child, child, "kid", false));
	symbolizer__record(s, mk_fork(&r, child, child, child + 1, child));
	assert_string_equal(symbolizer__comm(s, child + 1), "kid");
	/*
	 * exec keeps the old image's maps (a sample in the exec itself is in
	 * the old code) until the new image maps over them
	 */
	symbolizer__record(s, mk_comm(&r, child, child, "newprog", true));
	assert_string_equal(symbolizer__comm(s, child), "newprog");
	assert_string_equal(symbolizer__name(s, child, a, 0), "symbolize_test_target");
	symbolizer__record(s, mk_mmap(&r, child, a & ~0xfffULL, 4096, 0, "//anon"));
	assert_string_equal(symbolizer__name(s, child, a, 0), "[unknown]");
	/* the parent is untouched */
	assert_string_equal(symbolizer__name(s, me, a, 0), "symbolize_test_target");
	symbolizer__free(s);
}

static void test_overlap(void **state)
{
	struct symbolizer *s = new_fed();
	struct rec_buf r;
	uint64_t a = (uint64_t)(uintptr_t)&symbolize_test_target;
	uint64_t page = a & ~0xfffULL;

	(void)state;
	/* an anonymous map over the page of the function hides it ... */
	symbolizer__record(s, mk_mmap(&r, (uint32_t)getpid(), page, 4096, 0, "//anon"));
	assert_string_equal(symbolizer__name(s, getpid(), a, 0), "[unknown]");
	/* ... but not the neighbours, whose pgoff stays right */
	assert_string_equal(symbolizer__name(s, getpid(), (uintptr_t)&new_fed, 0),
			    ((uintptr_t)&new_fed & ~0xfffULL) == page ? "[unknown]" : "new_fed");
	symbolizer__free(s);
}

/* symbolizer__version: moves on every change a cache of lookups must see, and only forward */
static void test_version(void **state)
{
	struct symbolizer *s = new_fed();
	struct rec_buf r;
	uint32_t me = (uint32_t)getpid(), child = 0x3ffff0, other = 0x3fffe0;
	uint64_t v0 = symbolizer__version(s, me, 0), v, k;

	(void)state;
	assert_true(v0 > 0);    /* new_fed() mapped our files */
	k = symbolizer__version(s, me, 1);
	/* a change in another process leaves ours */
	symbolizer__record(s, mk_mmap(&r, other, 0x10000, 4096, 0, "//anon"));
	assert_true(symbolizer__version(s, me, 0) == v0);
	/* a map of ours moves it */
	symbolizer__record(s, mk_mmap(&r, me, 0x10000, 4096, 0, "//anon"));
	v = symbolizer__version(s, me, 0);
	assert_true(v > v0);
	/* JIT code announced by a marker */
	assert_int_equal(symbolizer__add_jit(s, me, 0x10000, 16, "jitted"), 0);
	assert_true(symbolizer__version(s, me, 0) > v);
	v = symbolizer__version(s, me, 0);
	/* a fork gives the child its parent's maps: its version moves too */
	assert_true(symbolizer__version(s, child, 0) < v);
	symbolizer__record(s, mk_fork(&r, child, me, child, me));
	assert_true(symbolizer__version(s, child, 0) > v);
	v = symbolizer__version(s, child, 0);
	/* exec: the maps are the new image's from now on */
	symbolizer__record(s, mk_comm(&r, child, child, "newprog", true));
	assert_true(symbolizer__version(s, child, 0) > v);
	/* a comm that is not an exec changes no map */
	v = symbolizer__version(s, child, 0);
	symbolizer__record(s, mk_comm(&r, child, child, "renamed", false));
	assert_true(symbolizer__version(s, child, 0) == v);
	/* kernel addresses have their own, which user ones follow */
	assert_true(symbolizer__version(s, me, 1) == k);
	v = symbolizer__version(s, me, 0);
	{
		struct perf_event_header *h = (void *)mk_mmap(&r, UINT32_MAX, 0xffffffff81000000ULL,
							      1u << 24, 0, "[kernel.kallsyms]_text");

		h->misc = PERF_RECORD_MISC_KERNEL;
		symbolizer__record(s, h);
	}
	assert_true(symbolizer__version(s, me, 1) > k);
	assert_true(symbolizer__version(s, me, 0) > v);
	symbolizer__free(s);
}

static void test_malformed(void **state)
{
	struct symbolizer *s;
	struct rec_buf r;
	struct perf_event_header *h = (void *)r.b;

	(void)state;
	assert_int_equal(symbolizer__new(&s), 0);
	/* a name without NUL inside the record is ignored */
	mk_mmap(&r, 5, 0x1000, 0x1000, 0, "/bin/true");
	memset(r.b + 40, 'x', sizeof(r.b) - 40);
	h->size = sizeof(r.b);
	symbolizer__record(s, h);
	h->size = 16;   /* too short */
	symbolizer__record(s, h);
	assert_string_equal(symbolizer__name(s, 5, 0x1100, 0), "[unknown]");
	symbolizer__record(s, NULL);
	assert_string_equal(symbolizer__name(NULL, 5, 0x1100, 0), "[unknown]");
	symbolizer__free(s);
	symbolizer__free(NULL);
}

/*
 * Every frame has an identity (issue 22): an address no symbol covers is
 * FILE+0xOFFSET, OFFSET the address's offset in the file (addr - map start
 * + pgoff, as perf report shows it: 0x1177 for 0x401177 in a non-PIE
 * executable), even where the segment's virtual address differs;
 * "[unknown]" only outside any file.
 */
static void test_frame_names(void **state)
{
	struct symbolizer *s;
	struct symbolizer_loc loc;
	struct rec_buf r;
	char buf[SYMBOLIZER_FRAME_NAME_MAX];

	(void)state;
	assert_int_equal(symbolizer__new(&s), 0);
	/* /usr/bin/true: its data segment is at file offset 0x7d70, vaddr 0x8d70 */
	symbolizer__record(s, mk_mmap(&r, 7, 0x500000, 0x2000, 0x7000, "/usr/bin/true"));
	symbolizer__record(s, mk_mmap(&r, 7, 0x400000, 0x1000, 0, "/usr/bin/true"));
	symbolizer__record(s, mk_mmap(&r, 7, 0x600000, 0x1000, 0x3000, "/nonexistent/libgone.so.1"));
	symbolizer__record(s, mk_mmap(&r, 7, 0x700000, 0x1000, 0, "//anon"));
	symbolizer__lookup(s, 7, 0x400010, 0, &loc);
	assert_false(symbolizer_loc__has_sym(&loc));
	assert_string_equal(symbolizer_loc__frame(&loc, buf, sizeof(buf)), "true+0x10");
	symbolizer__lookup(s, 7, 0x500d80, 0, &loc);
	assert_string_equal(symbolizer_loc__frame(&loc, buf, sizeof(buf)), "true+0x7d80");
	symbolizer__lookup(s, 7, 0x600123, 0, &loc);
	assert_string_equal(symbolizer_loc__frame(&loc, buf, sizeof(buf)), "libgone.so.1+0x3123");
	symbolizer__lookup(s, 7, 0x700010, 0, &loc);
	assert_string_equal(symbolizer_loc__frame(&loc, buf, sizeof(buf)), "[unknown]");
	symbolizer__lookup(s, 7, 0x900000, 0, &loc);
	assert_string_equal(symbolizer_loc__frame(&loc, buf, sizeof(buf)), "[unknown]");
	/* a symbol is its own name, whatever the buffer */
	symbolizer__free(s);
	s = new_fed();
	symbolizer__lookup(s, getpid(), (uintptr_t)symbolize_test_target, 0, &loc);
	assert_true(symbolizer_loc__has_sym(&loc));
	assert_string_equal(symbolizer_loc__frame(&loc, buf, 0), "symbolize_test_target");
	assert_string_equal(symbolizer_dso_short("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc.so.6");
	assert_string_equal(symbolizer_dso_short("[vdso]"), "[vdso]");
	symbolizer__free(s);
}

/*
 * Compare the PLT stubs objdump names in path (mapped at base in process
 * pid, as s knows it) with the symbolizer's names, at each stub's first
 * byte and 7 in.  objdump names an ifunc's stub "*ABS*+0xADDR@plt": there
 * only "@plt" is asked for (the symbolizer names it after the resolver).
 * Returns the stubs compared; 0 when objdump is missing.
 */
static size_t plt_vs_objdump(struct symbolizer *s, uint32_t pid, const char *path, uint64_t base)
{
	char cmd[4200], line[512];
	size_t seen = 0;
	uint64_t a;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char name[256];
		size_t len;

		/* "0000000000001040 <clock_gettime@plt>:" */
		if (sscanf(line, "%" SCNx64 " <%255[^>]>:", &a, name) != 2)
			continue;
		len = strlen(name);
		if (len < 4 || strcmp(name + len - 4, "@plt"))
			continue;   /* not a stub: PLT0 is "<first@plt-0x10>" */
		for (uint64_t off = 0; off <= 7; off += 7) {
			const char *got = symbolizer__name(s, pid, base + a + off, 0);
			size_t glen = strlen(got);

			if (!strncmp(name, "*ABS*", 5) ? glen < 5 || strcmp(got + glen - 4, "@plt") :
			    strcmp(got, name) != 0)
				fail_msg("%s: stub at 0x%" PRIx64 " + %" PRIu64 ": '%s', objdump says '%s'",
					 path, a, off, got, name);
		}
		seen++;
	}
	pclose(f);
	return seen;
}

/*
 * PLT stubs are NAME@plt at the addresses objdump gives them, not _init's:
 * this program's (unstripped, it calls libc through its PLT, fed our own
 * maps), and those of Debian's stripped xz and of libc (ifunc stubs) when
 * they are there, mapped by a synthesized record.
 */
static void test_plt(void **state)
{
	static const char *const others[] = { "/usr/bin/xz", "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	struct symbolizer *s;
	struct rec_buf r;
	char exe[4096], line[512];
	uint64_t base = 0;
	size_t seen;
	FILE *f;
	ssize_t n;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	f = fopen("/proc/self/maps", "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, off;
		char path[4096];

		if (sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64 " %*s %*d %4095s", &lo, &off, path) == 3 &&
		    !strcmp(path, exe) && off == 0) {
			base = lo;
			break;
		}
	}
	fclose(f);
	assert_true(base != 0);
	s = new_fed();
	seen = plt_vs_objdump(s, (uint32_t)getpid(), exe, base);
	symbolizer__free(s);
	if (!seen)
		skip();     /* no objdump */
	assert_true(seen >= 5);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		if (access(others[i], R_OK))
			continue;
		assert_int_equal(symbolizer__new(&s), 0);
		symbolizer__record(s, mk_mmap(&r, 9, 0x10000000, 0x1000000, 0, others[i]));
		seen = plt_vs_objdump(s, 9, others[i], 0x10000000);
		symbolizer__free(s);
		assert_true(seen >= 5);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_function),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_jit_perf_map),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_frame_names),
		cmocka_unit_test(test_plt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for the unwinder's tables under its memory cap and its
 * builder's threads (lib/collect/unwind_build.c): the cap evicting the
 * tables nobody maps, builds off the loop's thread, one build per file, a
 * stop while building, the queue's bound.  The maps and feeds are
 * unwind-fixture.h's.
 */
#include "unwind-fixture.h"

/* a cap (32 KiB: 4096 rows) that xz (1212) and liblzma (3600) do not fit in together */
static void test_cap_evicts(void **state)
{
	static const char *const files[] = {
		"/usr/bin/xz", "/lib/x86_64-linux-gnu/liblzma.so.5", "/proc/self/exe",
	};
	struct unwind_stats st;
	struct pm_uw_map v;
	struct maps m;
	struct unwinder *u;
	size_t len;
	void *p;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (access(files[i], R_OK))
			skip();
	u = setup(&m, "32k");
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			/* an image of that one file (not all this process maps: an exec's) */
			feed_task(u, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, getpid(), 0,
				  1000000 * (1 + round * 10 + i));
			p = feed_file(u, files[i], &len);
			settle(u);
			unwinder__stats(u, &st);

			assert_true(st.pool_bytes <= 32 << 10);
			assert_true(st.table_bytes <= st.pool_bytes);
			/* installed; without rows if the table alone is over the cap */
			assert_true(lpm_lookup(&m, getpid(), (uintptr_t)p + len / 2, &v));
			assert_true(v.nr_rows > 0 || st.over_cap > 0);
			feed_exit(u, getpid());
			munmap(p, len);
		}
	}
	unwinder__stats(u, &st);
	print_message("cap %" PRIu64 ": built %" PRIu64 ", evicted %" PRIu64 ", over cap %" PRIu64
		      ", pools %" PRIu64 " bytes\n", st.cap, st.built, st.evicted, st.over_cap,
		      st.pool_bytes);
	assert_true(st.evicted >= 2);
	assert_true(st.built > 3);              /* evicted tables built again */
	assert_int_equal(st.cap, 32 << 10);
	teardown(u, &m);
	unsetenv("PERFMARK_UNWIND_CAP");
}

/* a large file to build (gcc's cc1: 2.3 MiB of .eh_frame, half a second of work), or NULL */
static char big_file[PATH_MAX];

static const char *big(void)
{
	glob_t g;

	if (!big_file[0] && !glob("/usr/lib/gcc/x86_64-linux-gnu/*/cc1", 0, NULL, &g)) {
		snprintf(big_file, sizeof(big_file), "%s", g.gl_pathv[0]);
		globfree(&g);
	}
	return big_file[0] ? big_file : NULL;
}

/* our pid begins an image at t that maps path only (an exec's), installed */
static void *feed_image(struct unwinder *u, uint64_t t, const char *path, size_t *len)
{
	feed_task(u, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, getpid(), 0, t);
	return feed_file(u, path, len);
}

/*
 * A table is built off the caller's thread: until it is, the mapping is
 * not in the trie (the BPF walk copies the stacks that reach it) and a walk
 * here that reaches it waits (-EAGAIN); once built, both have the rows.
 */
/* an unwinder building big()'s table, mapped at *p (skipped without one) */
static struct unwinder *start_big_build(struct maps *m, uint8_t **p, size_t *len)
{
	struct unwind_stats st;
	struct unwinder *u;

	if (!big())
		skip();
	u = setup(m, NULL);
	*p = feed_image(u, 1000000, big(), len);
	unwinder__stats(u, &st);
	assert_int_equal(st.builds_pending, 1);
	return u;
}

static void test_built_off_thread(void **state)
{
	uint64_t regs[PM_UREGS_NR] = { 0 }, pcs[8];
	uint8_t stack[64] = { 0 };
	struct unwind_stats st;
	struct pm_uw_map v;
	struct pm_uw_pid since;
	uint32_t pid = getpid();
	struct maps m;
	struct unwinder *u;
	size_t len;
	uint8_t *p;

	(void)state;
	u = start_big_build(&m, &p, &len);
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);   /* installed ... */
	assert_false(lpm_lookup(&m, pid, (uintptr_t)p + len / 2, &v));   /* ... but for that */
	regs[8] = (uintptr_t)p + len / 2;
	regs[7] = (uintptr_t)stack;
	assert_int_equal(unwinder__walk(u, pid, 0, regs, stack, sizeof(stack), pcs, 8,
					UNWIND_WALK_FIRST), -EAGAIN);
	assert_int_equal(unwinder__walk(u, pid, 0, regs, stack, sizeof(stack), pcs, 8,
					UNWIND_WALK_AGAIN), -EAGAIN);
	settle(u);
	unwinder__stats(u, &st);
	print_message("%s: built in %" PRIu64 " ms\n", big(), st.build_max_ns / 1000000);
	assert_int_equal(st.built, 1);
	assert_true(lpm_lookup(&m, pid, (uintptr_t)p + len / 2, &v));
	assert_true(v.nr_rows > 10000);
	assert_true(unwinder__walk(u, pid, 0, regs, stack, sizeof(stack), pcs, 8, UNWIND_WALK_FIRST) >= 1);
	feed_exit(u, pid);
	munmap(p, len);
	teardown(u, &m);
}

/* a file mapped twice while its table is being built: one build, both installed with it */
static void test_one_build_per_file(void **state)
{
	const char *lib = "/lib/x86_64-linux-gnu/liblzma.so.5";
	struct unwind_stats st;
	struct pm_uw_map v1, v2;
	struct maps m;
	struct unwinder *u;
	size_t len1, len2;
	void *p1, *p2;

	(void)state;
	if (access(lib, R_OK))
		skip();
	u = setup(&m, NULL);
	p1 = feed_image(u, 1000000, lib, &len1);
	p2 = feed_file(u, lib, &len2);
	settle(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.built, 1);
	assert_true(lpm_lookup(&m, getpid(), (uintptr_t)p1, &v1));
	assert_true(lpm_lookup(&m, getpid(), (uintptr_t)p2, &v2));
	assert_true(v1.nr_rows > 0);
	assert_int_equal(v1.gen, v2.gen);
	assert_int_equal(v1.first, v2.first);
	feed_exit(u, getpid());
	munmap(p1, len1);
	munmap(p2, len2);
	teardown(u, &m);
}

/* the unwinder goes while a large table is being built: the build gives up, nothing leaks */
static void test_stop_while_building(void **state)
{
	struct unwind_stats st;
	struct maps m;
	struct unwinder *u;
	size_t len;
	uint8_t *p;

	(void)state;
	u = start_big_build(&m, &p, &len);
	teardown(u, &m);             /* joins the workers (ASan: no leak, no use after free) */
	munmap(p, len);
	/* and a new unwinder builds as before */
	u = setup(&m, NULL);
	p = feed_image(u, 1000000, big(), &len);
	settle(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.built, 1);
	feed_exit(u, getpid());
	munmap(p, len);
	teardown(u, &m);
}

/*
 * More files than the builder's queue holds, all at once: those past it are
 * put off (counted), not lost: each is built once the queue has room.
 */
static void test_queue_bound(void **state)
{
	enum { N = UNWIND_BUILD_QUEUE + 24 };
	void *p[N];
	size_t len[N], n = 0;
	struct unwind_stats st;
	struct pm_uw_map v;
	struct maps m;
	struct unwinder *u;
	glob_t g;
	bool all;

	(void)state;
	if (glob("/usr/lib/x86_64-linux-gnu/lib*.so*", 0, NULL, &g))
		skip();
	u = setup(&m, NULL);
	feed_task(u, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, getpid(), 0, 1000000);
	for (size_t i = 0; i < g.gl_pathc && n < N; i++) {
		struct stat sb;
		char magic[4];
		int fd = open(g.gl_pathv[i], O_RDONLY | O_NOFOLLOW);   /* one name a file */
		bool elf = fd >= 0 && !fstat(fd, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 65536 &&
			   pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "\177ELF", 4);

		if (fd >= 0)
			close(fd);
		if (elf)
			p[n] = feed_file(u, g.gl_pathv[i], &len[n]), n++;
	}
	globfree(&g);
	if (n < N)
		skip();
	unwinder__stats(u, &st);
	print_message("%zu files: %" PRIu64 " queued, %" PRIu64 " put off\n", n, st.builds_pending,
		      st.builds_dropped);
	assert_true(st.builds_pending <= UNWIND_BUILD_QUEUE);
	assert_true(st.builds_dropped >= N - UNWIND_BUILD_QUEUE);
	for (int round = 0; round < 20; round++) {
		settle(u);
		unwinder__tick(u);
		all = true;
		for (size_t i = 0; i < n; i++)
			all = all && lpm_lookup(&m, getpid(), (uintptr_t)p[i], &v);
		if (all)
			break;
	}
	assert_true(all);
	feed_exit(u, getpid());
	for (size_t i = 0; i < n; i++)
		munmap(p[i], len[i]);
	teardown(u, &m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_evicts),
		cmocka_unit_test(test_built_off_thread),
		cmocka_unit_test(test_one_build_per_file),
		cmocka_unit_test(test_stop_while_building),
		cmocka_unit_test(test_queue_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

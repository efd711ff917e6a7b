/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/collect/unwind.c and unwind_pool.c, with BPF maps of
 * the collector's shapes made here (root): sideband in, tables and LPM
 * entries out, the walk of a copied stack against backtrace(), the
 * recorder's own process left without tables.  Tables are built by the
 * builder's threads (unwind_build.c): a test settles (waits for them)
 * before it looks.  The cap and the builder: test-unwind-build.c.
 */
#include "unwind-fixture.h"

/* maps pinned by a perfmark of another table layout (rows one per
 * element, a shorter mapping value, a process without its image's time):
 * refused, not written wrongly */
static void test_other_layout_refused(void **state)
{
	struct maps m, old_rows, old_map, old_pids;
	struct unwinder *u = setup(&m, NULL);

	(void)state;
	assert_int_equal(make_maps_sized(&old_rows, sizeof(struct pm_uw_row), 0, 0), 0);
	assert_int_equal(unwinder__add_maps(u, old_rows.pools, old_rows.lpm, old_rows.pids), -EPROTO);
	assert_int_equal(make_maps_sized(&old_map, 0, 24, 0), 0);
	assert_int_equal(unwinder__add_maps(u, old_map.pools, old_map.lpm, old_map.pids), -EPROTO);
	assert_int_equal(make_maps_sized(&old_pids, 0, 0, 1), 0);
	assert_int_equal(unwinder__add_maps(u, old_pids.pools, old_pids.lpm, old_pids.pids), -EPROTO);
	close_maps(&old_rows);
	close_maps(&old_map);
	close_maps(&old_pids);
	teardown(u, &m);
}


/* --- tests ---------------------------------------------------------------------- */

static void test_own_process_installed(void **state)
{
	struct unwind_stats st;
	struct pm_uw_map v;
	uint32_t pid = getpid();
	struct pm_uw_pid one;
	struct maps m;
	struct unwinder *u = setup(&m, NULL);

	feed_self(u);
	unwinder__stats(u, &st);
	assert_true(st.tables >= 2);       /* this program, libc, ... */
	assert_true(st.mappings >= 2);
	assert_int_equal(st.procs, 1);
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &one), 0);
	/* the LPM trie finds this function's table; rows are there */
	assert_true(lpm_lookup(&m, pid, (uintptr_t)test_own_process_installed, &v));
	assert_true(v.nr_rows > 10);
	assert_true(v.pool < PM_UW_MAX_POOLS);
	assert_false(lpm_lookup(&m, pid + 1, (uintptr_t)test_own_process_installed, &v));
	/* the process goes: its entries at once, itself two drains later; its tables stay */
	feed_exit(u, pid);
	assert_false(lpm_lookup(&m, pid, (uintptr_t)test_own_process_installed, &v));
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 1);          /* its last samples may still come */
	unwinder__tick(u);
	unwinder__tick(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 0);
	assert_int_equal(st.mappings, 0);
	assert_true(st.tables >= 2);
	assert_false(lpm_lookup(&m, pid, (uintptr_t)test_own_process_installed, &v));
	assert_int_not_equal(bpf_map_lookup_elem(m.pids, &pid, &one), 0);
	/* and back: the same tables, nothing built again */
	feed_self(u);
	{
		struct unwind_stats again;

		unwinder__stats(u, &again);
		assert_int_equal(again.built, st.built);
	}
	teardown(u, &m);
}

static volatile int sink;

/* where our stack mapping ends */
static uint64_t stack_end(void)
{
	char line[256];
	uint64_t a, b = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]"))
			sscanf(line, "%" SCNx64 "-%" SCNx64, &a, &b);
	if (f)
		fclose(f);
	return b;
}

static uint8_t copy[UNWIND_COPY_STACK * 4];

/* the stack as it is, redzones and all (what the BPF side copies) */
static __attribute__((no_sanitize("address"), noinline)) void raw_copy(uint8_t *dst, uint64_t src,
								     size_t n)
{
	const volatile uint8_t *s = (const volatile uint8_t *)(uintptr_t)src;

	for (size_t i = 0; i < n; i++)
		dst[i] = s[i];
}

/* copy our stack as the BPF side would, walk it, compare with backtrace() */
static __attribute__((noinline)) void walk_here(struct unwinder *u, size_t *matched, int *depth)
{
	uint64_t regs[PM_UREGS_NR] = { 0 }, pcs[64], end = stack_end(), size;
	void *bt[64];
	int n = backtrace(bt, 64), first;
	size_t k;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(regs[8]), "=r"(regs[7]), "=r"(regs[6]));
	assert_true(end > regs[7]);
	size = end - regs[7] < sizeof(copy) ? end - regs[7] : sizeof(copy);
	raw_copy(copy, regs[7], size);
	k = (size_t)unwinder__walk(u, getpid(), 0, regs, copy, size, pcs, 64, UNWIND_WALK_NOW);
	for (first = 0; first < n; first++)     /* ASan's interceptor may add a frame */
		if ((uintptr_t)bt[first] >= (uintptr_t)walk_here && (uintptr_t)bt[first] < regs[8] + 256)
			break;
	*depth = n - first;
	*matched = 0;
	for (size_t i = 1; i < k && first + i < (size_t)n; i++) {
		if (pcs[i] != (uintptr_t)bt[first + i])
			break;
		(*matched)++;
	}
	sink++;
}

static __attribute__((noinline)) void deeper(struct unwinder *u, size_t *matched, int *depth)
{
	walk_here(u, matched, depth);
	sink++;
}

static void test_walk_copied_stack(void **state)
{
	struct unwind_stats st;
	size_t matched;
	int depth;
	struct maps m;
	struct unwinder *u = setup(&m, NULL);

	feed_self(u);
	deeper(u, &matched, &depth);
	print_message("walked %zu of %d frames as backtrace() has them\n", matched + 1, depth);
	assert_true(depth >= 6);
	assert_int_equal(matched, (size_t)depth - 1);
	/* the process has exited by the time its last copies are read: still walked */
	feed_exit(u, getpid());
	deeper(u, &matched, &depth);
	assert_int_equal(matched, (size_t)depth - 1);
	unwinder__stats(u, &st);
	assert_int_equal(st.walks, 2);
	assert_int_equal(st.walk_ends[PM_UW_END_OK], 2);   /* down to _start's undefined rip */
	teardown(u, &m);
}


struct timed_feed {
	struct unwinder *u;
	int how;
};

static int feed_how(void *ctx, const void *rec, size_t len)
{
	const struct timed_feed *f = ctx;

	(void)len;
	unwinder__sideband(f->u, rec, f->how);
	return 0;
}

/* our mappings as MMAP2 records of time t (pid: ours) */
static void feed_self_at(struct unwinder *u, uint64_t t, int how)
{
	struct synth_opts so = { .id = 1, .time = t, .uid_filter = (uint32_t)-1 };
	struct timed_feed f = { u, how };

	assert_int_equal(synth_process(getpid(), &so, feed_how, &f), 0);
}

/*
 * A shell forks (FORK on one CPU), the child execs (COMM exec) and maps its
 * image (MMAP2s, on another CPU): read CPU by CPU, the image comes first.
 * Each record applies by its time, so the image is what gets installed,
 * and for the exec: the BPF side is told since when.  Older records read
 * later (the same FORK from a second collector, the EXIT of the pid's last
 * owner, a mapping of the image before) change nothing.
 */
static void test_records_in_any_order(void **state)
{
	struct pm_uw_map v, again;
	struct pm_uw_pid since;
	uint32_t pid = getpid(), shell = 1;
	uint64_t t0 = 1000000;
	struct unwind_stats st;
	struct maps m;
	struct unwinder *u = setup(&m, NULL);

	(void)state;
	feed_mmap_at(u, shell, 0x10000, "/usr/bin/true", t0 + 10);   /* the shell's image */
	feed_self_at(u, t0 + 300, UNWIND_LIST);          /* the child's image, read first */
	feed_task(u, PERF_RECORD_FORK, 0, pid, shell, t0 + 100);
	feed_task(u, PERF_RECORD_EXIT, 0, pid, shell, t0 + 50);   /* the pid's last owner */
	feed_task(u, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, pid, 0, t0 + 200);
	feed_task(u, PERF_RECORD_FORK, 0, pid, shell, t0 + 100);  /* again: a second collector */
	unwinder__sample(u, pid, false);
	settle(u);
	assert_true(lpm_lookup(&m, pid, (uintptr_t)test_records_in_any_order, &v));
	assert_true(v.nr_rows > 10);
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);
	assert_int_equal(since.since, t0 + 200);          /* the exec's COMM */
	assert_false(lpm_lookup(&m, pid, 0x10000, &v));   /* the shell's, gone with the exec */
	assert_true(lpm_lookup(&m, pid, (uintptr_t)test_records_in_any_order, &v));
	/* a mapping of the image before the exec, over our code, read last: ignored */
	feed_mmap_at(u, pid, (uintptr_t)test_records_in_any_order & ~4095ull, "/usr/bin/true",
		     t0 + 150);
	assert_true(lpm_lookup(&m, pid, (uintptr_t)test_records_in_any_order, &again));
	assert_int_equal(again.gen, v.gen);
	assert_int_equal(again.start, v.start);
	/* the exec, then our image again, at later times: what a new exec looks like */
	feed_task(u, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, pid, 0, t0 + 1000);
	assert_int_not_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);   /* copied till in */
	feed_self_at(u, t0 + 900, UNWIND_LIST);           /* of the image before: ignored */
	assert_int_not_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);
	assert_false(lpm_lookup(&m, pid, (uintptr_t)test_records_in_any_order, &v));
	feed_self_at(u, t0 + 1100, UNWIND_LIST);
	assert_true(lpm_lookup(&m, pid, (uintptr_t)test_records_in_any_order, &v));
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);
	assert_int_equal(since.since, t0 + 1000);
	/* it exits; a mapping read after its EXIT is of the dead process: no new entry */
	feed_task(u, PERF_RECORD_EXIT, 0, pid, shell, t0 + 2000);
	feed_task(u, PERF_RECORD_EXIT, 0, shell, 0, t0 + 2000);
	feed_self_at(u, t0 + 1500, UNWIND_LIST);
	assert_false(lpm_lookup(&m, pid, (uintptr_t)test_records_in_any_order, &v));
	unwinder__tick(u);
	unwinder__tick(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.procs, 0);
	teardown(u, &m);
}

/*
 * Sideband records were lost: an installed process whose stacks the BPF
 * side still copies (a mapping it never got) has /proc read again, once.
 */
static void test_lost_sideband(void **state)
{
	struct { struct perf_event_header h; uint64_t id, lost; uint8_t sid[32]; } lost = {
		{ PERF_RECORD_LOST, 0, sizeof(lost) }, 1, 10, { 0 } };
	uint64_t t0 = 1000000;
	struct pm_uw_pid since;
	uint32_t pid = getpid();
	struct maps m;
	struct unwinder *u = setup(&m, NULL);

	(void)state;
	feed_task(u, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, pid, 0, t0);
	feed_self_at(u, t0 + 100, UNWIND_INSTALL);
	settle(u);
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);
	assert_int_equal(since.since, t0);
	unwinder__sample(u, pid, true);                  /* copied, nothing lost: as it was */
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);
	assert_int_equal(since.since, t0);
	unwinder__sideband(u, &lost.h, UNWIND_LIST);
	unwinder__sample(u, pid, false);                 /* walked by the BPF side: fine */
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);
	assert_int_equal(since.since, t0);
	unwinder__sample(u, pid, true);
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &since), 0);
	assert_true(since.since > t0 + 100);             /* /proc's, read now */
	assert_true(lpm_lookup(&m, pid, (uintptr_t)test_lost_sideband, &(struct pm_uw_map){ 0 }));
	teardown(u, &m);
}

/*
 * The recorder's own process (a perfmarkd started by a target's shell is a
 * target): installed without tables, nothing built for it, so its files
 * never hold the cap.  A child it forks before its exec (perfmark record's
 * command) is a process like any other: its inherited mappings get tables.
 */
static void test_recorder_without_tables(void **state)
{
	struct unwind_stats st;
	struct pm_uw_map v;
	struct pm_uw_pid one;
	uint32_t pid = getpid();
	struct maps m;
	struct unwinder *u = setup(&m, NULL);
	int hold[2];
	pid_t child;

	(void)state;
	unwinder__set_self(u, pid);
	feed_self(u);
	unwinder__sample(u, pid, true);
	settle(u);
	unwinder__stats(u, &st);
	assert_int_equal(st.built, 0);
	assert_int_equal(st.tables, 0);
	assert_int_equal(st.builds_pending, 0);
	/* installed: the BPF walk takes its frame pointers, no stack is copied */
	assert_int_equal(bpf_map_lookup_elem(m.pids, &pid, &one), 0);
	assert_true(lpm_lookup(&m, pid, (uintptr_t)test_recorder_without_tables, &v));
	assert_int_equal(v.nr_rows, 0);

	/* it lives until we close our end, or exit (a failed assertion leaves no process) */
	assert_int_equal(pipe(hold), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		char c;

		close(hold[1]);
		_exit(read(hold[0], &c, 1) < 0);
	}
	close(hold[0]);
	feed_task(u, PERF_RECORD_FORK, 0, (uint32_t)child, pid, mono_ns());
	unwinder__sample(u, (uint32_t)child, false);
	settle(u);
	assert_true(lpm_lookup(&m, (uint32_t)child, (uintptr_t)test_recorder_without_tables, &v));
	assert_true(v.nr_rows > 10);
	close(hold[1]);
	waitpid(child, NULL, 0);
	feed_exit(u, (uint32_t)child);
	feed_exit(u, pid);
	teardown(u, &m);
}

/*
 * A file mapping with no table (no ELF here) is installed all the same, with
 * no rows: the BPF walk takes its frame pointers there rather than copy the
 * stack for a mapping it would think not read yet.  Anonymous code is not.
 */
static void test_mapping_without_table(void **state)
{
	struct pm_uw_map v;
	struct maps m;
	struct unwinder *u = setup(&m, NULL);
	uint32_t pid = getpid();
	size_t len;
	void *p;

	(void)state;
	feed_self(u);
	p = feed_file(u, "/etc/os-release", &len);
	settle(u);
	assert_true(lpm_lookup(&m, pid, (uintptr_t)p, &v));
	assert_int_equal(v.nr_rows, 0);
	assert_int_equal(v.start, (uintptr_t)p);
	feed_mmap_at(u, pid, 0x20000, "//anon", 0);
	assert_false(lpm_lookup(&m, pid, 0x20000, &v));
	feed_exit(u, pid);
	assert_false(lpm_lookup(&m, pid, (uintptr_t)p, &v));
	munmap(p, len);
	teardown(u, &m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_layout_refused),
		cmocka_unit_test(test_own_process_installed),
		cmocka_unit_test(test_walk_copied_stack),
		cmocka_unit_test(test_records_in_any_order),
		cmocka_unit_test(test_mapping_without_table),
		cmocka_unit_test(test_recorder_without_tables),
		cmocka_unit_test(test_lost_sideband),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/collect/unwind.c and unwind_pool.c, with BPF maps of
 * the collector's shapes made here (root): sideband in, tables and LPM
 * entries out, the walk of a copied stack against backtrace(), and the
 * memory cap evicting the tables nobody maps.  Tables are built by the
 * builder's threads (unwind_build.c): a test settles (waits for them)
 * before it looks.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <glob.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>

#include "synth.h"
#include "unwind.h"
#include "unwind_wire.h"

struct maps {
	int pools, lpm, pids;
};

/* the unwinder's maps, their values of the sizes given (ours: 0, 0, 0) */
static int make_maps_sized(struct maps *m, uint32_t row_size, uint32_t map_size, uint32_t pid_size)
{
	LIBBPF_OPTS(bpf_map_create_opts, io, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, lo, .map_flags = BPF_F_NO_PREALLOC);
	int proto = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_proto", 4,
				   row_size ? row_size : sizeof(struct pm_uw_block), 1, &io);
	LIBBPF_OPTS(bpf_map_create_opts, oo, .inner_map_fd = proto);

	if (proto < 0)
		return -errno;
	m->pools = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "t_pools", 4, 4, PM_UW_MAX_POOLS, &oo);
	m->lpm = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_maps", sizeof(struct pm_uw_map_key),
				map_size ? map_size : sizeof(struct pm_uw_map), 1 << 16, &lo);
	m->pids = bpf_map_create(BPF_MAP_TYPE_HASH, "t_pids", 4,
				 pid_size ? pid_size : sizeof(struct pm_uw_pid), 1024, NULL);
	close(proto);
	return m->pools < 0 || m->lpm < 0 || m->pids < 0 ? -EINVAL : 0;
}

static int make_maps(struct maps *m)
{
	return make_maps_sized(m, 0, 0, 0);
}

static void close_maps(struct maps *m)
{
	close(m->pools);
	close(m->lpm);
	close(m->pids);
}

static struct unwinder *setup(struct maps *m, const char *cap)
{
	struct unwinder *u = NULL;

	if (geteuid() != 0)
		skip();
	if (cap)
		setenv("PERFMARK_UNWIND_CAP", cap, 1);
	else
		unsetenv("PERFMARK_UNWIND_CAP");
	assert_int_equal(make_maps(m), 0);
	assert_int_equal(unwinder__get(&u), 0);
	assert_int_equal(unwinder__add_maps(u, m->pools, m->lpm, m->pids), 0);
	return u;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* every build queued has ended, and what it built is installed (60 s at most) */
static void settle(struct unwinder *u)
{
	uint64_t deadline = mono_ns() + 60000000000ull;
	struct unwind_stats st;

	for (;;) {
		unwinder__collect(u);
		unwinder__stats(u, &st);
		if (!st.builds_pending)
			return;
		assert_true(mono_ns() < deadline);
		unwinder__wait(u, mono_ns() + 100000000ull);
	}
}

static void teardown(struct unwinder *u, struct maps *m)
{
	unwinder__remove_maps(u, m->pools);
	unwinder__put(u);
	close_maps(m);
}

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

static int feed(void *ctx, const void *rec, size_t len)
{
	unwinder__sideband(ctx, rec, UNWIND_INSTALL);
	return 0;
}

/* our own mappings, as the sideband of a recording that samples us */
static void feed_self(struct unwinder *u)
{
	struct synth_opts so = { .id = 1, .uid_filter = (uint32_t)-1 };

	assert_int_equal(synth_process(getpid(), &so, feed, u), 0);
	settle(u);
}

static void feed_exit(struct unwinder *u, uint32_t pid)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		uint8_t sid[32];
	} e = { { PERF_RECORD_EXIT, 0, sizeof(e) }, pid, 1, pid, 1, 0, { 0 } };

	unwinder__sideband(u, &e.h, UNWIND_LIST);
}

/* an MMAP2 of path (mapped here, read and execute) for our pid */
static void *feed_file(struct unwinder *u, const char *path, size_t *len)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, gen;
		uint32_t prot, flags;
		char name[PATH_MAX + 40];
	} r = { 0 };
	struct stat sb;
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0 && !fstat(fd, &sb));
	p = mmap(NULL, sb.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	*len = sb.st_size;
	r.h.type = PERF_RECORD_MMAP2;
	r.h.size = sizeof(r);
	r.pid = r.tid = getpid();
	r.addr = (uintptr_t)p;
	r.len = (sb.st_size + 4095) & ~4095ull;
	r.maj = major(sb.st_dev);
	r.min = minor(sb.st_dev);
	r.ino = sb.st_ino;
	r.prot = PROT_READ | PROT_EXEC;
	r.flags = MAP_PRIVATE;
	snprintf(r.name, sizeof(r.name), "%s", path);
	unwinder__sideband(u, &r.h, UNWIND_INSTALL);
	return p;
}

static bool lpm_lookup(const struct maps *m, uint32_t pid, uint64_t addr, struct pm_uw_map *v)
{
	struct pm_uw_map_key k = { 96, htobe32(pid), htobe64(addr) };

	return !bpf_map_lookup_elem(m->lpm, &k, v);
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

/* a sideband record with its sample_id trailer's time */
struct timed_rec {
	struct perf_event_header h;
	uint32_t b[4];
	char comm[16];
	uint32_t sid_pid, sid_tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

static void feed_task(struct unwinder *u, uint32_t type, uint16_t misc, uint32_t pid, uint32_t ppid,
		      uint64_t time)
{
	struct timed_rec r = { .h = { type, misc, sizeof(r) }, .time = time };

	if (type == PERF_RECORD_COMM) {          /* pid, tid, comm */
		r.b[0] = r.b[1] = pid;
		memcpy(&r.b[2], "prog", 5);
	} else {                                 /* FORK, EXIT: pid, ppid, tid, ptid */
		r.b[0] = r.b[2] = pid;
		r.b[1] = r.b[3] = ppid;
	}
	unwinder__sideband(u, &r.h, UNWIND_LIST);
}

/* an executable MMAP2 of one page of path at addr for pid, at time t */
static void feed_mmap_at(struct unwinder *u, uint32_t pid, uint64_t addr, const char *path, uint64_t t)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, gen;
		uint32_t prot, flags;
		char name[64];
		uint32_t sid_pid, sid_tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t id;
	} r = { .h = { PERF_RECORD_MMAP2, 0, sizeof(r) }, .pid = pid, .tid = pid, .addr = addr,
		.len = 4096, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .time = t };

	snprintf(r.name, sizeof(r.name), "%s", path);
	unwinder__sideband(u, &r.h, UNWIND_LIST);
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
	if (!big())
		skip();
	u = setup(&m, NULL);
	p = feed_image(u, 1000000, big(), &len);
	unwinder__stats(u, &st);
	assert_int_equal(st.builds_pending, 1);
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
	void *p;

	(void)state;
	if (!big())
		skip();
	u = setup(&m, NULL);
	p = feed_image(u, 1000000, big(), &len);
	unwinder__stats(u, &st);
	assert_int_equal(st.builds_pending, 1);
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
		cmocka_unit_test(test_other_layout_refused),
		cmocka_unit_test(test_own_process_installed),
		cmocka_unit_test(test_walk_copied_stack),
		cmocka_unit_test(test_records_in_any_order),
		cmocka_unit_test(test_mapping_without_table),
		cmocka_unit_test(test_recorder_without_tables),
		cmocka_unit_test(test_lost_sideband),
		cmocka_unit_test(test_cap_evicts),
		cmocka_unit_test(test_built_off_thread),
		cmocka_unit_test(test_one_build_per_file),
		cmocka_unit_test(test_stop_while_building),
		cmocka_unit_test(test_queue_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What test-unwind.c and test-unwind-build.c share: BPF maps of the
 * collector's shapes made here (root), an unwinder on them, sideband fed to
 * it (this process, other tasks, mappings at a time), and settle(), which
 * waits for the builder's threads.
 */
#ifndef PERFMARK_TEST_UNWIND_FIXTURE_H
#define PERFMARK_TEST_UNWIND_FIXTURE_H

/* each test file uses some of them */
#define FIXTURE static __attribute__((unused))

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
FIXTURE int make_maps_sized(struct maps *m, uint32_t row_size, uint32_t map_size, uint32_t pid_size)
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

FIXTURE int make_maps(struct maps *m)
{
	return make_maps_sized(m, 0, 0, 0);
}

FIXTURE void close_maps(struct maps *m)
{
	close(m->pools);
	close(m->lpm);
	close(m->pids);
}

FIXTURE struct unwinder *setup(struct maps *m, const char *cap)
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

FIXTURE uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* every build queued has ended, and what it built is installed (60 s at most) */
FIXTURE void settle(struct unwinder *u)
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

FIXTURE void teardown(struct unwinder *u, struct maps *m)
{
	unwinder__remove_maps(u, m->pools);
	unwinder__put(u);
	close_maps(m);
}

FIXTURE int feed(void *ctx, const void *rec, size_t len)
{
	unwinder__sideband(ctx, rec, UNWIND_INSTALL);
	return 0;
}

/* our own mappings, as the sideband of a recording that samples us */
FIXTURE void feed_self(struct unwinder *u)
{
	struct synth_opts so = { .id = 1, .uid_filter = (uint32_t)-1 };

	assert_int_equal(synth_process(getpid(), &so, feed, u), 0);
	settle(u);
}

FIXTURE void feed_exit(struct unwinder *u, uint32_t pid)
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
FIXTURE void *feed_file(struct unwinder *u, const char *path, size_t *len)
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

FIXTURE bool lpm_lookup(const struct maps *m, uint32_t pid, uint64_t addr, struct pm_uw_map *v)
{
	struct pm_uw_map_key k = { 96, htobe32(pid), htobe64(addr) };

	return !bpf_map_lookup_elem(m->lpm, &k, v);
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

FIXTURE void feed_task(struct unwinder *u, uint32_t type, uint16_t misc, uint32_t pid, uint32_t ppid,
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
FIXTURE void feed_mmap_at(struct unwinder *u, uint32_t pid, uint64_t addr, const char *path, uint64_t t)
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

#endif

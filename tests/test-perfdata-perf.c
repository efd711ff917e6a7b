/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf.data files of lib/write/perfdata.c as stock perf reads them:
 * test_stock_perf writes f, f.pipe, f.zst, f.zst.pipe (a cpu-clock event
 * with samples inside keep_hot_function() of this binary, COMM + MMAP2 of
 * the binary, and a perfmark:printf event with string payloads), f.killed*
 * (what a SIGKILLed recorder leaves) and the unit-test streams, and checks
 * what stock `perf script` prints of each.  PERFDATA_KEEP=/path/f keeps
 * them for manual checks; otherwise they go to a temporary directory.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "test-util.h"
#include <linux/perf_event.h>

#include "perfdata-stream.h"
#include "perfdata.h"

__attribute__((noinline)) int keep_hot_function(int x);
__attribute__((noinline)) int keep_hot_function(int x)
{
	volatile unsigned v = (unsigned)x;   /* wraps, as meant: UBSan runs this */

	for (int i = 0; i < 100; i++)
		v = v * 3 + (unsigned)i;
	return (int)(v & 0x7fffffff);
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void keep_one(const char *path, bool pipe, int level, bool finish)
{
	struct perfdata_event ev[2];
	char *argv[] = { "perfmark", "record", "-g", "--", "test-perfdata" };
	struct perfdata_writer_opts o = {
		.pipe = pipe, .zstd_level = level, .argc = 5, .argv = argv,
	};
	struct perfdata_writer *w;
	uint8_t rec[8192];
	char exe[4096], line[4096 + 256];
	uint64_t start = 0, end = 0, pgoff = 0, t;
	uint32_t pid = (uint32_t)getpid();
	FILE *maps;
	ssize_t n;
	int fd;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	maps = fopen("/proc/self/maps", "r");
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long s, e, off;
		char perms[8], file[4096];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, file) == 5 &&
		    !strcmp(file, exe) && perms[2] == 'x') {
			start = s;
			end = e;
			pgoff = off;
		}
	}
	fclose(maps);
	assert_true(start && (uintptr_t)keep_hot_function >= start &&
		    (uintptr_t)keep_hot_function < end);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	o.fd = fd;
	o.clock_ref_mono_ns = now_ns(CLOCK_MONOTONIC);
	o.clock_ref_real_ns = now_ns(CLOCK_REALTIME);
	make_events(ev);
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	t = now_ns(CLOCK_MONOTONIC);
	assert_int_equal(perfdata_writer__add(w, rec, make_comm(rec, pid, "test-perfdata", t)), 0);
	assert_int_equal(perfdata_writer__add(w, rec, make_mmap2(rec, pid, start, end - start,
								 pgoff, exe, t + 1)), 0);
	for (int i = 0; i < 1000; i++) {
		struct perfdata_sample s = {
			.pid = pid, .tid = pid, .time = t + 1000 + (uint64_t)i * 250000,
			.cpu = (uint32_t)(i % 2), .misc = PERF_RECORD_MISC_USER,
		};
		uint64_t ips[2] = { PERF_CONTEXT_USER, 0 };
		char msg[64];

		if (i % 10 == 9) {
			snprintf(msg, sizeof(msg), "hello from perfmark %d", i);
			s.id = ID_PRINTF;
			s.period = 1;
			s.raw = msg;
			s.raw_size = (uint32_t)strlen(msg) + 1;
			n = (ssize_t)perfdata_encode_sample(rec, ST_PRINTF, &s);
		} else {
			s.id = (i % 2) ? ID_CLOCK1 : ID_CLOCK0;
			s.ip = (uintptr_t)keep_hot_function + (uint64_t)(i % 16);
			ips[1] = s.ip;
			s.ips = ips;
			s.nr_ips = 2;
			s.period = 250000;
			n = (ssize_t)perfdata_encode_sample(rec, ST_CLOCK, &s);
		}
		assert_int_equal(perfdata_writer__add(w, rec, (size_t)n), 0);
		if (i % 100 == 99)
			assert_int_equal(perfdata_writer__round(w), 0);
	}
	/* !finish: what a SIGKILLed recorder leaves (no last round, no features) */
	if (finish)
		assert_int_equal(perfdata_writer__finish(w), 0);
	perfdata_writer__free(w);
	close(fd);
}

/* Does stock perf script print needle for this file?  -1: no perf here. */
static int perf_script_has(const char *path, bool pipe, const char *needle)
{
	char cmd[4500], line[1024];
	bool found = false;
	FILE *f;

	if (system("perf version >/dev/null 2>&1"))
		return -1;
	if (pipe)
		snprintf(cmd, sizeof(cmd), "perf script -i - -F ip,sym,event 2>/dev/null <'%s'", path);
	else
		snprintf(cmd, sizeof(cmd), "perf script -i '%s' -F ip,sym,event 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			found = true;
	pclose(f);
	return found;
}

static void check_stock_perf(const char *path, bool pipe)
{
	int r = perf_script_has(path, pipe, "keep_hot_function");

	if (r < 0)
		skip_because("stock perf (linux-perf) is not installed");
	if (!r)
		fail_msg("perf script shows no keep_hot_function sample in %s", path);
}

static void test_stock_perf(void **state)
{
	const char *keep = getenv("PERFDATA_KEEP");
	char dir[] = "/tmp/perfmark-test-perfdata.XXXXXX", base[4096], p[4200];
	static const struct { const char *suffix; bool pipe; int level; bool finish; } files[] = {
		{ "", false, 0, true }, { ".pipe", true, 0, true }, { ".zst", false, 1, true },
		{ ".zst.pipe", true, 3, true }, { ".killed", false, 0, false },
		{ ".killed.zst", false, 1, false },
	};

	(void)state;
	if (keep && *keep) {
		snprintf(base, sizeof(base), "%s", keep);
	} else {
		assert_non_null(mkdtemp(dir));
		snprintf(base, sizeof(base), "%s/f", dir);
	}
	keep_hot_function(1);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", base, files[i].suffix);
		keep_one(p, files[i].pipe, files[i].level, files[i].finish);
		check_stock_perf(p, files[i].pipe);
	}
	/* the unit-test stream: 4 KiB payloads, rounds > one compressed chunk */
	for (int m = 0; m < 4; m++) {
		struct stream st;
		int fd;

		snprintf(p, sizeof(p), "%s.stream%s%s", base, (m & 2) ? ".zst" : "",
			 (m & 1) ? ".pipe" : "");
		fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		round_every = 100000;
		write_stream(fd, m & 1, (m & 2) ? 3 : 0, &st);
		round_every = ROUND_EVERY;
		free(st.buf);
		close(fd);
	}
	if (!(keep && *keep)) {
		snprintf(p, sizeof(p), "rm -rf '%s'", dir);
		assert_int_equal(system(p), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stock_perf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

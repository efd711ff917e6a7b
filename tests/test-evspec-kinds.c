/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for the kinds of events -e takes beyond the named ones
 * (lib/collect/evspec*.c): modifiers, raw and PMU events encoded from a
 * PMU's format files, tracepoints and their globs from tracefs.  The PMU
 * and tracefs trees are made here (this machine has no CPU PMU, and a
 * test's tracepoints should not depend on the running kernel's); the real
 * ones are exercised by tests/t-stat*.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "evspec.h"
#include "evspec_int.h"

static char root[64];
static struct evspec ev[EVSPEC_MAX];

static void put(const char *rel, const char *text)
{
	char path[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void tracepoint(const char *sys, const char *name, const char *id)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "tracing/events/%s/enable", sys);
	put(rel, "0\n");
	snprintf(rel, sizeof(rel), "tracing/events/%s/%s/id", sys, name);
	put(rel, id);
	snprintf(rel, sizeof(rel), "tracing/events/%s/%s/enable", sys, name);
	put(rel, "0\n");
	snprintf(rel, sizeof(rel), "tracing/events/%s/%s/format", sys, name);
	put(rel, "name: x\n");
}

static int setup(void **state)
{
	char dir[600];
	int i;

	snprintf(root, sizeof(root), "/tmp/pm-evspec-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	/* an x86 core PMU's formats, a split field, and a named event */
	put("pmu/cpu/type", "4\n");
	put("pmu/cpu/format/event", "config:0-7\n");
	put("pmu/cpu/format/umask", "config:8-15\n");
	put("pmu/cpu/format/edge", "config:18\n");
	put("pmu/cpu/format/inv", "config:23\n");
	put("pmu/cpu/format/cmask", "config:24-31\n");
	put("pmu/cpu/format/ldlat", "config1:0-15\n");
	put("pmu/cpu/format/split", "config2:0-3,8-11\n");
	put("pmu/cpu/events/cycles-ct", "event=0x3c,cmask=2\n");
	put("pmu/msr/type", "9\n");
	put("pmu/msr/format/event", "config:0-63\n");
	put("pmu/msr/events/tsc", "event=0x00\n");
	put("pmu/nocpu/type", "1\n");
	snprintf(dir, sizeof(dir), "%s/pmu", root);
	evspec_set_pmu_root(dir);

	tracepoint("sched", "sched_switch", "316\n");
	tracepoint("sched", "sched_process_exec", "310\n");
	tracepoint("sched", "sched_process_fork", "311\n");
	tracepoint("sched", "sched_process_exit", "312\n");
	tracepoint("irq", "irq_handler_entry", "40\n");
	tracepoint("irq", "softirq_entry", "42\n");
	tracepoint("broken", "noid", "x\n");
	for (i = 0; i < 40; i++) {
		char name[32];

		snprintf(name, sizeof(name), "sys_enter_%02d", i);
		tracepoint("syscalls", name, "1000\n");
	}
	snprintf(dir, sizeof(dir), "%s/tracing", root);
	assert_int_equal(evspec_set_tracing_dir(dir), 0);
	(void)state;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) ? -1 : 0;
}

static int parse(const char *list, int use, char *err, size_t errlen)
{
	*err = '\0';
	return evspec_parse(list, use, ev, EVSPEC_MAX, err, errlen);
}

static void expect_error(const char *list, int use, const char *msg)
{
	char err[256];

	assert_int_equal(parse(list, use, err, sizeof(err)), -EINVAL);
	if (!strstr(err, msg))
		fail_msg("'%s': error '%s' does not contain '%s'", list, err, msg);
}

static void test_modifiers(void **state)
{
	static const struct { const char *in, *name; bool xu, xk, xh; } ok[] = {
		{ "cycles:u", "cycles:u", false, true, true },
		{ "cpu-cycles:k", "cycles:k", true, false, true },
		{ "cpu-clock:uk", "cpu-clock:uk", false, false, true },
		{ "cpu-clock:ku", "cpu-clock:ku", false, false, true },
		{ "task-clock:h", "task-clock:h", true, true, false },
		{ "cpu-clock", "cpu-clock", false, false, false },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(parse(ok[i].in, EVSPEC_SAMPLING, err, sizeof(err)), 1);
		assert_string_equal(ev[0].name, ok[i].name);
		assert_int_equal(ev[0].exclude_user, ok[i].xu);
		assert_int_equal(ev[0].exclude_kernel, ok[i].xk);
		assert_int_equal(ev[0].exclude_hv, ok[i].xh);
	}
	/* the name round-trips (what recspec's JSON carries) */
	assert_int_equal(evspec_lookup("cycles:u", &ev[1]), 0);
	assert_true(evspec_same(&ev[1], &(struct evspec){ .type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES, .exclude_kernel = true, .exclude_hv = true }));
	assert_false(evspec_same(&ev[1], &(struct evspec){ .type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES }));
	/* cycles:u falls back to cpu-clock:u, not cpu-clock */
	assert_int_equal(evspec_rebase(&ev[1], "cpu-clock"), 0);
	assert_string_equal(ev[1].name, "cpu-clock:u");
	assert_int_equal(ev[1].type, PERF_TYPE_SOFTWARE);
	assert_true(ev[1].exclude_kernel);
	assert_false(ev[1].exclude_user);

	expect_error("cycles:", EVSPEC_SAMPLING, "empty modifier");
	expect_error("cycles:x", EVSPEC_SAMPLING, "unknown modifier 'x'");
	expect_error("cycles:uu", EVSPEC_SAMPLING, "unknown modifier 'uu'");
	expect_error("cycles:u:k", EVSPEC_SAMPLING, "unknown modifier");
	/* record samples only some named events; stat counts every one */
	expect_error("context-switches:u", EVSPEC_SAMPLING, "context-switches cannot be sampled");
	assert_int_equal(parse("context-switches:u,cpu-migrations", EVSPEC_COUNTING, err,
			       sizeof(err)), 2);
}

static void test_raw(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(parse("r3c,r01C2:u,rffffffffffffffff", EVSPEC_COUNTING, err, sizeof(err)), 3);
	assert_int_equal(ev[0].type, PERF_TYPE_RAW);
	assert_int_equal(ev[0].config, 0x3c);
	assert_string_equal(ev[0].name, "r3c");
	assert_true(ev[0].hardware);
	assert_int_equal(ev[1].config, 0x1c2);
	assert_string_equal(ev[1].name, "r01C2:u");
	assert_true(ev[1].exclude_kernel);
	assert_int_equal(ev[2].config, UINT64_MAX);
	/* not hex: then it is no raw event at all */
	expect_error("r3g", EVSPEC_COUNTING, "unknown event 'r3g'");
	expect_error("r00000000000000001", EVSPEC_COUNTING, "unknown event");
}

static void test_pmu_terms(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(parse("cpu/event=0x3c,umask=0x01/,cpu/event=0xc0,umask=1,inv,cmask=3,edge/uk",
			       EVSPEC_COUNTING, err, sizeof(err)), 2);
	assert_int_equal(ev[0].type, 4);
	assert_int_equal(ev[0].config, 0x13c);
	assert_string_equal(ev[0].name, "cpu/event=0x3c,umask=0x01/");
	assert_false(ev[0].exclude_kernel);
	assert_int_equal(ev[1].config, 0xc0 | 1 << 8 | 1 << 23 | 3u << 24 | 1 << 18);
	assert_string_equal(ev[1].name, "cpu/event=0xc0,umask=1,inv,cmask=3,edge/uk");
	assert_false(ev[1].exclude_kernel);
	assert_false(ev[1].exclude_user);
	assert_true(ev[1].exclude_hv);

	/* config1, config2 with a field split in two ranges, config= itself */
	assert_int_equal(parse("cpu/event=0xcd,umask=1,ldlat=3/:u,cpu/split=0xab/,cpu/config=0x1234/",
			       EVSPEC_COUNTING, err, sizeof(err)), 3);
	assert_int_equal(ev[0].config, 0x1cd);
	assert_int_equal(ev[0].config1, 3);
	assert_true(ev[0].exclude_kernel);
	assert_int_equal(ev[1].config2, 0xb | 0xa << 8);
	assert_int_equal(ev[2].config, 0x1234);

	/* a named event of the PMU, and another PMU's */
	assert_int_equal(parse("cpu/cycles-ct/,msr/tsc/", EVSPEC_COUNTING, err, sizeof(err)), 2);
	assert_int_equal(ev[0].config, 0x3c | 2u << 24);
	assert_int_equal(ev[1].type, 9);
	assert_int_equal(ev[1].config, 0);

	expect_error("cpu/umask=0x100/", EVSPEC_COUNTING, "value of 'umask' too wide (8 bits)");
	expect_error("cpu/bogus=1/", EVSPEC_COUNTING, "unknown term 'bogus' for PMU cpu");
	expect_error("cpu/event=zz/", EVSPEC_COUNTING, "bad value in term 'event=zz'");
	expect_error("cpu/event=1", EVSPEC_COUNTING, "missing '/'");
	expect_error("cpu//", EVSPEC_COUNTING, "no terms");
	expect_error("cpu/event=1,/", EVSPEC_COUNTING, "empty term");
	expect_error("cpu/../type/", EVSPEC_COUNTING, "bad term");
	expect_error("cpu/event=1/x", EVSPEC_COUNTING, "unknown modifier 'x'");
	expect_error("../cpu/event=1/", EVSPEC_COUNTING, "bad PMU name");
	expect_error("nopmu/event=1/", EVSPEC_COUNTING, "unknown PMU 'nopmu'");
}

/* this machine has no CPU PMU: raw events are one clear error */
static void test_no_cpu_pmu(void **state)
{
	char dir[600];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/nothing", root);
	evspec_set_pmu_root(dir);
	expect_error("r3c", EVSPEC_COUNTING, "raw event 'r3c' needs the CPU's PMU, which this machine lacks");
	expect_error("cpu/event=0x3c/", EVSPEC_COUNTING,
		     "'cpu/event=0x3c/' needs the CPU's PMU, which this machine lacks");
	snprintf(dir, sizeof(dir), "%s/pmu", root);
	evspec_set_pmu_root(dir);
}

/* the bit placing alone, on a format of several ranges */
static void test_pmu_encode(void **state)
{
	char dir[600], err[256];
	uint64_t cfg[3];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/pmu/cpu", root);
	assert_int_equal(evspec_pmu_encode(dir, "split=0xff", 10, cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg[2], 0xf0f);
	assert_int_equal(evspec_pmu_encode(dir, "split=0x100", 11, cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too wide (8 bits)"));
	/* only the given length is read */
	assert_int_equal(evspec_pmu_encode(dir, "event=1,garbage", 7, cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg[0], 1);
}

static void test_tracepoints(void **state)
{
	char err[256];
	int n;

	(void)state;
	assert_int_equal(parse("sched:sched_switch", EVSPEC_COUNTING, err, sizeof(err)), 1);
	assert_string_equal(ev[0].name, "sched:sched_switch");
	assert_int_equal(ev[0].type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(ev[0].config, 316);
	assert_true(ev[0].tracepoint);
	assert_false(ev[0].hardware);

	/* globs, several at once, mixed with other events; sorted by name */
	assert_int_equal(parse("cpu-clock,sched:sched_process_*,irq:*", EVSPEC_COUNTING, err,
			       sizeof(err)), 6);
	assert_string_equal(ev[0].name, "cpu-clock");
	assert_string_equal(ev[1].name, "sched:sched_process_exec");
	assert_string_equal(ev[2].name, "sched:sched_process_exit");
	assert_string_equal(ev[3].name, "sched:sched_process_fork");
	assert_int_equal(ev[3].config, 311);
	assert_string_equal(ev[4].name, "irq:irq_handler_entry");
	assert_string_equal(ev[5].name, "irq:softirq_entry");
	assert_int_equal(parse("*:sched_switch,sch?d:sched_s*", EVSPEC_COUNTING, err, sizeof(err)), 2);
	n = parse("syscalls:sys_enter_*", EVSPEC_COUNTING, err, sizeof(err));
	assert_int_equal(n, 40);

	/* one lookup, no glob */
	assert_int_equal(evspec_lookup("irq:softirq_entry", &ev[0]), 0);
	assert_int_equal(ev[0].config, 42);
	assert_int_equal(evspec_lookup("irq:*", &ev[0]), -EINVAL);

	expect_error("sched:nope", EVSPEC_COUNTING, "unknown tracepoint 'sched:nope'");
	expect_error("nope:sched_switch", EVSPEC_COUNTING, "unknown tracepoint 'nope:sched_switch'");
	expect_error("cpu-clock,sched:nope_*", EVSPEC_COUNTING, "no tracepoint matches 'sched:nope_*'");
	expect_error("sched:sched_switch:u", EVSPEC_COUNTING, "modifiers are not taken on tracepoints");
	expect_error("..:x", EVSPEC_COUNTING, "bad tracepoint name");
	expect_error("../sched:x", EVSPEC_COUNTING, "missing '/'");
	expect_error("sched:..", EVSPEC_COUNTING, "bad tracepoint name");
	expect_error("sched:", EVSPEC_COUNTING, "bad tracepoint name");
	expect_error("broken:noid", EVSPEC_COUNTING, "cannot read the id of tracepoint broken:noid");
}

/* a glob past the bound: refused, saying how many it names */
static void test_tracepoint_bound(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(evspec_parse("syscalls:*", EVSPEC_COUNTING, ev, 39, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'syscalls:*' names 40 tracepoints: more than the 39 events"));
	assert_int_equal(evspec_parse("cpu-clock,sched:sched_switch", EVSPEC_COUNTING, ev, 1, err,
				      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too many events (at most 1)"));
	assert_int_equal(evspec_parse("syscalls:*", EVSPEC_COUNTING, ev, 40, err, sizeof(err)), 40);
}

/* tracefs not there (and not mountable, as for a user): one clear line */
static void test_no_tracefs(void **state)
{
	char dir[600];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/pmu", root);      /* a directory without events/ */
	assert_int_equal(evspec_set_tracing_dir(dir), 0);
	expect_error("sched:sched_switch", EVSPEC_COUNTING, "tracepoints need tracefs, and");
	snprintf(dir, sizeof(dir), "%s/tracing", root);
	assert_int_equal(evspec_set_tracing_dir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_pmu_terms),
		cmocka_unit_test(test_no_cpu_pmu),
		cmocka_unit_test(test_pmu_encode),
		cmocka_unit_test(test_tracepoints),
		cmocka_unit_test(test_tracepoint_bound),
		cmocka_unit_test(test_no_tracefs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

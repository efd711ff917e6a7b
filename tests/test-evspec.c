/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for lib/collect/evspec.c */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "evnames.h"
#include "evspec.h"

static void test_lookup_all(void **state)
{
	static const struct {
		const char *in, *name;
		uint32_t type;
		uint64_t config;
	} cases[] = {
		{ "cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-misses", "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "branch-misses", "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "cpu-clock", "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct evspec e;

		memset(&e, 0xaa, sizeof(e));
		assert_int_equal(evspec_lookup(cases[i].in, &e), 0);
		assert_string_equal(e.name, cases[i].name);
		assert_int_equal(e.type, cases[i].type);
		assert_int_equal(e.config, cases[i].config);
		assert_int_equal(e.hardware, cases[i].type == PERF_TYPE_HARDWARE);
	}
}

/* the one table of names: by (type, config) both ways, and what -e takes from it */
static void test_evnames(void **state)
{
	static const struct {
		uint32_t type;
		uint64_t config;
		const char *name;
		bool record;
	} cases[] = {
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", true },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches", false },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus-cycles", false },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock", true },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches", false },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, "bpf-output", false },
	};
	struct evspec e;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct evname *d = evname_find(cases[i].name, strlen(cases[i].name));

		assert_string_equal(evname_of(cases[i].type, cases[i].config), cases[i].name);
		assert_non_null(d);
		assert_int_equal(d->type, cases[i].type);
		assert_int_equal(d->config, cases[i].config);
		assert_int_equal(evspec_lookup(cases[i].name, &e), cases[i].record ? 0 : -EINVAL);
	}
	assert_null(evname_of(PERF_TYPE_HARDWARE, 1000));
	assert_null(evname_of(PERF_TYPE_TRACEPOINT, 0));
	assert_null(evname_find("cycle", 5));
	assert_string_equal(evname_find("cpu-cycles", 10)->name, "cycles");
}

static void test_lookup_bad(void **state)
{
	static const char *bad[] = { "", "foo", "Cycles", "cycles ", " cycles",
				     "cycles:x", "cycles:", "cpu-clock,", "cycle", "sched:sched_*",
				     "cyclesx", "page-faults\n" };
	struct evspec e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(evspec_lookup(bad[i], &e), -EINVAL);
	assert_int_equal(evspec_lookup(NULL, &e), -EINVAL);
}

static void test_parse_list(void **state)
{
	static struct evspec ev[EVSPEC_MAX];
	char err[128] = "";

	(void)state;
	assert_int_equal(evspec_parse("cycles", EVSPEC_SAMPLING, ev, EVSPEC_MAX, err, sizeof(err)), 1);
	assert_string_equal(ev[0].name, "cycles");
	assert_true(ev[0].hardware);

	assert_int_equal(evspec_parse("cpu-clock,faults,cpu-cycles", EVSPEC_SAMPLING, ev, EVSPEC_MAX,
				      err, sizeof(err)), 3);
	assert_string_equal(ev[0].name, "cpu-clock");
	assert_false(ev[0].hardware);
	assert_string_equal(ev[1].name, "page-faults");
	assert_string_equal(ev[2].name, "cycles");

	assert_int_equal(evspec_parse("cycles,instructions,cache-misses,branch-misses,"
				      "cpu-clock,task-clock,page-faults,faults",
				      EVSPEC_SAMPLING, ev, EVSPEC_MAX, err, sizeof(err)), 8);
	assert_int_equal(ev[7].config, PERF_COUNT_SW_PAGE_FAULTS);
}

static void expect_parse_error(const char *in, size_t max, const char *msg)
{
	static struct evspec ev[EVSPEC_MAX];
	char err[128] = "";

	assert_int_equal(evspec_parse(in, EVSPEC_SAMPLING, ev, max, err, sizeof(err)), -EINVAL);
	if (!strstr(err, msg))
		fail_msg("'%s': error '%s' does not contain '%s'", in ? in : "(null)", err, msg);
	assert_null(strstr(err, "perfmark:"));
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_parse_error("foo", EVSPEC_MAX, "unknown event 'foo'");
	expect_parse_error("cycles,foo", EVSPEC_MAX, "unknown event 'foo'");
	expect_parse_error("cycles:x", EVSPEC_MAX, "unknown modifier 'x' in 'cycles'");
	expect_parse_error("", EVSPEC_MAX, "empty event list");
	expect_parse_error(NULL, EVSPEC_MAX, "empty event list");
	expect_parse_error(",", EVSPEC_MAX, "empty event");
	expect_parse_error("cycles,", EVSPEC_MAX, "empty event");
	expect_parse_error(",cycles", EVSPEC_MAX, "empty event");
	expect_parse_error("cycles,,cpu-clock", EVSPEC_MAX, "empty event");
	expect_parse_error(" cycles", EVSPEC_MAX, "unknown event ' cycles'");
	expect_parse_error("cycles,cpu-clock,task-clock", 2, "too many events");
	expect_parse_error("cycles", 0, "too many events");
	/* a very long name: message stays short, no overflow */
	char longname[1000];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	expect_parse_error(longname, EVSPEC_MAX, "event name too long: 'xxxx");
}

static void test_parse_err_buffer(void **state)
{
	struct evspec ev[2];
	char small[8];

	(void)state;
	/* NULL / tiny error buffers are fine */
	assert_int_equal(evspec_parse("bogus", EVSPEC_SAMPLING, ev, 2, NULL, 0), -EINVAL);
	assert_int_equal(evspec_parse("bogus", EVSPEC_SAMPLING, ev, 2, small, sizeof(small)), -EINVAL);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

static void test_freq(void **state)
{
	uint64_t v = 0;
	char err[128];

	(void)state;
	assert_int_equal(evspec_parse_freq("99", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 99);
	assert_int_equal(evspec_parse_freq("1", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1);
	assert_int_equal(evspec_parse_freq("100000", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 100000);
	assert_int_equal(evspec_parse_freq("4000", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 4000);

	v = 7;
	assert_int_equal(evspec_parse_freq("0", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "frequency 0 out of range"));
	assert_int_equal(v, 7);
	assert_int_equal(evspec_parse_freq("100001", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(evspec_parse_freq("99999999999999999999", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(evspec_parse_freq("18446744073709551616", &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(evspec_parse_freq("18446744073709551615", &v, err, sizeof(err)), -EINVAL);

	static const char *bad[] = { "", "x", "max", "-1", "-0", "+5", " 5", "5 ",
				     "5x", "0x10", "1e3", "4000Hz", "1.5", "\t" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(evspec_parse_freq(bad[i], &v, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "frequency"));
	}
	assert_int_equal(evspec_parse_freq("x", &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad frequency 'x'");
	assert_int_equal(evspec_parse_freq(NULL, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(v, 7);
}

static void test_period(void **state)
{
	uint64_t v = 0;
	char err[128];

	(void)state;
	assert_int_equal(evspec_parse_period("1", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1);
	assert_int_equal(evspec_parse_period("100003", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 100003);
	assert_int_equal(evspec_parse_period("18446744073709551615", &v, err, sizeof(err)), 0);
	assert_true(v == UINT64_MAX);

	assert_int_equal(evspec_parse_period("0", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "period 0 out of range"));
	assert_int_equal(evspec_parse_period("18446744073709551616", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(evspec_parse_period("99999999999999999999", &v, err, sizeof(err)), -EINVAL);
	static const char *bad[] = { "", "-1", "abc", "10k", "1 ", " 1", "+1", "1,2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(evspec_parse_period(bad[i], &v, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "period"));
	}
	assert_int_equal(evspec_parse_period(NULL, &v, NULL, 0), -EINVAL);
}

static void test_pids(void **state)
{
	int pids[4];
	char err[128];

	(void)state;
	assert_int_equal(evspec_parse_pids("1", pids, 4, err, sizeof(err)), 1);
	assert_int_equal(pids[0], 1);
	assert_int_equal(evspec_parse_pids("12,345,6789", pids, 4, err, sizeof(err)), 3);
	assert_int_equal(pids[0], 12);
	assert_int_equal(pids[1], 345);
	assert_int_equal(pids[2], 6789);
	assert_int_equal(evspec_parse_pids("2147483647", pids, 4, err, sizeof(err)), 1);
	assert_int_equal(pids[0], 2147483647);

	static const char *bad[] = { "", ",", "1,", ",1", "1,,2", "-1", "0", "abc",
				     "1 ", " 1", "1,x", "2147483648",
				     "99999999999999999999", "1.5", "+1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (evspec_parse_pids(bad[i], pids, 4, err, sizeof(err)) != -EINVAL)
			fail_msg("pids '%s' accepted", bad[i]);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(evspec_parse_pids("-1", pids, 4, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad pid '-1'");
	assert_int_equal(evspec_parse_pids("", pids, 4, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty pid list");
	assert_int_equal(evspec_parse_pids("1,2,3,4,5", pids, 4, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too many pids"));
	assert_int_equal(evspec_parse_pids(NULL, pids, 4, err, sizeof(err)), -EINVAL);
}

static void test_size(void **state)
{
	static const struct {
		const char *in;
		uint64_t v;
	} ok[] = {
		{ "4096", 4096 }, { "1", 1 }, { "512k", 512ULL << 10 }, { "512K", 512ULL << 10 },
		{ "64M", 64ULL << 20 }, { "64m", 64ULL << 20 }, { "1G", 1ULL << 30 },
		{ "2T", 2ULL << 40 }, { "64MB", 64ULL << 20 }, { "64MiB", 64ULL << 20 },
		{ "100B", 100 }, { "16777215T", 16777215ULL << 40 },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const char *bad[] = { "", "M", "-1", "-1M", "0", "0M", "1X", "1MM", "1 M",
				     " 1", "1M ", "1.5G", "16777216T", "99999999999999999999",
				     "18446744073709551616", "1iB", "1Mi", "+1", "0x100" };
	uint64_t v;
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 0;
		if (evspec_parse_size(ok[i].in, &v, err, sizeof(err)) != 0)
			fail_msg("size '%s' rejected: %s", ok[i].in, err);
		assert_true(v == ok[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (evspec_parse_size(bad[i], &v, err, sizeof(err)) != -EINVAL)
			fail_msg("size '%s' accepted", bad[i]);
		assert_non_null(strstr(err, "size"));
	}
	assert_int_equal(evspec_parse_size("1X", &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad size '1X'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_all),
		cmocka_unit_test(test_evnames),
		cmocka_unit_test(test_lookup_bad),
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_err_buffer),
		cmocka_unit_test(test_freq),
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/analyze/filter.c: perf's filter syntax (lists, CPU
 * ranges, --time in seconds and in percent as perf's own tests give them)
 * and the two kinds of "no": dropped (--cpu, --time) and hidden (the rest).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "filter.h"

#define S 1000000000ULL

static struct filter *with(enum filter_key k, const char *arg)
{
	struct filter *f;
	char err[256];

	assert_int_equal(filter__new(&f), 0);
	if (filter__add(f, k, arg, err, sizeof(err)))
		fail_msg("'%s': %s", arg, err);
	return f;
}

static void refused(enum filter_key k, const char *arg, const char *why)
{
	struct filter *f;
	char err[256] = "";

	assert_int_equal(filter__new(&f), 0);
	assert_true(filter__add(f, k, arg, err, sizeof(err)) < 0);
	if (!strstr(err, why))
		fail_msg("'%s': '%s' lacks '%s'", arg, err, why);
	filter__free(f);
}

static void test_lists(void **state)
{
	struct filter *f = with(FILTER_COMM, "pmf-alpha,sh");

	(void)state;
	assert_true(filter__has(f, FILTER_COMM));
	assert_false(filter__has(f, FILTER_PID));
	assert_true(filter__task(f, 1, 1, "sh"));
	assert_true(filter__task(f, 1, 1, "pmf-alpha"));
	assert_false(filter__task(f, 1, 1, "pmf-alph"));
	assert_false(filter__task(f, 1, 7, NULL));     /* ":7" */
	assert_true(filter__add(f, FILTER_COMM, ":7", NULL, 0) == 0);
	assert_true(filter__task(f, 1, 7, NULL));
	filter__free(f);

	f = with(FILTER_PID, "10,20");
	assert_int_equal(filter__add(f, FILTER_TID, "21", NULL, 0), 0);
	assert_true(filter__task(f, 20, 21, "x"));
	assert_false(filter__task(f, 20, 22, "x"));
	assert_false(filter__task(f, 30, 21, "x"));
	filter__free(f);

	f = with(FILTER_DSO, "libc.so.6,/opt/x/liby.so");
	assert_true(filter__wants_leaf(f));
	assert_true(filter__leaf(f, "/usr/lib/x86_64-linux-gnu/libc.so.6", "memcpy"));
	assert_true(filter__leaf(f, "/opt/x/liby.so", "f"));
	assert_false(filter__leaf(f, "/opt/z/liby.so", "f"));   /* the path asked, not its base name */
	assert_false(filter__leaf(f, NULL, "[unknown]"));
	assert_int_equal(filter__add(f, FILTER_SYM, "memcpy,libz.so+0x10", NULL, 0), 0);
	assert_true(filter__leaf(f, "/lib/libc.so.6", "memcpy"));
	assert_false(filter__leaf(f, "/lib/libc.so.6", "memmove"));
	filter__free(f);

	refused(FILTER_PID, "12a", "bad --pid '12a'");
	refused(FILTER_PID, "1,,2", "bad --pid");
	refused(FILTER_TID, "4294967296", "bad --tid");
	refused(FILTER_COMM, "a,", "bad --comm");
	refused(FILTER_SYM, "", "bad --sym");
}

static void test_cpus(void **state)
{
	struct filter *f = with(FILTER_CPU, "0-2,5");

	(void)state;
	for (uint32_t c = 0; c < 8; c++)
		assert_int_equal(filter__where(f, c, 1), c <= 2 || c == 5);
	assert_false(filter__where(f, 100000, 1));
	assert_true(filter__task(f, 1, 1, "x"));    /* --cpu does not hide: it drops */
	filter__free(f);
	refused(FILTER_CPU, "3-1", "goes down");
	refused(FILTER_CPU, "4096", "below 4096");
	refused(FILTER_CPU, "1-", "bad --cpu");
	refused(FILTER_CPU, "x", "bad --cpu");
}

/* perf's parse_nsec_time and perf_time__parse_str cases */
static void test_time_seconds(void **state)
{
	struct filter *f = with(FILTER_TIME, "1234567.123456789,1234567.123456790");
	uint64_t b = 1234567123456789ULL;

	(void)state;
	assert_int_equal(filter__set_span(f, false, 0, 0, NULL, 0), 0);
	assert_false(filter__where(f, 0, b - 1));
	assert_true(filter__where(f, 0, b));
	assert_true(filter__where(f, 0, b + 1));
	assert_false(filter__where(f, 0, b + 2));
	filter__free(f);

	f = with(FILTER_TIME, "123456.123456,");       /* six decimals: microseconds */
	assert_false(filter__where(f, 0, 123456123455999ULL));
	assert_true(filter__where(f, 0, 123456123456000ULL));
	assert_true(filter__where(f, 0, UINT64_MAX));
	filter__free(f);

	f = with(FILTER_TIME, ",10");
	assert_true(filter__where(f, 0, 10 * S));
	assert_false(filter__where(f, 0, 10 * S + 1));
	filter__free(f);

	f = with(FILTER_TIME, "1,2 5,6");              /* several ranges, by spaces */
	assert_true(filter__where(f, 0, 2 * S));
	assert_false(filter__where(f, 0, 3 * S));
	assert_true(filter__where(f, 0, 5 * S + 7));
	filter__free(f);

	refused(FILTER_TIME, "5,4", "bad --time");
	refused(FILTER_TIME, "1.0000000001,", "bad --time");   /* ten decimals */
	refused(FILTER_TIME, "12", "bad --time");
	refused(FILTER_TIME, "", "empty --time");
}

/* perf's percent cases: first b, last b + 100 */
static void test_time_percent(void **state)
{
	uint64_t b = 7654321ULL * S;
	struct filter *f = with(FILTER_TIME, "10%/2");
	char err[256];

	(void)state;
	/* unresolved until the span is known; without it, one line says so */
	assert_int_equal(filter__set_span(f, false, 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a pipe does not give"));
	assert_int_equal(filter__set_span(f, true, b, b + 100, NULL, 0), 0);
	assert_false(filter__where(f, 0, b + 9));
	assert_true(filter__where(f, 0, b + 10));
	assert_true(filter__where(f, 0, b + 19));
	assert_false(filter__where(f, 0, b + 20));
	filter__free(f);

	f = with(FILTER_TIME, "10%/1,10%/3,10%/10");
	assert_int_equal(filter__set_span(f, true, b, b + 100, NULL, 0), 0);
	for (uint64_t t = 0; t <= 101; t++)
		assert_int_equal(filter__where(f, 0, b + t),
				 t <= 9 || (t >= 20 && t <= 29) || (t >= 90 && t <= 100));
	filter__free(f);

	f = with(FILTER_TIME, "25%-75%");
	assert_int_equal(filter__set_span(f, true, b, b + 100, NULL, 0), 0);
	assert_false(filter__where(f, 0, b + 24));
	assert_true(filter__where(f, 0, b + 25));
	assert_true(filter__where(f, 0, b + 74));
	assert_false(filter__where(f, 0, b + 76));
	filter__free(f);

	refused(FILTER_TIME, "10%/11", "Nth slice");
	refused(FILTER_TIME, "10%/0", "Nth slice");
	refused(FILTER_TIME, "0%/1", "Nth slice");
	refused(FILTER_TIME, "50%-20%", "A below B");
	refused(FILTER_TIME, "120%-130%", "A below B");
	refused(FILTER_TIME, "10%", "P%/N or A%-B%");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_time_seconds),
		cmocka_unit_test(test_time_percent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

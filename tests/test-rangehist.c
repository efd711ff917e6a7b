// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/engine/rangehist.c (perfmarkd's /metrics histograms):
 * bucket bounds, pairing per thread, and the caps a hostile application
 * meets (label sets, depth).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmark.h"
#include "rangehist.h"

static void mark(struct rangehist *rs, uint32_t type, uint32_t tid, uint64_t t, const char *name)
{
	rangehist__marker(rs, type, (uint32_t)getpid(), tid, t, (const uint8_t *)name, strlen(name));
}

/* every duration falls in the bucket whose bounds hold it; bounds rise by <= 12.5 % */
static void test_buckets(void **state)
{
	uint64_t ns;

	assert_int_equal(rangehist__bucket(0), 0);
	assert_int_equal(rangehist__bucket(1024), 0);
	assert_int_equal(rangehist__bucket(1025), 1);
	assert_true(rangehist__bound(RANGEHIST_BUCKETS - 1) == UINT64_MAX);
	assert_int_equal(rangehist__bucket(UINT64_MAX), RANGEHIST_BUCKETS - 1);
	for (size_t i = 1; i < RANGEHIST_BUCKETS - 1; i++) {
		uint64_t lo = rangehist__bound(i - 1), hi = rangehist__bound(i);

		assert_true(hi > lo);
		assert_true((double)hi / (double)lo <= 1.125 + 1e-9);
		assert_int_equal(rangehist__bucket(lo + 1), i);
		assert_int_equal(rangehist__bucket(hi), i);
	}
	for (ns = 1; ns < (1ull << 40); ns = ns * 3 + 7) {
		size_t b = rangehist__bucket(ns);

		assert_true(ns <= rangehist__bound(b));
		assert_true(b == 0 || ns > rangehist__bound(b - 1));
	}
}

/* begins and ends pair per thread, innermost of the name; stray ends are dropped */
static void test_pairing(void **state)
{
	struct rangehist *rs;
	struct rangehist_set st;
	struct rangehist_totals t;

	assert_int_equal(rangehist__new(&rs, 0), 0);
	mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 1, 1000, "render");
	mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 2, 1000, "render");      /* another thread */
	mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 1, 2000, "inner");
	mark(rs, PERFMARK_TYPE_RANGE_END, 1, 5000, "render");        /* closes tid 1's render */
	mark(rs, PERFMARK_TYPE_RANGE_END, 1, 6000, "inner");
	mark(rs, PERFMARK_TYPE_RANGE_END, 1, 7000, "nothing-open");  /* dropped */
	mark(rs, PERFMARK_TYPE_RANGE_END, 2, 1000000, "render");
	mark(rs, PERFMARK_TYPE_STRING, 2, 1000000, "a string");
	/* an end that arrives before its begin (fast lane vs BPF ring) still pairs */
	mark(rs, PERFMARK_TYPE_RANGE_END, 3, 9000, "render");
	mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 3, 7000, "render");
	rangehist__totals(rs, &t);
	assert_int_equal(t.ranges, 4);
	assert_int_equal(t.sets, 2);
	assert_int_equal(t.overflow, 0);
	rangehist__set(rs, 0, &st);
	assert_string_equal(st.name, "render");
	assert_int_equal(st.count, 3);
	assert_int_equal(st.sum_ns, 4000 + 999000 + 2000);
	assert_int_equal(st.buckets[rangehist__bucket(4000)], 1);
	assert_int_equal(st.buckets[rangehist__bucket(999000)], 1);
	rangehist__set(rs, 1, &st);
	assert_string_equal(st.name, "inner");
	assert_int_equal(st.sum_ns, 4000);
	rangehist__free(rs);
}

/* counters: the last value per name; their label sets count against the cap */
static void test_counters(void **state)
{
	struct rangehist *rs;
	struct rangehist_counter c;
	struct rangehist_totals t;
	uint8_t p[8 + 16];
	int64_t v;

	assert_int_equal(rangehist__new(&rs, 2), 0);
	for (v = 1; v <= 3; v++) {
		memcpy(p, &v, 8);
		memcpy(p + 8, "frames", 7);
		rangehist__marker(rs, PERFMARK_TYPE_COUNTER, (uint32_t)getpid(), 1, 10, p, 15);
	}
	mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 1, 1, "a");
	mark(rs, PERFMARK_TYPE_RANGE_END, 1, 2, "a");
	mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 1, 1, "b");   /* the third label set: over the cap */
	mark(rs, PERFMARK_TYPE_RANGE_END, 1, 2, "b");
	rangehist__marker(rs, PERFMARK_TYPE_COUNTER, (uint32_t)getpid(), 1, 10, p, 4);   /* too short: ignored */
	assert_int_equal(rangehist__nr_counters(rs), 1);
	rangehist__counter(rs, 0, &c);
	assert_string_equal(c.name, "frames");
	assert_int_equal(c.value, 3);
	rangehist__totals(rs, &t);
	assert_int_equal(t.sets, 2);
	assert_int_equal(t.overflow, 1);
	rangehist__free(rs);
}

/* 100 000 distinct names: the sets stop at the cap, the rest is counted */
static void test_cap(void **state)
{
	struct rangehist *rs;
	struct rangehist_totals t;
	char name[32];

	assert_int_equal(rangehist__new(&rs, 1000), 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 7, (uint64_t)i * 10, name);
		mark(rs, PERFMARK_TYPE_RANGE_END, 7, (uint64_t)i * 10 + 5, name);
	}
	/* deeper than RANGEHIST_DEPTH on one thread */
	for (int i = 0; i < RANGEHIST_DEPTH + 5; i++)
		mark(rs, PERFMARK_TYPE_RANGE_BEGIN, 8, 1, "deep");
	rangehist__totals(rs, &t);
	assert_int_equal(t.sets, 1000);
	assert_int_equal(t.ranges, 1000);
	assert_int_equal(t.overflow, 99000);
	assert_int_equal(t.unpaired, 5);
	assert_int_equal(rangehist__nr_sets(rs), 1000);
	rangehist__free(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_pairing),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

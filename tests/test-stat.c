/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for perfmark stat's arithmetic and output: counting_scale
 * (lib/collect/counting.c) on multiplexed enabled/running values, and the
 * lines cli/stat_print.c makes of them in perf stat's text, CSV and JSON.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "counting.h"
#include "stat.h"

static void test_scale(void **state)
{
	struct counting_result r;

	(void)state;
	/* ran all the time: as read */
	r = counting_scale(&(struct counting_value){ 1000, 500, 500 }, true);
	assert_int_equal(r.state, COUNTING_COUNTED);
	assert_true(r.value == 1000.0);
	assert_false(r.scaled);
	assert_true(r.pct_running == 100.0);
	/* multiplexed, on a quarter of the time: four times the count */
	r = counting_scale(&(struct counting_value){ 1000, 400, 100 }, true);
	assert_true(r.scaled);
	assert_true(r.value == 4000.0);
	assert_true(r.pct_running == 25.0);
	/* a third: no integer rounding on the way */
	r = counting_scale(&(struct counting_value){ 10, 3, 1 }, true);
	assert_true(r.value == 30.0);
	r = counting_scale(&(struct counting_value){ 7, 1000000007, 333333336 }, true);
	assert_true(r.value > 21.0 - 1e-6 && r.value < 21.0 + 1e-6);
	/* large counts: no overflow of val * enabled */
	r = counting_scale(&(struct counting_value){ UINT64_MAX / 2, UINT64_MAX / 2, UINT64_MAX / 4 }, true);
	assert_true(r.value > (double)UINT64_MAX * 0.99 && r.value < (double)UINT64_MAX * 1.01);
	/* never ran: perf's "<not counted>" */
	r = counting_scale(&(struct counting_value){ 0, 1000, 0 }, true);
	assert_int_equal(r.state, COUNTING_NOT_COUNTED);
	r = counting_scale(&(struct counting_value){ 0, 0, 0 }, true);
	assert_int_equal(r.state, COUNTING_NOT_COUNTED);
	r = counting_scale(&(struct counting_value){ 5, 0, 5 }, false);
	assert_int_equal(r.state, COUNTING_NOT_SUPPORTED);
	/* an interval's share */
	struct counting_value d = counting_delta(&(struct counting_value){ 150, 300, 200 },
						 &(struct counting_value){ 100, 100, 100 });
	assert_int_equal(d.val, 50);
	assert_int_equal(d.enabled, 200);
	assert_int_equal(d.running, 100);
	r = counting_scale(&d, true);
	assert_true(r.value == 100.0);
	assert_true(r.pct_running == 50.0);
}

static const struct evspec events[] = {
	{ .name = "task-clock", .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK },
	{ .name = "context-switches", .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ .name = "instructions", .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_INSTRUCTIONS },
	{ .name = "cycles", .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES },
	{ .name = "branch-misses", .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_BRANCH_MISSES },
	{ .name = "sched:sched_switch", .type = PERF_TYPE_TRACEPOINT, .config = 316, .tracepoint = true },
};
static const bool supported[] = { true, true, true, true, false, true };
static const struct counting_value values[] = {
	{ 2000000, 1000, 1000 },        /* 2 ms of task-clock */
	{ 3000, 1000, 1000 },           /* 3000 in 2 ms: 1.5 M/sec */
	{ 1000000, 1000, 500 },         /* multiplexed: 2 M */
	{ 500000, 1000, 250 },          /* multiplexed: 2 M cycles: 1 GHz, 1 insn per cycle */
	{ 0, 0, 0 },                    /* not supported */
	{ 5, 1000, 0 },                 /* not counted */
};

/* what stat_print_counts prints in a format */
static char *printed(const char *sep, bool json, int64_t interval)
{
	struct stat_events e = { events, supported, 6 };
	struct stat_out o = { .sep = sep, .json = json };
	char *buf = NULL;
	size_t len = 0;

	o.f = open_memstream(&buf, &len);
	assert_non_null(o.f);
	stat_print_counts(&o, &e, values, 4000000, interval);   /* over 4 ms */
	fclose(o.f);
	return buf;
}

static void expect_line(const char *out, const char *line)
{
	assert_non_null(out);
	if (!strstr(out, line))
		fail_msg("no line '%s' in:\n%s", line, out);
}

static void test_text(void **state)
{
	char *out = printed(NULL, false, -1);

	(void)state;
	expect_line(out, "              2.00 msec task-clock                       #    0.500 CPUs utilized          \n");
	expect_line(out, "              3000      context-switches                 #    1.500 M/sec                  \n");
	expect_line(out, "           2000000      instructions                     #    1.000 insn per cycle           (50.00%)\n");
	expect_line(out, "           2000000      cycles                           #    1.000 GHz                      (25.00%)\n");
	expect_line(out, "   <not supported>      branch-misses                                               \n");
	expect_line(out, "     <not counted>      sched:sched_switch                                          \n");
	free(out);
	/* -I: the header, the time first */
	out = printed(NULL, false, 1500000000);
	assert_int_equal(strncmp(out, "#           time             counts unit events\n", 48), 0);
	expect_line(out, "     1.500000000               3000      context-switches ");
	free(out);
}

static void test_csv(void **state)
{
	char *out = printed(";", false, -1);

	(void)state;
	expect_line(out, "2.00;msec;task-clock;1000;100.00;0.500;CPUs utilized\n");
	expect_line(out, "3000;;context-switches;1000;100.00;1.500;M/sec\n");
	expect_line(out, "2000000;;instructions;500;50.00;1.000;insn per cycle\n");
	expect_line(out, "<not supported>;;branch-misses;0;100.00;;\n");
	expect_line(out, "<not counted>;;sched:sched_switch;0;0.00;;\n");
	free(out);
	out = printed(",", false, 100000000);
	expect_line(out, "     0.100000000,3000,,context-switches,1000,100.00,1.500,M/sec\n");
	free(out);
}

static void test_json(void **state)
{
	char *out = printed(NULL, true, -1);

	(void)state;
	expect_line(out, "{\"counter-value\":\"2.000000\",\"unit\":\"msec\",\"event\":\"task-clock\","
		    "\"event-runtime\":1000,\"pcnt-running\":100.00,\"metric-value\":0.500000,"
		    "\"metric-unit\":\"CPUs utilized\"}\n");
	expect_line(out, "{\"counter-value\":\"<not counted>\",\"unit\":\"\",\"event\":\"sched:sched_switch\","
		    "\"event-runtime\":0,\"pcnt-running\":0.00}\n");
	expect_line(out, "\"event\":\"instructions\",\"event-runtime\":500,\"pcnt-running\":50.00,");
	free(out);
	out = printed(NULL, true, 2000000000);
	expect_line(out, "{\"interval\":2.000000000,\"counter-value\":\"3000.000000\"");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

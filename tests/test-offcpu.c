// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/format/offcpu.c, the one reader of offcpu-time's
 * payload (lib/format/offcpu_raw.h): the fields as the recorder writes
 * them (perf pads the RAW field, so a longer one reads), a field too short
 * or missing, a later version, a sum's count, the state letters, and the
 * waker's stack (absent from the first files, bounded by the field); and
 * --off-cpu[=MIN_NS] as record and session create parse it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "offcpu.h"
#include "recspec.h"

static struct perfmark_offcpu_raw raw(uint16_t state, uint32_t task_state, uint32_t count)
{
	return (struct perfmark_offcpu_raw){ .version = PERFMARK_OFFCPU_VERSION, .state = state,
		.task_state = task_state, .count = count, .waker_flags = PERFMARK_OFFCPU_WAKER_TASK,
		.waker_pid = 10, .waker_tid = 11, .end = 123456789, .runq_ns = 4242 };
}

static void test_decode(void **state)
{
	struct perfmark_offcpu_raw r = raw(PERFMARK_OFFCPU_BLOCKED, 1, 1);
	uint8_t padded[sizeof(r) + 4] = { 0 };
	struct offcpu o;

	(void)state;
	assert_true(offcpu__event("offcpu-time"));
	assert_false(offcpu__event("cpu-clock"));
	assert_false(offcpu__event(NULL));
	memcpy(padded, &r, sizeof(r));
	offcpu__decode(&o, padded, sizeof(padded));     /* perf's RAW is padded to 8 bytes */
	assert_int_equal(o.state, OFFCPU_OK);
	assert_false(o.runnable);
	assert_int_equal(o.count, 1);
	assert_int_equal(o.waker_flags, PERFMARK_OFFCPU_WAKER_TASK);
	assert_int_equal(o.waker_pid, 10);
	assert_int_equal(o.waker_tid, 11);
	assert_int_equal(o.end, 123456789);
	assert_int_equal(o.runq_ns, 4242);
	assert_string_equal(offcpu__state_letter(&o), "S");
}

/* too short, missing, a later version: never read past the field, still one interval */
static void test_malformed(void **state)
{
	struct perfmark_offcpu_raw r = raw(PERFMARK_OFFCPU_BLOCKED, 2, 7);
	struct offcpu o;

	(void)state;
	offcpu__decode(&o, NULL, 0);
	assert_int_equal(o.state, OFFCPU_MALFORMED);
	assert_int_equal(o.count, 1);
	offcpu__decode(&o, &r, 1);
	assert_int_equal(o.state, OFFCPU_MALFORMED);
	offcpu__decode(&o, &r, PERFMARK_OFFCPU_RAW_V1_SIZE - 1);
	assert_int_equal(o.state, OFFCPU_MALFORMED);
	assert_int_equal(o.count, 1);
	assert_string_equal(offcpu__state_letter(&o), "?");
	r.version = PERFMARK_OFFCPU_VERSION + 1;
	offcpu__decode(&o, &r, 2);          /* a later version is told by its first two bytes */
	assert_int_equal(o.state, OFFCPU_VERSION);
	assert_int_equal(o.count, 1);
	assert_int_equal(o.waker_tid, 0);
}

static void test_states(void **state)
{
	static const struct { uint16_t state; uint32_t task_state; const char *letter; } v[] = {
		{ PERFMARK_OFFCPU_RUNNABLE, 0, "R" }, { PERFMARK_OFFCPU_RUNNABLE, 1, "R" },
		{ PERFMARK_OFFCPU_BLOCKED, 0x1, "S" }, { PERFMARK_OFFCPU_BLOCKED, 0x2, "D" },
		{ PERFMARK_OFFCPU_BLOCKED, 0x402, "I" }, { PERFMARK_OFFCPU_BLOCKED, 0x4, "T" },
		{ PERFMARK_OFFCPU_BLOCKED, 0x8, "t" }, { PERFMARK_OFFCPU_BLOCKED, 0x80, "?" },
	};
	struct offcpu o;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct perfmark_offcpu_raw r = raw(v[i].state, v[i].task_state, 0);

		offcpu__decode(&o, &r, sizeof(r));
		assert_int_equal(o.count, 1);   /* 0 is read as one interval */
		assert_string_equal(offcpu__state_letter(&o), v[i].letter);
	}
}

/* the waker's frames: read as the field holds them, never past it */
static void test_waker_stack(void **state)
{
	struct perfmark_offcpu_raw r = raw(PERFMARK_OFFCPU_BLOCKED, 1, 1);
	uint64_t ips[3] = { 0xffffffff81000010ull, 0x401234, 0x401500 };
	uint8_t buf[sizeof(r) + sizeof(ips) + 4] = { 0 };
	struct offcpu o;

	(void)state;
	/* a first file of version 1: the fields up to runq_ns, padded, no stack */
	memcpy(buf, &r, PERFMARK_OFFCPU_RAW_V1_SIZE);
	offcpu__decode(&o, buf, PERFMARK_OFFCPU_RAW_V1_SIZE + 4);
	assert_int_equal(o.state, OFFCPU_OK);
	assert_int_equal(o.runq_ns, 4242);
	assert_int_equal(o.nr_waker_kstack + o.nr_waker_ustack, 0);
	assert_int_equal(offcpu__waker_ip(&o, 0), 0);
	/* one kernel frame, two user frames, unaligned after the fields */
	r.nr_waker_kstack = 1;
	r.nr_waker_ustack = 2;
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), ips, sizeof(ips));
	offcpu__decode(&o, buf, sizeof(buf));
	assert_int_equal(o.nr_waker_kstack, 1);
	assert_int_equal(o.nr_waker_ustack, 2);
	for (uint32_t i = 0; i < 3; i++)
		assert_true(offcpu__waker_ip(&o, i) == ips[i]);
	assert_int_equal(offcpu__waker_ip(&o, 3), 0);
	/* counts past the field, or past what a writer puts: no stack, the rest read */
	offcpu__decode(&o, buf, sizeof(r) + 2 * sizeof(uint64_t));
	assert_int_equal(o.state, OFFCPU_OK);
	assert_int_equal(o.nr_waker_kstack + o.nr_waker_ustack, 0);
	r.nr_waker_kstack = 1;
	r.nr_waker_ustack = UINT32_MAX;     /* would wrap a sum of the two */
	memcpy(buf, &r, sizeof(r));
	offcpu__decode(&o, buf, sizeof(buf));
	assert_int_equal(o.nr_waker_kstack + o.nr_waker_ustack, 0);
	assert_int_equal(o.waker_tid, 11);
}

/* --off-cpu=MIN_NS: ns, or with a unit; 0 sums nothing; at most 10 s */
static void test_recspec_off_cpu(void **state)
{
	static const struct { const char *in; uint64_t ns; } good[] = {
		{ "0", 0 }, { "1", 1 }, { "250000", 250000 }, { "250us", 250000 }, { "1ms", 1000000 },
		{ "2s", 2000000000ull }, { "10s", 10000000000ull }, { "7ns", 7 },
	};
	static const char *bad[] = { "", "ms", "1m", "1.5ms", "-1", "11s", "10000000001",
				     "1 ms", "18446744073709551616", "1MS" };
	struct recspec r;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		recspec_init(&r);
		assert_int_equal(recspec_parse_off_cpu(good[i].in, &r, err, sizeof(err)), 0);
		assert_true(r.off_cpu);
		assert_int_equal(r.off_cpu_min_ns, good[i].ns);
		assert_int_equal(recspec_validate(&r, err, sizeof(err)), 0);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		recspec_init(&r);
		err[0] = '\0';
		if (recspec_parse_off_cpu(bad[i], &r, err, sizeof(err)) != -EINVAL || !err[0])
			fail_msg("not refused: '%s'", bad[i]);
		assert_false(r.off_cpu);
	}
	recspec_init(&r);
	r.off_cpu_min_ns = RECSPEC_OFFCPU_MIN_MAX + 1;
	assert_int_equal(recspec_validate(&r, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_waker_stack),
		cmocka_unit_test(test_recspec_off_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

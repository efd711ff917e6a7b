// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/format/offcpu.c, the one reader of offcpu-time's
 * payload (lib/format/offcpu_raw.h): the fields as the recorder writes
 * them (perf pads the RAW field, so a longer one reads), a field too short
 * or missing, a later version, a sum's count, and the state letters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "offcpu.h"

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
	offcpu__decode(&o, &r, sizeof(r) - 1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_states),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/format/marker.c, the one reader of the marker format
 * (issue 19): every well-known type decoded from the bytes the recorder
 * writes (struct perfmark_uevent_hdr, then the payload), payloads too
 * short for their fields, unknown versions, RAW fields too short for their
 * header or their size, printf text without its NUL; and range pairing:
 * nesting, names, threads, ends without a begin, reuse of closed places.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "marker.h"

/* A RAW field as the recorder writes it: header, then payload. */
struct raw {
	uint8_t b[sizeof(struct perfmark_uevent_hdr) + 256];
	size_t n;
};

static struct raw uevent(uint16_t version, uint16_t flags, uint32_t type, const void *payload,
			 uint32_t size)
{
	struct raw r = { .n = sizeof(struct perfmark_uevent_hdr) + size };
	struct perfmark_uevent_hdr h = { .version = version, .flags = flags, .type = type,
					 .size = size, .orig_size = size + 10 };

	memcpy(r.b, &h, sizeof(h));
	memcpy(r.b + sizeof(h), payload, size);
	return r;
}

static struct marker decode(const struct raw *r)
{
	struct marker m;

	marker__decode(&m, MARKER_UEVENT, r->b, r->n);
	return m;
}

static void test_event(void **state)
{
	(void)state;
	assert_int_equal(marker__event("perfmark:printf"), MARKER_PRINTF);
	assert_int_equal(marker__event("perfmark:uevent"), MARKER_UEVENT);
	assert_int_equal(marker__event("perfmark:other"), MARKER_NOT);
	assert_int_equal(marker__event("cpu-clock"), MARKER_NOT);
	assert_int_equal(marker__event(NULL), MARKER_NOT);
}

static void test_string(void **state)
{
	struct raw r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_STRING, "hi\0junk", 7);
	struct marker m = decode(&r);

	(void)state;
	assert_int_equal(m.state, MARKER_OK);
	assert_int_equal(m.type, PERFMARK_TYPE_STRING);
	assert_int_equal(m.size, 7);
	assert_int_equal(m.orig_size, 17);
	assert_int_equal(m.len, 7);
	assert_int_equal(m.text_len, 2);
	assert_memory_equal(m.text, "hi", 2);
	/* empty: a text of no bytes, not none */
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_STRING, "", 0);
	m = decode(&r);
	assert_int_equal(m.state, MARKER_OK);
	assert_non_null(m.text);
	assert_int_equal(m.text_len, 0);
}

static void test_printf(void **state)
{
	struct marker m;

	(void)state;
	marker__decode(&m, MARKER_PRINTF, "hello\0\0\0", 8);
	assert_int_equal(m.state, MARKER_OK);
	assert_int_equal(m.type, PERFMARK_TYPE_STRING);
	assert_int_equal(m.version, PERFMARK_UEVENT_VERSION);
	assert_int_equal(m.len, 5);
	assert_int_equal(m.size, 6);            /* with its NUL */
	assert_int_equal(m.text_len, 5);
	assert_memory_equal(m.text, "hello", 5);
	/* no NUL in the field: all of it, size without one */
	marker__decode(&m, MARKER_PRINTF, "abc", 3);
	assert_int_equal(m.len, 3);
	assert_int_equal(m.size, 3);
	assert_int_equal(m.text_len, 3);
	/* no RAW field at all */
	marker__decode(&m, MARKER_PRINTF, NULL, 16);
	assert_int_equal(m.state, MARKER_OK);
	assert_int_equal(m.len, 0);
	assert_int_equal(m.text_len, 0);
}

static void test_ranges_decode(void **state)
{
	struct raw r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_RANGE_BEGIN, "parse\0", 6);
	struct marker m = decode(&r);

	(void)state;
	assert_int_equal(m.type, PERFMARK_TYPE_RANGE_BEGIN);
	assert_int_equal(m.text_len, 5);
	assert_memory_equal(m.text, "parse", 5);
	/* cut by the recorder: no NUL, still a name (issue 18 case 12) */
	r = uevent(PERFMARK_UEVENT_VERSION, PERFMARK_UEVENT_F_TRUNCATED, PERFMARK_TYPE_RANGE_END,
		   "longna", 6);
	m = decode(&r);
	assert_int_equal(m.type, PERFMARK_TYPE_RANGE_END);
	assert_int_equal(m.flags, PERFMARK_UEVENT_F_TRUNCATED);
	assert_int_equal(m.text_len, 6);
	/* no bytes: no name */
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_RANGE_END, "", 0);
	m = decode(&r);
	assert_int_equal(m.state, MARKER_OK);
	assert_null(m.text);
}

static void test_counter(void **state)
{
	uint8_t p[16];
	int64_t v = -42;
	struct raw r;
	struct marker m;

	(void)state;
	memcpy(p, &v, 8);
	memcpy(p + 8, "rounds\0", 7);
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_COUNTER, p, 15);
	m = decode(&r);
	assert_true(m.has_value);
	assert_int_equal(m.value, -42);
	assert_int_equal(m.text_len, 6);
	assert_memory_equal(m.text, "rounds", 6);
	/* a value and no name */
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_COUNTER, p, 8);
	m = decode(&r);
	assert_true(m.has_value);
	assert_null(m.text);
	/* too short for the value */
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_COUNTER, p, 7);
	m = decode(&r);
	assert_int_equal(m.state, MARKER_OK);
	assert_false(m.has_value);
	assert_null(m.text);
}

static void test_jit(void **state)
{
	uint8_t p[32];
	uint64_t addr = 0x7f0000001000, size = 12;
	struct raw r;
	struct marker m;

	(void)state;
	memcpy(p, &addr, 8);
	memcpy(p + 8, &size, 8);
	memcpy(p + 16, "jitted_loop", 11);
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_JIT_CODE, p, 27);
	m = decode(&r);
	assert_true(m.has_code);
	assert_int_equal(m.code_addr, addr);
	assert_int_equal(m.code_size, 12);
	assert_int_equal(m.text_len, 11);
	assert_memory_equal(m.text, "jitted_loop", 11);
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_JIT_CODE, p, 16);
	m = decode(&r);
	assert_true(m.has_code);
	assert_null(m.text);
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_JIT_CODE, p, 15);
	m = decode(&r);
	assert_false(m.has_code);
	assert_null(m.text);
}

static void test_app_and_flags(void **state)
{
	struct raw r = uevent(PERFMARK_UEVENT_VERSION,
			      PERFMARK_UEVENT_F_TRUNCATED | PERFMARK_UEVENT_F_FAULT,
			      PERFMARK_TYPE_APP_FIRST + 7, "\x01\x02\x03", 3);
	struct marker m = decode(&r);

	(void)state;
	assert_int_equal(m.state, MARKER_OK);
	assert_int_equal(m.type, PERFMARK_TYPE_APP_FIRST + 7);
	assert_int_equal(m.flags, PERFMARK_UEVENT_F_TRUNCATED | PERFMARK_UEVENT_F_FAULT);
	assert_int_equal(m.len, 3);
	assert_memory_equal(m.data, "\x01\x02\x03", 3);
	assert_null(m.text);
	assert_false(m.has_value || m.has_code);
}

static void test_bad(void **state)
{
	struct raw r = uevent(PERFMARK_UEVENT_VERSION + 1, 0, PERFMARK_TYPE_RANGE_BEGIN, "x\0", 2);
	struct marker m = decode(&r);

	(void)state;
	/* a version this reader does not know: its header, no fields */
	assert_int_equal(m.state, MARKER_VERSION);
	assert_int_equal(m.version, PERFMARK_UEVENT_VERSION + 1);
	assert_int_equal(m.type, PERFMARK_TYPE_RANGE_BEGIN);
	assert_int_equal(m.len, 2);
	assert_null(m.text);
	/* a RAW field too short for the header: the bytes there are */
	marker__decode(&m, MARKER_UEVENT, r.b, sizeof(struct perfmark_uevent_hdr) - 1);
	assert_int_equal(m.state, MARKER_MALFORMED);
	assert_int_equal(m.type, MARKER_TYPE_NONE);
	assert_int_equal(m.version, 0);
	assert_ptr_equal(m.data, r.b);
	assert_int_equal(m.len, sizeof(struct perfmark_uevent_hdr) - 1);
	/* a size past the RAW field: truncated record */
	r = uevent(PERFMARK_UEVENT_VERSION, 0, PERFMARK_TYPE_RANGE_BEGIN, "abcdef", 6);
	marker__decode(&m, MARKER_UEVENT, r.b, r.n - 1);
	assert_int_equal(m.state, MARKER_MALFORMED);
	assert_int_equal(m.len, r.n - 1);
	assert_null(m.text);
	/* no RAW field */
	marker__decode(&m, MARKER_UEVENT, NULL, 100);
	assert_int_equal(m.state, MARKER_MALFORMED);
	assert_int_equal(m.len, 0);
}

static void test_payload(void **state)
{
	uint8_t p[12];
	int64_t v = 7;
	struct marker m;

	(void)state;
	memcpy(p, &v, 8);
	memcpy(p + 8, "cnt", 3);
	marker__decode_payload(&m, PERFMARK_TYPE_COUNTER, PERFMARK_UEVENT_F_TRUNCATED, p, 11);
	assert_int_equal(m.state, MARKER_OK);
	assert_true(m.has_value);
	assert_int_equal(m.value, 7);
	assert_int_equal(m.text_len, 3);
	assert_int_equal(m.flags, PERFMARK_UEVENT_F_TRUNCATED);
}

/* ---- pairing ---------------------------------------------------------------------- */

#define BEGIN(mp, thr, name, t, out) \
	assert_int_equal(marker_pairs__begin(mp, thr, name, strlen(name), t, out), 0)
#define END(mp, thr, name, t, out) marker_pairs__end(mp, thr, name, strlen(name), t, out)

static void test_pair_nesting(void **state)
{
	struct marker_pairs *mp;
	struct marker_pair a, b, c, e;

	(void)state;
	assert_int_equal(marker_pairs__new(&mp), 0);
	assert_int_equal(marker_pairs__top(mp, 7), MARKER_NO_RANGE);
	BEGIN(mp, 7, "frame", 100, &a);
	assert_int_equal(a.id, 0);
	assert_int_equal(a.parent, MARKER_NO_RANGE);
	assert_int_equal(a.depth, 0);
	BEGIN(mp, 7, "update", 110, &b);
	assert_int_equal(b.id, 1);
	assert_int_equal(b.parent, 0);
	assert_int_equal(b.depth, 1);
	BEGIN(mp, 7, "frame", 120, &c);        /* a frame in a frame */
	assert_int_equal(c.parent, 1);
	assert_int_equal(c.depth, 2);
	assert_int_equal(marker_pairs__top(mp, 7), 2);
	/* an end closes the innermost of its name */
	assert_true(END(mp, 7, "frame", 150, &e));
	assert_int_equal(e.id, 2);
	assert_int_equal(e.begin, 120);
	assert_int_equal(e.duration, 30);
	assert_int_equal(marker_pairs__top(mp, 7), 1);
	/* the outer frame ends before update: update stays open, the innermost */
	assert_true(END(mp, 7, "frame", 160, &e));
	assert_int_equal(e.id, 0);
	assert_int_equal(e.duration, 60);
	assert_int_equal(marker_pairs__top(mp, 7), 1);
	BEGIN(mp, 7, "x", 170, &a);
	assert_int_equal(a.parent, 1);
	assert_int_equal(a.depth, 1);
	assert_true(END(mp, 7, "update", 180, &e));
	assert_int_equal(e.id, 1);
	assert_int_equal(marker_pairs__top(mp, 7), 3);
	assert_true(END(mp, 7, "x", 175, &e));
	assert_int_equal(marker_pairs__top(mp, 7), MARKER_NO_RANGE);
	/* nothing open of that name any more */
	assert_false(END(mp, 7, "frame", 200, &e));
	marker_pairs__free(mp);
}

static void test_pair_threads(void **state)
{
	struct marker_pairs *mp;
	struct marker_pair a, e;

	(void)state;
	assert_int_equal(marker_pairs__new(&mp), 0);
	BEGIN(mp, 1, "io", 10, &a);
	BEGIN(mp, 2, "io", 20, &a);
	assert_int_equal(a.parent, MARKER_NO_RANGE);   /* another thread's range is no parent */
	assert_int_equal(a.depth, 0);
	assert_false(END(mp, 3, "io", 30, &e));        /* no range on thread 3 */
	assert_false(END(mp, 1, "other", 30, &e));     /* a name never begun */
	assert_true(END(mp, 1, "io", 40, &e));
	assert_int_equal(e.id, 0);
	assert_int_equal(e.duration, 30);
	/* an end earlier than its begin (a hostile file): 0, not a wrap */
	assert_true(END(mp, 2, "io", 5, &e));
	assert_int_equal(e.id, 1);
	assert_int_equal(e.duration, 0);
	/* a name is all its bytes: "ab" does not end "abc" */
	BEGIN(mp, 1, "abc", 50, &a);
	assert_false(END(mp, 1, "ab", 60, &e));
	assert_true(END(mp, 1, "abc", 60, &e));
	assert_int_equal(e.id, a.id);
	marker_pairs__free(mp);
}

/* Ids keep counting while the places of closed ranges are reused. */
static void test_pair_reuse(void **state)
{
	struct marker_pairs *mp;
	struct marker_pair a, e;

	(void)state;
	assert_int_equal(marker_pairs__new(&mp), 0);
	BEGIN(mp, 1, "outer", 0, &a);
	for (uint32_t i = 0; i < 100000; i++) {
		BEGIN(mp, 1, "r", i, &a);
		assert_int_equal(a.id, i + 1);
		assert_int_equal(a.parent, 0);
		assert_int_equal(a.depth, 1);
		assert_true(END(mp, 1, "r", i + 1, &e));
		assert_int_equal(e.id, i + 1);
		assert_int_equal(e.duration, 1);
	}
	assert_int_equal(marker_pairs__top(mp, 1), 0);
	/* 100,000 ends matching no begin: nothing changes */
	for (uint32_t i = 0; i < 100000; i++)
		assert_false(END(mp, 1, "r", i, &e));
	assert_true(END(mp, 1, "outer", 10, &e));
	assert_int_equal(e.id, 0);
	marker_pairs__free(mp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_printf),
		cmocka_unit_test(test_ranges_decode),
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_jit),
		cmocka_unit_test(test_app_and_flags),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_pair_nesting),
		cmocka_unit_test(test_pair_threads),
		cmocka_unit_test(test_pair_reuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/engine/window.c: time order out of arrival order,
 * the cutoff, late records keeping their time and counted (late; and
 * late_unordered when older than what perf 6.1 has already flushed), empty
 * flushes not counting as rounds, an output error keeping the rest, the
 * memory cap and its counted overflow.
 * t-session-late.sh checks the same cases against stock perf.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "window.h"

struct out {
	char s[1024];
	size_t len;
	int fail_at;         /* out() fails on this call (1-based), 0: never */
	int calls;
};

static int out(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct out *o = ctx;
	char tag;

	assert_int_equal(len, 8);
	memcpy(&tag, rec, 1);
	if (++o->calls == o->fail_at)
		return -EPIPE;
	if (o->len + 32 > sizeof(o->s))
		return 0;
	o->len += snprintf(o->s + o->len, sizeof(o->s) - o->len, "%c%llu ", tag,
			   (unsigned long long)time);
	return 0;
}

static void add(struct window *r, char tag, uint64_t time)
{
	char *p = window__alloc(r, 8, time);

	assert_non_null(p);
	memset(p, 0, 8);
	p[0] = tag;
}

/* add records spelled as out() prints them: "a30 b10" = 'a' at 30, then 'b' at 10 */
static void adds(struct window *r, const char *recs)
{
	char tag;
	unsigned long long time;
	int used;

	while (sscanf(recs, " %c%llu%n", &tag, &time, &used) == 2) {
		add(r, tag, time);
		recs += used;
	}
	assert_int_equal(*recs, '\0');
}

static void test_order(void **state)
{
	struct window *r;
	struct window_stats st;
	struct out o = { 0 };

	assert_int_equal(window__new(&r), 0);
	adds(r, "a30 b10 c20 d10 e50");   /* b10, d10: equal times keep arrival order */
	assert_int_equal(window__flush(r, 30, out, &o), 1);
	assert_string_equal(o.s, "b10 d10 c20 a30 ");
	window__stats(r, &st);
	assert_int_equal(st.held, 1);
	assert_int_equal(window__flushed(r), 30);
	assert_int_equal(window__flush(r, 40, out, &o), 0);   /* nothing went out */
	assert_int_equal(window__flushed(r), 40);
	assert_int_equal(window__flush(r, UINT64_MAX, out, &o), 1);
	assert_string_equal(o.s, "b10 d10 c20 a30 e50 ");
	window__stats(r, &st);
	assert_int_equal(st.held + st.late + st.late_unordered, 0);
	window__free(r);
}

/* the rounds of tests/t-session-late.sh: 1000 2000 | 3000 | 1500 2500 | 4000 */
static void test_late(void **state)
{
	struct window *r;
	struct window_stats st;
	struct out o = { 0 };

	assert_int_equal(window__new(&r), 0);
	adds(r, "s1000 s2000");
	assert_int_equal(window__flush(r, 2000, out, &o), 1);
	add(r, 's', 3000);
	assert_int_equal(window__flush(r, 3000, out, &o), 1);
	/* an empty flush is no round for perf: the horizon stays */
	assert_int_equal(window__flush(r, 3100, out, &o), 0);
	add(r, 'u', 1500);           /* older than round 1's max: perf has flushed past it */
	add(r, 'l', 2500);           /* late, but perf still holds round 2's records */
	assert_int_equal(window__flush(r, 3200, out, &o), 1);
	window__stats(r, &st);
	assert_int_equal(st.late, 2);
	assert_int_equal(st.late_unordered, 1);
	add(r, 's', 4000);
	assert_int_equal(window__flush(r, 4000, out, &o), 1);
	/* true times kept, each round in time order */
	assert_string_equal(o.s, "s1000 s2000 s3000 u1500 l2500 s4000 ");
	window__free(r);
}

static void test_out_error(void **state)
{
	struct window *r;
	struct window_stats st;
	struct out o = { .fail_at = 2 };

	assert_int_equal(window__new(&r), 0);
	adds(r, "a1 b2 c3");
	assert_int_equal(window__flush(r, 10, out, &o), -EPIPE);
	window__stats(r, &st);
	assert_int_equal(st.held, 2);          /* b and c stay */
	o.fail_at = 0;
	assert_int_equal(window__flush(r, 10, out, &o), 1);
	assert_string_equal(o.s, "a1 b2 c3 ");
	window__free(r);
}

/* many records, many flushes: the buffer compacts and grows correctly */
static void test_volume(void **state)
{
	struct window *r;
	struct out o = { 0 };
	uint64_t t;
	int i;

	assert_int_equal(window__new(&r), 0);
	for (i = 0; i < 200000; i++) {
		t = (uint64_t)i * 10 + (uint64_t)(i * 7919 % 97);   /* jittered, never more than 970 behind */
		add(r, 'x', t);
		if (i % 1000 == 999) {
			o.len = 0;
			assert_true(window__flush(r, t - 1000, out, &o) >= 0);
		}
	}
	o.len = 0;
	window__flush(r, UINT64_MAX, out, &o);
	{
		struct window_stats st;

		window__stats(r, &st);
		assert_int_equal(st.late, 0);
		assert_int_equal(st.held, 0);
	}
	window__free(r);
}

/*
 * Records of many sizes over many blocks, some held back far longer (a
 * far-future time): every record comes out once, intact, in time order,
 * while the blocks of what went out are used again.
 */
struct seen {
	uint64_t last, count, sum;
};

static int check_bytes(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct seen *sn = ctx;
	const unsigned char *p = rec;
	uint64_t id;

	assert_true(len >= 8 && len % 8 == 0);
	memcpy(&id, p, 8);
	for (size_t k = 8; k < len; k++)
		assert_int_equal(p[k], (unsigned char)(id + k));
	assert_true(time >= sn->last);
	sn->last = time;
	sn->count++;
	sn->sum += id;
	return 0;
}

static void test_blocks_reused(void **state)
{
	struct window *r;
	struct seen sn = { 0 };
	uint64_t n = 60000, want = 0;

	assert_int_equal(window__new(&r), 0);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t len = 8 + (uint32_t)(i * 2654435761u % 600) * 8;
		uint64_t t = i % 5000 == 17 ? 1000000000 + i : i * 10;
		unsigned char *p = window__alloc(r, len, t);

		assert_non_null(p);
		memcpy(p, &i, 8);
		for (size_t k = 8; k < len; k++)
			p[k] = (unsigned char)(i + k);
		want += i;
		if (i % 997 == 996)
			assert_true(window__flush(r, i * 10 - 2000, check_bytes, &sn) >= 0);
	}
	assert_true(window__flush(r, UINT64_MAX, check_bytes, &sn) >= 0);
	assert_int_equal(sn.count, n);
	assert_int_equal(sn.sum, want);
	window__free(r);
}

/*
 * The cap (issue 18 case 4): far more than the cap arrives between
 * flushes.  Each refused alloc lets the oldest half go at once (as
 * stage_alloc does): the memory held never exceeds the cap, every record
 * still comes out once, intact, each round in time order, and the early
 * ones are counted.  In time order as they come, none is late.  far: some
 * have times far ahead; each keeps its block, so once a few of them hold
 * every block they go out early too (the records after them are late).
 */
static void cap_run(bool far)
{
	struct window *r;
	struct window_stats st;
	struct seen sn = { 0 };
	uint64_t n = 40000, want = 0, overflows = 0;

	assert_int_equal(window__new(&r), 0);
	window__set_cap(r, 1);          /* raised to WINDOW_MIN_BYTES */
	for (uint64_t i = 0; i < n; i++) {
		uint32_t len = 8 + (uint32_t)(i * 2654435761u % 512) * 8;
		uint64_t t = far && i % 1000 == 7 ? 1000000000000000ull + i : i * 10;
		unsigned char *p;

		while (!(p = window__alloc(r, len, t))) {
			assert_true(window__full(r));
			if (far)
				sn.last = 0;    /* a round of its own */
			assert_int_equal(window__overflow(r, check_bytes, &sn), 1);
			overflows++;
		}
		memcpy(p, &i, 8);
		for (size_t k = 8; k < len; k++)
			p[k] = (unsigned char)(i + k);
		want += i;
		window__stats(r, &st);
		assert_true(st.bytes <= WINDOW_MIN_BYTES);
	}
	window__stats(r, &st);
	assert_true(overflows > 10);
	assert_true(st.overflow >= overflows && st.overflow < n);
	if (!far)
		assert_int_equal(st.late, 0);
	if (far)
		sn.last = 0;
	assert_true(window__flush(r, UINT64_MAX, check_bytes, &sn) >= 0);
	assert_int_equal(sn.count, n);
	assert_int_equal(sn.sum, want);
	window__free(r);
}

static void test_cap(void **state)
{
	cap_run(false);
	cap_run(true);
}

/* interleaved sorted runs (per-thread batches), random jitter: same order as a full sort */
struct rec {
	uint64_t time, seq;
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct rec *want_v;
static size_t want_i;

static int check_out(void *ctx, uint64_t time, const void *rec, size_t len)
{
	uint64_t seq;

	memcpy(&seq, rec, sizeof(seq));
	assert_int_equal(time, want_v[want_i].time);
	assert_int_equal(seq, want_v[want_i].seq);
	want_i++;
	return 0;
}

static void test_sort_runs(void **state)
{
	static struct rec v[50000];
	int round;

	srand(11);
	for (round = 0; round < 40; round++) {
		struct window *r;
		size_t n = (size_t)(rand() % 50000) + 1, i, run = 0;
		uint64_t t = 0;
		int mode = round % 4;

		for (i = 0; i < n; i++) {
			if (mode == 0) {                 /* sorted runs of random length */
				if (run-- == 0) {
					run = (size_t)(rand() % 500);
					t = (uint64_t)(rand() % 100000);
				}
				t += (uint64_t)(rand() % 3);
			} else if (mode == 3) {          /* a few long runs (one merge through a heap) */
				if (run-- == 0) {
					run = n / (size_t)(rand() % 64 + 1);
					t = (uint64_t)(rand() % 100000);
				}
				t += (uint64_t)(rand() % 3);
			} else if (mode == 1) {          /* already sorted */
				t += (uint64_t)(rand() % 2);
			} else {                         /* random */
				t = (uint64_t)(rand() % 1000);
			}
			v[i].time = t;
			v[i].seq = i;
		}
		assert_int_equal(window__new(&r), 0);
		for (i = 0; i < n; i++) {
			char *p = window__alloc(r, 8, v[i].time);

			memcpy(p, &v[i].seq, 8);
		}
		qsort(v, n, sizeof(v[0]), rec_cmp);
		want_v = v;
		want_i = 0;
		assert_int_equal(window__flush(r, UINT64_MAX, check_out, NULL), 1);
		assert_int_equal(want_i, n);
		window__free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_late),
		cmocka_unit_test(test_out_error),
		cmocka_unit_test(test_volume),
		cmocka_unit_test(test_sort_runs),
		cmocka_unit_test(test_blocks_reused),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

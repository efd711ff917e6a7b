// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/perfmark/format.c, perf_printf's own formatter: byte for
 * byte what vsnprintf writes, for every conversion it takes (each length,
 * every digit count, the extremes, random values), and -1 (never a byte
 * past the buffer) for what it leaves to vsnprintf: flags, widths, other
 * conversions, a text that does not fit.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "perfmark.h"
#include "internal.h"

#define CAP (PERFMARK_MAX_PAYLOAD + 1)   /* perf_printf's buffer */
#define GUARD 256

static char got[CAP + GUARD], want[2 * CAP];

/* pm_format into a buffer of cap bytes, the guard after it checked untouched */
static int format(size_t cap, const char *fmt, va_list *ap)
{
	int n;

	memset(got, 0x5a, sizeof(got));
	n = pm_format(got, cap, fmt, ap);
	for (size_t i = cap; i < cap + GUARD; i++)
		assert_int_equal(got[i], 0x5a);
	return n;
}

/*
 * pm_format's bytes and length against vsnprintf's (of the same arguments,
 * again): the same, or (may_decline) -1; never a byte past cap.
 */
static int against(size_t cap, bool may_decline, const char *fmt, va_list *ap, va_list *again)
{
	int wn = vsnprintf(want, sizeof(want), fmt, *again);
	int n = format(cap, fmt, ap);

	if (n == -1 && may_decline)
		return n;
	if (n != wn)
		fail_msg("\"%s\": %d bytes, vsnprintf %d (\"%s\")", fmt, n, wn, want);
	assert_true((size_t)n < cap);
	assert_memory_equal(got, want, (size_t)wn + 1);
	return n;
}

/* the same bytes and length as vsnprintf (which must fit cap) */
static __attribute__((format(printf, 2, 3))) void same_cap(size_t cap, const char *fmt, ...)
{
	va_list ap, again;

	va_start(ap, fmt);
	va_start(again, fmt);
	against(cap, false, fmt, &ap, &again);
	va_end(again);
	va_end(ap);
}

#define same(...) same_cap(CAP, __VA_ARGS__)

/* left to vsnprintf */
static void declines_cap(size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = format(cap, fmt, &ap);
	va_end(ap);
	if (n != -1)
		fail_msg("\"%s\": formatted (%d bytes), should be left to vsnprintf", fmt, n);
}

#define declines(...) declines_cap(CAP, __VA_ARGS__)

static void test_plain(void **state)
{
	char text[200];

	(void)state;
	same("%s", "");
	same("bench");
	same("100%% sure %%");
	same("%%%%");
	/* every length around the byte-by-byte prefix, a conversion anywhere */
	for (size_t len = 0; len < sizeof(text) - 1; len++) {
		char fmt[sizeof(text) + 8];

		for (size_t i = 0; i < len; i++)
			text[i] = (char)('a' + i % 26);
		text[len] = '\0';
		same_cap(CAP, text, 0);
		for (size_t at = 0; at <= len; at += 3) {
			snprintf(fmt, sizeof(fmt), "%.*s%%d%s", (int)at, text, text + at);
			same_cap(CAP, fmt, (int)len);
		}
	}
}

static void test_decimal(void **state)
{
	uint64_t p = 1;

	(void)state;
	same("%d %d %d %d %d", 0, 1, -1, INT_MAX, INT_MIN);
	same("%i %i", 42, -42);
	same("%ld %ld %ld", 0L, LONG_MAX, LONG_MIN);
	same("%lld %lld", LLONG_MAX, LLONG_MIN);
	same("%u %u %u", 0u, 1u, UINT_MAX);
	same("%lu %llu", ULONG_MAX, ULLONG_MAX);
	/* every digit count, each side of each power of ten */
	for (int i = 0; i < 20; i++, p *= 10) {
		same("%lu %lu %lu", p - 1, p, p + 1);
		if (p <= (uint64_t)LONG_MAX) {
			same("%ld %ld %ld", (long)p - 1, (long)p, (long)p + 1);
			same("%ld %ld %ld", -(long)p + 1, -(long)p, -(long)p - 1);
		}
		if (p <= UINT_MAX)
			same("%u %d", (unsigned)p, (int)p);
	}
	same("[%hhd %hhd %hhd %hhu %hhu]", 127, -128, 300, 255, 256);
	same("[%hd %hd %hu %hu]", 32767, 70000, 65535, 65536);
	same("%jd %ju %zd %zu %td %tu", INTMAX_MIN, UINTMAX_MAX, (ssize_t)-1, SIZE_MAX,
	     (ptrdiff_t)PTRDIFF_MIN, (size_t)PTRDIFF_MAX);
}

static void test_pow2(void **state)
{
	(void)state;
	same("%x %X %o", 0u, 0u, 0u);
	for (int b = 0; b < 64; b++) {
		uint64_t v = 1ull << b;

		same("%lx %lX %lo", v - 1, v - 1, v - 1);
		same("%lx %lX %lo", v, v, v);
		same("%lx %lX %lo", v + 1, v + 1, v + 1);
	}
	same("%lx %lX %lo", ULONG_MAX, ULONG_MAX, ULONG_MAX);
	same("%x %X %o", UINT_MAX, 0xabcdefu, 0777u);
	same("%hhx %hx %hho %ho %llx %jX %zx %to", 0x1ff, 0x1ffff, 0x1ff, 0x1ffff,
	     0xfedcba9876543210ull, UINTMAX_MAX, SIZE_MAX, (ptrdiff_t)-1);
}

static void test_random(void **state)
{
	(void)state;
	srandom(24);
	for (int i = 0; i < 200000; i++) {
		uint64_t v = (uint64_t)random() << 33 ^ (uint64_t)random() << 11 ^ (uint64_t)random();

		v >>= random() % 64;    /* every length, not mostly the longest */
		same("v=%lu %ld %lx %lX %lo|", v, (long)v, v, v, v);
		same("%u%d%x", (unsigned)v, (int)v, (unsigned)(v >> 7));
	}
}

static void test_char_string_pointer(void **state)
{
	const char *volatile none = NULL;
	void *volatile nil = NULL;

	(void)state;
	same("%c%c%c", 'a', 0x7f, '%');
	same("[%s] [%s]", "word", "");
	same("[%s]", none);
	same("%p %p %p", nil, (void *)1, (void *)UINTPTR_MAX);
	same("%p", (void *)&state);
	same("%s=%d at %p (%c)", "name", -3, (void *)0x7ffc1234, 'x');
}

/* what pm_format leaves to vsnprintf: -1, and nothing past the buffer */
static void test_declines(void **state)
{
	(void)state;
	declines("%5d", 1);
	declines("%-d", 1);
	declines("%+d", 1);
	declines("%05d", 1);
	declines("%.3s", "abcdef");
	declines("%*d", 3, 1);
	declines("%f", 1.5);
	declines("%g", 1.5);
	declines("%e", 1.5);
	declines("%a", 1.5);
	declines("%lc", 'x');
	declines("%ls", L"x");
	declines("%hs", "x");
	declines("%lp", (void *)1);
	declines("%m");
	declines("%#x", 1u);
	declines("%1$d", 1);
	declines("tail %");
	declines("%q");
	declines("%Lf", 1.0L);
}

/* either formatted as vsnprintf does, or left to it; never a byte past cap */
static __attribute__((format(printf, 2, 3))) int same_or_declines(size_t cap, const char *fmt, ...)
{
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_start(again, fmt);
	n = against(cap, true, fmt, &ap, &again);
	va_end(again);
	va_end(ap);
	return n;
}

/* texts that do not fit: -1 (vsnprintf truncates them), never a byte too many */
static void test_too_long(void **state)
{
	static char text[CAP + 100];
	size_t room = CAP - 64;   /* pm_format keeps the widest conversion spare */
	int declined = 0;

	(void)state;
	/* literal text: up to room fits, one more does not */
	memset(text, 't', room);
	same_cap(CAP, text, 0);
	same("%s", text);
	text[room] = 'u';
	declines_cap(CAP, text, 0);
	declines("%s", text);
	declines("x%s", text);
	/* and after a conversion: short text (byte by byte), long (strchrnul) */
	text[room - 2] = '\0';
	same("%sab", text);
	declines("%sabc", text);
	text[room - 20] = '\0';
	same("%s01234567890123456789", text);
	declines("%s012345678901234567890", text);
	memset(text, 't', sizeof(text) - 1);
	declines_cap(CAP, text, 0);
	declines("%s", text);
	/* conversions back to back at the end: formatted while they fit */
	for (size_t len = room - 70; len <= room; len++) {
		text[len] = '\0';
		declined += same_or_declines(CAP, "%s%lu%lu%lu", text, ULONG_MAX, ULONG_MAX,
					     ULONG_MAX) < 0;
		declined += same_or_declines(CAP, "%s%ld%lo%p", text, LONG_MIN, ULONG_MAX,
					     (void *)UINTPTR_MAX) < 0;
		text[len] = 't';
	}
	assert_true(declined > 0);
	/* small buffers */
	same_cap(100, "%s", "012345678901234567890123456789012345");
	declines_cap(100, "%s", "0123456789012345678901234567890123456");
	for (size_t cap = 0; cap < 100; cap++) {
		same_or_declines(cap, "%lu%lu", ULONG_MAX, ULONG_MAX);
		same_or_declines(cap, "ab%s%o", "cd", 7u);
	}
	declines_cap(64, "x");
	declines_cap(0, "x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_pow2),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_char_string_pointer),
		cmocka_unit_test(test_declines),
		cmocka_unit_test(test_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/common/escape.c: each output kind's escaping of the
 * names an attacker puts in a recording (issue 18): a script in an SVG, a
 * terminal escape, invalid UTF-8 in JSON, control characters in XML.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/* What fn wrote for s (n bytes), as a NUL-terminated string to free. */
static char *run(void (*fn)(FILE *, const char *, size_t), const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, s, n);
	fclose(f);
	return buf;
}

static char *run_term(const char *s, size_t n, unsigned flags, size_t *cols)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*cols = escape_term(f, s, n, flags);
	fclose(f);
	return buf;
}

#define TERM(in, flags, cols) run_term(in, sizeof(in) - 1, flags, cols)

#define CHECK(fn, in, want) do { \
		char *got = run(fn, in, sizeof(in) - 1); \
		assert_string_equal(got, want); \
		free(got); \
	} while (0)

static void test_utf8(void **state)
{
	(void)state;
	assert_int_equal(escape_utf8_len((const uint8_t *)"a", 1), 1);
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xc3\xa9", 2), 2);
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xe2\x82\xac", 3), 3);
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xf0\x9f\x94\xa5", 4), 4);
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xc3\xa9", 1), 0);          /* cut */
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xc0\x80", 2), 0);          /* overlong */
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xed\xa0\x80", 3), 0);      /* surrogate */
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xf4\x90\x80\x80", 4), 0);  /* > U+10FFFF */
	assert_int_equal(escape_utf8_len((const uint8_t *)"\x80", 1), 0);
	assert_int_equal(escape_utf8_len((const uint8_t *)"\xff", 1), 0);
	assert_int_equal(escape_utf8_len((const uint8_t *)"", 0), 0);
}

static void test_cut(void **state)
{
	const char *s = "a\xc3\xa9\xff" "b\xe2\x82\xac";
	size_t k;

	(void)state;
	assert_int_equal(escape_utf8_cut(s, strlen(s), 2, &k), 3);   /* never half of é */
	assert_int_equal(k, 2);
	assert_int_equal(escape_utf8_cut(s, strlen(s), 3, &k), 4);   /* the bad byte: one */
	assert_int_equal(escape_utf8_cut(s, strlen(s), SIZE_MAX, &k), strlen(s));
	assert_int_equal(k, 5);
	assert_int_equal(escape_utf8_cut(s, 2, SIZE_MAX, &k), 2);    /* a cut sequence: bytes */
	assert_int_equal(k, 2);
}

static void test_json(void **state)
{
	(void)state;
	CHECK(escape_json, "plain", "\"plain\"");
	CHECK(escape_json, "q\"b\\", "\"q\\\"b\\\\\"");
	CHECK(escape_json, "\x1b[31m\n\x7f", "\"\\u001b[31m\\u000a\\u007f\"");
	CHECK(escape_json, "ok\xc3\xa9 bad\xff\xc3", "\"ok\xc3\xa9 bad\\ufffd\\ufffd\"");
	CHECK(escape_json, "a\0b", "\"a\\u0000b\"");
	CHECK(escape_json, "</script>&", "\"</script>&\"");
	CHECK(escape_json_html, "</script><!--&", "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
}

/* json-c trees serialize their strings with escape_json's code, and parse back */
static void test_json_object(void **state)
{
	const char in[] = "x\xff\x1b\"\\\xe2\x82\xac";
	struct json_object *arr = json_object_new_array(), *back;
	const char *text;
	char *want = run(escape_json, in, sizeof(in) - 1);
	char *wrapped;

	(void)state;
	json_object_array_add(arr, escape_json_object(in, sizeof(in) - 1));
	text = json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN);
	assert_int_equal(asprintf(&wrapped, "[%s]", want), (int)strlen(want) + 2);
	assert_string_equal(text, wrapped);
	back = json_tokener_parse(text);
	assert_non_null(back);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(back, 0)),
			    "x\xef\xbf\xbd\x1b\"\\\xe2\x82\xac");
	json_object_put(back);
	json_object_put(arr);
	free(want);
	free(wrapped);
}

static void test_xml(void **state)
{
	(void)state;
	CHECK(escape_xml, "</text><script>alert(1)</script>",
	      "&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
	CHECK(escape_xml, "a&b\"'", "a&amp;b&quot;&#39;");
	/* no control character XML 1.0 forbids, no invalid UTF-8: U+FFFD each */
	CHECK(escape_xml, "\x01x\x1b\xff\xef\xbf\xbe\t", "\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\t");
	CHECK(escape_xml, "caf\xc3\xa9", "caf\xc3\xa9");
}

static void test_term(void **state)
{
	size_t cols;
	char *got;

	(void)state;
	got = TERM("\x1b]0;pwn\x07\x1b[2J", 0, &cols);
	assert_string_equal(got, "\\x1b]0;pwn\\x07\\x1b[2J");
	assert_int_equal(cols, strlen(got));
	free(got);
	got = TERM("a\nb\tc\r\x7f", 0, &cols);
	assert_string_equal(got, "a\\nb\\tc\\r\\x7f");
	free(got);
	/* invalid bytes (0x9b is CSI on an 8-bit terminal), C1 and bidi controls */
	got = TERM("\x9b" "31m\xc2\x9b" "x\xe2\x80\xae" "y\xc3\xa9", 0, &cols);
	assert_string_equal(got, "\\x9b31m\\u009bx\\u202ey\xc3\xa9");
	assert_int_equal(cols, strlen(got) - 1);   /* é: one column */
	free(got);
	got = TERM("say \"hi\" \\", ESC_TERM_QUOTED, &cols);
	assert_string_equal(got, "say \\\"hi\\\" \\\\");
	free(got);
	got = TERM("a;b \"c\"", ESC_TERM_FOLDED, &cols);
	assert_string_equal(got, "a\\x3bb \"c\"");
	free(got);
	assert_int_equal(escape_term(NULL, "\x1b", 1, 0), 4);   /* counted, not written */
}

static void test_term_pad(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	escape_term_pad(f, "\x1b", 6);
	fputc('|', f);
	escape_term_pad(f, "\xc3\xa9", -3);
	fputc('|', f);
	escape_term_pad(f, "longer than", 4);
	fclose(f);
	assert_string_equal(buf, "  \\x1b|\xc3\xa9  |longer than");
	free(buf);
}

/* Prometheus label values: \ " and newline escaped, invalid UTF-8 and NUL replaced */
static void test_prom(void **state)
{
	char *o = run(escape_prom, "a\\b\"c\nd", 7);

	assert_string_equal(o, "a\\\\b\\\"c\\nd");
	free(o);
	o = run(escape_prom, "x\xff" "y\0z", 5);
	assert_string_equal(o, "x\xef\xbf\xbdy\xef\xbf\xbdz");
	free(o);
	o = run(escape_prom, "r\xc3\xa9nder\t", 8);
	assert_string_equal(o, "r\xc3\xa9nder\t");
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_object),
		cmocka_unit_test(test_xml),
		cmocka_unit_test(test_prom),
		cmocka_unit_test(test_term),
		cmocka_unit_test(test_term_pad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

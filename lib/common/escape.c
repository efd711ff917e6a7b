// SPDX-License-Identifier: LGPL-2.1-or-later
/* Names written where they are read: escape.h */
#include "escape.h"
#include "obuf.h"

#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <stdbool.h>
#include <string.h>

size_t escape_utf8_len(const uint8_t *p, size_t n)
{
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len;
	uint32_t cp;

	if (!n)
		return 0;
	len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 :
	      (p[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (len <= 1)
		return len;
	if (len > n)
		return 0;
	cp = p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	return cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : len;
}

/* The code point of a valid sequence of len bytes at p. */
static uint32_t code_point(const uint8_t *p, size_t len)
{
	uint32_t cp = len == 1 ? p[0] : p[0] & (0x7f >> len);

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

size_t escape_utf8_cut(const char *s, size_t n, size_t max, size_t *chars)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, k = 0;

	while (i < n && k < max) {
		size_t l = escape_utf8_len(p + i, n - i);

		i += l ? l : 1;
		k++;
	}
	if (chars)
		*chars = k;
	return i;
}

/* ---- where the text goes: a stream, or json-c's buffer ----------------------- */

typedef void put_fn(void *to, const char *s, size_t n);

static void put_file(void *to, const char *s, size_t n)
{
	if (to)
		fwrite(s, 1, n, to);
}

static void put_printbuf(void *to, const char *s, size_t n)
{
	printbuf_memappend(to, s, (int)n);
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_write(put_fn *put, void *to, const char *s, size_t n, bool html)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, run = 0;
	char esc[16];

	put(to, "\"", 1);
	while (i < n) {
		size_t l = escape_utf8_len(p + i, n - i);
		uint8_t c = p[i];
		const char *e = NULL;

		if (!l)
			e = "\\ufffd";
		else if (c == '"')
			e = "\\\"";
		else if (c == '\\')
			e = "\\\\";
		else if (l == 1 && (c < 0x20 || c == 0x7f || (html && (c == '<' || c == '>' || c == '&'))))
			e = esc, snprintf(esc, sizeof(esc), "\\u%04x", c);
		if (!e) {
			i += l;
			continue;
		}
		put(to, s + run, i - run);
		put(to, e, strlen(e));
		i += l ? l : 1;
		run = i;
	}
	put(to, s + run, n - run);
	put(to, "\"", 1);
}

void escape_json(FILE *f, const char *s, size_t n)
{
	json_write(put_file, f, s, n, false);
}

void escape_json_html(FILE *f, const char *s, size_t n)
{
	json_write(put_file, f, s, n, true);
}

static int json_object_serialize(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	json_write(put_printbuf, pb, json_object_get_string(o), (size_t)json_object_get_string_len(o),
		   false);
	return 0;
}

struct json_object *escape_json_object(const char *s, size_t n)
{
	struct json_object *o;

	if (n > INT32_MAX)
		n = INT32_MAX;
	o = json_object_new_string_len(s ? s : "", s ? (int)n : 0);
	if (o)
		json_object_set_serializer(o, json_object_serialize, NULL, NULL);
	return o;
}

/* ---- XML ------------------------------------------------------------------------- */

void escape_xml(FILE *f, const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, run = 0;

	while (i < n) {
		size_t l = escape_utf8_len(p + i, n - i);
		uint32_t cp = l ? code_point(p + i, l) : 0xfffd;
		const char *e = NULL;

		/* XML 1.0 has no way to write most controls, U+FFFE and U+FFFF */
		if (!l || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7f ||
		    cp == 0xfffe || cp == 0xffff)
			e = "\xef\xbf\xbd";
		else if (cp == '<')
			e = "&lt;";
		else if (cp == '>')
			e = "&gt;";
		else if (cp == '&')
			e = "&amp;";
		else if (cp == '"')
			e = "&quot;";
		else if (cp == '\'')
			e = "&#39;";
		if (!e) {
			i += l;
			continue;
		}
		fwrite(s + run, 1, i - run, f);
		fputs(e, f);
		i += l ? l : 1;
		run = i;
	}
	fwrite(s + run, 1, n - run, f);
}

/* ---- Prometheus text exposition -------------------------------------------------- */

/*
 * A label value: the format allows any UTF-8 and escapes exactly three
 * characters, \\ \" and \n; a NUL or an invalid byte becomes U+FFFD.
 */
void escape_prom(FILE *f, const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, run = 0;

	while (i < n) {
		size_t l = escape_utf8_len(p + i, n - i);
		const char *e = NULL;

		if (!l || p[i] == 0)
			e = "\xef\xbf\xbd";
		else if (p[i] == '\\')
			e = "\\\\";
		else if (p[i] == '"')
			e = "\\\"";
		else if (p[i] == '\n')
			e = "\\n";
		if (!e) {
			i += l;
			continue;
		}
		fwrite(s + run, 1, i - run, f);
		fputs(e, f);
		i += l ? l : 1;
		run = i;
	}
	fwrite(s + run, 1, n - run, f);
}

/* ---- terminal -------------------------------------------------------------------- */

/* Code points a terminal acts on or that reorder what follows: C1 controls, bidi controls */
static bool term_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061c || cp == 0x200e || cp == 0x200f;
}

/* Is c, an ASCII byte, written as it is? (most of every name: skipped without decoding) */
static inline bool term_plain(uint8_t c, unsigned flags)
{
	return c >= 0x20 && c < 0x7f && !((flags & ESC_TERM_FOLDED) && c == ';') &&
	       !((flags & ESC_TERM_QUOTED) && (c == '"' || c == '\\'));
}

/* escape_term's rule, written through put (to NULL: only counted) */
static size_t term_write(put_fn *put, void *to, const char *s, size_t n, unsigned flags)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, run = 0, cols = 0;
	char esc[16];

	while (i < n) {
		size_t l;
		uint32_t cp;
		const char *e = NULL;

		if (term_plain(p[i], flags)) {
			i++;
			cols++;
			continue;
		}
		l = escape_utf8_len(p + i, n - i);
		cp = l ? code_point(p + i, l) : 0;
		if (!l)
			e = esc, snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
		else if (cp == '\n')
			e = "\\n";
		else if (cp == '\t')
			e = "\\t";
		else if (cp == '\r')
			e = "\\r";
		else if (cp < 0x20 || cp == 0x7f || ((flags & ESC_TERM_FOLDED) && cp == ';'))
			e = esc, snprintf(esc, sizeof(esc), "\\x%02x", cp);
		else if ((flags & ESC_TERM_QUOTED) && (cp == '"' || cp == '\\'))
			e = cp == '"' ? "\\\"" : "\\\\";
		else if (term_control(cp))
			e = esc, snprintf(esc, sizeof(esc), "\\u%04x", cp);
		if (!e) {
			i += l;
			cols++;
			continue;
		}
		if (to) {
			put(to, s + run, i - run);
			put(to, e, strlen(e));
		}
		cols += strlen(e);
		i += l ? l : 1;
		run = i;
	}
	if (to)
		put(to, s + run, n - run);
	return cols;
}

size_t escape_term(FILE *f, const char *s, size_t n, unsigned flags)
{
	return term_write(put_file, f, s, n, flags);
}

static void put_obuf(void *to, const char *s, size_t n)
{
	obuf__put(to, s, n);
}

size_t escape_term_obuf(struct obuf *b, const char *s, size_t n, unsigned flags)
{
	return term_write(put_obuf, b, s, n, flags);
}

struct mem_sink {
	char *p;
	size_t len;
};

static void put_mem(void *to, const char *s, size_t n)
{
	struct mem_sink *m = to;

	memcpy(m->p + m->len, s, n);
	m->len += n;
}

size_t escape_term_mem(char *dst, const char *s, size_t n, unsigned flags)
{
	struct mem_sink m = { dst, 0 };

	term_write(put_mem, &m, s, n, flags);
	return m.len;
}

void escape_term_pad(FILE *f, const char *s, int width)
{
	size_t n = strlen(s), cols = escape_term(NULL, s, n, 0);
	size_t w = (size_t)(width < 0 ? -(long)width : width);

	if (width > 0)
		for (; cols < w; cols++)
			putc(' ', f);
	escape_term(f, s, n, 0);
	if (width < 0)
		for (; cols < w; cols++)
			putc(' ', f);
}

void escape_term_pad_obuf(struct obuf *b, const char *s, int width)
{
	size_t n = strlen(s), cols = term_write(put_obuf, NULL, s, n, 0);
	size_t w = (size_t)(width < 0 ? -(long)width : width);

	if (width > 0)
		for (; cols < w; cols++)
			obuf__putc(b, ' ');
	term_write(put_obuf, b, s, n, 0);
	if (width < 0)
		for (; cols < w; cols++)
			obuf__putc(b, ' ');
}

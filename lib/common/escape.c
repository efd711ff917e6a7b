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

/*
 * What one character becomes in an output kind: NULL, itself; else the text
 * to write instead (esc: 16 bytes of room for one made up).  p holds l bytes,
 * a valid UTF-8 sequence, or l is 0 for a byte that starts none.
 */
typedef const char *subst_fn(const uint8_t *p, size_t l, unsigned flags, char *esc);

/*
 * The one loop of every escaper: s through put (to NULL: nothing written),
 * unchanged runs at once, each character subst replaces as it says.  The
 * columns it takes on a terminal: one a kept character, one a byte of a
 * replacement.
 */
static inline size_t escape_write(put_fn *put, void *to, const char *s, size_t n, subst_fn *subst,
				  unsigned flags)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, run = 0, cols = 0;
	char esc[16];

	while (i < n) {
		size_t l = escape_utf8_len(p + i, n - i);
		const char *e = subst(p + i, l, flags, esc);

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
	if (to && n > run)      /* s may be NULL when n is 0 (an empty field) */
		put(to, s + run, n - run);
	return cols;
}

/* ---- JSON ------------------------------------------------------------------------ */

#define JSON_HTML 1u    /* also <, > and & as \u escapes, for JSON inside HTML */

static const char *json_subst(const uint8_t *p, size_t l, unsigned flags, char *esc)
{
	uint8_t c = p[0];

	if (!l)
		return "\\ufffd";
	if (c == '"')
		return "\\\"";
	if (c == '\\')
		return "\\\\";
	if (l == 1 && (c < 0x20 || c == 0x7f ||
		       ((flags & JSON_HTML) && (c == '<' || c == '>' || c == '&')))) {
		snprintf(esc, 16, "\\u%04x", c);
		return esc;
	}
	return NULL;
}

static void json_write(put_fn *put, void *to, const char *s, size_t n, bool html)
{
	put(to, "\"", 1);
	escape_write(put, to, s, n, json_subst, html ? JSON_HTML : 0);
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

static const char *xml_subst(const uint8_t *p, size_t l, unsigned flags, char *esc)
{
	uint32_t cp = l ? code_point(p, l) : 0xfffd;

	(void)flags, (void)esc;
	/* XML 1.0 has no way to write most controls, U+FFFE and U+FFFF */
	if (!l || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7f ||
	    cp == 0xfffe || cp == 0xffff)
		return "\xef\xbf\xbd";
	switch (cp) {
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '&':
		return "&amp;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	}
	return NULL;
}

void escape_xml(FILE *f, const char *s, size_t n)
{
	escape_write(put_file, f, s, n, xml_subst, 0);
}

/* ---- Prometheus text exposition -------------------------------------------------- */

/*
 * A label value: the format allows any UTF-8 and escapes exactly three
 * characters, \\ \" and \n; a NUL or an invalid byte becomes U+FFFD.
 */
static const char *prom_subst(const uint8_t *p, size_t l, unsigned flags, char *esc)
{
	(void)flags, (void)esc;
	if (!l || p[0] == 0)
		return "\xef\xbf\xbd";
	if (p[0] == '\\')
		return "\\\\";
	if (p[0] == '"')
		return "\\\"";
	if (p[0] == '\n')
		return "\\n";
	return NULL;
}

void escape_prom(FILE *f, const char *s, size_t n)
{
	escape_write(put_file, f, s, n, prom_subst, 0);
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

/* escape_term's rule for one character */
static const char *term_subst(const uint8_t *p, size_t l, unsigned flags, char *esc)
{
	uint32_t cp;

	if (l == 1 && term_plain(p[0], flags))
		return NULL;
	if (!l) {
		snprintf(esc, 16, "\\x%02x", p[0]);
		return esc;
	}
	cp = code_point(p, l);
	if (cp == '\n')
		return "\\n";
	if (cp == '\t')
		return "\\t";
	if (cp == '\r')
		return "\\r";
	if (cp < 0x20 || cp == 0x7f || ((flags & ESC_TERM_FOLDED) && cp == ';')) {
		snprintf(esc, 16, "\\x%02x", cp);
		return esc;
	}
	if ((flags & ESC_TERM_QUOTED) && (cp == '"' || cp == '\\'))
		return cp == '"' ? "\\\"" : "\\\\";
	if (term_control(cp)) {
		snprintf(esc, 16, "\\u%04x", cp);
		return esc;
	}
	return NULL;
}

/* escape_term's rule, written through put (to NULL: only counted) */
static size_t term_write(put_fn *put, void *to, const char *s, size_t n, unsigned flags)
{
	return escape_write(put, to, s, n, term_subst, flags);
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

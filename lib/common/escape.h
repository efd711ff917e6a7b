/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names from a recording, written where they are read.
 *
 * RULE (issue 18): every name that comes from data someone else wrote (an
 * event, command, function, file, range, counter, JIT code name, a marker's
 * text, a message from perfmarkd) reaches an output only through the one
 * function here for that output's kind, never through a bare %s:
 *
 *   JSON       escape_json (a stream), escape_json_object (a json-c tree:
 *              serialized by the same code)
 *   HTML       escape_json_html: JSON in a <script> element, '<' '>' '&' too
 *   SVG, XML   escape_xml: text and attribute values
 *   Prometheus escape_prom: a label value of the text exposition format
 *   terminal   escape_term: report, script, the collapsed export, errors
 *
 * All of them read the bytes as UTF-8 with escape_utf8_len(), the one
 * decoder.  JSON, HTML and XML get valid UTF-8 whatever the input (a byte
 * that does not start a valid sequence becomes U+FFFD), XML never a character
 * XML 1.0 forbids (control characters become U+FFFD), a terminal never a
 * control character, an invalid byte, a C1 control or a bidirectional
 * override (written as \n \t \r \xNN or \uNNNN).  An SVG opened in a browser
 * ran a <script> hidden in an event name before this.
 */
#ifndef PERFMARK_ESCAPE_H
#define PERFMARK_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;
struct obuf;

/* Bytes of the valid UTF-8 sequence at p (n bytes left: 1..4), 0 if invalid. */
size_t escape_utf8_len(const uint8_t *p, size_t n);

/*
 * Bytes of the first max characters of s (n bytes), never cutting a
 * sequence; *chars: how many characters that is (an invalid byte counts as
 * one).  max SIZE_MAX: the whole string.
 */
size_t escape_utf8_cut(const char *s, size_t n, size_t max, size_t *chars);

/* A quoted JSON string. */
void escape_json(FILE *f, const char *s, size_t n);
/* A quoted JSON string that may stand inside an HTML <script> element. */
void escape_json_html(FILE *f, const char *s, size_t n);
/* A json-c string of s whose serialization is escape_json's (NULL: out of memory). */
struct json_object *escape_json_object(const char *s, size_t n);

/* Text or an attribute value of XML (SVG): no quotes added. */
void escape_xml(FILE *f, const char *s, size_t n);

/* A Prometheus label value (text exposition format): no quotes added. */
void escape_prom(FILE *f, const char *s, size_t n);

enum escape_term_flags {
	ESC_TERM_QUOTED = 1,    /* inside "...": '"' and '\' as \" and \\ */
	ESC_TERM_FOLDED = 2,    /* a frame of a collapsed stack: ';' as \x3b */
};

/*
 * Text for a terminal.  Returns the characters written (the columns, one
 * per character); with f NULL nothing is written, only counted (to pad).
 */
size_t escape_term(FILE *f, const char *s, size_t n, unsigned flags);

/* escape_term of a C string, padded with spaces to width (< 0: to the left). */
void escape_term_pad(FILE *f, const char *s, int width);
/* The same two into an output buffer (obuf.h) */
size_t escape_term_obuf(struct obuf *b, const char *s, size_t n, unsigned flags);
void escape_term_pad_obuf(struct obuf *b, const char *s, int width);
/* The same into memory: dst has room for ESCAPE_TERM_MAX(n) bytes; returns the bytes written */
#define ESCAPE_TERM_MAX(n) (4 * (n))
size_t escape_term_mem(char *dst, const char *s, size_t n, unsigned flags);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An output buffer in front of a FILE: text formatted straight into memory
 * and handed to the FILE a large chunk at a time.  For outputs that write a
 * great deal of small pieces (perfmark script: a line per frame): stdio's
 * per-call cost and printf's format parsing were most of its run (issue 24).
 *
 *   obuf__init(&b, f)             empty, writing to f
 *   obuf__put / putc / puts       bytes
 *   obuf__u64 / u64_pad / u64_left / hex_pad
 *                                 numbers, as printf's %llu %*llu %0*llu %-*llu %*llx
 *   obuf__printf                  anything else (off the hot paths)
 *   obuf__flush(&b)               to f; 0 or the first write error (errno)
 *
 * A write error sticks: nothing is written after it, and every flush
 * returns it.  Nothing is written to f before a flush or a full buffer.
 */
#ifndef PERFMARK_OBUF_H
#define PERFMARK_OBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OBUF_SIZE (64u << 10)

struct obuf {
	FILE *f;
	size_t len;
	int err;                /* the first write error (errno), 0 */
	char buf[OBUF_SIZE];
};

void obuf__init(struct obuf *b, FILE *f);
int obuf__flush(struct obuf *b);
/* Bytes longer than the room left (obuf__put's slow path). */
void obuf__put_slow(struct obuf *b, const void *s, size_t n);
/* v in decimal, at least width characters: padded with pad (' ' or '0') on the left */
void obuf__u64_pad(struct obuf *b, uint64_t v, unsigned width, char pad);
/* v in decimal, at least width characters: padded with spaces on the right */
void obuf__u64_left(struct obuf *b, uint64_t v, unsigned width);
/* printf's formatting, into the buffer */
void obuf__printf(struct obuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* v in lowercase hex, at least width characters, padded with spaces on the left */
void obuf__hex_pad(struct obuf *b, uint64_t v, unsigned width);

static inline void obuf__put(struct obuf *b, const void *s, size_t n)
{
	if (n <= sizeof(b->buf) - b->len) {
		memcpy(b->buf + b->len, s, n);
		b->len += n;
	} else {
		obuf__put_slow(b, s, n);
	}
}

static inline void obuf__putc(struct obuf *b, char c)
{
	if (b->len == sizeof(b->buf))
		obuf__flush(b);
	b->buf[b->len++] = c;
}

static inline void obuf__puts(struct obuf *b, const char *s)
{
	obuf__put(b, s, strlen(s));
}

static inline void obuf__u64(struct obuf *b, uint64_t v)
{
	obuf__u64_pad(b, v, 0, ' ');
}

#endif

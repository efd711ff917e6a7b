// SPDX-License-Identifier: LGPL-2.1-or-later
/* An output buffer in front of a FILE: obuf.h */
#include "obuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

void obuf__init(struct obuf *b, FILE *f)
{
	b->f = f;
	b->len = 0;
	b->err = 0;
}

int obuf__flush(struct obuf *b)
{
	if (b->len && !b->err) {
		errno = 0;
		if (fwrite(b->buf, 1, b->len, b->f) != b->len || ferror(b->f))
			b->err = errno ? errno : EIO;
	}
	b->len = 0;     /* after an error, what follows is dropped */
	return b->err;
}

void obuf__put_slow(struct obuf *b, const void *s, size_t n)
{
	const char *p = s;

	while (n) {
		size_t k = sizeof(b->buf) - b->len;

		if (!k) {
			obuf__flush(b);
			k = sizeof(b->buf);
		}
		if (k > n)
			k = n;
		memcpy(b->buf + b->len, p, k);
		b->len += k;
		p += k;
		n -= k;
	}
}

/* v's decimal digits, ending at e; returns where they start */
static char *digits10(char *e, uint64_t v)
{
	do {
		*--e = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return e;
}

void obuf__u64_pad(struct obuf *b, uint64_t v, unsigned width, char pad)
{
	char tmp[24], *e = tmp + sizeof(tmp), *p = digits10(e, v);

	for (unsigned n = (unsigned)(e - p); n < width; n++)
		obuf__putc(b, pad);
	obuf__put(b, p, (size_t)(e - p));
}

void obuf__u64_left(struct obuf *b, uint64_t v, unsigned width)
{
	char tmp[24], *e = tmp + sizeof(tmp), *p = digits10(e, v);

	obuf__put(b, p, (size_t)(e - p));
	for (unsigned n = (unsigned)(e - p); n < width; n++)
		obuf__putc(b, ' ');
}

void obuf__printf(struct obuf *b, const char *fmt, ...)
{
	size_t room = sizeof(b->buf) - b->len;
	char *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < room) {
		b->len += (size_t)n;
		return;
	}
	va_start(ap, fmt);      /* it did not fit: once more, into memory of its size */
	n = vasprintf(&big, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = b->err ? b->err : ENOMEM;
		return;
	}
	obuf__put(b, big, (size_t)n);
	free(big);
}

void obuf__hex_pad(struct obuf *b, uint64_t v, unsigned width)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16], *e = tmp + sizeof(tmp), *p = e;

	do {
		*--p = digits[v & 15];
		v >>= 4;
	} while (v);
	for (unsigned n = (unsigned)(e - p); n < width; n++)
		obuf__putc(b, ' ');
	obuf__put(b, p, (size_t)(e - p));
}

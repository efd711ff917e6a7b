// SPDX-License-Identifier: LGPL-2.1-or-later
/* Byte buffer with a sticky first error, and its reading cursor: pdbuf.h */
#include "pdbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NAME_ALIGN 64

int pdbuf_reserve(struct pdbuf *b, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (more > SIZE_MAX / 4 - b->len)
		return b->err = -ENOMEM;
	if (b->len + more <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return b->err = -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

void pdbuf_put(struct pdbuf *b, const void *data, size_t len)
{
	if (pdbuf_reserve(b, len))
		return;
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
}

void pdbuf_zero(struct pdbuf *b, size_t len)
{
	if (pdbuf_reserve(b, len))
		return;
	memset(b->p + b->len, 0, len);
	b->len += len;
}

void pdbuf_u32(struct pdbuf *b, uint32_t v)
{
	pdbuf_put(b, &v, sizeof(v));
}

void pdbuf_u64(struct pdbuf *b, uint64_t v)
{
	pdbuf_put(b, &v, sizeof(v));
}

void pdbuf_string(struct pdbuf *b, const char *s)
{
	size_t n = strlen(s) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	if (len > UINT32_MAX) {
		if (!b->err)
			b->err = -E2BIG;
		return;
	}
	pdbuf_u32(b, (uint32_t)len);
	pdbuf_put(b, s, n);
	pdbuf_zero(b, len - n);
}

void pdbuf_reset(struct pdbuf *b)
{
	b->len = 0;
	b->err = 0;
}

void pdbuf_free(struct pdbuf *b)
{
	free(b->p);
	*b = (struct pdbuf){ 0 };
}

bool pdcursor_u32(struct pdcursor *c, uint32_t *v)
{
	if (c->len - c->off < 4)
		return false;
	memcpy(v, c->p + c->off, 4);
	c->off += 4;
	return true;
}

bool pdcursor_u64(struct pdcursor *c, uint64_t *v)
{
	if (c->len - c->off < 8)
		return false;
	memcpy(v, c->p + c->off, 8);
	c->off += 8;
	return true;
}

bool pdcursor_skip(struct pdcursor *c, size_t n)
{
	if (c->len - c->off < n)
		return false;
	c->off += n;
	return true;
}

char *pdcursor_string(struct pdcursor *c)
{
	uint32_t len;
	size_t n;
	char *s;

	if (!pdcursor_u32(c, &len) || len > c->len - c->off)
		return NULL;
	n = strnlen((const char *)c->p + c->off, len);
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, c->p + c->off, n);
	s[n] = '\0';
	c->off += len;
	return s;
}

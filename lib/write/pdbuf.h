/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A growable byte buffer that keeps its first error: every put after a
 * failure does nothing, so code that builds a perf.data section is
 * straight-line (put, put, put) and looks at b->err once at the end.
 * perf writes its header features the same way (feat_fd + do_write).
 */
#ifndef PERFMARK_PDBUF_H
#define PERFMARK_PDBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Unaligned little-endian loads from a record or section */
static inline uint32_t pd_get_u32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t pd_get_u64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

struct pdbuf {
	uint8_t *p;
	size_t len, cap;
	int err;        /* first error (-ENOMEM, -E2BIG), 0 while all went well */
};

/* Room for more bytes; 0 or the (kept) error. */
int pdbuf_reserve(struct pdbuf *b, size_t more);
void pdbuf_put(struct pdbuf *b, const void *data, size_t len);
void pdbuf_zero(struct pdbuf *b, size_t len);
void pdbuf_u32(struct pdbuf *b, uint32_t v);
void pdbuf_u64(struct pdbuf *b, uint64_t v);
/* perf's string: u32 len (strlen + 1 rounded up to 64), the bytes, zeros */
void pdbuf_string(struct pdbuf *b, const char *s);
/* Empty it, keeping the memory; the error is cleared too. */
void pdbuf_reset(struct pdbuf *b);
void pdbuf_free(struct pdbuf *b);

/*
 * The reading side: a bounds-checked cursor over a section body.  Every
 * get fails (false) rather than read past len.
 */
struct pdcursor {
	const uint8_t *p;
	size_t len, off;
};

bool pdcursor_u32(struct pdcursor *c, uint32_t *v);
bool pdcursor_u64(struct pdcursor *c, uint64_t *v);
bool pdcursor_skip(struct pdcursor *c, size_t n);
/* perf string: a malloc'd NUL-terminated copy (stops at the first NUL), or NULL */
char *pdcursor_string(struct pdcursor *c);

#endif

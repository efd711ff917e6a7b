/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The persistent ring's layout, shared by pring.c (the writer, recovery)
 * and pring_view.c (reading while the writer goes on).  See pring.h.
 */
#ifndef PERFMARK_PRING_INT_H
#define PERFMARK_PRING_INT_H

#include <stdint.h>

#include "pring.h"

#define PRING_MAGIC "PMRING\0\1"
#define PRING_VERSION 1
#define HDR_SIZE 4096u
#define META_OFF 1024u
#define PAGE 4096u
#define FRAME_MAGIC 0x5046
#define SIZE_MAX_RING (1ull << 40)

enum { FK_DATA = 1, FK_PAD = 2, FK_SB = 3 };

struct frame {
	uint32_t size;        /* whole frame, header included, multiple of 8 */
	uint16_t magic;
	uint16_t kind;
	uint64_t time;
	uint64_t pos;         /* stored last; ~pos while being written */
};
#define FRAME_HDR ((uint64_t)sizeof(struct frame))

struct pring_hdr {
	char magic[8];        /* stored last at creation */
	uint32_t version, hdr_size;
	uint64_t data_size, sb_size, meta_len, created_ns;
	/* changing */
	uint64_t tail;        /* absolute position of the oldest data frame */
	uint64_t head;        /* committed end at the last sync (a hint) */
	uint64_t sb_gen[2];   /* generation of each half's frames */
	uint64_t sb_len[2];   /* a hint */
	uint32_t sb_active, pad;
	uint64_t evicted, torn;
};
_Static_assert(sizeof(struct pring_hdr) <= META_OFF, "header overlaps meta");
_Static_assert(META_OFF + PRING_META_MAX <= HDR_SIZE, "meta overflows the header page");

struct pring {
	int fd;
	uint64_t tear_at, appended;   /* fault injection, see pring__append */
	uint8_t *base;
	size_t map_len;
	struct pring_hdr *h;
	uint8_t *sb[2], *data;
	uint64_t data_size, sb_size;
	uint64_t head, tail, frames;
	uint64_t recovered;           /* the committed end found at open (0: a new ring) */
	uint64_t sb_len, sb_frames;
	struct pring_view *views;     /* open views: evicted frames are kept for them */
};

/* pring_view.c: the writer evicts the frame f at pos (views open on r keep it) */
void pring_view_keep(struct pring *r, uint64_t pos, const struct frame *f);

static inline uint64_t load_pos(const struct frame *f)
{
	return __atomic_load_n(&f->pos, __ATOMIC_ACQUIRE);
}

#endif

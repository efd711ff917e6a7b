/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Large buffers the recorder fills at its full rate (the fast lane's spill,
 * the reorder window's blocks): whole 2 MiB pages where the kernel gives
 * them (transparent huge pages asked for with madvise, Debian's default
 * policy), so a burst that touches fresh memory takes one fault per 2 MiB,
 * not one per 4 KiB.  In a VM a fault is dear: on the project's test VM a
 * 4 KiB page costs about 13 us the first time it is written, so 64 MiB of
 * fresh 4 KiB pages take 225 ms and the same in huge pages 6 ms
 * (measured with a memset of a fresh mapping).
 */
#ifndef PERFMARK_BIGMEM_H
#define PERFMARK_BIGMEM_H

#include <stddef.h>

#define BIGMEM_PAGE (2u << 20)

/* size bytes (rounded up to BIGMEM_PAGE), aligned to BIGMEM_PAGE, zeroed; NULL: no memory */
void *bigmem_alloc(size_t size);
/* what bigmem_alloc(size) gave, with the same size; NULL is nothing */
void bigmem_free(void *p, size_t size);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Direct output of a file written front to back (the perf.data writer's
 * data): whole blocks go out with O_DIRECT, through a second open of the
 * same file, from one block-aligned buffer that is used again and again.
 *
 * Why: buffered writes copy every byte into page-cache pages the kernel
 * must first allocate and clear.  At 10 M markers/s that is ~1 GB/s of
 * fresh memory; in this project's VM fresh memory also costs a host fault,
 * so 1.2 GB took 2.9 s of system time buffered and 0.1 s direct.  Direct
 * writes also keep a recording from pushing everything else out of the
 * page cache.
 *
 * The buffer mirrors the file from a block boundary up to where the writer
 * is: dio__sync() writes the whole blocks direct and the last partial one
 * through the ordinary fd (so the file holds everything), keeping it to be
 * written again, direct, once the block fills.  A sync with little in
 * whole blocks (a recording at a few MB/s) writes them through the
 * ordinary fd too: a direct write over the page the last sync left in the
 * cache waits for its writeback first, a block I/O each round.  Bytes before the first
 * block boundary past the start position go through the ordinary fd.
 * Where the file system refuses O_DIRECT, everything goes through the
 * ordinary fd, as before; so does a file of another user (the output a
 * client passed to perfmarkd), which is never opened a second time.
 */
#ifndef PERFMARK_DIO_H
#define PERFMARK_DIO_H

#include <stddef.h>
#include <stdint.h>

struct dio;

/* All of len at off (pwrite), or where fd is (write) when off < 0: 0 or -errno */
int fd_write_at(int fd, const void *data, size_t len, int64_t off);

/* fd: the writer's (not closed); pos: where it writes next.  -errno: use fd alone */
int dio__open(struct dio **out, int fd, uint64_t pos);
/* len bytes at pos: where the last write ended, or before the first block */
int dio__write(struct dio *d, const void *data, size_t len, uint64_t pos);
/* everything written so far is in the file */
int dio__sync(struct dio *d);
void dio__free(struct dio *d);

#endif

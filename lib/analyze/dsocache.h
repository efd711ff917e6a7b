/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mapped files' symbols kept across the profiles of one process: perfmarkd
 * encodes a profile per scrape, and reading the same ELF symbol tables (a
 * compiler's are tens of MB) again each time was most of a scrape's CPU.
 *
 * A file is the same file while its path, build-id (when the recording
 * has it), device, inode, size and mtime are: stat(), never an open, says
 * so.  At most DSOCACHE_MAX files and DSOCACHE_BYTES of their tables are
 * kept once nobody uses them (least recently used go first); one that
 * cannot be kept is a private struct dso as before.  Thread-safe.
 */
#ifndef PERFMARK_DSOCACHE_H
#define PERFMARK_DSOCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dso.h"

#define DSOCACHE_MAX 512
#define DSOCACHE_BYTES (128u << 20)

/* The file at path, shared when it can be (dso__new's arguments); NULL: out of memory. */
struct dso *dsocache__get(const char *path, const uint8_t *bid, size_t bid_len);
/* dso__load, once, for a shared one too */
void dsocache__load(struct dso *d);
void dsocache__put(struct dso *d);

#endif

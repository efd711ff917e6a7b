/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /tmp/perf-PID.map for JIT code markers (perfmark_jit_code): stock perf
 * looks up symbols of anonymous executable memory there.  One writer per
 * collector (each line once, however many sessions record the process).
 *
 *   jitmap__add()    a JIT code marker's line, kept in memory
 *   jitmap__flush()  every process's lines so far: one open and one write
 *                    per process, not per marker (at the end of each
 *                    consume, and when JITMAP_MAX_HELD bytes wait)
 *
 * Whose file: the process owner's, found while it lives.  A process often
 * names its code and exits at once, before the drain: its owner is then
 * the one owner(ctx, pid) knows (the fast lane learnt it when the process
 * registered its area, verified alive).  Lines of a process gone with no
 * known owner are not written and are counted (missed).
 */
#ifndef PERFMARK_JITMAP_H
#define PERFMARK_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfmark_wire.h"

#define JITMAP_MAX_HELD (4u << 20)

struct jitmap;

/* pid's owner as learnt while it lived: uid, and its /proc directory's group */
typedef bool (*jitmap_owner_fn)(void *ctx, uint32_t pid, uint32_t *uid, uint32_t *gid);

struct jitmap_stats {
	uint64_t lines;       /* written */
	uint64_t missed;      /* not written: the process had gone, its owner unknown */
	uint64_t refused;     /* not written: not plainly one user's, or an unsafe map file */
};

int jitmap__new(struct jitmap **out, jitmap_owner_fn owner, void *ctx);
/* pm: a PM_REC_MARKER of type PERFMARK_TYPE_JIT_CODE, size bytes with its payload */
void jitmap__add(struct jitmap *jm, const struct pm_marker *pm, size_t size);
void jitmap__flush(struct jitmap *jm);
void jitmap__stats(const struct jitmap *jm, struct jitmap_stats *st);
/* flushes first */
void jitmap__free(struct jitmap *jm);

#endif

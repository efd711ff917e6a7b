/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A profile as pprof's gzip'd profile.proto: `perfmark export --format
 * pprof` and perfmarkd's GET /debug/pprof/profile.  See pprof.c for what
 * goes where (sample types, labels range, comm, pid).
 */
#ifndef PERFMARK_PPROF_H
#define PERFMARK_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "srcline.h"

struct pprof_opts {
	uint64_t since;     /* samples older than this (the recording's clock) are left out */
	bool lines;         /* source lines from the files' DWARF (srcline.h) */
	struct srcline_stats *src;  /* NULL, or where what reading them met goes */
	size_t *taken;      /* NULL, or where the number of samples written goes (since on) */
};

/*
 * Write p, loaded with keep_addrs (else -EINVAL), to out (o may be NULL:
 * no lines).  0 or a negative errno.
 */
int pprof__write(const struct profile *p, const struct pprof_opts *o, FILE *out);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A profile as pprof's gzip'd profile.proto: `perfmark export --format
 * pprof` and perfmarkd's GET /debug/pprof/profile.  See pprof.c for what
 * goes where (sample types, labels range, comm, pid).
 */
#ifndef PERFMARK_PPROF_H
#define PERFMARK_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct pprof_opts {
	uint64_t since;     /* samples older than this (the recording's clock) are left out */
};

/* Write p to out (o may be NULL).  0 or a negative errno. */
int pprof__write(const struct profile *p, const struct pprof_opts *o, FILE *out);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What report, flamegraph and export share: the input option, loading the
 * profile with the same one-line errors as `perfmark script`, and output
 * files.
 */
#ifndef PERFMARK_CLI_ANALYSIS_H
#define PERFMARK_CLI_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

/* "perf.data", a path, or "-" (stdin). */
const char *pm_input_name(const char *input);

/* Load input; on failure prints `perfmark: INPUT: reason` and returns 1. */
int pm_load(const char *input, const struct profile_opts *opts, struct profile **out);

/* The range name's string id for --range, or prints `no range named ...` and returns 1. */
int pm_range_id(const struct profile *p, const char *input, const char *name, uint32_t *id);

/* Open path for writing ("-" or NULL: stdout); prints the error and returns NULL. */
FILE *pm_output(const char *path);
/* Flush and close; prints a write error and returns 1, else 0. */
int pm_output_close(FILE *f, const char *path);

/* A duration in ns as text ("812 ns", "3.25 us", "12.50 ms", "1.234 s"). */
const char *pm_fmt_ns(uint64_t ns, char *buf, size_t size);

#endif

/* Microseconds with the nanoseconds kept as three decimals. */
void pm_json_us(FILE *f, uint64_t ns);

/* export formats (export.c, pprof.c) */
int pm_export_collapsed(const struct profile *p, FILE *out);
int pm_export_chrome(const struct profile *p, FILE *out);
int pm_export_pprof(const struct profile *p, FILE *out);

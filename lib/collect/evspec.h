/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event specifications: "-e cycles,cpu-clock", -F, -c.
 */
#ifndef PERFMARK_EVSPEC_H
#define PERFMARK_EVSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVSPEC_MAX 8
#define EVSPEC_FREQ_MAX 100000ULL      /* -F */
#define EVSPEC_PID_MAX 2147483647      /* a positive int; existence is checked where used */

struct evspec {
	char name[32];     /* canonical perf name: "cycles", "cpu-clock", ... */
	uint32_t type;     /* PERF_TYPE_HARDWARE / PERF_TYPE_SOFTWARE */
	uint64_t config;
	bool hardware;     /* needs a PMU; may fall back to cpu-clock */
};

/*
 * Parse a comma-separated list: cycles (cpu-cycles), instructions,
 * cache-misses, branch-misses, cpu-clock, task-clock, page-faults (faults),
 * with optional ":u"/":k" style modifiers rejected as unknown.  Fills up to
 * max entries.  Returns the number parsed or -EINVAL with a message in
 * err ("unknown event 'foo'", "too many events", "empty event list").
 */
int evspec_parse(const char *list, struct evspec *out, size_t max, char *err, size_t errlen);
/* Look up one name; 0 or -EINVAL. */
int evspec_lookup(const char *name, struct evspec *out);
/*
 * Parse -F (1..100000, "max" not accepted) / -c (>= 1) values.
 * 0 or -EINVAL with message ("bad frequency 'x'", "frequency 0 out of range").
 */
int evspec_parse_freq(const char *s, uint64_t *out, char *err, size_t errlen);
int evspec_parse_period(const char *s, uint64_t *out, char *err, size_t errlen);
/* Parse "1,2,3" into pids (1..EVSPEC_PID_MAX); -EINVAL on garbage or an empty list. */
int evspec_parse_pids(const char *s, int *pids, size_t max, char *err, size_t errlen);
/* Parse sizes "64M", "1G", "4096", "512k": bytes, or -EINVAL. */
int evspec_parse_size(const char *s, uint64_t *out, char *err, size_t errlen);

#endif

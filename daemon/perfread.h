/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf.data reader: file mode and pipe mode, PERF_RECORD_COMPRESSED (zstd).
 * Used by `perfmark script` and by the writer's unit tests.
 *
 * Errors are a negative errno plus a one-line message (perfread__error()),
 * e.g. "empty file, nothing to read", "not a perf.data file (bad magic)",
 * "truncated record at offset N", "corrupt compressed record at offset N".
 */
#ifndef PERFMARK_PERFREAD_H
#define PERFMARK_PERFREAD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfread;

struct perfread_event {
	struct perf_event_attr attr;
	char *name;            /* from EVENT_DESC (or HEADER_EVENT_DESC in pipe mode) */
	uint64_t *ids;
	uint32_t nr_ids;
};

/* A decoded PERF_RECORD_SAMPLE; pointers point into the current record. */
struct perfread_sample {
	const struct perfread_event *event;
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint32_t nr_ips;
	const uint64_t *ips;
	uint32_t raw_size;
	const void *raw;
	uint16_t misc;
};

/*
 * fd: a regular file or a pipe (detected).  Takes ownership of nothing.
 * On failure *out is still set when memory allowed (NULL otherwise) so that
 * perfread__error() can explain; the caller frees it with perfread__free().
 */
int perfread__open(struct perfread **out, int fd);
const char *perfread__error(const struct perfread *r);
bool perfread__is_pipe(const struct perfread *r);
size_t perfread__nr_events(const struct perfread *r);
const struct perfread_event *perfread__event(const struct perfread *r, size_t i);
const struct perfread_event *perfread__event_by_id(const struct perfread *r, uint64_t id);
/*
 * Next data record (compressed records are expanded transparently; header
 * records of a pipe are consumed and not returned).  Returns 1 with *rec set
 * (valid until the next call), 0 at the end, or a negative errno.
 */
int perfread__next(struct perfread *r, const struct perf_event_header **rec);
/* Decode a PERF_RECORD_SAMPLE.  0 or -EINVAL if malformed. */
int perfread__parse_sample(const struct perfread *r, const struct perf_event_header *rec,
			   struct perfread_sample *s);
/* Feature strings when present (HOSTNAME, OSRELEASE, CMDLINE joined): NULL if not */
const char *perfread__feature_string(const struct perfread *r, int feature);
bool perfread__has_feature(const struct perfread *r, int feature);
void perfread__free(struct perfread *r);

#endif

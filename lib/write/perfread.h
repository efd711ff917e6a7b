/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf.data reader: file mode and pipe mode, PERF_RECORD_COMPRESSED (zstd).
 * Used by `perfmark script`, report, flamegraph, export and the writer's
 * unit tests.
 *
 * Errors are a negative errno plus a one-line message (perfread__error()),
 * e.g. "empty file, nothing to read", "not a perf.data file (bad magic)",
 * "truncated record at offset N", "corrupt compressed record at offset N".
 *
 * Bounds (issue 8 case 6: the input is whatever a user hands over).  Time is
 * linear in the input and the data it expands to; memory stays within
 *   - the current record (<= 64 KiB) and a 256 KiB read buffer;
 *   - events: at most 4096; ids: at most one per 8 input bytes (file mode:
 *     the id sections together may not exceed the file), indexed in O(1);
 *   - a feature section: at most the file, read once; only known ones;
 *   - decompressed data: at most PERFREAD_MAX_EXPAND_FLOOR plus
 *     PERFREAD_MAX_EXPAND_RATIO times the compressed bytes read so far
 *     (real recordings compress 5-30x); past it an error says so.
 */
#ifndef PERFMARK_PERFREAD_H
#define PERFMARK_PERFREAD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfread;
struct perfdata_env;

#define PERFREAD_MAX_EXPAND_RATIO 256
#define PERFREAD_MAX_EXPAND_FLOOR (64ull << 20)

struct perfread_event {
	struct perf_event_attr attr;
	char *name;            /* from EVENT_DESC (or HEADER_EVENT_DESC in pipe mode) */
	uint64_t *ids;
	uint32_t nr_ids;
};

/* A decoded PERF_RECORD_SAMPLE; pointers point into the current record. */
struct perfread_sample {
	const struct perfread_event *event;
	uint64_t id, ip, addr;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint32_t nr_ips;
	const uint64_t *ips;
	uint32_t raw_size;
	const void *raw;
	/* REGS_USER: abi 0 when absent; one value per bit of attr.sample_regs_user */
	uint64_t regs_abi;
	uint32_t nr_regs;
	const uint64_t *regs;         /* unaligned-safe: read with memcpy */
	/* STACK_USER: the bytes that were copied (dyn_size of them) */
	uint64_t stack_size;
	const uint8_t *stack;
	uint16_t misc;
};

/* Where and when any record happened: a sample's fields or its sample_id trailer. */
struct perfread_sample_id {
	const struct perfread_event *event;
	uint64_t id, time;
	uint32_t pid, tid, cpu;
	bool have_time, have_tid, have_cpu;
};

/*
 * fd: a regular file or a pipe (detected).  Takes ownership of nothing.
 * On failure *out is still set when memory allowed (NULL otherwise) so that
 * perfread__error() can explain; the caller frees it with perfread__free().
 */
int perfread__open(struct perfread **out, int fd);

/* Tighter bounds than the defaults (the fuzz target's, to keep inputs quick) */
struct perfread_opts {
	uint64_t expand_floor;      /* 0: PERFREAD_MAX_EXPAND_FLOOR */
	uint32_t expand_ratio;      /* 0: PERFREAD_MAX_EXPAND_RATIO */
};
int perfread__open_opts(struct perfread **out, int fd, const struct perfread_opts *opts);
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
/*
 * Time, pid/tid, cpu, id and event of any record (a sample, or the sample_id
 * trailer of the others; PERF_SAMPLE_ID files as perf reads them).  0,
 * -ENOENT when the record carries none, -EINVAL when malformed.  The only
 * sample_id decoder: do not write another.
 */
int perfread__sample_id(const struct perfread *r, const struct perf_event_header *rec,
			struct perfread_sample_id *sid);
/* Feature strings when present (HOSTNAME, OSRELEASE, CMDLINE joined): NULL if not */
const char *perfread__feature_string(const struct perfread *r, int feature);
bool perfread__has_feature(const struct perfread *r, int feature);
/* The first and last sample times the header gives (SAMPLE_TIME; a file, not a pipe) */
bool perfread__sample_time(const struct perfread *r, uint64_t *first, uint64_t *last);
/*
 * HEADER_TRACING_DATA (the feature, or a pipe's record): the bytes as they
 * are, NULL when there are none (lib/analyze/tracepoint.h decodes them).
 */
const uint8_t *perfread__tracing_data(const struct perfread *r, size_t *len);
void perfread__free(struct perfread *r);

/*
 * The records an analysis of samples reads (script, report, ...): samples,
 * the sideband that names their threads and code, and what was lost.
 */
static inline bool perfread_for_samples(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		return true;
	default:
		return false;
	}
}

#endif

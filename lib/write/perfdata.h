/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf.data writer: file mode, pipe mode, zstd compression.
 *
 * The caller describes its events once (attr + name + the sample ids it will
 * use), then hands complete perf records (struct perf_event_header first,
 * header.size == length, 8-byte multiple) in time order within each round,
 * and calls perfdata_writer__round() after each drain.
 *
 * File mode: header, attrs with their id arrays, then data; after every round
 * the data is written and the header's data size rewritten, so a recorder
 * killed with SIGKILL leaves a file perf reads up to the last round.  The
 * feature sections are written by perfdata_writer__finish().
 *
 * Pipe mode: PERFILE2 header of size 16, HEADER_ATTR records, HEADER_FEATURE
 * records (ascending id, EVENT_DESC after the attrs, empty terminator),
 * FINISHED_INIT, then data records.  Nothing is ever seeked.
 *
 * With zstd_level > 0 records are batched per round into
 * PERF_RECORD_COMPRESSED records and the COMPRESSED feature is written
 * (before the first compressed record in pipe mode).
 *
 * All functions return 0 or a negative errno.  A write error (EPIPE, ENOSPC,
 * ...) is sticky: later calls return it again and write nothing.
 */
#ifndef PERFMARK_PERFDATA_H
#define PERFMARK_PERFDATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/*
 * perf.data record types beyond the kernel's (tools/perf/util/event.h) and
 * feature ids (tools/perf/util/header.h, perf 6.1 numbering).
 */
enum {
	PERFDATA_RECORD_HEADER_ATTR = 64,
	PERFDATA_RECORD_HEADER_TRACING_DATA = 66,
	PERFDATA_RECORD_FINISHED_ROUND = 68,
	PERFDATA_RECORD_HEADER_FEATURE = 80,
	PERFDATA_RECORD_COMPRESSED = 81,
	PERFDATA_RECORD_FINISHED_INIT = 82,
};

enum {
	PERFDATA_FEAT_TRACING_DATA = 1,
	PERFDATA_FEAT_BUILD_ID = 2,
	PERFDATA_FEAT_HOSTNAME = 3,
	PERFDATA_FEAT_OSRELEASE = 4,
	PERFDATA_FEAT_VERSION = 5,
	PERFDATA_FEAT_ARCH = 6,
	PERFDATA_FEAT_NRCPUS = 7,
	PERFDATA_FEAT_CPUDESC = 8,
	PERFDATA_FEAT_CPUID = 9,
	PERFDATA_FEAT_TOTAL_MEM = 10,
	PERFDATA_FEAT_CMDLINE = 11,
	PERFDATA_FEAT_EVENT_DESC = 12,
	PERFDATA_FEAT_CPU_TOPOLOGY = 13,
	PERFDATA_FEAT_SAMPLE_TIME = 21,
	PERFDATA_FEAT_CLOCKID = 23,
	PERFDATA_FEAT_COMPRESSED = 27,
	PERFDATA_FEAT_CLOCK_DATA = 29,
	PERFDATA_FEAT_LAST_6_1 = 32,   /* HEADER_LAST_FEATURE of perf 6.1: pipe terminator */
	PERFDATA_FEAT_BITS = 256,
};

#define PERFDATA_ATTR_SIZE 128     /* PERF_ATTR_SIZE_VER7: what perf 6.1 accepts */

struct perfdata_writer;

struct perfdata_event {
	struct perf_event_attr attr;  /* attr.size is forced to 128 (VER7) on write */
	const char *name;             /* "cpu-clock", "perfmark:printf", ...        */
	const uint64_t *ids;          /* sample ids used in records of this event  */
	uint32_t nr_ids;
};

/*
 * An event as perfmark writes every one: sample_id_all, times on
 * CLOCK_MONOTONIC (lib/common/clock.h); the caller adds period or frequency
 * and the sideband bits.
 */
static inline void perfdata_event_init(struct perfdata_event *ev, uint32_t type, uint64_t config,
				       uint64_t sample_type, const char *name,
				       const uint64_t *ids, uint32_t nr_ids)
{
	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = type;
	ev->attr.config = config;
	ev->attr.sample_type = sample_type;
	ev->attr.sample_id_all = 1;
	ev->attr.use_clockid = 1;
	ev->attr.clockid = CLOCK_MONOTONIC;
	ev->name = name;
	ev->ids = ids;
	ev->nr_ids = nr_ids;
}

struct perfdata_writer_opts {
	int fd;                 /* output; the writer does not close it            */
	bool pipe;              /* pipe mode                                      */
	int zstd_level;         /* 0 = uncompressed, 1..22                         */
	int argc;               /* command line for the CMDLINE feature            */
	char *const *argv;
	uint64_t clock_ref_mono_ns;   /* CLOCK_DATA: a CLOCK_MONOTONIC reading ...  */
	uint64_t clock_ref_real_ns;   /* ... and the CLOCK_REALTIME at that moment  */
	bool resume;            /* file mode: go on after the last complete round of
				 * the perf.data fd holds, written for the same
				 * events (a recorder that died); -ESTALE if not  */
};

struct perfdata_stats {
	uint64_t records;          /* data records written (not counting rounds)   */
	uint64_t bytes;            /* bytes written to fd so far                  */
	uint64_t raw_bytes;        /* bytes before compression                    */
};

int perfdata_writer__new(struct perfdata_writer **out,
			 const struct perfdata_writer_opts *opts,
			 const struct perfdata_event *events, size_t nr_events);
/*
 * One complete record; buffered, written by the next round (a large round
 * is written in pieces as it grows; the file's header counts it at its end).
 */
int perfdata_writer__add(struct perfdata_writer *w, const void *rec, size_t len);
/* the same, for a caller that knows the record's time (a sample's is not parsed again) */
int perfdata_writer__add_timed(struct perfdata_writer *w, const void *rec, size_t len,
			       uint64_t time);
/* FINISHED_ROUND, write out (compress), rewrite the file header's data size */
int perfdata_writer__round(struct perfdata_writer *w);
/* last round, feature sections (file mode), final header; fd left open */
int perfdata_writer__finish(struct perfdata_writer *w);
void perfdata_writer__stats(const struct perfdata_writer *w, struct perfdata_stats *st);
void perfdata_writer__free(struct perfdata_writer *w);

/*
 * Sample encoding.  perfmark's attrs use (a subset of, in this bit order)
 *   IDENTIFIER | IP | TID | TIME | CPU | PERIOD | CALLCHAIN | RAW |
 *   REGS_USER | STACK_USER
 * and sample_id_all = 1, so non-sample records end with the trailer
 *   { u32 pid, tid; u64 time; u32 cpu, res; u64 id }   (TID|TIME|CPU|IDENTIFIER)
 */
struct perfdata_sample {
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint32_t nr_ips;        /* CALLCHAIN, PERF_CONTEXT_* markers included */
	const uint64_t *ips;
	uint32_t raw_size;      /* RAW: bytes of raw; padded with zeros on encode */
	const void *raw;
	/* REGS_USER: abi (0: no registers) and one value per bit of sample_regs_user */
	uint64_t regs_abi;
	uint32_t nr_regs;
	const uint64_t *regs;
	/* STACK_USER: stack bytes (a multiple of 8), written as size, data, dyn_size */
	uint32_t stack_size;
	const void *stack;
	uint16_t misc;          /* PERF_RECORD_MISC_KERNEL / _USER */
};

/* Size of the encoded sample (header included) for sample_type. */
size_t perfdata_sample_size(uint64_t sample_type, const struct perfdata_sample *s);
/* Encode into buf (at least perfdata_sample_size bytes); returns bytes used. */
size_t perfdata_encode_sample(void *buf, uint64_t sample_type,
			      const struct perfdata_sample *s);

struct perfdata_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t id;
};
#define PERFDATA_SAMPLE_ID_SIZE 32
/* Write the sample_id trailer (32 bytes) at p. */
void perfdata_encode_sample_id(void *p, const struct perfdata_sample_id *sid);
/*
 * The trailer at the end of a non-sample record of len bytes (the kernel's
 * sideband with TID|TIME|CPU|IDENTIFIER has the same one): read it, or
 * write it in place.  -EINVAL when len cannot hold a header and a trailer.
 */
int perfdata_decode_sample_id(const void *rec, size_t len, struct perfdata_sample_id *sid);
int perfdata_set_sample_id(void *rec, size_t len, const struct perfdata_sample_id *sid);

#endif

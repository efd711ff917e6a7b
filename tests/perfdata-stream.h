/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the perf.data tests (test-perfdata, test-perfdata-perf) write and
 * read back: the two events perfmark writes, and a deterministic stream of
 * COMM, MMAP2 and nr_samples samples (cpu-clock with callchains, printf
 * with raw payloads of awkward sizes), a round every round_every samples.
 */
#ifndef PERFMARK_TEST_PERFDATA_STREAM_H
#define PERFMARK_TEST_PERFDATA_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

#define ID_CLOCK0 101
#define ID_CLOCK1 102
#define ID_PRINTF 201
#define ST_CLOCK (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
		  PERF_SAMPLE_CALLCHAIN)
#define ST_PRINTF (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)

#define NR_SAMPLES 200
#define ROUND_EVERY 37

struct stream {
	uint8_t *buf;           /* expected records, concatenated */
	size_t len, cap;
	size_t nr_records, nr_rounds;
	uint64_t first_time, last_time;
};

/* ev[0] cpu-clock (ids ID_CLOCK0, ID_CLOCK1), ev[1] perfmark:printf (ID_PRINTF) */
void make_events(struct perfdata_event ev[2]);
/* Sample i of the stream: even = cpu-clock with a callchain, odd = printf with raw data */
void sample_def(size_t i, struct perfdata_sample *s, uint64_t *ips, uint8_t *raw);
/* Records as the kernel writes them, with their sample_id trailer; their size */
size_t make_comm(uint8_t *p, uint32_t pid, const char *comm, uint64_t time);
size_t make_mmap2(uint8_t *p, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
		  const char *file, uint64_t time);

extern size_t round_every;   /* ROUND_EVERY unless a test changes it */
extern size_t nr_samples;    /* NR_SAMPLES unless a test changes it */
/* Write the stream with a writer; fills st with the expectation */
void write_stream(int fd, bool pipe, int level, struct stream *st);
/* Read everything back and compare, byte for byte */
void check_stream(int fd, bool pipe, const struct stream *st);

#endif

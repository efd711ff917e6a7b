/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf.data header features: ONE table, each entry pairing the function that
 * writes a feature's body and the one that reads it back (as perf's
 * header.c pairs write_X and process_X in its feat_ops table).  Both work on
 * struct perfdata_env, the description of the recording host and run that
 * the writer fills before writing and the reader fills while reading.
 *
 * A new feature is one entry here, with its write and process function next
 * to each other in perffeat.c: the writer (perfdata.c) and the reader
 * (perfread.c) both walk the table and need no change.
 *
 * Encodings (tools/perf/util/header.c, perf 6.1):
 *   strings     u32 len (strlen + 1 rounded up to 64), bytes, zero padding
 *   NRCPUS      u32 nr_cpus_avail, u32 nr_cpus_online
 *   TOTAL_MEM   u64 kB
 *   CMDLINE     u32 nr, nr strings
 *   EVENT_DESC  u32 nr, u32 attr_size, per event: attr, u32 nr_ids, string
 *               name, u64 ids[nr_ids]; perf names evsels by ids[0]
 *   SAMPLE_TIME u64 first, u64 last
 *   CLOCKID     u64 resolution of the clock in ns (not the clock id)
 *   COMPRESSED  u32 version = 0, type = 1 (zstd), level, ratio, mmap_len
 *   CLOCK_DATA  u32 version = 1, u32 clockid, u64 tod_ns, u64 clockid_ns
 *   TRACING_DATA  tracedata.h (file mode; a pipe has a HEADER_TRACING_DATA
 *               record instead, its bytes after the record's header)
 */
#ifndef PERFMARK_PERFFEAT_H
#define PERFMARK_PERFFEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "pdbuf.h"
#include "perfdata.h"

struct evlist;

struct perfdata_env {
	char *str[PERFDATA_FEAT_CPUID + 1];  /* HOSTNAME .. CPUID, by feature id */
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	uint32_t argc;
	char **argv;
	bool argv_block;             /* argv and its strings are one allocation */
	char *cmdline;               /* reader: argv joined by spaces */
	struct evlist *evlist;       /* not owned */
	bool pipe;                   /* writer: pipe mode (no SAMPLE_TIME) */
	bool have_time;
	uint64_t first_time, last_time;
	uint64_t clock_res_ns;
	bool have_clock_data;
	uint32_t clockid;
	uint64_t tod_ns, clockid_ns;
	bool have_comp;
	uint32_t comp_level, comp_ratio, comp_mmap_len;
	uint8_t *tracing;            /* HEADER_TRACING_DATA, NULL: none */
	size_t tracing_len;
	bool has[PERFDATA_FEAT_BITS];  /* reader: the features found */
};

struct perfdata_feature {
	int id;
	const char *name;
	/* Append the body to b; false when the feature is absent (not written) */
	bool (*write)(struct pdbuf *b, const struct perfdata_env *e, int id);
	/* Read a body into e; 0 or -EINVAL (-ENOMEM) */
	int (*process)(struct perfdata_env *e, struct pdcursor *c, int id);
};

/* The features perfmark writes and reads, in ascending id */
extern const struct perfdata_feature perfdata_features[];
extern const unsigned perfdata_nr_features;
/* The table entry of a feature id, NULL for one perfmark does not handle */
const struct perfdata_feature *perfdata_feature(uint64_t id);

/* Facts of this host (uname, /proc/cpuinfo, memory, CPUs, clock resolution). */
int perfdata_env__host(struct perfdata_env *e);
/* Copy a command line into e (CMDLINE).  0 or -ENOMEM. */
int perfdata_env__set_cmdline(struct perfdata_env *e, int argc, char *const *argv);
/* Free what e owns (strings, command line, tracing data), not its evlist. */
void perfdata_env__clear(struct perfdata_env *e);

#endif

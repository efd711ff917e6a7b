/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the sinks (sinks.h): what sinks.c (the sink, its kept sideband),
 * readers.c (live readers), sinksnap.c (snapshots), sinkfile.c (rotating
 * files) and sinkcopy.c (records out into another perf.data) share.  Calls
 * go down that list only.
 */
#ifndef PERFMARK_SINK_INT_H
#define PERFMARK_SINK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sinks.h"

struct perfdata_writer;
struct pring;
struct pring_view;

struct sink {
	struct sink_opts o;
	struct perfdata_event *evs;       /* copied */
	uint64_t *ids;
	size_t nr_evs;
	uint64_t first_id;                /* id for the LOST records readers get */
	struct pring *pr;                 /* ring: records and sideband; file: sideband */
	struct perfdata_writer *w;        /* perfdata; file: the current file */
	/* file */
	int dir_fd, file_fd;
	uint64_t file_opened_ns, file_first_time, bytes_done, raw_done, files;
	uint64_t rotated_ns;              /* when the last file was closed for its time (0: not) */
	char current[96];
	uint64_t *kept;                   /* seqs of our files in the directory */
	size_t nr_kept;
	/* readers */
	struct reader *readers;
	uint64_t records, reader_lost, sb_dropped, too_big;
	int err;                          /* sticky output error */
	bool closed;
	/* ring: hashes of the last records recovered at open (sink__journaled_before) */
	uint64_t *before;
	size_t before_mask;
	bool before_built;
};

/* sinkcopy.c */
/* a whole perf record: its size in its header, 8-byte aligned */
bool sink_rec_ok(const void *rec, size_t len);
int sink_new_writer(const struct sink *s, int fd, bool pipe, int zstd, struct perfdata_writer **w);
/*
 * write records (sideband kept, or a ring's view: its sideband and the
 * samples from since to until) through w, a round every few MiB.  A view's
 * copy reads only what never changes after sink__new of the sink;
 * *evicted as pring_view__sorted_span's.
 */
int sink_copy_kept_sideband(struct sink *s, struct perfdata_writer *w);
int sink_copy_view(const struct sink *s, struct pring_view *v, struct perfdata_writer *w,
		   uint64_t since, uint64_t until, uint64_t *evicted);

/* sinkfile.c */
/* prefix copied; the first file is opened */
int file_sink_init(struct sink *s, const char *prefix);
int file_ensure(struct sink *s);
int file_round(struct sink *s);
int file_close(struct sink *s);
int file_snapshot(struct sink *s, struct perfdata_writer *w);
void file_sink_free(struct sink *s);

/* readers.c */
void readers_record(struct sink *s, uint64_t time, const void *rec, size_t len);
void readers_round(struct sink *s);
void readers_free(struct sink *s);

#endif

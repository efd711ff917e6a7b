/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a perfmarkd session's records go.
 *
 *   ring: an in-memory flight recorder holding the newest records (bounded
 *         by size); snapshots write it out as a complete perf.data.
 *   file: perf.data files in a directory, rotated by size or time, each a
 *         complete file; the oldest are removed beyond `keep`.
 *
 * Both keep the sideband (COMM/MMAP/MMAP2/FORK/EXIT) aside, so a snapshot,
 * a rotated file and a newly attached reader always name the processes.
 *
 * Live readers get a pipe-mode stream: the header, the kept sideband, then
 * every record and FINISHED_ROUND as they come.  Each reader has a bounded
 * queue written without blocking; what does not fit is dropped and reported
 * in its stream as PERF_RECORD_LOST_SAMPLES.
 *
 * Records are handed over complete and in time order (session_sink_ops).
 * All functions return 0 or a negative errno.
 */
#ifndef PERFMARK_SINKS_H
#define PERFMARK_SINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfdata_event;

enum sink_kind {
	SINK_RING,
	SINK_FILE,
};

struct sink_opts {
	enum sink_kind kind;
	uint64_t ring_size;            /* ring: bytes of records kept */
	int dir_fd;                    /* file: output directory (duplicated) */
	const char *prefix;            /* file: PREFIX-NNNNNN.perf.data */
	uint64_t seq;                  /* file: first number to try */
	uint64_t rotate_size;          /* file: bytes, 0: never */
	uint64_t rotate_secs;          /* file: seconds, 0: never */
	uint32_t keep;                 /* file: files kept, 0: all */
	uid_t uid;                     /* file: owner of created files, (uid_t)-1: leave */
	gid_t gid;
	int zstd_level;                /* files and snapshots */
	const struct perfdata_event *events;   /* copied */
	size_t nr_events;
	uint64_t reader_queue;         /* bytes per live reader; 0: 4 MiB */
};

struct sink_stats {
	enum sink_kind kind;
	uint64_t records;              /* records received */
	uint64_t used, capacity;       /* ring: bytes held / limit */
	uint64_t evicted;              /* ring: records pushed out by newer ones */
	uint64_t sideband_bytes;
	uint64_t bytes;                /* file: bytes written, all files */
	uint64_t files;                /* file: files created */
	uint64_t seq;                  /* file: next file number */
	char current[96];              /* file: name of the file being written */
	size_t readers;
	uint64_t reader_lost;          /* records dropped for slow readers */
};

struct sink;
struct reader;

int sink__new(struct sink **out, const struct sink_opts *opts);
int sink__record(struct sink *s, const void *rec, size_t len);
/* end of a drain: FINISHED_ROUND to files and readers, rotation */
int sink__round(struct sink *s);
/*
 * A complete perf.data of what the sink holds (the ring, or the current
 * file's records) to fd: file mode (pwrite) unless pipe.
 */
int sink__snapshot(struct sink *s, int fd, bool pipe);
/* file: finish the current file (features written).  Later records: -EBADF. */
int sink__close(struct sink *s);
void sink__stats(const struct sink *s, struct sink_stats *st);
/* Frees the readers too (closing their fds). */
void sink__free(struct sink *s);

/* A live reader on fd (taken over: closed by sink__detach/sink__free). */
int sink__attach(struct sink *s, int fd, void *ctx, struct reader **out);
void sink__detach(struct sink *s, struct reader *r);
/* Readers in attach order; returns their count (fills at most max). */
size_t sink__readers(const struct sink *s, struct reader **out, size_t max);

int reader__fd(const struct reader *r);
void *reader__ctx(const struct reader *r);
/* Write what is queued: 0 all out, -EAGAIN more (wait for EPOLLOUT), or -errno (gone). */
int reader__flush(struct reader *r);
bool reader__pending(const struct reader *r);
uint64_t reader__lost(const struct reader *r);

#endif

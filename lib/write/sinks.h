/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a session's records go: one interface for every output.
 *
 *   perfdata  one perf.data on an fd, file or pipe mode, zstd or not
 *             (`perfmark record`, in-process or through perfmarkd);
 *   ring      a flight recorder of the newest records (see pring.h: given
 *             a directory, it survives the daemon); snapshots write it out
 *             as a complete perf.data;
 *   file      perf.data files in a directory, rotated by size or time, each
 *             a complete file; the oldest removed beyond `keep`.
 *
 * Records (complete perf records, header.size == len, 8-byte multiples)
 * reach a sink twice, always with their time:
 *   sink__journal()  as soon as the session has them, in arrival order: the
 *                    ring keeps them here, so a daemon killed a moment
 *                    later loses nothing it had read;
 *   sink__record()   in time order, each drain closed by sink__round():
 *                    perf.data writers and live readers.
 * Nothing is ever parsed back out of the encoded bytes for its time.
 *
 * Ring and file sinks keep the sideband (COMM/MMAP/MMAP2/FORK/EXIT) aside, so
 * a snapshot, a rotated file and a newly attached reader name the processes.
 *
 * Live readers get a pipe-mode stream: the header, everything the sink held
 * up to the moment of attaching (as a snapshot would), then every record and
 * FINISHED_ROUND as they come.  A reader's live queue is bounded and written
 * without blocking; what does not fit is dropped and reported in its stream
 * as PERF_RECORD_LOST_SAMPLES.
 *
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
	SINK_PERFDATA,
	SINK_RING,
	SINK_FILE,
};

struct sink_opts {
	enum sink_kind kind;
	const struct perfdata_event *events;   /* copied; ring: NULL takes the stored ones */
	size_t nr_events;
	int zstd_level;                /* perfdata, files and snapshots */
	/* perfdata */
	int fd;                        /* not closed */
	bool pipe;
	bool resume;                   /* go on after the last round of the perf.data fd holds */
	int argc;                      /* the CMDLINE feature */
	char *const *argv;
	/* ring */
	uint64_t ring_size;            /* bytes of records kept */
	uint64_t ring_sideband;        /* bytes of each sideband half; 0: from ring_size */
	int ring_dir_fd;               /* with ring_name: the file there keeps the ring */
	const char *ring_name;         /* NULL: memory only */
	/* file */
	int dir_fd;                    /* output directory (duplicated) */
	const char *prefix;            /* PREFIX-NNNNNN.perf.data */
	uint64_t seq;                  /* first number to try */
	uint64_t rotate_size;          /* bytes, 0: never */
	uint64_t rotate_secs;          /* seconds, 0: never */
	uint32_t keep;                 /* files kept, 0: all */
	uid_t uid;                     /* owner of created files, (uid_t)-1: leave */
	gid_t gid;
	uint64_t reader_queue;         /* bytes per live reader; 0: 4 MiB */
};

/* what a ring sink found of an earlier daemon's ring */
struct sink_recovery {
	bool found, replaced;
	uint64_t records, sideband;    /* taken over */
	uint64_t torn;                 /* torn records dropped */
};

struct sink_stats {
	enum sink_kind kind;
	uint64_t records;              /* records received in time order */
	uint64_t used, capacity;       /* ring: bytes held / limit */
	uint64_t held;                 /* ring: records held */
	uint64_t evicted;              /* ring: records pushed out by newer ones */
	uint64_t torn;                 /* ring: torn records found after a crash */
	uint64_t sideband_bytes;
	uint64_t sideband_dropped;     /* sideband records that found no room */
	uint64_t bytes, raw_bytes;     /* perfdata, file: bytes written (all files), before zstd */
	uint64_t files;                /* file: files created */
	uint64_t seq;                  /* file: next file number */
	char current[96];              /* file: name of the file being written */
	size_t readers;
	uint64_t reader_lost;          /* records dropped for slow readers */
};

struct sink;
struct reader;

int sink__new(struct sink **out, const struct sink_opts *opts, struct sink_recovery *rec);
int sink__journal(struct sink *s, uint64_t time, const void *rec, size_t len);
int sink__record(struct sink *s, uint64_t time, const void *rec, size_t len);
/*
 * Was this record (its bytes) among the last SINK_BEFORE_FRAMES the ring
 * held when it was opened, journaled by the daemon before a kill -9?  For
 * a record the source may have handed on already and reads again after a
 * restart (the fast lane's tails move a batch at a time).  Built at the
 * first ask; sink__forget_before() lets it go.  False for other kinds.
 */
#define SINK_BEFORE_FRAMES 65536u
bool sink__journaled_before(struct sink *s, const void *rec, size_t len);
void sink__forget_before(struct sink *s);
/* end of a drain: FINISHED_ROUND to writers and readers, rotation */
int sink__round(struct sink *s);
/*
 * A complete perf.data to fd (file mode, pwrite; or pipe mode) of what the
 * sink holds with time <= until: the ring, or the current file.
 */
int sink__snapshot(struct sink *s, int fd, bool pipe, uint64_t until);
/* The same, without the ring's samples older than since (perfmarkd's pprof of the last N s) */
int sink__snapshot_span(struct sink *s, int fd, bool pipe, uint64_t since, uint64_t until);
/*
 * The same with the caller's records after what the sink holds (a
 * session's counters as perf stat's records): tail_len bytes of complete
 * perf records.
 */
int sink__snapshot_tail(struct sink *s, int fd, bool pipe, uint64_t until, const void *tail,
			size_t tail_len);
/*
 * The same in two steps, for a ring: begin in the thread that writes the
 * sink (what it holds now), write in any one thread while the sink goes on
 * (pring.h: views; what the ring evicts meanwhile is kept for it), free in
 * the writing thread after; the tail (copied) as sink__snapshot_tail's.  The sink must outlive the snapshot.
 * -EOPNOTSUPP for the other kinds.
 */
struct sink_snap;
int sink__snapshot_begin(struct sink *s, uint64_t until, const void *tail, size_t tail_len,
			 struct sink_snap **out);
int sink_snap__write(struct sink_snap *sn, int fd, bool pipe);
/* records the snapshot lost: evicted when no memory was left to keep them (after write) */
uint64_t sink_snap__evicted(const struct sink_snap *sn);
void sink_snap__free(struct sink_snap *sn);
/* perfdata, file: finish the output (features written).  Later records: -EBADF. */
int sink__close(struct sink *s);
void sink__stats(const struct sink *s, struct sink_stats *st);
/* Frees the readers too (closing their fds). */
void sink__free(struct sink *s);
/* the ring file of a deleted session */
int sink__remove_ring(int dir_fd, const char *name);
/* events a sink writes (ring: as stored); the pointers live as long as s */
size_t sink__events(const struct sink *s, const struct perfdata_event **evs);

/*
 * A live reader on fd (taken over: closed by sink__detach/sink__free); its
 * stream starts with what the sink held up to `until`.
 */
int sink__attach(struct sink *s, int fd, void *ctx, uint64_t until, struct reader **out);
void sink__detach(struct sink *s, struct reader *r);
/* Readers in attach order; returns their count (fills at most max). */
size_t sink__readers(const struct sink *s, struct reader **out, size_t max);

int reader__fd(const struct reader *r);
void *reader__ctx(const struct reader *r);
/* Write what is queued: 0 all out, -EAGAIN more (wait for EPOLLOUT), or -errno (gone). */
int reader__flush(struct reader *r);
bool reader__pending(const struct reader *r);

#endif

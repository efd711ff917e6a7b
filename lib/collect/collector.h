/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A collector is one set of BPF programs, perf events, ring buffer and
 * sideband events.  Sessions with the same events, rate, call-chain and
 * marker settings share one: each sample costs one run of the BPF program
 * however many sessions want it.  The BPF filter is the union of the
 * subscribers' wishes; every record is handed to every active subscriber,
 * which keeps exactly its own share.
 *
 * Collectors live in a per-process registry; session.c is their only user.
 */
#ifndef PERFMARK_COLLECTOR_H
#define PERFMARK_COLLECTOR_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recspec.h"

/*
 * Sessions sharing one collector.  At least every session and recording
 * perfmarkd allows at once (its limits: 80 named sessions, 80 connections),
 * so members sharing one set of events never leave root without a slot.
 */
#define COLLECTOR_MAX_SUBS 160

struct collector;

struct collector_sub {
	/* a ringbuf record (bpf/perfmark_wire.h) and a sideband perf record */
	void (*on_ring)(void *ctx, const void *data, size_t size);
	void (*on_sideband)(void *ctx, const struct perf_event_header *h);
	void *ctx;
	/* the subscriber's share of the union filter */
	bool all;            /* every process (of uid, when uid != -1) */
	uint32_t uid;        /* (uint32_t)-1: any */
	bool active;         /* started: receives records */
};

typedef void (*collector_notice_fn)(void *ctx, const char *msg);

/*
 * A running collector for spec, shared if one exists for the same events,
 * rate, call graph, markers and ring size (targets and compression do not
 * matter), else a new one (BPF loaded, events opened disabled, markers
 * attached).  pinnable: it may be pinned (collector__pin), so it loads the
 * gap sideband's programs, which only a pinned collection runs and which
 * take the kernel's verifier longer than all the others together; one
 * made without them is not shared with a pinnable request.  notice hears
 * what happened while it was made (a fallback to cpu-clock, a clamped
 * rate), also when it is shared.  err: one line.
 */
int collector__get(struct collector **out, const struct recspec *spec, bool pinnable,
		   collector_notice_fn notice, void *notice_ctx,
		   char *err, size_t errlen);
/*
 * The collector pinned under pin_dir by an earlier process; shared with
 * other subscribers that adopted the same pins.  ev: the resolved events.
 */
int collector__adopt(struct collector **out, const struct recspec *spec,
		     const char *pin_dir, char *err, size_t errlen);
/*
 * An adopted collector takes the fast lane's areas back (those kept in the
 * fd store, those live processes still map) a slice at a time, so that the
 * caller's loop goes on between slices: collector__adopt_step does up to
 * budget areas or processes, false once nothing is left.  While adopting,
 * what is read may be newer than records still to come from the areas not
 * yet taken back (a caller holds its window: session.c).
 */
struct collector_adopt_stats {
	uint64_t kept, rejoined, procs, steps;
	uint64_t redo;     /* markers still to read that the daemon before may have handed on */
};
bool collector__adopt_step(struct collector *c, unsigned budget);
bool collector__adopting(const struct collector *c, struct collector_adopt_stats *st);
void collector__put(struct collector *c);
/*
 * Keep a collector whose last session ended for up to ns (0, the default:
 * freed at once), to be shared by the next request that would share it
 * (collector_idle.c).  collector__idle_tick frees those kept longer and
 * reads what the others' buffers took in; it returns how many are kept
 * (none: no need to tick).
 */
void collector__set_linger(uint64_t ns);
size_t collector__idle_tick(void);
size_t collector__nr_idle(void);

int collector__subscribe(struct collector *c, struct collector_sub *sub);
void collector__unsubscribe(struct collector *c, struct collector_sub *sub);
/* sub->active changed: enables the events for the first, disables after the last */
void collector__activate(struct collector *c, struct collector_sub *sub, bool active);
int collector__add_pid(struct collector *c, pid_t pid);
/* pid becomes a target when it next calls execve (a CMD held before exec) */
int collector__add_pid_on_exec(struct collector *c, pid_t pid);
/*
 * pid is in the BPF target set of some session sharing c (a -p process,
 * a command, a child of one: the fork tracepoint adds those before they
 * run).  false: no session's target, nor a child of one (unless gone).
 */
bool collector__maybe_target(const struct collector *c, uint32_t pid);
/*
 * The same, and the root pid descends from (*root: the tgid a session
 * added, -p or a command, that its ancestors' forks lead back to; 0 when
 * the pinned programs are older and keep none).
 */
bool collector__target_root(const struct collector *c, uint32_t pid, uint32_t *root);
/*
 * Every pid in the BPF target set, to fn: the union of the sessions
 * sharing c, and, adopted, what the pinned programs kept following forks
 * while no daemon ran.  Which of them are a session's is its business.
 */
void collector__for_each_target(const struct collector *c, void (*fn)(void *ctx, uint32_t pid),
				void *ctx);
/*
 * pin links and maps under dir (again, for every session sharing them);
 * -EOPNOTSUPP for one made not pinnable or adopted
 */
int collector__pin(struct collector *c, const char *dir);
/*
 * read the ring and the sideband buffers, and a batch of the fast lane,
 * dispatching to subscribers; true when more of the fast lane waits.
 * COLLECTOR_ALL_BATCHES calls in a row take all it held before the first
 * (its spill at most, batch by batch), while a program that goes on
 * writing cannot keep a caller that wants "everything" looping for ever.
 * A consume reads up to COLLECTOR_RB_BATCH bytes of the BPF ring too (a
 * ring kept full while no daemon ran, or a flood, once made one consume
 * a turn of perfmarkd's loop of seconds on a loaded machine: issue 18
 * case 14); the ring's fd stays readable while more waits.
 */
#define COLLECTOR_RB_BATCH (2u << 20)
#define COLLECTOR_ALL_BATCHES 640
bool collector__consume(struct collector *c);
/* records handed out so far: unchanged across drains, nothing arrived (the caller may tick slower) */
uint64_t collector__activity(const struct collector *c);
/*
 * The calling thread takes COLLECTOR_NICE where it may (root,
 * CAP_SYS_NICE); best effort, this thread only.  For the threads that move
 * what was recorded: the fast lane's pump and the session's drain.  They
 * sleep most of the time, but when traced threads keep every CPU busy (4
 * spinning on 2 CPUs, measured), one that waits its fair turn lets the
 * rings fill, and a full ring sends markers down the trap lane at ~1.5 us
 * each.  Call it after forking anything that will be traced (a child
 * inherits the nice value).
 */
#define COLLECTOR_NICE (-10)
void collector__boost_thread(void);
/* --call-graph ehframe: the unwinder's figures (lib/collect/unwind.h) and BPF's */
struct collector_unwind_stats {
	uint64_t tables, table_bytes;        /* ELF tables loaded, their rows' bytes */
	uint64_t pool_bytes, cap;            /* BPF memory holding them, and its cap */
	uint64_t built, evicted, failed, over_cap;
	uint64_t refused, refused_why[4];    /* files whose CFI was over a budget: frame pointers there */
	uint64_t procs, mappings;            /* processes and mappings installed */
	uint64_t stacks, ended_early;        /* user stacks walked; not to the outermost frame */
	uint64_t ends[5];                    /* by enum pm_uw_end (bpf/unwind_wire.h) */
	uint64_t frames_cfi, frames_fp;      /* frames found from tables, by frame pointer */
	uint64_t copied;                     /* stacks BPF copied (no tables yet), walked here */
	uint64_t drain_max_ns;               /* the longest read of the ring (collector__consume) */
	uint64_t drain_max_cpu_ns;           /* the most CPU time one took (the rest: waiting for a CPU) */
	uint64_t builds_pending, builds_dropped, build_max_ns;   /* tables being built (unwind.h) */
	uint64_t waited, waited_late;        /* copies that waited for a table; walked before it came */
};
/* false unless the collector unwinds with tables (--call-graph ehframe) */
bool collector__unwind_stats(const struct collector *c, struct collector_unwind_stats *st);
/*
 * The same as JSON ({"stacks":N,"ended_early":N,"ends":{"depth":N,...},
 * "frames_cfi":N,"frames_fp":N,"tables":N,"table_bytes":N,"pool_bytes":N,
 * "cap":N,"built":N,"evicted":N,"failed":N,"over_cap":N,"refused":N,
 * "refused_why":{"size":N,"work":N,"rows":N,"rules":N},"procs":N,
 * "mappings":N,"copied":N,"drain_max_ns":N,"drain_max_cpu_ns":N,"builds_pending":N,"builds_dropped":N,
 * "build_max_ns":N,"waited":N,"waited_late":N}), read back, and as one line of text.
 */
struct json_object;
struct json_object *collector_unwind_stats_json(const struct collector_unwind_stats *st);
void collector_unwind_stats_from_json(struct json_object *o, struct collector_unwind_stats *st);
void collector_unwind_stats_text(const struct collector_unwind_stats *st, char *buf, size_t len);
/*
 * --aggregate: what was written (one sample per distinct stack and
 * interval: stacks; the samples they stand for: samples), lost (a stack
 * the map no longer had), and spilled (a full map, or another stack in the
 * stack's bucket: those samples went to the ring as they were).  false
 * when not aggregating.
 */
struct collector_agg_stats {
	uint64_t seconds;                    /* the interval; 0: not aggregating */
	uint64_t intervals, stacks, samples, lost;
	uint64_t spilled;                    /* no room in the maps: written as they were */
	uint64_t idle_ns;                    /* the idle task's time, from /proc/stat (collector_agg.c) */
};
bool collector__agg_stats(const struct collector *c, struct collector_agg_stats *st);
/*
 * As JSON ({"seconds":N,"intervals":N,"stacks":N,"samples":N,"lost":N,"spilled":N}),
 * read back, and as one line of text.
 */
struct json_object *collector_agg_stats_json(const struct collector_agg_stats *st);
void collector_agg_stats_from_json(struct json_object *o, struct collector_agg_stats *st);
void collector_agg_stats_text(const struct collector_agg_stats *st, char *buf, size_t len);
/*
 * --aggregate: end the interval now (a session stopping or flushing): what
 * was counted goes to the subscribers.  Nothing when not aggregating.
 */
void collector__agg_flush(struct collector *c);
/*
 * Since when (CLOCK_MONOTONIC ns) the kernel's sideband reaches this
 * process; the gap sideband from BPF (PM_REC_TASK, PM_REC_MMAP) tells what
 * happened before, while no daemon read.
 */
uint64_t collector__sideband_since(const struct collector *c);
/*
 * When the last read of the perf sideband began: what the kernel put there
 * before then has been read; a BPF twin of anything later may have no
 * perf copy read yet (it is read after the BPF ring's records).
 */
uint64_t collector__sideband_read_at(const struct collector *c);
/* --off-cpu: intervals since the collector was loaded (zeros without it) */
struct collector_offcpu_stats {
	uint64_t samples;    /* written one each */
	uint64_t merged;     /* summed with others of the same thread, state and stack */
	uint64_t lost;       /* neither (the ring and the map of sums were full) */
	uint64_t unseen;     /* of samples and merged: ended by a switch no program saw */
	uint64_t nowaker;    /* of samples and merged: blocked, their wakeup seen by no program */
};
void collector__offcpu_stats(const struct collector *c, struct collector_offcpu_stats *st);
/*
 * drops counted in BPF since the collector was loaded; markers also those
 * an earlier recorder had taken from the fast lane when it died
 */
void collector__lost(const struct collector *c, uint64_t *samples, uint64_t *markers);
/*
 * The markers' side effects, for the whole collector (shared): lines of
 * /tmp/perf-PID.map written for JIT code markers, and those not written
 * (the process had gone, its owner unknown; or refused: see jitmap.h)
 */
#define COLLECTOR_TRAP_WHYS 8      /* enum pm_trap_why (bpf/perfmark_wire.h) */
struct collector_marker_stats {
	uint64_t jit_lines, jit_missed, jit_refused;
	uint64_t fl_corrupt;          /* fast-lane areas given up: their rings made no sense */
	uint64_t offers_lost;         /* fast-lane offers the BPF ring had no room for */
	/* markers by lane: through the fast lane, and the trap lane's by why */
	uint64_t fast, trap[COLLECTOR_TRAP_WHYS];
};
/*
 * The lanes' counts as JSON ({"fast":N,"trap":{"no_area":N,...}}, reasons
 * that are 0 left out), read back, and as one line of text.
 */
struct json_object;
struct json_object *collector_lanes_json(uint64_t fast, const uint64_t *trap);
void collector_lanes_from_json(struct json_object *o, uint64_t *fast, uint64_t *trap);
void collector_lanes_text(uint64_t fast, const uint64_t *trap, char *buf, size_t len);
void collector__marker_stats(const struct collector *c, struct collector_marker_stats *st);
/*
 * The sampling program's runs and their total time in ns, every sample of
 * every CPU (filtered ones too), as the kernel counts them while
 * kernel.bpf_stats_enabled is on (else 0); false when not known (adopted).
 */
bool collector__sampler_stats(const struct collector *c, uint64_t *runs, uint64_t *run_ns);
const struct evspec *collector__events(const struct collector *c, size_t *nr);
/* the attr of sampling event idx as opened (rate in force after any clamp), disabled */
void collector__sampling_attr(const struct collector *c, size_t idx, struct perf_event_attr *a);
/* what to poll: the rings, the fast lane, and (ehframe) the table builder's eventfd */
int collector__fds(const struct collector *c, int *fds, size_t max);
/*
 * --call-graph ehframe: stack copies that wait for a table being built are
 * handed to the subscribers once it is there (in any order: a subscriber
 * orders by time).  held_since: the oldest one's time (UINT64_MAX: none),
 * what a subscriber may flush up to.  settle: those of up to until go now,
 * walked with what tables there are; final (the recording ends), after
 * waiting UNWIND_HOLD_NS at most for their builds, unless the collector is
 * pinned (a daemon's: it does not wait).
 */
uint64_t collector__held_since(const struct collector *c);
void collector__settle(struct collector *c, uint64_t until, bool final);
/*
 * Look for libperfmark probes in a file the recorder's user names (the CMD
 * of `record -- CMD`, before it runs): attached before the first marker.
 * Returns the number of probes attached, or a negative errno.
 */
int collector__watch_file(struct collector *c, const char *path);
/* The same for a file open at fd that another process passed (open for reading). */
int collector__watch_fd(struct collector *c, int fd, const char *name);
int collector__unpin(const char *dir);

#endif

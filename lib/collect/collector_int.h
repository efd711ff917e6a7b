/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the collector (not for its users: they have collector.h).
 *
 *   collector_pin.c      pinning under bpffs and adopting what an earlier
 *                        process pinned
 *   collector_idle.c     idle collectors kept a while for the next recording
 *                        (the last collector__put: kept or freed)
 *   collector.c          registry, sharing, subscribers and their union
 *                        filter, dispatch of records, life cycle
 *   collector_events.c   the sampling perf events and the sideband events
 *   collector_markers.c  libperfmark's probe site: which files, the uprobes
 *                        (and through them the fast lane, fastlane.h)
 *   collector_offcpu.c   off-CPU time: its programs and its map of sums
 *   collector_tp.c       the tracepoints' program, configs and events
 *   collector_agg.c      --aggregate: draining the counted stacks
 *   collector_unwind.c   user stacks: ehframe tables, walking stack copies
 *   collector_want.c     whether a process is recorded, cached by pid
 *   collector_detach.c   links destroyed several at a time (RCU waits shared)
 *   collector_uprobe.c   the sites' uprobes: a perf event each, or every site
 *                        of a file on one uprobe_multi link
 *   collector_base.c     notices, the subscribers' dispatch, pinning an fd
 *
 * Calls go down this list only (tests/t-calls.sh checks): a part hands a
 * record on with collector_dispatch_subs, never back up through collector.c,
 * and what collector.c must call back (the sideband) is passed to the part.
 */
#ifndef PERFMARK_COLLECTOR_INT_H
#define PERFMARK_COLLECTOR_INT_H

#include <limits.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "collector.h"
#include "perfmark_wire.h"
#include "offcpu_wire.h"

#define DEFAULT_RINGBUF   (16u << 20)
#define SIDEBAND_PAGES    64          /* per CPU */
#define MAX_CPUS          1024
#define MAX_MARKER_LIBS   4
#define MAX_UIDS          64
#define MAX_NOTICES       4
/* links besides the sampling events': task tracepoints, gap sideband, off-CPU */
#define MAX_TP_LINKS      10
/* --off-cpu's maps, pinned under these names (collector_offcpu.c) */
enum { OFF_AGG0, OFF_AGG1, OFF_CTL, OFF_BUSY, OFF_FDS };
extern const char *const offcpu_pin_names[OFF_FDS];

struct marker_lib {
	char path[PATH_MAX];
	dev_t dev;
	ino_t ino;
};

/* collector_want.c: answers of collector_wants_pid() by pid */
struct collector_want {
	struct { uint32_t pid; uint8_t state; } cache[1024];
	uint32_t exec_pids[8];         /* commands held before their exec: targets at it */
};

struct collector {
	struct collector *next;        /* registry */
	int refs;
	struct recspec spec;           /* in force (rate may be clamped) */
	struct recspec req;            /* as asked, for sharing */
	struct evspec ev[RECSPEC_MAX_EVENTS];  /* after fallback */
	struct perfmark_bpf *skel;     /* NULL when adopted */
	int rb_fd, targets_fd, bss_fd, cfg_fd, uids_fd, exec_fd, sideband_fd;
	bool own_fds;                  /* adopted: the map fds are ours to close */
	bool target_roots;             /* targets' values are roots (__u32), not older pins' __u8 */
	int own_sideband_fd;
	uint32_t rb_id;                /* identity of the pinned ring, for adoption */
	uint64_t sideband_since;       /* CLOCK_MONOTONIC ns: the perf sideband runs from here */
	uint64_t sideband_read_at;     /* when the last read of the perf sideband began */
	struct ring_buffer *rb;
	size_t rb_left;                /* bytes this consume may still read of it (COLLECTOR_RB_BATCH) */
	bool rb_more;                  /* the consume stopped there: more waits */
	struct perf_buffer *pb;
	struct bpf_link **links;
	int *pfds;                     /* sampling events, then tracepoints' */
	size_t nr_links, nr_pfds, nr_sampling_pfds;
	char **pin_dirs;               /* where this collector is pinned */
	size_t nr_pin_dirs;
	struct collector_sub *subs[COLLECTOR_MAX_SUBS];
	size_t nr_subs;
	size_t nr_active;
	bool pinned, adopted;
	/*
	 * adopted: the first record read from the pinned BPF ring may be the
	 * one the daemon before handed on as it was killed (libbpf moves the
	 * consumer position after each record): a marker is flagged
	 * PM_X_REDELIVERED for the sessions
	 */
	bool rb_redo;
	bool test_rb_hold;             /* tests: $PERFMARK_TEST_HOLD.rbhanded (collector.c) */
	bool pinnable;                 /* made with the gap sideband's programs */
	bool umulti;                   /* marker sites on uprobe_multi links (on_probe) */
	bool idle;                     /* no session since idle_since: kept for reuse */
	uint64_t idle_since;           /* CLOCK_MONOTONIC ns */
	/* union filter, kept here and written whole to the maps */
	uint32_t nr_all;
	struct { uint32_t uid, count; } uids[MAX_UIDS];
	size_t nr_uids;
	collector_notice_fn notice;     /* the creator's, while it creates */
	void *notice_ctx;
	struct unwinder *uw;           /* --call-graph ehframe (collector_unwind.c) */
	int uw_pools_fd, uw_maps_fd, uw_pids_fd;
	void *uw_rec;                  /* a sample rebuilt from a walked stack copy */
	int uw_efd;                    /* an eventfd: a table was built (with uw only) */
	uint8_t *uw_held;              /* stack copies waiting for a table (collector_unwind.c) */
	size_t uw_held_len, uw_held_cap, uw_held_nr;
	uint64_t uw_held_oldest;       /* the oldest copy's time (UINT64_MAX: none) */
	uint64_t uw_waited, uw_waited_late;   /* copies that waited; walked before their table came */
	char notices[MAX_NOTICES][256];  /* what it was told, for those who share later */
	size_t nr_notices;
	struct collector_markers *mk;  /* collector_markers.c: probe files, uprobes, fast lane */
	/* --off-cpu (collector_offcpu.c): the two maps of summed intervals, which, who is in them */
	int off_fd[OFF_FDS];
	uint32_t off_slot;             /* the map the programs sum into (off_ctl) */
	int off_ncpus;
	struct pm_off_busy *off_busy;  /* off_busy as read, a value per CPU */
	void *off_keys, *off_vals;     /* a batch of them as it leaves the map */
	uint64_t off_drained;          /* offcpu_merged at the last drain */
	uint64_t trap_why[PM_TRAP_NR]; /* trap-lane markers read, by the library's why */
	uint64_t drain_max_ns;         /* the longest collector__consume() */
	uint64_t drain_max_cpu_ns;     /* the most CPU time one took */
	uint64_t activity;             /* records handed to subscribers (ring, sideband, aggregated) */
	int tp_prog_fd;                /* the tracepoint program (-1: none); adopted: ours to close */
	struct collector_agg *agg;     /* --aggregate (collector_agg.c); NULL: not aggregating */
	struct collector_want want;
};

extern struct collector *collector_registry;

/* collector_base.c */
void collector_notice(struct collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* hands a record ready as it is to the active subscribers */
void collector_dispatch_subs(struct collector *c, const void *data, size_t size);
int collector_pin_fd(int fd, const char *dir, const char *name);
/*
 * Per-CPU values as the kernel copies them out: each value_size rounded
 * up to 8 bytes.  collector_wait_quiet: wait (yielding) until no CPU's
 * value at key 0 of the per-CPU array fd is busy(value, arg), or wait_ns
 * has passed (a program runs for microseconds); buf holds ncpus values.
 */
#define COLLECTOR_PERCPU_STRIDE(value_size) (((value_size) + 7) / 8 * 8)
void collector_wait_quiet(int fd, void *buf, size_t value_size, int ncpus,
			  bool (*busy)(const void *value, uint32_t arg), uint32_t arg, uint64_t wait_ns);

/* collector.c */
struct collector *collector_alloc(const struct recspec *spec);
void collector_free(struct collector *c);
/*
 * The last step of both constructors, e their error (0: none): read the
 * ring and join the registry, or free c.  0 or -errno.
 */
int collector_publish(struct collector *c, int e, struct collector **out, char *err, size_t errlen);
/* the whole union filter, from the subscribers' counts */
void collector_write_filter(struct collector *c);
uint32_t collector_map_id(int fd);

/* collector_events.c */
int collector_open_events(struct collector *c, char *err, size_t errlen);
/* each sideband record goes to on_sideband(c, ...) */
int collector_open_sideband(struct collector *c, perf_buffer_event_fn on_sideband,
			    char *err, size_t errlen);


/* collector_offcpu.c: off-CPU time */
int collector_offcpu_setup(struct collector *c);                       /* before load */
int collector_offcpu_start(struct collector *c, const int fds[OFF_FDS], char *err, size_t errlen);
int collector_offcpu_attach(struct collector *c, char *err, size_t errlen);
void collector_offcpu_ring(struct collector *c, const void *data, size_t size);
void collector_offcpu_drain(struct collector *c);   /* each read: the sums, one record each */
void collector_offcpu_free(struct collector *c);
/* collector_tp.c: tracepoints */
int collector_tp_setup(struct collector *c);                  /* before load */
int collector_tp_attach(struct collector *c, char *err, size_t errlen);
/* hits the kernel did not run the program for (a tracing program already ran on that CPU) */
uint64_t collector_tp_missed(const struct collector *c);

/* collector_agg.c: --aggregate */
int collector_agg_setup(struct collector *c);                 /* before load */
/* fds: agg_ctl, agg_busy, agg_counts0/1, agg_stacks0/1, agg_idle (-1: none yet) */
int collector_agg_start(struct collector *c, const int fds[7], char *err, size_t errlen);
/* is sampling event idx opened with exclude_idle, the idle task's time written from /proc/stat? */
bool collector_agg_idle(struct collector *c, size_t idx);
void collector_agg_free(struct collector *c);
void collector_agg_flush(struct collector *c, bool force);   /* when the interval is over, or force */
uint64_t collector_agg_lost(const struct collector *c, uint64_t bpf_lost);
int collector_agg_pin(struct collector *c, const char *dir);
void collector_agg_pinned_fds(const char *dir, int fds[7]);

/* collector_sites.c: taking a register site (see there) */
int collector_site_lock(int fd);
void collector_site_unlock(int fd);
int collector_site_free(int fd, const uint64_t *sema, int n);

/* collector_markers.c */
int collector_attach_markers(struct collector *c, char *err, size_t errlen);
void collector_markers_adopt(struct collector *c);
uint64_t collector_markers_lost(const struct collector *c);
void collector_markers_free(struct collector *c);
void collector_markers_scan_pid(struct collector *c, uint32_t pid);
void collector_markers_scan_all(struct collector *c);
/* a fast-lane registration (consumed: true) or another ring record */
bool collector_markers_ring(struct collector *c, const void *data, size_t size);
void collector_markers_sideband(struct collector *c, const struct perf_event_header *h);
bool collector_markers_consume(struct collector *c);   /* true: more waits */
/* a JIT code marker (either lane): its /tmp/perf-PID.map line (jitmap.h) */
void collector_markers_jit(struct collector *c, const struct pm_marker *pm, size_t size);
/* the fast lane's fd, readable when a drain is due before the next tick (-1: none) */
int collector_markers_fd(const struct collector *c);
int collector_markers_pin(struct collector *c, const char *dir);
int collector_markers_pin_one(struct collector *c, const char *dir, size_t idx);

/* collector_detach.c: destroys the links, then closes the link fds, several at a time */
void collector_detach_links(struct bpf_link **links, size_t nr, const int *fds, size_t nr_fds);

/*
 * collector_uprobe.c: a system-wide uprobe perf event (pid -1) on the file
 * at path, with the semaphore the kernel raises in every process that maps
 * the file when ref_ctr_offset is set: its fd, or -errno.  Whether the
 * kernel makes uprobe_multi links (asked once); one on the n sites off[]
 * (semaphores ref[], NULL: none) of the file at path, cookies ck[]: its fd,
 * or -errno.  Before the load, which marker programs load (c->umulti).
 */
/* enum bpf_attach_type's value in Linux 6.6 and later (Debian 12's headers predate it) */
#define COLLECTOR_ATTACH_UPROBE_MULTI 48
int collector_uprobe_open(const char *path, uint64_t offset, uint64_t ref_ctr_offset);
void collector_uprobe_setup(struct collector *c);
bool collector_umulti_ok(void);
int collector_umulti_link(int prog_fd, const char *path, const uint64_t *off, const uint64_t *ref,
			  const uint64_t *ck, uint32_t n);


/* collector_want.c */
bool collector_wants_pid(const struct collector *c, uint32_t pid);
bool collector_wants_pid_cached(struct collector *c, uint32_t pid);
void collector_want_forget(struct collector *c, uint32_t pid);
void collector_want_exec_pending(struct collector *c, uint32_t pid);   /* add_pid_on_exec */
/* FORK, EXIT and exec's COMM: the answers they change */
void collector_want_sideband(struct collector *c, const struct perf_event_header *h);

/* collector_unwind.c: user stacks */
uint32_t collector_ustack_mode(const struct recspec *spec);   /* PM_US_* */
int collector_unwind_setup(struct collector *c);              /* before load */
int collector_unwind_start(struct collector *c, int pools_fd, int maps_fd, int pids_fd,
			   char *err, size_t errlen);
void collector_unwind_stop(struct collector *c);
/* the record the sessions get (a stack copy walked into frames: another buffer) */
const void *collector_unwind_ring(struct collector *c, const void *data, size_t *size);
void collector_unwind_sideband(struct collector *c, const struct perf_event_header *h);
void collector_unwind_begin(struct collector *c);    /* before each read of the ring */
void collector_unwind_tick(struct collector *c);     /* after each read of the ring */
void collector_unwind_sideband_attr(const struct collector *c, struct perf_event_attr *a);

static inline int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

#endif

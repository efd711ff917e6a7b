/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the session engine: what session.c (life cycle, drains),
 * targets.c (which records the session keeps) and encode.c (BPF records to
 * perf records) share.
 */
#ifndef PERFMARK_SESSION_INT_H
#define PERFMARK_SESSION_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "session.h"
#include "targets-int.h"
#include "tpconfig.h"      /* the tracepoints' permission rule */

struct pm_sample;
struct pm_marker;
struct pm_offcpu;
struct pm_uregs;
struct perfdata_sample;

#define ID_PRINTF 100
#define ID_UEVENT 101
#define ID_OFFCPU 102

/*
 * PERIOD only where periods differ from sample to sample (session_join):
 * a hardware event at a frequency.  Elsewhere (a period given, or cpu-clock
 * and task-clock, whose frequency the kernel turns into a fixed period)
 * the attr's period says it once, as perf record -c writes it: 8 bytes a
 * sample fewer.
 */
#define SAMPLE_TYPE_BASE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* --call-graph dwarf: perf's user registers and stack copy */
#define SAMPLE_TYPE_DWARF (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define SAMPLE_MAX_SIZE   65535   /* a record's size is 16 bits */
/*
 * markers carry the probe site's address so perf names it, not [unknown];
 * their period, 1, is their attr's
 */
#define MARKER_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

/* offcpu-time (encode_offcpu.c): a stack always, the payload of offcpu_raw.h */
#define OFFCPU_SAMPLE_TYPE (SAMPLE_TYPE_BASE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

struct session {
	struct session_opts o;
	struct collector *c;
	struct collector_sub sub;
	struct evspec ev[RECSPEC_MAX_EVENTS];  /* after fallback */
	size_t nr_ev;
	uint64_t sample_type;
	uint64_t off_sample_type;      /* --off-cpu: offcpu-time's */
	bool fixed_period;             /* no PERIOD in samples: the attr's (session_join) */
	struct sink *sink;             /* o.sink, or our own perfdata sink */
	bool own_sink;
	/* adopted after a restart: records read may repeat what the sink kept (encode.c, kept_before) */
	bool redo_watch;
	struct window *ro;
	struct targets tg;             /* which records are ours (targets.c) */
	bool kernel_ok;                /* kernel addresses and stacks may be written */
	uint64_t t0;                   /* before anything was attached */
	pid_t held_cmd;                /* session__add_cmd's: not exec'd yet at the start */
	uint64_t lost_samples_seen, lost_markers_seen;
	/* the collector's counts when this session joined (session__stats: since then) */
	struct collector_marker_stats ms0;
	uint64_t runs0, run_ns0;
	uint64_t flushed_at;           /* session__clock() of the last flush */
	void *staged;                  /* the record stage_alloc() gave out last */
	uint32_t staged_len;
	uint64_t staged_time;
	struct session_stats stats;
	char *chain_buf;               /* scratch for callchain building */
	int err;                       /* sticky writer error */
	bool started, stopped;
};

/* encode.c: a record the window lets go, to the sink */
int session_out_record(void *ctx, uint64_t time, const void *rec, size_t len);
/* encode.c: room in the reorder window; the record just staged goes to the journal */
void *stage_alloc(struct session *s, uint32_t len, uint64_t time);
int stage_done(struct session *s);
int stage_sample(struct session *s, const struct pm_sample *ps, size_t size);
int stage_marker(struct session *s, const struct pm_marker *pm, size_t size);
int stage_offcpu(struct session *s, const struct pm_offcpu *o, size_t size);
/*
 * A sample of type into the reorder window, encoded: a record's size is 16
 * bits, so the stack copy's far end is cut to fit.  The caller counts it
 * and ends with stage_done().
 */
int stage_encoded(struct session *s, uint64_t type, struct perfdata_sample *ds);
/*
 * The user registers and stack copy (PM_SF_UREGS) at off in a ring record
 * of size bytes: NULL when they do not fit in it.  uregs_fill: as perf's
 * REGS_USER and STACK_USER of ds.
 */
const struct pm_uregs *uregs_at(const void *rec, size_t size, size_t off);
void uregs_fill(const struct pm_uregs *u, struct perfdata_sample *ds);
/* PERF_RECORD_LOST_SAMPLES for drops counted in BPF */
int stage_lost(struct session *s, uint64_t lost, uint64_t id, uint64_t time);
/*
 * A gap sideband record (PM_REC_TASK, PM_REC_MMAP) as the perf record the
 * kernel would have written (COMM, FORK, EXIT, MMAP2) into out (room for a
 * path of PM_MAX_PATH); its length, 0 when malformed.  *uid: whose it is.
 */
size_t encode_gap(const void *data, size_t size, void *out, uint32_t *uid);
/* a synthesized record (synth.h callback): its time is s->t0 */
int on_synth(void *ctx, const void *rec, size_t len);
/* no sampling event's period differs from sample to sample (encode.c) */
bool session_fixed_period(const struct session *s);

#endif

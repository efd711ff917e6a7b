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

#include "evspec.h"

#define COLLECTOR_MAX_SUBS 64

struct collector;

/* what makes two sessions able to share programs */
struct collector_key {
	struct evspec ev[EVSPEC_MAX];   /* as requested (before any fallback) */
	size_t nr_ev;
	uint64_t freq, period;
	bool callchain, markers;
	size_t ringbuf_size;
};

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
 * A running collector for key, shared if one exists, else a new one (BPF
 * loaded, events opened disabled, markers attached).  err: one line.
 */
int collector__get(struct collector **out, const struct collector_key *key,
		   collector_notice_fn notice, void *notice_ctx,
		   char *err, size_t errlen);
/*
 * The collector pinned under pin_dir by an earlier process; shared with
 * other subscribers that adopted the same pins.  ev: the resolved events.
 */
int collector__adopt(struct collector **out, const struct collector_key *key,
		     const char *pin_dir, char *err, size_t errlen);
void collector__put(struct collector *c);

int collector__subscribe(struct collector *c, struct collector_sub *sub);
void collector__unsubscribe(struct collector *c, struct collector_sub *sub);
/* sub->active changed: enables the events for the first, disables after the last */
void collector__activate(struct collector *c, struct collector_sub *sub, bool active);
int collector__add_pid(struct collector *c, pid_t pid);
/* pid becomes a target when it next calls execve (a CMD held before exec) */
int collector__add_pid_on_exec(struct collector *c, pid_t pid);
/* pin links and maps under dir (again, for every session sharing them) */
int collector__pin(struct collector *c, const char *dir);
/* read the ring and the sideband buffers, dispatching to subscribers */
void collector__consume(struct collector *c);
/* drops counted in BPF since the collector was loaded */
void collector__lost(const struct collector *c, uint64_t *samples, uint64_t *markers);
const struct evspec *collector__events(const struct collector *c, size_t *nr);
/* the attr of sampling event idx as opened (rate in force after any clamp), disabled */
void collector__sampling_attr(const struct collector *c, size_t idx, struct perf_event_attr *a);
int collector__fds(const struct collector *c, int *fds, size_t max);
size_t collector__marker_libs(const struct collector *c, const char **paths, size_t max);
int collector__unpin(const char *dir);

#endif

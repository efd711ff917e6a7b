// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Collectors: BPF programs on perf events and on libperfmark's probe site,
 * shared by every session with the same settings.  See collector.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.h"
#include "perfmark.skel.h"
#include "perfmark_wire.h"
#include "clock.h"
#include "collector_int.h"
#include "testhold.h"

struct collector *collector_registry;

/* --- dispatch --------------------------------------------------------------- */

static void dispatch_ring(struct collector *c, const void *data, size_t size)
{
	const struct pm_marker *pm = data;

	if (size >= sizeof(uint32_t) && *(const uint32_t *)data == PM_REC_OFFCPU)
		collector_offcpu_ring(c, data, size);
	/* both lanes come here: a JIT code marker's line, once per collector */
	if (size >= sizeof(*pm) && pm->rec_type == PM_REC_MARKER && pm->type == PERFMARK_TYPE_JIT_CODE)
		collector_markers_jit(c, pm, size);
	data = collector_unwind_ring(c, data, &size);
	if (!data)
		return;                 /* a stack copy that waits for a table: later */
	collector_dispatch_subs(c, data, size);
}

_Static_assert(PM_TRAP_NR <= COLLECTOR_TRAP_WHYS, "collector_marker_stats.trap holds every why");

/* the BPF ring's first record after a restart (collector_int.h: rb_redo) */
static void dispatch_redo(struct collector *c, const void *data, size_t size)
{
	const struct pm_marker *pm = data;
	struct pm_marker *copy;

	c->rb_redo = false;
	if (size < sizeof(*pm) || pm->rec_type != PM_REC_MARKER || !(copy = malloc(size))) {
		dispatch_ring(c, data, size);
		return;
	}
	memcpy(copy, data, size);     /* the ring's pages are read-only here */
	copy->ext |= PM_X_REDELIVERED;
	dispatch_ring(c, copy, size);
	free(copy);
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct pm_marker *pm = data;

	/* a marker in the BPF ring came down the trap lane: why, as its library said */
	if (size >= sizeof(*pm) && pm->rec_type == PM_REC_MARKER)
		c->trap_why[((pm->ext & PM_X_TRAP_MASK) >> PM_X_TRAP_SHIFT) % PM_TRAP_NR]++;

	if (collector_markers_ring(c, data, size))
		c->rb_redo = false;
	else if (__builtin_expect(c->rb_redo, 0))
		dispatch_redo(c, data, size);
	else
		dispatch_ring(c, data, size);
	/* tests: a kill here finds a marker handed on, libbpf's position not past it */
	if (__builtin_expect(c->test_rb_hold, 0) && size >= sizeof(*pm) &&
	    pm->rec_type == PM_REC_MARKER) {
		c->test_rb_hold = false;
		test_hold_wait("rbhanded", true);
	}
	/* a batch read: the consume stops here (libbpf has taken this record) */
	if (c->rb_left <= size + 8) {
		c->rb_left = 0;
		c->rb_more = true;
		return -EAGAIN;
	}
	c->rb_left -= size + 8;
	return 0;
}
_Static_assert(RECSPEC_RINGBUF_MAX / COLLECTOR_RB_BATCH < COLLECTOR_ALL_BATCHES,
	       "all batches take a full BPF ring");

/* hands a sideband record to the parts and the active subscribers */
static enum bpf_perf_event_ret on_sideband(void *ctx, int cpu, struct perf_event_header *h)
{
	struct collector *c = ctx;
	size_t i;

	c->activity++;
	collector_unwind_sideband(c, h);
	collector_markers_sideband(c, h);
	for (i = 0; i < c->nr_subs; i++)
		if (c->subs[i]->active)
			c->subs[i]->on_sideband(c->subs[i]->ctx, h);
	return LIBBPF_PERF_EVENT_CONT;
}

/*
 * Sideband first: a FORK read before the ring lets sessions recognise the
 * new child's samples.  The fast lane after the BPF ring: a marker that a
 * thread sent down the trap lane was preceded by everything it wrote into
 * its ring before, so reading the rings last finds those too, and a
 * registration read from the BPF ring is attached before its rings are read.
 */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t collector__activity(const struct collector *c)
{
	return c->activity;
}

bool collector__consume(struct collector *c)
{
	uint64_t t0 = clock_mono_ns(), c0 = thread_cpu_ns(), dt;
	bool more;

	collector_unwind_begin(c);
	c->sideband_read_at = t0;
	perf_buffer__consume(c->pb);
	c->rb_left = COLLECTOR_RB_BATCH;
	c->rb_more = false;
	c->test_rb_hold = test_hold_armed("rbhanded");
	ring_buffer__consume(c->rb);
	c->rb_redo = false;           /* its first record, if there was one, is read */
	collector_offcpu_drain(c);
	more = collector_markers_consume(c) || c->rb_more;
	collector_unwind_tick(c);
	collector_agg_flush(c, false);
	/* what a drain of this collector cost the thread that drains (stats: longest drain) */
	dt = clock_mono_ns() - t0;
	if (dt > c->drain_max_ns)
		c->drain_max_ns = dt;
	dt = thread_cpu_ns() - c0;   /* of which the thread ran (the rest: others ran) */
	if (dt > c->drain_max_cpu_ns)
		c->drain_max_cpu_ns = dt;
	return more;
}

void collector__lost(const struct collector *c, uint64_t *samples, uint64_t *markers)
{
	struct perfmark_bpf__bss bss;
	uint32_t zero = 0;

	/* every drain asks: the skeleton's mapping of .bss, no syscall (adopted: a lookup) */
	if (c->skel && c->skel->bss) {
		/* the tracepoint's misses cost a syscall, and only with tracepoints */
		*samples = __atomic_load_n(&c->skel->bss->lost_samples, __ATOMIC_RELAXED) +
			   collector_tp_missed(c) +
			   collector_agg_lost(c, __atomic_load_n(&c->skel->bss->agg_lost, __ATOMIC_RELAXED));
		*markers = __atomic_load_n(&c->skel->bss->lost_markers, __ATOMIC_RELAXED) +
			   collector_markers_lost(c);
		return;
	}
	if (bpf_map_lookup_elem(c->bss_fd, &zero, &bss))
		memset(&bss, 0, sizeof(bss));
	*samples = bss.lost_samples + collector_tp_missed(c) + collector_agg_lost(c, bss.agg_lost);
	*markers = bss.lost_markers + collector_markers_lost(c);
}

bool collector__sampler_stats(const struct collector *c, uint64_t *runs, uint64_t *run_ns)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	*runs = *run_ns = 0;
	if (!c->skel || bpf_obj_get_info_by_fd(bpf_program__fd(c->skel->progs.on_sample), &info, &len))
		return false;
	*runs = info.run_cnt;
	*run_ns = info.run_time_ns;
	return true;
}

/* --- union filter ------------------------------------------------------------- */

static void write_cfg(struct collector *c)
{
	/* pinned: collection may go on with no daemon, the gap sideband with it */
	struct pm_cfg cfg = { .all = c->nr_all, .nr_uids = c->nr_uids, .gap = c->pinned,
			      .tp_on = c->pinned || c->nr_active, .self_pid = getpid() };
	uint32_t zero = 0;

	bpf_map_update_elem(c->cfg_fd, &zero, &cfg, BPF_ANY);
}

static void clear_uids_map(struct collector *c)
{
	uint32_t k, next;

	while (!bpf_map_get_next_key(c->uids_fd, NULL, &next)) {
		k = next;
		if (bpf_map_delete_elem(c->uids_fd, &k))
			break;
	}
}

void collector_write_filter(struct collector *c)
{
	size_t i;

	clear_uids_map(c);
	for (i = 0; i < c->nr_uids; i++)
		bpf_map_update_elem(c->uids_fd, &c->uids[i].uid, &c->uids[i].count, BPF_ANY);
	write_cfg(c);
}

static int uid_count(struct collector *c, uint32_t uid, int delta)
{
	size_t i;

	for (i = 0; i < c->nr_uids; i++)
		if (c->uids[i].uid == uid)
			break;
	if (i == c->nr_uids) {
		if (delta < 0)
			return 0;
		if (c->nr_uids == MAX_UIDS)
			return -ENOSPC;
		c->uids[c->nr_uids].uid = uid;
		c->uids[c->nr_uids++].count = 0;
	}
	c->uids[i].count += delta;
	if (!c->uids[i].count)
		c->uids[i] = c->uids[--c->nr_uids];
	return 0;
}

int collector__subscribe(struct collector *c, struct collector_sub *sub)
{
	int e = 0;

	if (c->nr_subs == COLLECTOR_MAX_SUBS)
		return -ENOSPC;
	if (sub->all && sub->uid == (uint32_t)-1) {
		c->nr_all++;
	} else if (sub->all) {
		e = uid_count(c, sub->uid, 1);
		if (e)
			return e;
	}
	c->subs[c->nr_subs++] = sub;
	collector_write_filter(c);
	if (sub->all)
		collector_markers_scan_all(c);   /* libperfmark copies already mapped */
	return 0;
}

void collector__unsubscribe(struct collector *c, struct collector_sub *sub)
{
	size_t i;

	for (i = 0; i < c->nr_subs; i++)
		if (c->subs[i] == sub)
			break;
	if (i == c->nr_subs)
		return;
	if (sub->active)
		collector__activate(c, sub, false);
	memmove(&c->subs[i], &c->subs[i + 1], (c->nr_subs - i - 1) * sizeof(c->subs[0]));
	c->nr_subs--;
	if (sub->all && sub->uid == (uint32_t)-1)
		c->nr_all--;
	else if (sub->all)
		uid_count(c, sub->uid, -1);
	/*
	 * A pinned collector goes on collecting for its sessions while no
	 * process holds them (a daemon restart): its filter narrows only when
	 * a session's pins are removed (collector__unpin).
	 */
	if (!c->pinned)
		collector_write_filter(c);
}

void collector__activate(struct collector *c, struct collector_sub *sub, bool active)
{
	size_t i;

	if (sub->active == active)
		return;
	sub->active = active;
	if (active && c->nr_active++ == 0) {
		for (i = 0; i < c->nr_sampling_pfds; i++)
			ioctl(c->pfds[i], PERF_EVENT_IOC_ENABLE, 0);
		write_cfg(c);      /* tracepoint hits on */
	} else if (!active && --c->nr_active == 0 && !c->pinned) {
		/* a pinned collector keeps sampling for its sessions */
		for (i = 0; i < c->nr_sampling_pfds; i++)
			ioctl(c->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
		write_cfg(c);
	}
}

/* exec_pending: pid becomes a target at its exec */
static int set_exec_pid(int map_fd, pid_t pid)
{
	uint32_t p = pid;
	uint8_t one = 1;

	if (bpf_map_update_elem(map_fd, &p, &one, BPF_ANY))
		return -errno;
	return 0;
}

/* pid a target, a root of its own (older pins: a __u8 1) */
static int set_target(const struct collector *c, pid_t pid)
{
	uint32_t p = pid, root = pid;
	uint8_t one = 1;

	if (bpf_map_update_elem(c->targets_fd, &p, c->target_roots ? (void *)&root : (void *)&one,
				BPF_ANY))
		return -errno;
	return 0;
}

bool collector__maybe_target(const struct collector *c, uint32_t pid)
{
	uint32_t v;   /* the larger of both value sizes */

	/* a command held before its exec is its session's already: targets alone */
	return !bpf_map_lookup_elem(c->targets_fd, &pid, &v);
}

bool collector__target_root(const struct collector *c, uint32_t pid, uint32_t *root)
{
	uint32_t v = 0;

	if (bpf_map_lookup_elem(c->targets_fd, &pid, &v))
		return false;
	*root = c->target_roots ? v : 0;
	return true;
}

void collector__for_each_target(const struct collector *c, void (*fn)(void *ctx, uint32_t pid),
				 void *ctx)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), key, next, *prev = NULL;
	uint64_t left;

	if (c->targets_fd < 0 || bpf_obj_get_info_by_fd(c->targets_fd, &info, &len))
		return;
	/*
	 * The programs add and delete as processes fork and exit meanwhile: a
	 * key deleted under the walk starts it again from the first, so it is
	 * bounded (a pid seen twice is one lookup in the caller's set).
	 */
	for (left = 2ull * info.max_entries; left && !bpf_map_get_next_key(c->targets_fd, prev, &next);
	     left--) {
		key = next;
		prev = &key;
		if (key)
			fn(ctx, key);
	}
}

int collector__add_pid_on_exec(struct collector *c, pid_t pid)
{
	collector_want_exec_pending(c, (uint32_t)pid);
	return set_exec_pid(c->exec_fd, pid);
}

int collector__add_pid(struct collector *c, pid_t pid)
{
	int e = set_target(c, pid);

	if (!e)
		collector_markers_scan_pid(c, (uint32_t)pid);
	return e;
}

/* --- life cycle ------------------------------------------------------------ */

#define PROC_PID_INIT_INO 0xEFFFFFFCu   /* the initial pid namespace's fixed inode */

/* our pid namespace (its dev/ino), and whether it is the initial one */
static void own_pidns(uint64_t *dev, uint64_t *ino, bool *init)
{
	struct stat sb;

	*dev = *ino = 0;
	*init = true;
	if (!stat("/proc/self/ns/pid", &sb)) {
		*dev = sb.st_dev;
		*ino = sb.st_ino;
		*init = sb.st_ino == PROC_PID_INIT_INO;
	}
}

/*
 * Not to be pinned: the gap sideband's programs left out (their maps at
 * their smallest), so the verifier never sees them.
 */
static void gap_off(struct collector *c)
{
	bpf_program__set_autoload(c->skel->progs.gap_exec, false);
	bpf_program__set_autoload(c->skel->progs.gap_fork, false);
	bpf_program__set_autoload(c->skel->progs.gap_exit, false);
	bpf_program__set_autoload(c->skel->progs.gap_rename, false);
	bpf_map__set_max_entries(c->skel->maps.gap_exec_ns, 1);
}

/* what makes two sessions able to share programs (recspec.h: a new field) */
static bool same_spec(const struct recspec *a, const struct recspec *b)
{
	size_t i;

	if (a->nr_events != b->nr_events || a->period != b->period ||
	    (!a->period && a->freq != b->freq) || a->call_graph != b->call_graph ||
	    (a->call_graph == RECSPEC_CG_DWARF && a->stack_size != b->stack_size) ||
	    (a->call_graph != RECSPEC_CG_NONE && a->max_stack != b->max_stack) ||
	    a->markers != b->markers || a->ringbuf_size != b->ringbuf_size ||
	    a->off_cpu != b->off_cpu || (a->off_cpu && a->off_cpu_min_ns != b->off_cpu_min_ns) ||
	    a->aggregate != b->aggregate ||
	    /* targeted or not: how off-CPU user stacks and aggregated idle time are taken (normalize) */
	    (a->target == RECSPEC_TARGET_ALL) != (b->target == RECSPEC_TARGET_ALL))
		return false;
	for (i = 0; i < a->nr_events; i++) {
		const char *fa = recspec_filter(a, i), *fb = recspec_filter(b, i);

		if (!evspec_same(&a->events[i], &b->events[i]))
			return false;
		/* a tracepoint's filter runs in its program's config */
		if ((fa || fb) && (!fa || !fb || strcmp(fa, fb)))
			return false;
	}
	return true;
}

uint32_t collector_map_id(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/*
 * No events means the default one.  Which processes are the subscribers'
 * business, but whether any are named is the collection's: a targeted one
 * takes off-CPU user stacks at sys_exit and writes no idle time when it
 * aggregates (collector_offcpu.c, collector_agg.c).
 */
static void normalize(const struct recspec *in, struct recspec *out)
{
	*out = *in;
	if (!out->nr_events) {
		evspec_lookup(recspec_event_name(in, 0), &out->events[0]);
		out->nr_events = 1;
	}
	out->target = in->target == RECSPEC_TARGET_ALL ? RECSPEC_TARGET_ALL : RECSPEC_TARGET_PIDS;
	out->nr_pids = 0;
	out->zstd_level = 0;
}

struct collector *collector_alloc(const struct recspec *spec)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	normalize(spec, &c->spec);
	c->req = c->spec;
	memcpy(c->ev, c->spec.events, sizeof(c->ev));
	c->rb_fd = c->targets_fd = c->bss_fd = c->cfg_fd = c->uids_fd = c->exec_fd = -1;
	c->uw_pools_fd = c->uw_maps_fd = c->uw_pids_fd = c->uw_efd = -1;
	c->sideband_fd = c->own_sideband_fd = -1;
	for (int i = 0; i < OFF_FDS; i++)
		c->off_fd[i] = -1;
	c->tp_prog_fd = -1;
	c->refs = 1;
	return c;
}

void collector_free(struct collector *c)
{
	struct collector **pp;
	size_t i;

	for (pp = &collector_registry; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	collector_markers_free(c);
	collector_agg_free(c);
	ring_buffer__free(c->rb);
	perf_buffer__free(c->pb);
	collector_unwind_stop(c);
	collector_offcpu_free(c);
	for (i = 0; i < c->nr_links; i++) {
		if (c->pinned) {
			/* leave it attached, the pins hold it: close, don't detach */
			int fd = bpf_link__fd(c->links[i]);

			bpf_link__disconnect(c->links[i]);
			bpf_link__destroy(c->links[i]);
			if (fd >= 0)
				close(fd);
		} else {
			bpf_link__destroy(c->links[i]);   /* closes the perf event fds too */
		}
	}
	if (c->pinned)
		for (i = 0; i < c->nr_pfds; i++)
			close(c->pfds[i]);
	for (i = 0; i < c->nr_pin_dirs; i++)
		free(c->pin_dirs[i]);
	free(c->pin_dirs);
	free(c->links);
	free(c->pfds);
	perfmark_bpf__destroy(c->skel);
	if (c->own_fds) {
		int fds[] = { c->rb_fd, c->targets_fd, c->bss_fd, c->cfg_fd, c->uids_fd, c->exec_fd,
			      c->uw_pools_fd, c->uw_maps_fd, c->uw_pids_fd, c->off_fd[OFF_AGG0],
			      c->off_fd[OFF_AGG1], c->off_fd[OFF_CTL], c->off_fd[OFF_BUSY], c->tp_prog_fd };

		for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	if (c->own_sideband_fd >= 0)
		close(c->own_sideband_fd);
	free(c);
}

static int collector_open_ring(struct collector *c, char *err, size_t errlen)
{
	int e = collector_open_sideband(c, on_sideband, err, errlen);

	if (e)
		return e;
	c->sideband_since = clock_mono_ns();
	c->rb = ring_buffer__new(c->rb_fd, on_ringbuf, c, NULL);
	if (!c->rb) {
		e = -errno;
		snprintf(err, errlen, "cannot open ring buffer: %s", strerror(-e));
		return e ? e : -EINVAL;
	}
	c->rb_id = collector_map_id(c->rb_fd);
	return 0;
}

int collector_publish(struct collector *c, int e, struct collector **out, char *err, size_t errlen)
{
	if (!e)
		e = collector_open_ring(c, err, errlen);
	if (e) {
		collector_free(c);
		return e < 0 ? e : -EINVAL;
	}
	c->next = collector_registry;
	collector_registry = c;
	*out = c;
	return 0;
}

int collector__get(struct collector **out, const struct recspec *spec, bool pinnable,
		   collector_notice_fn notice_fn, void *notice_ctx,
		   char *err, size_t errlen)
{
	struct recspec want;
	struct collector *c;
	size_t rbsize;
	int e;

	*out = NULL;
	err[0] = '\0';
	normalize(spec, &want);
	for (c = collector_registry; c; c = c->next) {
		if (!c->adopted && (c->pinnable || !pinnable) && same_spec(&c->req, &want)) {
			size_t i;

			/* a sharer hears what the creator heard (a fallback to cpu-clock) */
			for (i = 0; notice_fn && i < c->nr_notices; i++)
				notice_fn(notice_ctx, c->notices[i]);
			if (c->refs++ == 0 && c->idle) {
				/*
				 * kept since its last session (collector_idle.c): what
				 * waits is read, and its longest drain is the new
				 * recording's (its other counts: session__new's baseline)
				 */
				c->idle = false;
				for (int b = 0; b < COLLECTOR_ALL_BATCHES && collector__consume(c); b++)
					;
				c->drain_max_ns = c->drain_max_cpu_ns = 0;
			}
			*out = c;
			return 0;
		}
	}
	c = collector_alloc(spec);
	if (!c)
		return -ENOMEM;
	c->notice = notice_fn;
	c->notice_ctx = notice_ctx;
	c->skel = perfmark_bpf__open();
	if (!c->skel) {
		e = -errno;
		snprintf(err, errlen, "cannot open BPF object: %s", strerror(-e));
		goto fail;
	}
	c->pinnable = pinnable;
	if (!pinnable)
		gap_off(c);
	e = collector_unwind_setup(c);
	if (e) {
		snprintf(err, errlen, "cannot size the user-stack maps: %s", strerror(-e));
		goto fail;
	}
	collector_offcpu_setup(c);
	e = collector_tp_setup(c);
	if (!e)
		e = collector_agg_setup(c);
	if (e) {
		snprintf(err, errlen, "cannot size the tracepoint map: %s", strerror(-e));
		goto fail;
	}
	{
		uint64_t dev, ino;
		bool init;

		own_pidns(&dev, &ino, &init);
		c->skel->rodata->pidns_dev = dev;
		c->skel->rodata->pidns_ino = ino;
		c->skel->rodata->pidns_init = init;
	}
	rbsize = spec->ringbuf_size ? spec->ringbuf_size : DEFAULT_RINGBUF;
	c->skel->rodata->wakeup_bytes = rbsize / 2;
	bpf_map__set_max_entries(c->skel->maps.rb, rbsize);
	collector_uprobe_setup(c);
	e = perfmark_bpf__load(c->skel);
	if (e) {
		if (e == -EPERM || e == -EACCES)
			snprintf(err, errlen, "cannot load BPF programs: permission denied (run as root)");
		else
			snprintf(err, errlen, "cannot load BPF programs: %s", strerror(-e));
		goto fail;
	}
	c->rb_fd = bpf_map__fd(c->skel->maps.rb);
	c->targets_fd = bpf_map__fd(c->skel->maps.targets);
	c->target_roots = true;
	c->bss_fd = bpf_map__fd(c->skel->maps.bss);
	c->cfg_fd = bpf_map__fd(c->skel->maps.cfg);
	c->uids_fd = bpf_map__fd(c->skel->maps.uids);
	c->exec_fd = bpf_map__fd(c->skel->maps.exec_pending);
	c->sideband_fd = bpf_map__fd(c->skel->maps.sideband);
	e = collector_unwind_start(c, bpf_map__fd(c->skel->maps.uw_pools),
				   bpf_map__fd(c->skel->maps.uw_maps), bpf_map__fd(c->skel->maps.uw_pids),
				   err, errlen);
	if (!e) {
		const int off[OFF_FDS] = {
			bpf_map__fd(c->skel->maps.off_agg), bpf_map__fd(c->skel->maps.off_agg1),
			bpf_map__fd(c->skel->maps.off_ctl), bpf_map__fd(c->skel->maps.off_busy),
		};

		e = collector_offcpu_start(c, off, err, errlen);
	}
	if (e)
		goto fail;
	{
		const int agg[7] = {
			bpf_map__fd(c->skel->maps.agg_ctl), bpf_map__fd(c->skel->maps.agg_busy),
			bpf_map__fd(c->skel->maps.agg_counts0), bpf_map__fd(c->skel->maps.agg_counts1),
			bpf_map__fd(c->skel->maps.agg_stacks0), bpf_map__fd(c->skel->maps.agg_stacks1),
			-1,
		};

		e = collector_agg_start(c, agg, err, errlen);
		if (e)
			goto fail;
	}
	e = collector_open_events(c, err, errlen);
	if (!e)
		e = collector_offcpu_attach(c, err, errlen);
	if (!e)
		e = collector_tp_attach(c, err, errlen);
	if (e)
		goto fail;
	{
		/*
		 * the target set's tracepoints, the gap sideband's (bpf/sideband.bpf.c)
		 * and the unwinder's exec stamp (bpf/unwind.bpf.c; ehframe only)
		 */
		struct bpf_program *tps[] = {
			c->skel->progs.on_fork, c->skel->progs.on_exit, c->skel->progs.on_exec,
			c->skel->progs.gap_exec, c->skel->progs.gap_fork, c->skel->progs.gap_exit,
			c->skel->progs.gap_rename, c->skel->progs.uw_prepare_exec,
		};
		size_t i;

		for (i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
			struct bpf_link *l;

			if (!bpf_program__autoload(tps[i]))
				continue;
			l = bpf_program__attach(tps[i]);
			if (l)
				c->links[c->nr_links++] = l;
		}
	}
	if (spec->markers) {
		e = collector_attach_markers(c, err, errlen);
		if (e)
			goto fail;
	}
	c->notice = NULL;   /* only ever told during creation */
	return collector_publish(c, 0, out, err, errlen);
fail:
	return collector_publish(c, e ? e : -EINVAL, out, err, errlen);
}

/* --- accessors ------------------------------------------------------------ */

uint64_t collector__sideband_since(const struct collector *c)
{
	return c->sideband_since;
}

uint64_t collector__sideband_read_at(const struct collector *c)
{
	return c->sideband_read_at;
}

const struct evspec *collector__events(const struct collector *c, size_t *nr)
{
	*nr = c->spec.nr_events;
	return c->ev;
}

int collector__fds(const struct collector *c, int *fds, size_t max)
{
	size_t n = 0;

	if (n < max && c->rb)
		fds[n++] = ring_buffer__epoll_fd(c->rb);
	if (n < max && c->pb)
		fds[n++] = perf_buffer__epoll_fd(c->pb);
	if (n < max && collector_markers_fd(c) >= 0)
		fds[n++] = collector_markers_fd(c);
	if (n < max && c->uw)
		fds[n++] = c->uw_efd;
	return n;
}

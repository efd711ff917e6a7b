// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The collector's user-stack settings: how the BPF sample program gets the
 * user part of call chains (recspec.call_graph), and for ehframe the
 * process's unwinder (unwind.c) fed with this collector's records.
 *
 *   fp       bpf_get_stack(BPF_F_USER_STACK): the kernel's frame-pointer walk
 *   ehframe  pm_unwind_user() walks it with tables from .eh_frame
 *   dwarf    the sample program copies registers and stack, as perf does
 *
 * ehframe copies the stack where the process has a file mapping not
 * installed yet; a copy is walked here with the same tables.  One that
 * reaches a file whose table is still being built (unwind_build.c) waits
 * for it in a buffer (UNWIND_HOLD_BYTES, UNWIND_HOLD_NS at most), and goes
 * to the subscribers once the table is there: they order records by time,
 * and flush no further than the oldest copy waiting (collector__held_since).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "perfmark_wire.h"
#include "tracepoint_wire.h"
#include "unwind_wire.h"
#include "collector_int.h"
#include "clock.h"
#include "grow.h"
#include "jsonf.h"
#include "unwind.h"

#define UNWIND_HOLD_BYTES (16u << 20)   /* stack copies waiting for a table, per collector */

/* a copy waiting in c->uw_held: this, then the ring record, padded to 8 bytes */
struct held {
	uint32_t size;
	uint32_t pad;
	uint64_t time;
};

/* the names of enum pm_uw_end, in JSON and text */
static const char *const end_names[PM_UW_END_NR] = {
	[PM_UW_END_OK] = "complete", [PM_UW_END_DEPTH] = "depth",
	[PM_UW_END_NO_TABLE] = "no_table", [PM_UW_END_READ] = "unreadable",
	[PM_UW_END_RULE] = "unsupported",
};

/* why files' CFI was refused (enum unwind_refusal), in JSON */
static const char *const refused_names[4] = { "size", "work", "rows", "rules" };

uint32_t collector_ustack_mode(const struct recspec *spec)
{
	switch (spec->call_graph) {
	case RECSPEC_CG_EHFRAME:
		return PM_US_EHFRAME;
	case RECSPEC_CG_DWARF:
		return PM_US_DWARF;
	default:
		return PM_US_FP;
	}
}

int collector_unwind_setup(struct collector *c)
{
	const struct recspec *spec = &c->spec;
	uint32_t mode = collector_ustack_mode(spec);

	c->skel->rodata->want_callchain = spec->call_graph != RECSPEC_CG_NONE;
	c->skel->rodata->ustack_mode = mode;
	c->skel->rodata->max_stack = spec->max_stack;
	/* ehframe copies stacks of processes it has no tables for yet, to walk them here */
	if (mode != PM_US_FP)
		c->skel->rodata->ustack_size = mode == PM_US_DWARF ? spec->stack_size : UNWIND_COPY_STACK;
	/*
	 * ehframe: each exec stamped as it begins (Linux 6.10's sched_prepare_exec),
	 * for the walk to tell an image user space installed from a newer one
	 * (without it, only a pid used again is told).
	 */
	if (mode != PM_US_EHFRAME ||
	    libbpf_find_vmlinux_btf_id("sched_prepare_exec", BPF_TRACE_RAW_TP) < 0)
		bpf_program__set_autoload(c->skel->progs.uw_prepare_exec, false);
	bpf_map__set_max_entries(c->skel->maps.uw_maps, mode == PM_US_EHFRAME ? UNWIND_MAX_MAPS : 1);
	bpf_map__set_max_entries(c->skel->maps.uw_pids, mode == PM_US_EHFRAME ? UNWIND_MAX_PIDS : 1);
	return 0;
}

int collector_unwind_start(struct collector *c, int pools_fd, int maps_fd, int pids_fd,
			   char *err, size_t errlen)
{
	int e;

	c->uw_pools_fd = pools_fd;
	c->uw_maps_fd = maps_fd;
	c->uw_pids_fd = pids_fd;
	if (collector_ustack_mode(&c->spec) != PM_US_EHFRAME)
		return 0;
	if (pools_fd < 0 || maps_fd < 0 || pids_fd < 0) {
		snprintf(err, errlen, "the unwinder's maps are missing");
		return -ENOENT;
	}
	c->uw_rec = malloc(sizeof(struct pm_sample) + 2 * PM_MAX_STACK * sizeof(uint64_t) +
			   sizeof(struct pm_raw) + PM_TP_RAW_MAX);
	c->uw_held_oldest = UINT64_MAX;
	c->uw_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e = !c->uw_rec ? -ENOMEM : c->uw_efd < 0 ? -errno : 0;
	if (!e)
		e = unwinder__get(&c->uw);
	if (!e) {
		unwinder__set_self(c->uw, (uint32_t)getpid());
		unwinder__notify(c->uw, c->uw_efd, true);
		e = unwinder__add_maps(c->uw, pools_fd, maps_fd, pids_fd);
	}
	if (e == -EPROTO)
		snprintf(err, errlen, "the unwinder's maps have another perfmark's layout");
	else if (e)
		snprintf(err, errlen, "cannot set up the unwinder: %s", strerror(-e));
	return e;
}

void collector_unwind_stop(struct collector *c)
{
	free(c->uw_rec);
	c->uw_rec = NULL;
	free(c->uw_held);
	c->uw_held = NULL;
	c->uw_held_len = c->uw_held_cap = c->uw_held_nr = 0;
	if (c->uw) {
		unwinder__notify(c->uw, c->uw_efd, false);
		unwinder__remove_maps(c->uw, c->uw_pools_fd);
		unwinder__put(c->uw);
		c->uw = NULL;
	}
	if (c->uw_efd >= 0)
		close(c->uw_efd);
	c->uw_efd = -1;
}

/*
 * A sample of a process the BPF side had no tables for: it copied the
 * registers and stack instead.  The process is installed now (its sideband
 * came first): walk the copy with the same tables, and hand the sessions
 * an ordinary sample with the frames in place of the copy.  NULL: a frame
 * is in a file whose table is being built (how: unwinder__walk's).
 */
static const void *walk_copy(struct collector *c, const struct pm_sample *ps, size_t *size, int how)
{
	size_t off = sizeof(*ps) + (size_t)(ps->nr_kstack + ps->nr_ustack) * sizeof(uint64_t);
	const struct pm_uregs *u = (const void *)((const char *)ps + off);
	struct pm_sample *out = c->uw_rec;
	const struct pm_raw *r = NULL;
	size_t end, tail = 0;
	/* --max-stack: the user's frames in what the kernel's leave */
	uint32_t room = ps->nr_kstack < c->spec.max_stack ? c->spec.max_stack - ps->nr_kstack : 0;
	int n;

	if (!out || ps->nr_kstack > PM_MAX_STACK || *size < off + sizeof(*u) ||
	    u->size > *size - off - sizeof(*u))
		return ps;
	/* a tracepoint's entry (PM_SF_RAW) follows the copy: it goes on after the frames */
	end = off + sizeof(*u) + u->size;
	if (ps->flags & PM_SF_RAW) {
		r = (const void *)((const char *)ps + end);
		if (*size - end < sizeof(*r) || r->size > PM_TP_RAW_MAX ||
		    r->size > *size - end - sizeof(*r))
			return ps;
		tail = sizeof(*r) + r->size;
	}
	n = unwinder__walk(c->uw, ps->pid, ps->time, (const uint64_t *)u->regs, (const uint8_t *)(u + 1),
			   u->size, (uint64_t *)&out->stack[ps->nr_kstack], room, how);
	if (n < 0)
		return NULL;
	memcpy(out, ps, sizeof(*ps) + ps->nr_kstack * sizeof(uint64_t));
	out->nr_ustack = (uint32_t)n;
	out->flags &= ~PM_SF_UREGS;
	*size = sizeof(*out) + (out->nr_kstack + (size_t)n) * sizeof(uint64_t);
	if (tail)
		memcpy((char *)out + *size, r, tail);
	*size += tail;
	return out;
}

/* keep a copy of ps until its table is built; false when there is no room */
static bool hold(struct collector *c, const struct pm_sample *ps, size_t size)
{
	size_t need = sizeof(struct held) + ((size + 7) & ~(size_t)7);
	struct held *h;

	if (size > UINT32_MAX || c->uw_held_len + need > UNWIND_HOLD_BYTES ||
	    grow_to(&c->uw_held, &c->uw_held_cap, c->uw_held_len + need, 1, 64u << 10))
		return false;
	h = (struct held *)(c->uw_held + c->uw_held_len);
	*h = (struct held){ .size = (uint32_t)size, .time = ps->time };
	memcpy(h + 1, ps, size);
	c->uw_held_len += need;
	c->uw_held_nr++;
	if (ps->time < c->uw_held_oldest)
		c->uw_held_oldest = ps->time;
	c->uw_waited++;
	return true;
}

/*
 * The copies whose tables are here go to the subscribers; so do those that
 * waited UNWIND_HOLD_NS, and with all those of up to until, walked with
 * what there is.
 */
static void release(struct collector *c, uint64_t until, bool all)
{
	uint64_t now = clock_mono_ns(), oldest = UINT64_MAX;
	size_t r = 0, w = 0;

	while (r < c->uw_held_len) {
		struct held *h = (struct held *)(c->uw_held + r);
		size_t need = sizeof(*h) + ((h->size + 7) & ~(size_t)7), size = h->size;
		bool late = (all && h->time <= until) || h->time + UNWIND_HOLD_NS <= now;
		const void *out = walk_copy(c, (const void *)(h + 1), &size,
					    late ? UNWIND_WALK_NOW : UNWIND_WALK_AGAIN);

		if (out) {
			c->uw_waited_late += late;
			c->uw_held_nr--;
			collector_dispatch_subs(c, out, size);
		} else {
			if (h->time < oldest)
				oldest = h->time;
			if (w != r)
				memmove(c->uw_held + w, h, need);
			w += need;
		}
		r += need;
	}
	c->uw_held_len = w;
	c->uw_held_oldest = oldest;
}

const void *collector_unwind_ring(struct collector *c, const void *data, size_t *size)
{
	const struct pm_sample *ps = data;
	const void *out;

	if (!c->uw || *size < sizeof(*ps) || ps->rec_type != PM_REC_SAMPLE)
		return data;
	unwinder__sample(c->uw, ps->pid, ps->flags & PM_SF_UREGS);
	if (!(ps->flags & PM_SF_UREGS))
		return data;
	out = walk_copy(c, ps, size, UNWIND_WALK_FIRST);
	if (out || hold(c, ps, *size))
		return out;
	c->uw_waited_late++;
	return walk_copy(c, ps, size, UNWIND_WALK_NOW);    /* no room to wait */
}

uint64_t collector__held_since(const struct collector *c)
{
	return c->uw && c->uw_held_len ? c->uw_held_oldest : UINT64_MAX;
}

void collector__settle(struct collector *c, uint64_t until, bool final)
{
	uint64_t deadline = clock_mono_ns() + (final && !c->pinned ? UNWIND_HOLD_NS : 0);

	if (!c->uw || !c->uw_held_len)
		return;
	/* the recording ends: the builds its copies wait for may end first */
	for (;;) {
		unwinder__collect(c->uw);
		release(c, 0, false);
		if (!c->uw_held_len || clock_mono_ns() >= deadline || !unwinder__wait(c->uw, deadline))
			break;
	}
	release(c, until, true);
}

/*
 * Is pid a target (a -p process, a command and their children)?  Their
 * mappings are installed as they appear.  Under -a every process would be:
 * there a process is installed at its first sample (its first stacks are
 * copied and walked), so the many that never run long cost nothing.
 */
static bool target_pid(const struct collector *c, uint32_t pid)
{
	uint32_t v;   /* targets: a root (older pins: a __u8); exec_pending: a __u8 */

	return !bpf_map_lookup_elem(c->targets_fd, &pid, &v) ||
	       !bpf_map_lookup_elem(c->exec_fd, &pid, &v);
}

void collector_unwind_sideband(struct collector *c, const struct perf_event_header *h)
{
	int how = UNWIND_LIST;

	if (!c->uw || h->size < sizeof(*h) + sizeof(uint32_t))
		return;
	if (h->type == PERF_RECORD_MMAP2 && target_pid(c, *(const uint32_t *)(h + 1)))
		how = UNWIND_INSTALL;
	else if (h->type == PERF_RECORD_MMAP2 && (c->nr_all || c->nr_uids))
		how = UNWIND_RESOLVE;
	unwinder__sideband(c->uw, h, how);
}

void collector_unwind_begin(struct collector *c)
{
	uint64_t n;

	if (!c->uw)
		return;
	if (read(c->uw_efd, &n, sizeof(n)) < 0)
		n = 0;          /* nothing built since: EAGAIN */
	unwinder__collect(c->uw);
}

void collector_unwind_tick(struct collector *c)
{
	if (!c->uw)
		return;
	unwinder__collect(c->uw);
	if (c->uw_held_len)
		release(c, 0, false);
	unwinder__tick(c->uw);
}

void collector_unwind_sideband_attr(const struct collector *c, struct perf_event_attr *a)
{
	uint32_t mode = collector_ustack_mode(&c->spec);

	/* dwarf: unwinders read .eh_frame_hdr from the files' other mappings */
	a->mmap_data = mode == PM_US_DWARF;
	/*
	 * No wakeup per mapping, even for targets: tables are built at the
	 * drain, and a mapping's code is unwound by frame pointers until then.
	 * Waking the recorder at each sideband record of a command under
	 * ehframe (tried) made t-offcpu-report's cpu range lose 6 % of its
	 * cpu-clock samples in 5 of 63 runs, against 2 of 255 without.
	 */
}

bool collector__unwind_stats(const struct collector *c, struct collector_unwind_stats *st)
{
	struct perfmark_bpf__bss bss;
	struct unwind_stats us;
	uint32_t zero = 0;

	memset(st, 0, sizeof(*st));
	if (!c->uw)
		return false;
	unwinder__stats(c->uw, &us);
	st->tables = us.tables;
	st->table_bytes = us.table_bytes;
	st->pool_bytes = us.pool_bytes;
	st->cap = us.cap;
	st->built = us.built;
	st->evicted = us.evicted;
	st->failed = us.failed;
	st->over_cap = us.over_cap;
	for (size_t i = 0; i < 4; i++) {
		st->refused_why[i] = us.refused[i];
		st->refused += us.refused[i];
	}
	st->procs = us.procs;
	st->mappings = us.mappings;
	st->copied = us.walks;
	st->drain_max_ns = c->drain_max_ns;
	st->drain_max_cpu_ns = c->drain_max_cpu_ns;
	st->builds_pending = us.builds_pending;
	st->builds_dropped = us.builds_dropped;
	st->build_max_ns = us.build_max_ns;
	st->waited = c->uw_waited;
	st->waited_late = c->uw_waited_late;
	if (bpf_map_lookup_elem(c->bss_fd, &zero, &bss))
		return true;
	for (size_t i = 0; i < PM_UW_END_NR; i++) {
		st->ends[i] = bss.uw_ends[i] + us.walk_ends[i];
		st->stacks += st->ends[i];
		if (i != PM_UW_END_OK)
			st->ended_early += st->ends[i];
	}
	st->frames_cfi = bss.uw_frames_cfi;
	st->frames_fp = bss.uw_frames_fp;
	return true;
}

#define UW_STATS_FIELDS(X) \
	X(stacks) X(ended_early) X(frames_cfi) X(frames_fp) X(tables) X(table_bytes) \
	X(pool_bytes) X(cap) X(built) X(evicted) X(failed) X(over_cap) X(refused) X(procs) \
	X(mappings) X(copied) X(drain_max_ns) X(drain_max_cpu_ns) \
	X(builds_pending) X(builds_dropped) X(build_max_ns) X(waited) X(waited_late)

struct json_object *collector_unwind_stats_json(const struct collector_unwind_stats *st)
{
	struct json_object *o = json_object_new_object(), *ends = json_object_new_object();
	struct json_object *why = json_object_new_object();

#define PUT(f) json_object_object_add(o, #f, json_object_new_uint64(st->f));
	UW_STATS_FIELDS(PUT)
#undef PUT
	for (size_t i = 0; i < PM_UW_END_NR; i++)
		json_object_object_add(ends, end_names[i], json_object_new_uint64(st->ends[i]));
	json_object_object_add(o, "ends", ends);
	for (size_t i = 0; i < 4; i++)
		json_object_object_add(why, refused_names[i], json_object_new_uint64(st->refused_why[i]));
	json_object_object_add(o, "refused_why", why);
	return o;
}

void collector_unwind_stats_from_json(struct json_object *o, struct collector_unwind_stats *st)
{
	struct json_object *ends = NULL, *why = NULL;

	memset(st, 0, sizeof(*st));
	if (!o)
		return;
#define GET(f) st->f = (uint64_t)jsonf_get_int(o, #f);
	UW_STATS_FIELDS(GET)
#undef GET
	if (json_object_object_get_ex(o, "ends", &ends))
		for (size_t i = 0; i < PM_UW_END_NR; i++)
			st->ends[i] = (uint64_t)jsonf_get_int(ends, end_names[i]);
	if (json_object_object_get_ex(o, "refused_why", &why))
		for (size_t i = 0; i < 4; i++)
			st->refused_why[i] = (uint64_t)jsonf_get_int(why, refused_names[i]);
}

void collector_unwind_stats_text(const struct collector_unwind_stats *st, char *buf, size_t len)
{
	/* refused: files over unwind_table.h's budgets, their code unwound by frame pointer */
	snprintf(buf, len, "%" PRIu64 " user stacks (%" PRIu64 " copied and walked here), %" PRIu64
		 " ended early (%" PRIu64
		 " at the frame limit, %" PRIu64 " without a table, %" PRIu64 " unreadable, %" PRIu64
		 " unsupported CFI); %" PRIu64 " tables, %.1f MiB in %.1f MiB of pools (cap %.0f MiB), %"
		 PRIu64 " evicted; %" PRIu64 " files' CFI refused (%" PRIu64 " too large, %" PRIu64
		 " too much work, %" PRIu64 " too many rows, %" PRIu64 " hostile rules); %" PRIu64
		 " tables being built (%" PRIu64 " put off for room, the longest build %" PRIu64
		 " ms), %" PRIu64 " copies waited for one (%" PRIu64 " walked before it came); longest drain %"
		 PRIu64 " ms (the most CPU one took: %" PRIu64 " ms)",
		 st->stacks, st->copied, st->ended_early, st->ends[PM_UW_END_DEPTH], st->ends[PM_UW_END_NO_TABLE],
		 st->ends[PM_UW_END_READ], st->ends[PM_UW_END_RULE], st->tables,
		 st->table_bytes / 1048576.0, st->pool_bytes / 1048576.0, st->cap / 1048576.0,
		 st->evicted, st->refused, st->refused_why[0], st->refused_why[1], st->refused_why[2],
		 st->refused_why[3], st->builds_pending, st->builds_dropped, st->build_max_ns / 1000000,
		 st->waited, st->waited_late, st->drain_max_ns / 1000000, st->drain_max_cpu_ns / 1000000);
}

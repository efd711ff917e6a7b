// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The collector's user-stack settings: how the BPF sample program gets the
 * user part of call chains (recspec.call_graph), and for ehframe the
 * process's unwinder (unwind.c) fed with this collector's records.
 *
 *   fp       bpf_get_stack(BPF_F_USER_STACK): the kernel's frame-pointer walk
 *   ehframe  pm_unwind_user() walks it with tables from .eh_frame
 *   dwarf    the sample program copies registers and stack, as perf does
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "perfmark_wire.h"
#include "tracepoint_wire.h"
#include "unwind_wire.h"
#include "collector_int.h"
#include "jsonf.h"
#include "unwind.h"

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
	e = c->uw_rec ? unwinder__get(&c->uw) : -ENOMEM;
	if (!e)
		e = unwinder__add_maps(c->uw, pools_fd, maps_fd, pids_fd);
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
	if (!c->uw)
		return;
	unwinder__remove_maps(c->uw, c->uw_pools_fd);
	unwinder__put(c->uw);
	c->uw = NULL;
}

/*
 * A sample of a process the BPF side had no tables for: it copied the
 * registers and stack instead.  The process is installed now (its sideband
 * came first): walk the copy with the same tables, and hand the sessions
 * an ordinary sample with the frames in place of the copy.
 */
static const void *walk_copy(struct collector *c, const struct pm_sample *ps, size_t *size)
{
	size_t off = sizeof(*ps) + (size_t)(ps->nr_kstack + ps->nr_ustack) * sizeof(uint64_t);
	const struct pm_uregs *u = (const void *)((const char *)ps + off);
	struct pm_sample *out = c->uw_rec;
	const struct pm_raw *r = NULL;
	size_t n, end, tail = 0;

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
	memcpy(out, ps, sizeof(*ps) + ps->nr_kstack * sizeof(uint64_t));
	n = unwinder__walk(c->uw, ps->pid, ps->time, (const uint64_t *)u->regs, (const uint8_t *)(u + 1),
			   u->size, (uint64_t *)&out->stack[ps->nr_kstack], PM_MAX_STACK);
	out->nr_ustack = (uint32_t)n;
	out->flags &= ~PM_SF_UREGS;
	*size = sizeof(*out) + (out->nr_kstack + n) * sizeof(uint64_t);
	if (tail)
		memcpy((char *)out + *size, r, tail);
	*size += tail;
	return out;
}

const void *collector_unwind_ring(struct collector *c, const void *data, size_t *size)
{
	const struct pm_sample *ps = data;

	if (!c->uw || *size < sizeof(*ps) || ps->rec_type != PM_REC_SAMPLE)
		return data;
	unwinder__sample(c->uw, ps->pid, ps->flags & PM_SF_UREGS);
	return ps->flags & PM_SF_UREGS ? walk_copy(c, ps, size) : data;
}

/*
 * Is pid a target (a -p process, a command and their children)?  Their
 * mappings are installed as they appear.  Under -a every process would be:
 * there a process is installed at its first sample (its first stacks are
 * copied and walked), so the many that never run long cost nothing.
 */
static bool target_pid(const struct collector *c, uint32_t pid)
{
	uint8_t v;

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

void collector_unwind_tick(struct collector *c)
{
	if (c->uw)
		unwinder__tick(c->uw);
}

void collector_unwind_sideband_attr(const struct collector *c, struct perf_event_attr *a)
{
	uint32_t mode = collector_ustack_mode(&c->spec);

	/* dwarf: unwinders read .eh_frame_hdr from the files' other mappings */
	a->mmap_data = mode == PM_US_DWARF;
	/*
	 * ehframe for targets: a new mapping's table must be in place before
	 * its code runs long (a library dlopen()ed by an installed process is
	 * unwound by frame pointers until then).  Not system-wide: every exec
	 * on the machine would wake the recorder.
	 */
	if (mode == PM_US_EHFRAME && c->spec.target != RECSPEC_TARGET_ALL)
		a->wakeup_watermark = 1;
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
	X(mappings) X(copied)

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
		 " too much work, %" PRIu64 " too many rows, %" PRIu64 " hostile rules)",
		 st->stacks, st->copied, st->ended_early, st->ends[PM_UW_END_DEPTH], st->ends[PM_UW_END_NO_TABLE],
		 st->ends[PM_UW_END_READ], st->ends[PM_UW_END_RULE], st->tables,
		 st->table_bytes / 1048576.0, st->pool_bytes / 1048576.0, st->cap / 1048576.0,
		 st->evicted, st->refused, st->refused_why[0], st->refused_why[1], st->refused_why[2],
		 st->refused_why[3]);
}

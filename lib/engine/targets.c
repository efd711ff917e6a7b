// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which records a session keeps (targets-int.h): its share of what the
 * collector's BPF filter let through for every session on it, by target
 * pid (following forks) and by user.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmark_wire.h"
#include "offcpu_wire.h"
#include "collector.h"
#include "perfdata.h"
#include "session-int.h"
#include "grow.h"
#include "synth.h"

/* --- sideband from the dummy events ------------------------------------- */

/*
 * Is pid plainly the user's the session is limited to (synth_task_owner:
 * the same rule as the BPF filter)?  Cached per pid; a FORK (a new process
 * on that pid) or an exec (maybe setuid) asks again.
 */
static bool uid_allows(struct session *s, uint32_t pid)
{
	uint32_t uid = PM_UID_PRIVILEGED;
	pid_t tgid;

	if (s->o.uid_filter == (uint32_t)-1 || pid == (uint32_t)-1)
		return true;
	if (pidset_has(&s->tg.uid_ok, pid))
		return true;
	if (pidset_has(&s->tg.uid_bad, pid))
		return false;
	if (!synth_task_owner((pid_t)pid, &uid, &tgid) && uid == s->o.uid_filter) {
		pidset_add(&s->tg.uid_ok, pid);
		return true;
	}
	pidset_add(&s->tg.uid_bad, pid);
	return false;
}

/*
 * Does this sideband record concern a target?  Follows forks.  uid: whose
 * it is when known (the gap sideband says), NULL to look it up.
 */
static bool child_of_target(struct session *s, uint32_t pid);

/*
 * A record of a process not known (yet) as a target.  Sideband comes in
 * per-CPU buffers read one after the other: a child's exec COMM or MMAP2
 * on one CPU may be read before its parent's FORK on another.  It is held
 * and looked at again once the drain has read every buffer (targets_recheck_held).
 */
static void hold(struct session *s, const struct perf_event_header *h)
{
	if (!grow_to(&s->tg.held, &s->tg.held_cap, s->tg.held_len + h->size, 1, 4096)) {
		memcpy(s->tg.held + s->tg.held_len, h, h->size);
		s->tg.held_len += h->size;
	}
}

static bool target_pid(struct session *s, const struct perf_event_header *h, uint32_t pid)
{
	if (pidset_has(&s->tg.pids, pid))
		return true;
	if (s->tg.rechecking)
		return child_of_target(s, pid);   /* a FORK in no buffer read: ask /proc */
	hold(s, h);
	return false;
}

static bool sideband_wanted(struct session *s, const struct perf_event_header *h,
			    const uint32_t *uid)
{
	const uint32_t *body = (const uint32_t *)(h + 1);

	if (h->type == PERF_RECORD_FORK ||
	    (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC))) {
		pidset_del(&s->tg.uid_ok, body[0]);
		pidset_del(&s->tg.uid_bad, body[0]);
	}
	if (body[0] == (uint32_t)-1 && h->type != PERF_RECORD_LOST && !s->kernel_ok)
		return false;     /* the kernel's maps: kernel addresses */
	if (uid && s->o.uid_filter != (uint32_t)-1 && *uid != s->o.uid_filter)
		return false;
	if (!uid && h->type != PERF_RECORD_LOST && !uid_allows(s, body[0]))
		return false;
	if (s->o.spec.target == RECSPEC_TARGET_ALL)
		return true;
	switch (h->type) {
	case PERF_RECORD_MMAP:
		return body[0] == (uint32_t)-1 || target_pid(s, h, body[0]);
	case PERF_RECORD_FORK:
		/* body: pid, ppid, tid, ptid */
		/*
		 * Only forks by a target: a CMD child's own fork from perfmark
		 * would make perf forget the COMM synthesized for it.
		 */
		if (!pidset_has(&s->tg.pids, body[1])) {
			/*
			 * The parent may be a child whose own FORK sits in a
			 * buffer not read yet (a grandchild forked on another
			 * CPU): looked at again once every buffer is read.  A
			 * parent known to be none of ours has no child of ours:
			 * so a busy machine's processes cost one look each
			 * parent, not one each child.
			 */
			if (!s->tg.rechecking) {
				if (pidset_has(&s->tg.not_ours, body[1]))
					pidset_add(&s->tg.not_ours, body[0]);
				else
					hold(s, h);
				return false;
			}
			if (!child_of_target(s, body[1])) {
				pidset_add(&s->tg.not_ours, body[0]);
				return false;
			}
		}
		pidset_add(&s->tg.pids, body[0]);
		return true;
	case PERF_RECORD_LOST:
		return true;
	default:
		return uid ? pidset_has(&s->tg.pids, body[0]) : target_pid(s, h, body[0]);
	}
}

static void stage_sideband(struct session *s, const struct perf_event_header *h, const uint32_t *uid)
{
	struct perfdata_sample_id sid;
	void *rec;

	if (h->size < sizeof(*h) + 8 + PERFDATA_SAMPLE_ID_SIZE || (h->size & 7))
		return;
	switch (h->type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
		break;
	default:
		return;
	}
	if (!sideband_wanted(s, h, uid))
		return;
	perfdata_decode_sample_id(h, h->size, &sid);
	rec = stage_alloc(s, h->size, sid.time);
	if (!rec) {
		s->err = -ENOMEM;
		return;
	}
	memcpy(rec, h, h->size);
	/*
	 * We never ask for build-ids in MMAP2: a set build-id bit is another
	 * perf user's event leaking into ours (a kernel bug), the body holds
	 * dev/inode.
	 */
	if (h->type == PERF_RECORD_MMAP2)
		((struct perf_event_header *)rec)->misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	/* the sideband is written as belonging to the first sampling event */
	sid.id = 1;
	perfdata_set_sample_id(rec, h->size, &sid);
	if (h->type == PERF_RECORD_LOST)
		((uint64_t *)((struct perf_event_header *)rec + 1))[0] = 1;
	s->stats.sideband++;
	if (stage_done(s))
		s->err = -EIO;
}

void targets_on_sideband(void *ctx, const struct perf_event_header *h)
{
	stage_sideband(ctx, h, NULL);
}

/*
 * The gap sideband, for what the kernel's sideband did not reach us: what
 * happened before this collector's perf buffers were open (while no daemon
 * ran); later records are the kernel's twins and go, but only those from
 * before this drain's read of the perf sideband began.  A twin from after
 * it may have a perf copy not read yet, which dies with the daemon if it
 * is killed before the next read (t-session-tracepoint lost a child's
 * FORK that way: its sample then had no command): it is kept, and the
 * copy read later, if any, repeats it (a FORK, COMM, EXIT or MMAP twice
 * is harmless to perf).
 */
static void on_gap(struct session *s, const void *data, size_t size)
{
	const struct perf_event_header *h = (const void *)s->chain_buf;
	struct perfdata_sample_id sid;
	uint32_t uid;
	size_t len = encode_gap(data, size, s->chain_buf, &uid);

	if (len && !perfdata_decode_sample_id(h, len, &sid) &&
	    (sid.time < collector__sideband_since(s->c) || sid.time >= collector__sideband_read_at(s->c)))
		stage_sideband(s, h, &uid);
}

/* pid's parent as /proc says now (0: gone, or unknown) */
static uint32_t proc_ppid(uint32_t pid)
{
	char path[40], line[128];
	uint32_t ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %u", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

/*
 * A process this session has not heard of: a descendant of a target whose
 * FORK has not been read yet (the ring is read just after the sideband), or
 * was never read by this process (a daemon that took the session over
 * after a restart: the FORKs went to the daemon before it).  Its ancestors
 * are walked up (/proc) while each is in the BPF target set, up to one of
 * the session's targets: the fork tracepoint put every one of them there,
 * from its parent, whether a daemon ran or not.  A chain that breaks (a
 * parent exited: the process was given to init or a subreaper) is decided
 * by the root the BPF target set keeps for the process, the target its
 * forks lead back to.  Every pid on the way is then known (ours or not
 * ours): each costs one walk, ever.
 */
#define TARGET_MAX_DEPTH 64

static bool child_of_target(struct session *s, uint32_t pid)
{
	uint32_t chain[TARGET_MAX_DEPTH], p = pid, root = 0;
	size_t n = 0, i;
	bool ours = false;

	while (p && n < TARGET_MAX_DEPTH) {
		uint32_t r = 0;

		if (pidset_has(&s->tg.pids, p)) {
			ours = true;
			break;
		}
		if (pidset_has(&s->tg.not_ours, p))
			break;
		chain[n++] = p;
		/*
		 * Not in the BPF target set: none of its descendants that are
		 * targets came from a target through it.  One map lookup, not
		 * a read of /proc for every process a busy machine starts;
		 * /proc then tells which session's descendant it is.
		 */
		if (s->c && !collector__target_root(s->c, p, &r))
			break;
		if (n == 1)
			root = r;       /* pid's own */
		p = proc_ppid(p);
	}
	if (!ours && root && root != pid && pidset_has(&s->tg.pids, root)) {
		/*
		 * A root is a tgid some session added; known here, it is one
		 * of ours or our target's descendant.  pid is ours, not what
		 * /proc says its ancestors are now (its new parent's).
		 */
		pidset_add(&s->tg.pids, pid);
		return true;
	}
	for (i = 0; i < n; i++)
		pidset_add(ours ? &s->tg.pids : &s->tg.not_ours, chain[i]);
	return ours;
}

/*
 * One pid of the pinned BPF target set: this session's?  (targets_adopt;
 * a target already in BPF, its root kept: nothing is written back.  Its
 * fast-lane areas are read as the daemon before read them, their offers
 * since say it is wanted.)
 */
static void adopt_one(void *ctx, uint32_t pid)
{
	struct session *s = ctx;

	if (!pidset_has(&s->tg.pids, pid))
		child_of_target(s, pid);
}

void targets_adopt(struct session *s)
{
	if (s->o.spec.target != RECSPEC_TARGET_ALL && s->c)
		collector__for_each_target(s->c, adopt_one, s);
}

/* The session's exact share of what the union filter in BPF let through. */
static bool record_wanted(struct session *s, uint32_t pid, uint32_t uid)
{
	/* pid 0: idle, or a task outside our pid namespace; never a user's */
	if (s->o.uid_filter != (uint32_t)-1 && (uid != s->o.uid_filter || !pid))
		return false;
	if (s->o.spec.target == RECSPEC_TARGET_ALL)
		return true;
	/* targets are never removed: the last one found needs no lookup */
	if (pid && pid == s->tg.last)
		return true;
	/*
	 * Not known: its FORK may be held, behind its parent's in a CPU's
	 * buffer read after its own.  Every sideband buffer was read before
	 * this record (collector__consume), so the held FORKs can be taken
	 * now; /proc cannot tell once the process has exited, and a record
	 * dropped here would be lost without a count.
	 */
	if (!pidset_has(&s->tg.pids, pid) && s->tg.held_len && !s->tg.rechecking)
		targets_recheck_held(s);
	if (!pidset_has(&s->tg.pids, pid) && !child_of_target(s, pid))
		return false;
	s->tg.last = pid;
	return true;
}

void targets_on_ring(void *ctx, const void *data, size_t size)
{
	struct session *s = ctx;
	const struct pm_sample *ps = data;
	const struct pm_marker *pm = data;
	const struct pm_offcpu *po = data;

	if (size < sizeof(uint32_t))
		return;
	switch (ps->rec_type) {
	case PM_REC_SAMPLE:
		if (size >= sizeof(*ps) && record_wanted(s, ps->pid, ps->uid) &&
		    stage_sample(s, ps, size))
			s->err = -ENOMEM;
		break;
	case PM_REC_MARKER:
		if (size >= sizeof(*pm) && record_wanted(s, pm->pid, pm->uid) &&
		    stage_marker(s, pm, size))
			s->err = -ENOMEM;
		break;
	case PM_REC_TASK:
	case PM_REC_MMAP:
		on_gap(s, data, size);
		break;
	case PM_REC_OFFCPU:
		if (s->o.spec.off_cpu && size >= sizeof(*po) && record_wanted(s, po->pid, po->uid) &&
		    stage_offcpu(s, po, size))
			s->err = -ENOMEM;
		break;
	}
}

/* every buffer read: the held sideband again, now that the FORKs are in */
void targets_recheck_held(struct session *s)
{
	size_t off;

	s->tg.rechecking = true;
	for (off = 0; off < s->tg.held_len;) {
		const struct perf_event_header *h = (const void *)(s->tg.held + off);

		stage_sideband(s, h, NULL);
		off += h->size;
	}
	s->tg.rechecking = false;
	s->tg.held_len = 0;
}

int targets_add(struct session *s, pid_t pid, bool at_exec)
{
	int e = pidset_add(&s->tg.pids, pid);

	if (e)
		return e;
	if (s->o.spec.nr_pids < RECSPEC_MAX_PIDS)
		s->o.spec.pids[s->o.spec.nr_pids++] = pid;
	return at_exec ? collector__add_pid_on_exec(s->c, pid) : collector__add_pid(s->c, pid);
}

void targets_free(struct targets *t)
{
	free(t->pids.slots);
	free(t->uid_ok.slots);
	free(t->uid_bad.slots);
	free(t->not_ours.slots);
	free(t->held);
}

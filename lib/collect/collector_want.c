// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whether some subscriber records a process, answered from a cache by pid
 * (struct collector_want in collector_int.h): a busy machine's other
 * processes map executables by the thousand, and each answer from the
 * target map is a bpf syscall.  A new process has its parent's yes (the
 * fork tracepoint makes a target's children targets, and only them); an
 * answer changes when the pid is added (scan_pid) or a command held before
 * its exec execs (exec_pids), and goes when the process ends (EXIT).  Reuse
 * of a pid within one drain is out of reach (the kernel hands pids out in
 * turn).
 */
#include <stdint.h>

#include <bpf/bpf.h>

#include "collector_int.h"

#define WANT_UNKNOWN 0
#define WANT_NO      1
#define WANT_YES     2

#define NR_CACHE (sizeof(((struct collector_want *)0)->cache) / \
		  sizeof(((struct collector_want *)0)->cache[0]))
#define NR_EXEC  (sizeof(((struct collector_want *)0)->exec_pids) / sizeof(uint32_t))

/* a process some subscriber records (system-wide ones want every process) */
bool collector_wants_pid(const struct collector *c, uint32_t pid)
{
	uint32_t v;   /* a root (older pins: a __u8) */

	if (c->nr_all || c->nr_uids)
		return true;
	return bpf_map_lookup_elem(c->targets_fd, &pid, &v) == 0;
}

bool collector_wants_pid_cached(struct collector *c, uint32_t pid)
{
	struct collector_want *w = &c->want;
	size_t i = pid % NR_CACHE;
	bool yes;

	if (c->nr_all || c->nr_uids)
		return true;
	if (w->cache[i].state != WANT_UNKNOWN && w->cache[i].pid == pid)
		return w->cache[i].state == WANT_YES;
	yes = collector_wants_pid(c, pid);
	w->cache[i].pid = pid;
	w->cache[i].state = yes ? WANT_YES : WANT_NO;
	return yes;
}

void collector_want_forget(struct collector *c, uint32_t pid)
{
	size_t i = pid % NR_CACHE;

	if (c->want.cache[i].pid == pid)
		c->want.cache[i].state = WANT_UNKNOWN;
}

/*
 * A new process: a target's child is a target (looked up once per
 * parent).  Only that yes is kept.  Sideband records come per CPU and are
 * read CPU by CPU: a command held before its exec can have its exec read
 * before its fork, when it moved CPU in between (a loaded machine), and a
 * "no" from its parent (the recorder) kept then was never forgotten: the
 * libraries it dlopen()ed later were never traced (t-markers-fastlane
 * under make check STRESS=1, 1 run in 6 beside a hog on each CPU).
 */
static void want_inherit(struct collector *c, uint32_t pid, uint32_t ppid)
{
	size_t i = pid % NR_CACHE;

	if (!collector_wants_pid_cached(c, ppid))
		return;
	c->want.cache[i].pid = pid;
	c->want.cache[i].state = WANT_YES;
}

void collector_want_exec_pending(struct collector *c, uint32_t pid)
{
	collector_want_forget(c, pid);
	for (size_t i = 0; i < NR_EXEC; i++)
		if (!c->want.exec_pids[i]) {
			c->want.exec_pids[i] = pid;
			return;
		}
	/* more commands held at once than kept: no answer kept across an exec then */
	c->want.exec_pids[0] = UINT32_MAX;
}

/* pid execs: an answer changes only for a command held before its exec */
static void want_exec(struct collector *c, uint32_t pid)
{
	for (size_t i = 0; i < NR_EXEC; i++)
		if (c->want.exec_pids[i] == pid || c->want.exec_pids[i] == UINT32_MAX) {
			if (c->want.exec_pids[i] == pid)
				c->want.exec_pids[i] = 0;
			collector_want_forget(c, pid);
		}
}

void collector_want_sideband(struct collector *c, const struct perf_event_header *h)
{
	const uint32_t *body = (const void *)(h + 1);

	/* FORK and EXIT: pid, ppid, tid, ptid; a thread's have tid != pid */
	if (h->type == PERF_RECORD_FORK && h->size >= sizeof(*h) + 16 && body[0] == body[2] &&
	    body[0] != body[1])
		want_inherit(c, body[0], body[1]);
	else if (h->type == PERF_RECORD_EXIT && h->size >= sizeof(*h) + 16 && body[0] == body[2])
		collector_want_forget(c, body[0]);
	else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		 h->size >= sizeof(*h) + 8)
		want_exec(c, body[0]);
}

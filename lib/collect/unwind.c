// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The processes the unwinder knows, their executable mappings, and the BPF
 * maps that point them at tables.  See unwind.h; where tables live is
 * unwind_pool.c.
 *
 * A process is "active" once the unwinder installs its mappings in the BPF
 * LPM trie: on its first sample, or at once when the collector says it is
 * wanted (a target).  Until then its mappings are only listed, so a fork
 * that execs right away costs nothing.  A mapping's table is resolved when
 * it is installed (unwind_resolve()), while the process still lives; a
 * table not built yet is built by the builder's workers (unwind_build.c),
 * and the mapping is installed once it is (job_done()): until then
 * the BPF walk copies the stacks that reach it, and a copy walked here
 * waits for it (UNWIND_WALK_FIRST).
 *
 * The sideband is read one CPU's buffer after the other: a process's FORK,
 * COMM exec and MMAP2s come in any order (a shell forks on one CPU, its
 * child execs and maps its libraries on another).  Each record applies by
 * its time (unwind_int.h, struct uw_proc), and the BPF side trusts an
 * installed process only for the image it was installed for (struct
 * pm_uw_pid): an exec or a new process under the pid that user space has
 * not read yet gets its stacks copied.
 */
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#include "clock.h"
#include "evspec.h"
#include "grow.h"
#include "perfdata.h"
#include "synth.h"
#include "unwind_int.h"

static struct unwinder *the_unwinder;

/* --- processes ------------------------------------------------------------------- */

/*
 * Records apply by their time (the sample_id trailer's; 0: unknown, in the
 * order read).  A record at t is older than state of time ref ...
 */
static bool older(uint64_t t, uint64_t ref)
{
	return t && t < ref;
}

/* ... or no newer: the same record again (every collector's sideband has it) */
static bool not_newer(uint64_t t, uint64_t ref)
{
	return t && t <= ref;
}

/* the time of a sideband record (TID|TIME|CPU|IDENTIFIER trailer); 0 if none */
static uint64_t record_time(const struct perf_event_header *h)
{
	struct perfdata_sample_id sid;

	return perfdata_decode_sample_id(h, h->size, &sid) ? 0 : sid.time;
}

static struct uw_proc *proc_find(struct unwinder *u, uint32_t pid, bool create)
{
	struct uw_proc **pp = &u->procs[pid % PROC_BUCKETS], *p;

	for (p = *pp; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->partial = true;          /* nothing known of what it mapped before */
	p->next = *pp;
	*pp = p;
	u->st.procs++;
	return p;
}

static void unuse(struct unwinder *u, uint32_t pid, struct uw_mapping *m)
{
	if (!m->installed)
		return;
	unwind_set_range(u, NULL, pid, m->start, m->end, NULL);
	m->installed = false;
	if (m->slot < 0)
		return;
	u->st.mappings--;
	if (--u->tables[m->slot].refs == 0)
		u->tables[m->slot].last_use = ++u->clock;
}

/* m's table still the one it was resolved to (an evicted slot may hold another) */
static bool resolved(const struct unwinder *u, const struct uw_mapping *m)
{
	return m->slot >= 0 && u->tables[m->slot].used && u->tables[m->slot].gen == m->gen;
}

/* m's table is being built (a job dropped from the queue: not any more) */
static bool pending(const struct unwinder *u, const struct uw_mapping *m)
{
	return m->slot == PENDING_TABLE && uw_build_live(u, m->job, m->gen);
}

/*
 * find m's table and bias, reading the file now (while the process lives);
 * a table not built yet is queued, at prio
 */
static void prepare(struct unwinder *u, uint32_t pid, struct uw_mapping *m, uint64_t prio)
{
	if (m->slot == BAD_TABLE || resolved(u, m))
		return;
	if (pid == u->self && pid) {
		m->slot = BAD_TABLE;     /* installed without one: its frame pointers */
		return;
	}
	if (pending(u, m)) {
		uw_build_raise(u, m->job, prio, 0);
		return;
	}
	m->slot = unwind_resolve(u, pid, m, prio);
	if (m->slot >= 0 && !unwind_mapping_bias(&u->tables[m->slot], m))
		m->slot = BAD_TABLE;
	if (m->slot >= 0)
		m->gen = u->tables[m->slot].gen;
}

/*
 * m in the BPF maps, with its table or without one; not while its table is
 * being built (or waits for room in the queue): the BPF walk copies the
 * stacks that reach it, for the collector to walk once the table is here.
 */
static void use(struct unwinder *u, struct uw_proc *p, struct uw_mapping *m)
{
	if (m->installed)
		return;
	prepare(u, p->pid, m, p->prio);
	if (m->slot == PENDING_TABLE || m->slot == NO_TABLE)
		return;
	unwind_install_mapping(u, NULL, p->pid, m);
	m->installed = true;
	if (m->slot < 0)
		return;
	u->st.mappings++;
	u->tables[m->slot].refs++;
}

static void proc_clear(struct unwinder *u, struct uw_proc *p)
{
	unwind_set_installed(u, p, false);
	for (size_t i = 0; i < p->nr; i++)
		unuse(u, p->pid, &p->maps[i]);
	p->nr = 0;
}

/*
 * The process exited: its entries go, but its mappings stay listed a drain
 * longer, for the walks of its last copied stacks (unwinder__tick frees it).
 */
static void proc_exit(struct unwinder *u, struct uw_proc *p, uint64_t t)
{
	if (p->active)
		unwind_set_installed(u, p, false);
	for (size_t i = 0; i < p->nr; i++)
		unuse(u, p->pid, &p->maps[i]);
	p->exited = true;
	p->active = false;
	p->exit_time = t;
	p->exit_tick = u->tick;
}

static void proc_free(struct unwinder *u, uint32_t pid)
{
	struct uw_proc **pp = &u->procs[pid % PROC_BUCKETS], *p;

	for (; (p = *pp); pp = &p->next) {
		if (p->pid != pid)
			continue;
		proc_clear(u, p);
		*pp = p->next;
		free(p->maps);
		free(p);
		u->st.procs--;
		return;
	}
}

/*
 * The process pid at time t (created if asked): one that exited before t
 * is gone, the pid is somebody else's.  NULL for a record of the exited
 * one, read after its EXIT.
 */
static struct uw_proc *proc_at(struct unwinder *u, uint32_t pid, uint64_t t, bool create)
{
	struct uw_proc *p = proc_find(u, pid, false);

	if (p && p->exited) {
		if (not_newer(t, p->exit_time))
			return NULL;
		proc_free(u, pid);
	}
	return proc_find(u, pid, create);
}

/*
 * p began a new image at t (a fork or an exec; t 0: now): its mappings of
 * before go, those recorded since (read before the FORK or COMM) stay.
 */
static void proc_begin(struct unwinder *u, struct uw_proc *p, uint64_t t, bool partial)
{
	size_t i, j;

	if (p->active)
		unwind_set_installed(u, p, false);
	for (i = j = 0; i < p->nr; i++) {
		if (t && p->maps[i].time >= t)
			p->maps[j++] = p->maps[i];
		else
			unuse(u, p->pid, &p->maps[i]);
	}
	p->nr = j;
	p->born = t;
	p->exact = true;
	p->partial = partial;
	if (p->active && p->nr)
		unwind_set_installed(u, p, true);
}

/*
 * A new executable mapping replaces what it overlaps; NULL if it is older
 * than what it overlaps (or the same record again).
 */
static struct uw_mapping *proc_add(struct unwinder *u, struct uw_proc *p, const struct uw_mapping *m)
{
	size_t i, j;

	for (i = 0; i < p->nr; i++)
		if (p->maps[i].start < m->end && m->start < p->maps[i].end &&
		    not_newer(m->time, p->maps[i].time))
			return NULL;
	for (i = j = 0; i < p->nr; i++) {
		if (p->maps[i].start < m->end && m->start < p->maps[i].end)
			unuse(u, p->pid, &p->maps[i]);
		else
			p->maps[j++] = p->maps[i];
	}
	p->nr = j;
	if (grow_to(&p->maps, &p->cap, p->nr + 1, sizeof(*p->maps), 32))
		return NULL;
	p->maps[p->nr] = *m;
	return &p->maps[p->nr++];
}

/* a forked child has what its parent had mapped at the fork, unless it mapped newer since */
static void proc_inherit(struct unwinder *u, struct uw_proc *child, const struct uw_proc *parent,
			 uint64_t t)
{
	for (size_t i = 0; i < parent->nr; i++) {
		struct uw_mapping m = parent->maps[i], *nm;

		if (older(t, m.time))
			continue;           /* mapped after the fork */
		m.installed = false;
		if (parent->pid == u->self)
			m.slot = NO_TABLE;  /* the recorder's, never resolved: the child's are */
		nm = proc_add(u, child, &m);
		if (nm && child->active)
			use(u, child, nm);
	}
	if (child->active && child->nr)
		unwind_set_installed(u, child, true);
}

/* perf's MMAP2 body after the header (the uapi documents it in a comment) */
struct mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct { uint32_t maj, min; uint64_t ino, ino_generation; };
		struct { uint8_t build_id_size, res1; uint16_t res2; uint8_t build_id[20]; };
	};
	uint32_t prot, flags;
	char filename[];
};

static void activate(struct unwinder *u, struct uw_proc *p);

static void on_mmap2(struct unwinder *u, const struct perf_event_header *h, int how)
{
	const struct mmap2_body *b = (const void *)(h + 1);
	struct uw_mapping m = { .slot = NO_TABLE };
	size_t room = h->size - sizeof(*h) - sizeof(*b);
	struct uw_proc *p;
	struct uw_mapping *nm;

	if (h->size < sizeof(*h) + sizeof(*b) + 1 || !(b->prot & PROT_EXEC) || !b->len)
		return;
	m.vdso = !strncmp(b->filename, "[vdso]", room);
	/* anonymous (JIT): the frame-pointer fallback; every file's is installed, table or not */
	if ((b->filename[0] == '[' && !m.vdso) || !strncmp(b->filename, "//anon", room))
		return;
	m.start = b->addr;
	m.end = b->addr + b->len;
	m.pgoff = b->pgoff;
	m.time = record_time(h);
	if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m.maj = b->maj;
		m.min = b->min;
		m.ino = b->ino;
	}
	p = proc_at(u, b->pid, m.time, true);
	/* an image's mapping read after a newer image began is of no use */
	if (!p || older(m.time, p->born) || !(nm = proc_add(u, p, &m)))
		return;
	if (how == UNWIND_INSTALL)
		p->prio = BUILD_PRIO_TARGET;    /* its files' tables before anybody else's */
	if (p->active) {
		use(u, p, nm);
		unwind_set_installed(u, p, true);
	} else if (how == UNWIND_INSTALL) {
		activate(u, p);
	} else if (how == UNWIND_RESOLVE) {
		prepare(u, p->pid, nm, 0);
	}
}

static int synth_mmap(void *ctx, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;

	if (len >= sizeof(*h) && h->type == PERF_RECORD_MMAP2)
		on_mmap2(ctx, h, UNWIND_LIST);
	return 0;
}

/*
 * p's mappings as /proc shows them now (p is not installed): its image
 * since now.  If it is gone, what the sideband told stays.
 */
static void read_proc(struct unwinder *u, struct uw_proc *p)
{
	struct synth_opts so = { .uid_filter = (uint32_t)-1, .time = clock_mono_ns() };
	struct uw_proc was = *p;

	p->maps = NULL;
	p->nr = p->cap = 0;
	p->born = so.time;
	synth_process((pid_t)p->pid, &so, synth_mmap, u);
	if (!p->nr) {
		free(p->maps);
		p->maps = was.maps;
		p->nr = was.nr;
		p->cap = was.cap;
		p->born = was.born;
		return;
	}
	free(was.maps);
	p->partial = false;
	p->exact = false;
}

static void activate(struct unwinder *u, struct uw_proc *p)
{
	if (p->partial)
		read_proc(u, p);
	p->active = true;
	p->lost_seen = u->lost;
	for (size_t i = 0; i < p->nr; i++)
		use(u, p, &p->maps[i]);
	unwind_set_installed(u, p, true);
}

void unwinder__sample(struct unwinder *u, uint32_t pid, bool copied)
{
	struct uw_proc *p = proc_find(u, pid, false);

	/*
	 * Installed, and its stack copied all the same: a mapping the BPF side
	 * has not got.  If sideband records were lost since, it never will from
	 * the sideband: read /proc again (once a loss).
	 */
	if (p && p->active && copied && p->lost_seen != u->lost) {
		unwind_set_installed(u, p, false);
		for (size_t i = 0; i < p->nr; i++)
			unuse(u, p->pid, &p->maps[i]);
		p->partial = true;
		activate(u, p);
		return;
	}
	if (p && (p->active || p->exited))
		return;
	if (!p && !(p = proc_find(u, pid, true)))
		return;
	if (p->prio < BUILD_PRIO_SAMPLED)
		p->prio = BUILD_PRIO_SAMPLED;
	activate(u, p);
}

void unwinder__sideband(struct unwinder *u, const struct perf_event_header *h, int how)
{
	const uint32_t *b = (const uint32_t *)(h + 1);
	uint64_t t = record_time(h);
	struct uw_proc *p, *parent;

	if (h->size < sizeof(*h) + 16)
		return;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		on_mmap2(u, h, how);
		break;
	case PERF_RECORD_COMM:              /* pid, tid, comm: an exec replaces the image */
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			break;
		p = proc_at(u, b[0], t, true);
		if (p && !not_newer(t, p->born))
			proc_begin(u, p, t, false);
		break;
	case PERF_RECORD_FORK:              /* pid, ppid, tid, ptid */
		if (b[0] == b[1])
			break;                  /* a thread */
		p = proc_at(u, b[0], t, true);
		if (!p || not_newer(t, p->born))
			break;
		/* the parent's mappings at the fork, if it is known as it was then */
		parent = proc_find(u, b[1], false);
		if (parent && older(t, parent->born))
			parent = NULL;
		proc_begin(u, p, t, !parent || parent->partial);
		if (parent && parent->prio > p->prio)
			p->prio = parent->prio;     /* a target's child */
		if (parent)
			proc_inherit(u, p, parent, t);
		break;
	case PERF_RECORD_LOST:
		u->lost++;
		break;
	case PERF_RECORD_EXIT:              /* pid, ppid, tid, ptid */
		if (b[0] != b[2] || !(p = proc_find(u, b[0], false)) || p->exited ||
		    older(t, p->born))
			break;
		proc_exit(u, p, t);
		break;
	}
}

/* --- stacks the BPF side copied ------------------------------------------------------- */

struct stack_copy {
	uint64_t sp, size;
	const uint8_t *bytes;
};

static bool read_copy(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct stack_copy *c = ctx;

	if (addr < c->sp || addr - c->sp > c->size || c->size - (addr - c->sp) < sizeof(*val))
		return false;
	memcpy(val, c->bytes + (addr - c->sp), sizeof(*val));
	return true;
}

/* p's mapping at pc, or NULL */
static struct uw_mapping *proc_mapping(struct uw_proc *p, uint64_t pc)
{
	for (size_t i = 0; i < p->nr; i++)
		if (pc >= p->maps[i].start && pc < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* the row for pc in m's table (NULL: the frame-pointer fallback) */
static const struct pm_uw_row *mapping_row(struct unwinder *u, const struct uw_mapping *m,
					   uint64_t pc, bool exact)
{
	const struct uw_table *t;

	if (!m || !resolved(u, m))
		return NULL;
	t = &u->tables[m->slot];
	return unwind_rows_find(u->pools[t->pool].mem + t->first, t->nr_rows,
				pc - m->bias - (exact ? 0 : 1));
}

/*
 * Does a walk reaching m wait for its table?  One queued or under way; or
 * none yet (dropped from the queue, or no room in it): queued now, if the
 * process lives.  The first walk of a copy that waits counts for the build's
 * priority.
 */
static bool waits(struct unwinder *u, struct uw_proc *p, struct uw_mapping *m, int how)
{
	if (m->slot != PENDING_TABLE && m->slot != NO_TABLE && (m->slot < 0 || resolved(u, m)))
		return false;
	if (!pending(u, m)) {
		if (m->slot == NO_TABLE && m->tried == u->tick + 1)
			return false;           /* once a drain */
		m->slot = m->slot == PENDING_TABLE ? NO_TABLE : m->slot;
		if (p->active && !m->installed)
			use(u, p, m);
		else
			prepare(u, p->pid, m, p->prio);
		if (m->slot == NO_TABLE)
			m->tried = u->tick + 1;
	}
	if (!pending(u, m))
		return false;
	if (how == UNWIND_WALK_FIRST)
		uw_build_raise(u, m->job, p->prio, 1);
	return true;
}

int unwinder__walk(struct unwinder *u, uint32_t pid, uint64_t time, const uint64_t *regs,
		   const uint8_t *stack, uint64_t size, uint64_t *pcs, size_t max, int how)
{
	struct unwind_regs r = { .pc = regs[8], .sp = regs[7], .bp = regs[6], .regs = regs,
				 .exact = true };
	struct stack_copy c = { .sp = regs[7], .size = size, .bytes = stack };
	struct uw_proc *p = proc_find(u, pid, false);
	const struct pm_uw_row *row;
	struct uw_mapping *m;
	size_t n = 0;
	int end = 0;

	/* a stack of the image before (an exec read since): none of its tables are known */
	if (p && p->exact && older(time, p->born))
		p = NULL;

	while (!end && n < max) {
		m = p ? proc_mapping(p, r.pc) : NULL;
		if (m && how != UNWIND_WALK_NOW && waits(u, p, m, how))
			return -EAGAIN;
		pcs[n++] = r.pc;
		row = mapping_row(u, m, r.pc, r.exact);
		end = unwind_step(row ? row->rule : PM_UW_RULE(PM_UW_NONE, 0, 0), &r, read_copy, &c);
	}
	u->st.walks++;
	u->st.walk_ends[end ? end - 1 : PM_UW_END_DEPTH]++;
	return (int)n;
}

/* job j (of generation gen) ended: slot, or BAD_TABLE, for the mappings that wait for it */
static void job_done(struct unwinder *u, uint32_t j, uint32_t gen, int32_t slot)
{
	for (size_t b = 0; b < PROC_BUCKETS; b++)
		for (struct uw_proc *p = u->procs[b]; p; p = p->next)
			for (size_t i = 0; i < p->nr; i++) {
				struct uw_mapping *m = &p->maps[i];

				if (m->slot != PENDING_TABLE || m->job != j || m->gen != gen)
					continue;
				m->slot = slot;
				if (slot >= 0 && !unwind_mapping_bias(&u->tables[slot], m))
					m->slot = BAD_TABLE;
				if (m->slot >= 0)
					m->gen = u->tables[m->slot].gen;
				if (p->active)
					use(u, p, m);
			}
}

/* the tables built since: loaded into pools, their mappings told */
static void collect(struct unwinder *u)
{
	uint32_t j, gen;
	int32_t slot;

	while (unwind_collect_next(u, &j, &gen, &slot))
		job_done(u, j, gen, slot);
}

/* p has a mapping whose table is being built: a copy of its stack may wait for it */
static bool proc_waits(const struct unwinder *u, const struct uw_proc *p)
{
	for (size_t i = 0; i < p->nr; i++)
		if (pending(u, &p->maps[i]))
			return true;
	return false;
}

/* the mappings of installed processes that found no room in the builder's queue: again */
static void retry(struct unwinder *u)
{
	u->retry = false;
	for (size_t b = 0; b < PROC_BUCKETS && !u->retry; b++)
		for (struct uw_proc *p = u->procs[b]; p && !u->retry; p = p->next)
			for (size_t i = 0; p->active && i < p->nr && !u->retry; i++)
				if (p->maps[i].slot == NO_TABLE ||
				    (p->maps[i].slot == PENDING_TABLE && !pending(u, &p->maps[i])))
					use(u, p, &p->maps[i]);   /* till the queue is full again */
}

void unwinder__tick(struct unwinder *u)
{
	uint64_t now = 0;

	u->tick++;
	collect(u);
	if (u->retry && uw_build_pending(u) < UNWIND_BUILD_QUEUE / 2)
		retry(u);
	for (size_t b = 0; b < PROC_BUCKETS; b++)
		for (struct uw_proc *p = u->procs[b], *next; p; p = next) {
			next = p->next;
			if (!p->exited || u->tick <= p->exit_tick + 1)
				continue;
			/* kept while copies of its stacks may wait for a table (UNWIND_HOLD_NS at most) */
			if (proc_waits(u, p) && (now = now ? now : clock_mono_ns()) < p->exit_time + UNWIND_HOLD_NS)
				continue;
			proc_free(u, p->pid);
		}
}

void unwinder__collect(struct unwinder *u)
{
	collect(u);
}

bool unwinder__wait(struct unwinder *u, uint64_t deadline)
{
	return uw_build_wait(u, deadline);
}

void unwinder__notify(struct unwinder *u, int efd, bool on)
{
	uw_build_notify(u, efd, on);
}

/* --- life cycle ------------------------------------------------------------------ */

int unwinder__get(struct unwinder **out)
{
	struct unwinder *u = the_unwinder;

	if (u) {
		u->refs++;
		*out = u;
		return 0;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->tables = calloc(MAX_TABLES, sizeof(*u->tables));
	if (!u->tables) {
		free(u);
		return -ENOMEM;
	}
	elf_version(EV_CURRENT);
	/*
	 * Table generations start anywhere: the BPF walk caches rows by
	 * generation, and programs adopted from a daemon that died still hold
	 * the cache that daemon's generations filled.
	 */
	if (getrandom(&u->gen, sizeof(u->gen), GRND_NONBLOCK) != sizeof(u->gen))
		u->gen = (uint32_t)time(NULL) * 2654435761u;
	u->refs = 1;
	u->cap = UNWIND_DEFAULT_CAP;
	if (getenv("PERFMARK_UNWIND_CAP")) {
		char err[128];
		uint64_t cap;

		if (!evspec_parse_size(getenv("PERFMARK_UNWIND_CAP"), &cap, err, sizeof(err)) &&
		    cap >= 4096)
			u->cap = cap;
	}
	u->st.cap = u->cap;
	if (uw_build_new(u)) {
		free(u->tables);
		free(u);
		return -ENOMEM;
	}
	unwind_pool_new(u, unwind_pool_rows(u, 0));  /* before any collector: no grace period to wait */
	the_unwinder = u;
	*out = u;
	return 0;
}

void unwinder__put(struct unwinder *u)
{
	if (!u || --u->refs > 0)
		return;
	uw_build_stop(u);           /* the workers first: nothing is built for what goes next */
	for (size_t i = 0; i < PROC_BUCKETS; i++)
		while (u->procs[i])
			proc_free(u, u->procs[i]->pid);
	unwind_pools_free(u);
	free(u->tables);
	free(u);
	the_unwinder = NULL;
}

void unwinder__set_self(struct unwinder *u, uint32_t pid)
{
	u->self = pid;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->st;
	st->builds_pending = uw_build_pending(u);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --aggregate SECONDS: the user side of bpf/aggregate.bpf.c.  Once an
 * interval, the sampler is switched to the other set of maps, the set it
 * left is emptied (a batch read of the counts, one lookup per distinct
 * stack, then the stack map swept) and each (pid, tid, uid, event, stacks,
 * ip) it counted goes to the subscribers as one sample: its periods summed,
 * timed at the interval's end, so that a reader weighting samples by their
 * period (perf report does) finds the shares it would have found in every
 * sample.  Markers, tracepoint hits, the sideband and the samples the maps
 * had no room for still come through the ring, as they are.
 *
 * RULE: in a system-wide aggregated session the idle task is not sampled
 * by a clock event; its time comes from the kernel's idle accounting.
 * On an idle machine nearly every cpu-clock sample is the idle task's, and
 * what such a sample costs is the sampler run on a CPU woken from halt,
 * caches cold (measured on the 2-CPU VM: 4 us a run for a program that
 * only counts, 19-25 us with the idle task's kernel stack): more than the
 * whole budget of an always-on session.  So the clock events are opened
 * with exclude_idle (the kernel then runs no program for a tick that finds
 * the idle task), and each interval writes, per CPU, one sample of the idle
 * task at the idle loop (do_idle) whose period is the idle and iowait time
 * /proc/stat counted on that CPU over the interval: perf report's shares,
 * which weight samples by period, are those the idle samples would have
 * given.  The last reading is kept in a map pinned with the session
 * (agg_idle), so a daemon that takes the session over goes on from it and a
 * restart loses no idle time.  A hardware event (cycles) does not count in
 * halt, so it is left as it is.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "aggregate_wire.h"
#include "clock.h"
#include "collector_int.h"
#include "jsonf.h"
#include "synth.h"

#define AGG_MAX_COUNTS  16384     /* (pid, tid, uid, event, stacks, ip) per interval */
#define AGG_STACK_IDS   8192      /* stack map buckets per set (kernel and user stacks) */
#define AGG_BATCH       256       /* entries per batch read */
#define AGG_WAIT_NS     10000000  /* for a CPU still counting into the old set, at most */
#define AGG_IDLE_SYM    "do_idle" /* where the idle task's samples are put (RULE above) */
#define AGG_IDLE_NONE   UINT64_MAX

struct collector_agg {
	int ctl_fd, busy_fd, counts_fd[2], stacks_fd[2];
	uint32_t slot;               /* the set the sampler counts into */
	uint64_t seed;               /* agg_ctl's (kept as it was) */
	uint64_t interval_ns;
	uint64_t next_ns;            /* the current interval's end */
	int ncpus;
	uint32_t depth;              /* frames a stack map entry holds */
	uint32_t max_stack;          /* kernel + user frames a sample carries */
	struct pm_agg_key *keys;     /* one interval's counts */
	struct pm_agg_val *vals;
	size_t nr_counts;
	uint32_t *stack_at;          /* per stack id: 1 + where its frames were read to, 0: not read */
	uint32_t *stack_nr;          /* the frames of each stack read */
	uint64_t *frames;            /* depth frames per stack read */
	size_t nr_stacks, cap_stacks;
	void *busy;                  /* agg_busy as read: a u32 per CPU, 8 bytes apart */
	int idle_fd;                 /* agg_idle (RULE above); -1: the idle task is sampled */
	uint64_t idle_ip;
	uint64_t *idle_last, *idle_now;   /* idle ns per CPU, AGG_IDLE_NONE: not known */
	bool idle_failed;
	void *rec;                   /* the sample being handed out */
	struct collector_agg_stats st;
};

int collector_agg_setup(struct collector *c)
{
	bool on = c->spec.aggregate != 0;
	uint32_t depth = c->spec.max_stack ? c->spec.max_stack : PM_MAX_STACK;
	struct bpf_map *stacks[2] = { c->skel->maps.agg_stacks0, c->skel->maps.agg_stacks1 };

	if (depth > PM_MAX_STACK)
		depth = PM_MAX_STACK;
	bpf_map__set_max_entries(c->skel->maps.agg_counts0, on ? AGG_MAX_COUNTS : 1);
	bpf_map__set_max_entries(c->skel->maps.agg_counts1, on ? AGG_MAX_COUNTS : 1);
	for (int i = 0; i < 2; i++) {
		bpf_map__set_max_entries(stacks[i], on ? AGG_STACK_IDS : 1);
		bpf_map__set_value_size(stacks[i], (on ? depth : 1) * sizeof(uint64_t));
	}
	return 0;
}

void collector_agg_free(struct collector *c)
{
	struct collector_agg *a = c->agg;

	if (!a)
		return;
	if (c->own_fds) {
		int fds[] = { a->ctl_fd, a->busy_fd, a->counts_fd[0], a->counts_fd[1],
			      a->stacks_fd[0], a->stacks_fd[1] };

		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	free(a->keys);
	free(a->vals);
	free(a->stack_at);
	free(a->stack_nr);
	free(a->frames);
	free(a->busy);
	if (a->idle_fd >= 0)
		close(a->idle_fd);
	free(a->idle_last);
	free(a->idle_now);
	free(a->rec);
	free(a);
	c->agg = NULL;
}

/* the frames an entry of the stack map holds (its value size), 0 when it is not one */
static uint32_t stack_depth(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_MAP_TYPE_STACK_TRACE ||
	    info.key_size != sizeof(uint32_t) || info.max_entries > AGG_STACK_IDS)
		return 0;
	return info.value_size / sizeof(uint64_t);
}

/* is sampling event idx a clock that samples the kernel (RULE above)? */
static bool kernel_clock(const struct collector *c, size_t idx)
{
	struct perf_event_attr at;

	evspec_attr(&c->ev[idx], &at);
	return evspec_is_clock(&at) && !at.exclude_kernel;
}

/* idle and iowait ns per CPU since boot (AGG_IDLE_NONE: not listed, offline) */
static void read_idle(uint64_t *ns, int ncpus)
{
	long hz = sysconf(_SC_CLK_TCK);
	char line[256];
	FILE *f;

	for (int i = 0; i < ncpus; i++)
		ns[i] = AGG_IDLE_NONE;
	f = fopen("/proc/stat", "re");
	if (!f || hz <= 0) {
		if (f)
			fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long user, nice, sys, idle, iowait;
		unsigned int cpu;

		if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu", &cpu, &user, &nice, &sys, &idle,
			   &iowait) == 6 && cpu < (unsigned int)ncpus)
			ns[cpu] = (idle + iowait) * (1000000000ull / (uint64_t)hz);
	}
	fclose(f);
}

/* the readings' buffers, and the first reading where the map has none */
static int idle_begin(struct collector_agg *a, int idle_fd, bool fresh)
{
	size_t vsize = (size_t)a->ncpus * sizeof(uint64_t);
	uint32_t zero = 0;

	a->idle_fd = idle_fd;
	a->idle_last = malloc(vsize);
	a->idle_now = malloc(vsize);
	if (!a->idle_last || !a->idle_now)
		return -ENOMEM;
	if (fresh || bpf_map_lookup_elem(idle_fd, &zero, a->idle_last)) {
		read_idle(a->idle_last, a->ncpus);
		if (bpf_map_update_elem(idle_fd, &zero, a->idle_last, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* a taken-over session's agg_idle (RULE above): its readings go on */
static int idle_adopt(struct collector_agg *a, int idle_fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	/* this perfmark's own kind, or not used at all */
	if (bpf_obj_get_info_by_fd(idle_fd, &info, &len) || info.type != BPF_MAP_TYPE_ARRAY ||
	    info.key_size != sizeof(uint32_t) ||
	    info.value_size != (size_t)a->ncpus * sizeof(uint64_t) || info.max_entries != 1) {
		close(idle_fd);
		return -EINVAL;
	}
	if (synth_kernel_symbol(AGG_IDLE_SYM, &a->idle_ip))
		a->idle_ip = 0;             /* still written, at an address perf shows as unknown */
	return idle_begin(a, idle_fd, false);
}

/*
 * Is sampling event idx to be opened with exclude_idle, the idle task's time
 * written from /proc/stat (RULE above)?  Asked as each event of a new
 * collection opens (after any fallback to cpu-clock): the first clock
 * event of a system-wide one creates agg_idle.  Where that cannot be done
 * (the idle loop's address hidden, no map), the idle task is sampled.
 */
bool collector_agg_idle(struct collector *c, size_t idx)
{
	struct collector_agg *a = c->agg;
	int fd;

	if (!a || !kernel_clock(c, idx))
		return false;
	if (a->idle_fd >= 0)
		return true;
	if (a->idle_failed || !c->skel || c->spec.target != RECSPEC_TARGET_ALL)
		return false;
	a->idle_failed = true;              /* until it works */
	if (synth_kernel_symbol(AGG_IDLE_SYM, &a->idle_ip))
		return false;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "agg_idle", sizeof(uint32_t),
			    (uint32_t)((size_t)a->ncpus * sizeof(uint64_t)), 1, NULL);
	if (fd < 0)
		return false;
	if (idle_begin(a, fd, true)) {
		a->idle_fd = -1;
		close(fd);
		return false;
	}
	a->idle_failed = false;
	return true;
}

/*
 * fds: agg_ctl, agg_busy, agg_counts0, agg_counts1, agg_stacks0,
 * agg_stacks1, agg_idle (taken: closed with the collector when it owns its
 * fds; agg_idle always, -1 for none).
 * Not aggregating: nothing kept, and the sampler told so (a new load).
 */
int collector_agg_start(struct collector *c, const int fds[7], char *err, size_t errlen)
{
	struct pm_agg_ctl ctl = { 0 };
	struct collector_agg *a;
	uint32_t zero = 0;
	int e = -ENOMEM;

	if (!c->spec.aggregate)
		return 0;
	for (int i = 0; i < 6; i++)
		if (fds[i] < 0) {
			snprintf(err, errlen, "the aggregation maps are missing (pinned by an older perfmark?)");
			return -ENOENT;
		}
	a = calloc(1, sizeof(*a));
	if (!a)
		goto fail;
	a->idle_fd = fds[6];
	a->ctl_fd = fds[0];
	a->busy_fd = fds[1];
	a->counts_fd[0] = fds[2];
	a->counts_fd[1] = fds[3];
	a->stacks_fd[0] = fds[4];
	a->stacks_fd[1] = fds[5];
	c->agg = a;
	a->depth = stack_depth(a->stacks_fd[0]);
	if (!a->depth || a->depth > PM_MAX_STACK || stack_depth(a->stacks_fd[1]) != a->depth) {
		snprintf(err, errlen, "the aggregation maps are not this perfmark's (pinned by an older one?)");
		return -EINVAL;
	}
	a->max_stack = c->spec.max_stack && c->spec.max_stack < a->depth ? c->spec.max_stack : a->depth;
	a->ncpus = libbpf_num_possible_cpus();
	if (a->ncpus < 1) {
		e = a->ncpus ? a->ncpus : -EINVAL;
		goto fail;
	}
	a->keys = calloc(AGG_MAX_COUNTS, sizeof(*a->keys));
	a->vals = calloc(AGG_MAX_COUNTS, sizeof(*a->vals));
	a->stack_at = calloc(AGG_STACK_IDS, sizeof(*a->stack_at));
	a->busy = calloc((size_t)a->ncpus, COLLECTOR_PERCPU_STRIDE(sizeof(uint32_t)));
	a->rec = malloc(sizeof(struct pm_sample) + (size_t)a->max_stack * sizeof(uint64_t));
	if (!a->keys || !a->vals || !a->stack_at || !a->busy || !a->rec)
		goto fail;
	if (a->idle_fd >= 0) {
		e = idle_adopt(a, a->idle_fd);
		if (e) {
			a->idle_fd = -1;        /* closed */
			goto fail;
		}
	}
	/* adopted: the set the last daemon left the sampler on goes on */
	if (!bpf_map_lookup_elem(a->ctl_fd, &zero, &ctl) && ctl.on)
		a->slot = ctl.slot & 1;
	ctl.on = 1;
	ctl.slot = a->slot;
	a->seed = ctl.seed;
	if (bpf_map_update_elem(a->ctl_fd, &zero, &ctl, BPF_ANY)) {
		e = -errno;
		goto fail;
	}
	a->interval_ns = (uint64_t)c->spec.aggregate * 1000000000ull;
	a->next_ns = clock_mono_ns() + a->interval_ns;
	return 0;
fail:
	snprintf(err, errlen, "cannot start aggregating: %s", strerror(-e));
	return e;
}

/* a CPU counting into set old, or reading which set (AGG_ENTERING) */
static bool agg_busy(const void *value, uint32_t old)
{
	uint32_t v;

	memcpy(&v, value, sizeof(v));
	return v == old + 1 || v == 3 /* AGG_ENTERING */;
}

/* all of a hash map's entries into keys/vals (at most max), the map emptied */
static size_t take_all(int fd, void *keys, size_t key_size, void *vals, size_t val_size, size_t max)
{
	uint64_t in = 0, out = 0;
	size_t n = 0;
	bool first = true;

	while (n < max) {
		uint32_t count = (uint32_t)(max - n < AGG_BATCH ? max - n : AGG_BATCH);
		int e = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out,
							(char *)keys + n * key_size,
							(char *)vals + n * val_size, &count, NULL);

		if (e && errno != ENOENT)
			break;
		n += count;
		if (e)
			break;              /* ENOENT: the last batch */
		in = out;
		first = false;
	}
	return n;
}

/*
 * The frames of stack id in the set's stack map (read once an interval):
 * how many (an entry's unused tail is zeros), -1 when it is not there.
 */
static long stack_of(struct collector_agg *a, int fd, uint32_t id, const uint64_t **frames)
{
	uint64_t *f;
	uint32_t n;

	if (id == PM_AGG_NO_STACK) {
		*frames = NULL;
		return 0;
	}
	if (id >= AGG_STACK_IDS)
		return -1;
	if (!a->stack_at[id]) {
		if (a->nr_stacks == a->cap_stacks) {
			size_t cap = a->cap_stacks ? 2 * a->cap_stacks : 64;
			uint64_t *nf = realloc(a->frames, cap * a->depth * sizeof(uint64_t));
			uint32_t *nn;

			if (!nf)
				return -1;
			a->frames = nf;
			nn = realloc(a->stack_nr, cap * sizeof(uint32_t));
			if (!nn)
				return -1;
			a->stack_nr = nn;
			a->cap_stacks = cap;
		}
		f = &a->frames[a->nr_stacks * a->depth];
		if (bpf_map_lookup_elem(fd, &id, f))
			return -1;
		for (n = 0; n < a->depth && f[n]; n++)
			;
		a->stack_nr[a->nr_stacks] = n;
		a->stack_at[id] = (uint32_t)++a->nr_stacks;
	}
	*frames = &a->frames[(size_t)(a->stack_at[id] - 1) * a->depth];
	return a->stack_nr[a->stack_at[id] - 1];
}

/* the set the sampler left: one sample per count, to the subscribers */
static void hand_out(struct collector *c, uint64_t time, int stacks_fd)
{
	struct collector_agg *a = c->agg;
	struct pm_sample *s = a->rec;
	size_t i;

	for (i = 0; i < a->nr_counts; i++) {
		const struct pm_agg_key *k = &a->keys[i];
		const uint64_t *kf, *uf;
		long nk = stack_of(a, stacks_fd, k->kstack, &kf);
		long nu = nk < 0 ? -1 : stack_of(a, stacks_fd, k->ustack, &uf);

		if (nu < 0) {               /* a stack not there: lost */
			a->st.lost += a->vals[i].count;
			continue;
		}
		/* the user's read may have moved the frames: the kernel's again (read already) */
		stack_of(a, stacks_fd, k->kstack, &kf);
		/* --max-stack N: the kernel's frames first, the user's in what is left */
		if ((uint64_t)nk > a->max_stack)
			nk = a->max_stack;
		if ((uint64_t)nu > a->max_stack - (uint64_t)nk)
			nu = a->max_stack - nk;
		*s = (struct pm_sample){
			.rec_type = PM_REC_SAMPLE, .cpu = (uint32_t)a->vals[i].cpu, .pid = k->pid,
			.tid = k->tid, .time = time, .ip = k->ip, .period = a->vals[i].period,
			.event = k->event, .nr_kstack = (uint32_t)nk, .nr_ustack = (uint32_t)nu,
			.user_mode = k->user_mode, .uid = k->uid,
		};
		if (nk)
			memcpy(s->stack, kf, (size_t)nk * sizeof(uint64_t));
		if (nu)
			memcpy(&s->stack[nk], uf, (size_t)nu * sizeof(uint64_t));
		collector_dispatch_subs(c, s, sizeof(*s) + (size_t)(nk + nu) * sizeof(uint64_t));
		a->st.stacks++;
		a->st.samples += a->vals[i].count;
	}
}

/* per CPU, the idle task's time over the interval as one sample for each clock event */
static void hand_out_idle(struct collector *c, uint64_t time)
{
	struct collector_agg *a = c->agg;
	struct pm_sample *s = a->rec;
	uint32_t zero = 0;

	if (a->idle_fd < 0)
		return;
	read_idle(a->idle_now, a->ncpus);
	for (int cpu = 0; cpu < a->ncpus; cpu++)
		if (a->idle_now[cpu] == AGG_IDLE_NONE)     /* not listed (offline): as it was */
			a->idle_now[cpu] = a->idle_last[cpu];
	/* kept before it is written: a daemon killed between the two loses the interval's idle, never doubles it */
	if (bpf_map_update_elem(a->idle_fd, &zero, a->idle_now, BPF_ANY))
		return;
	for (int cpu = 0; cpu < a->ncpus; cpu++) {
		uint64_t was = a->idle_last[cpu], is = a->idle_now[cpu];

		a->idle_last[cpu] = is;
		if (was == AGG_IDLE_NONE || is == AGG_IDLE_NONE || is <= was)
			continue;
		for (size_t i = 0; i < c->spec.nr_events; i++) {
			if (!kernel_clock(c, i))
				continue;
			*s = (struct pm_sample){
				.rec_type = PM_REC_SAMPLE, .cpu = (uint32_t)cpu, .time = time,
				.ip = a->idle_ip, .period = is - was, .event = (uint32_t)i,
				.nr_kstack = a->idle_ip ? 1 : 0,
			};
			s->stack[0] = a->idle_ip;
			collector_dispatch_subs(c, s, sizeof(*s) + s->nr_kstack * sizeof(uint64_t));
		}
		a->st.idle_ns += is - was;
	}
}

/* the stack map emptied: every id there (those no count kept too: a full counts map) */
static void sweep_stacks(struct collector_agg *a, int fd)
{
	uint32_t id, next;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &id, &next)) {
		bpf_map_delete_elem(fd, &next);
		id = next;
		first = false;
	}
	for (size_t i = 0; i < AGG_STACK_IDS; i++)
		a->stack_at[i] = 0;
	a->nr_stacks = 0;
}

void collector_agg_flush(struct collector *c, bool force)
{
	struct collector_agg *a = c->agg;
	struct pm_agg_ctl ctl = { .on = 1, .seed = a ? a->seed : 0 };
	uint32_t zero = 0, old;
	uint64_t now;

	if (!a)
		return;
	now = clock_mono_ns();
	if (!force && now < a->next_ns)
		return;
	old = a->slot;
	ctl.slot = old ^ 1;
	if (bpf_map_update_elem(a->ctl_fd, &zero, &ctl, BPF_ANY))
		return;
	a->slot = ctl.slot;
	/* the next interval ends a whole interval after this one (not after now: no drift) */
	while (a->next_ns <= now)
		a->next_ns += a->interval_ns;
	/* every CPU that may still count into set old has left it */
	collector_wait_quiet(a->busy_fd, a->busy, sizeof(uint32_t), a->ncpus, agg_busy, old, AGG_WAIT_NS);
	a->nr_counts = take_all(a->counts_fd[old], a->keys, sizeof(*a->keys), a->vals,
				sizeof(*a->vals), AGG_MAX_COUNTS);
	hand_out(c, now, a->stacks_fd[old]);
	hand_out_idle(c, now);
	sweep_stacks(a, a->stacks_fd[old]);
	a->st.intervals++;
}

/* lost here: counted in BPF, and counts whose stack was not kept */
uint64_t collector_agg_lost(const struct collector *c, uint64_t bpf_lost)
{
	return c->agg ? bpf_lost + c->agg->st.lost : 0;
}

bool collector__agg_stats(const struct collector *c, struct collector_agg_stats *st)
{
	struct perfmark_bpf__bss bss;
	uint32_t zero = 0;

	memset(st, 0, sizeof(*st));
	if (!c->agg)
		return false;
	*st = c->agg->st;
	st->seconds = c->spec.aggregate;
	if (!bpf_map_lookup_elem(c->bss_fd, &zero, &bss)) {
		st->lost = collector_agg_lost(c, bss.agg_lost);
		st->spilled = bss.agg_spilled;
	}
	return true;
}

void collector__agg_flush(struct collector *c)
{
	collector_agg_flush(c, true);
}

static const char *const agg_pins[7] = {
	"agg_ctl", "agg_busy", "agg_counts0", "agg_counts1", "agg_stacks0", "agg_stacks1",
	"agg_idle",
};

/* pinned with the rest: a daemon that adopts the collection drains them */
int collector_agg_pin(struct collector *c, const char *dir)
{
	struct collector_agg *a = c->agg;
	int fds[7], e;

	if (!a)
		return 0;
	fds[0] = a->ctl_fd;
	fds[1] = a->busy_fd;
	fds[2] = a->counts_fd[0];
	fds[3] = a->counts_fd[1];
	fds[4] = a->stacks_fd[0];
	fds[5] = a->stacks_fd[1];
	fds[6] = a->idle_fd;
	for (int i = 0; i < 7; i++) {
		if (fds[i] < 0)             /* agg_idle: the idle task sampled */
			continue;
		e = collector_pin_fd(fds[i], dir, agg_pins[i]);
		if (e)
			return e;
	}
	return 0;
}

void collector_agg_pinned_fds(const char *dir, int fds[7])
{
	char path[PATH_MAX];

	for (int i = 0; i < 7; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, agg_pins[i]);
		fds[i] = bpf_obj_get(path);
	}
}

#define AGG_STATS_FIELDS(X) X(seconds) X(intervals) X(stacks) X(samples) X(lost) X(spilled) X(idle_ns)

struct json_object *collector_agg_stats_json(const struct collector_agg_stats *st)
{
	struct json_object *o = json_object_new_object();

#define PUT(f) json_object_object_add(o, #f, json_object_new_uint64(st->f));
	AGG_STATS_FIELDS(PUT)
#undef PUT
	return o;
}

void collector_agg_stats_from_json(struct json_object *o, struct collector_agg_stats *st)
{
	memset(st, 0, sizeof(*st));
#define GET(f) st->f = (uint64_t)jsonf_get_int(o, #f);
	AGG_STATS_FIELDS(GET)
#undef GET
}

void collector_agg_stats_text(const struct collector_agg_stats *st, char *buf, size_t len)
{
	snprintf(buf, len, "every %llu s: %llu intervals, %llu aggregated samples written "
		 "(one per distinct stack) for %llu samples, %llu samples lost, %llu written as "
		 "they were (their stack not kept), %llu ms idle (from the kernel's idle time: "
		 "the idle task is not sampled)",
		 (unsigned long long)st->seconds, (unsigned long long)st->intervals,
		 (unsigned long long)st->stacks, (unsigned long long)st->samples,
		 (unsigned long long)st->lost, (unsigned long long)st->spilled,
		 (unsigned long long)(st->idle_ns / 1000000));
}

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
 */
#include <errno.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "aggregate_wire.h"
#include "clock.h"
#include "collector_int.h"
#include "jsonf.h"

#define AGG_MAX_COUNTS  16384     /* (pid, tid, uid, event, stacks, ip) per interval */
#define AGG_STACK_IDS   8192      /* stack map buckets per set (kernel and user stacks) */
#define AGG_BATCH       256       /* entries per batch read */
#define AGG_WAIT_NS     10000000  /* for a CPU still counting into the old set, at most */

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
	uint32_t *busy;              /* per CPU */
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

/*
 * fds: agg_ctl, agg_busy, agg_counts0, agg_counts1, agg_stacks0,
 * agg_stacks1 (taken: closed with the collector when it owns its fds).
 * Not aggregating: nothing kept, and the sampler told so (a new load).
 */
int collector_agg_start(struct collector *c, const int fds[6], char *err, size_t errlen)
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
	a->busy = calloc((size_t)a->ncpus, sizeof(*a->busy));
	a->rec = malloc(sizeof(struct pm_sample) + (size_t)a->max_stack * sizeof(uint64_t));
	if (!a->keys || !a->vals || !a->stack_at || !a->busy || !a->rec)
		goto fail;
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

/* every CPU that may still count into set old has left it */
static void wait_quiet(struct collector_agg *a, uint32_t old)
{
	uint64_t until = clock_mono_ns() + AGG_WAIT_NS;
	uint32_t zero = 0;

	for (;;) {
		bool busy = false;

		if (bpf_map_lookup_elem(a->busy_fd, &zero, a->busy))
			return;
		for (int i = 0; i < a->ncpus; i++)
			if (a->busy[i] == old + 1 || a->busy[i] == 3 /* AGG_ENTERING */)
				busy = true;
		if (!busy || clock_mono_ns() > until)
			return;
		sched_yield();
	}
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
	wait_quiet(a, old);
	a->nr_counts = take_all(a->counts_fd[old], a->keys, sizeof(*a->keys), a->vals,
				sizeof(*a->vals), AGG_MAX_COUNTS);
	hand_out(c, now, a->stacks_fd[old]);
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

static const char *const agg_pins[6] = {
	"agg_ctl", "agg_busy", "agg_counts0", "agg_counts1", "agg_stacks0", "agg_stacks1",
};

/* pinned with the rest: a daemon that adopts the collection drains them */
int collector_agg_pin(struct collector *c, const char *dir)
{
	struct collector_agg *a = c->agg;
	int fds[6], e;

	if (!a)
		return 0;
	fds[0] = a->ctl_fd;
	fds[1] = a->busy_fd;
	fds[2] = a->counts_fd[0];
	fds[3] = a->counts_fd[1];
	fds[4] = a->stacks_fd[0];
	fds[5] = a->stacks_fd[1];
	for (int i = 0; i < 6; i++) {
		e = collector_pin_fd(fds[i], dir, agg_pins[i]);
		if (e)
			return e;
	}
	return 0;
}

void collector_agg_pinned_fds(const char *dir, int fds[6])
{
	char path[PATH_MAX];

	for (int i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, agg_pins[i]);
		fds[i] = bpf_obj_get(path);
	}
}

#define AGG_STATS_FIELDS(X) X(seconds) X(intervals) X(stacks) X(samples) X(lost) X(spilled)

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
		 "they were (their stack not kept)",
		 (unsigned long long)st->seconds, (unsigned long long)st->intervals,
		 (unsigned long long)st->stacks, (unsigned long long)st->samples,
		 (unsigned long long)st->lost, (unsigned long long)st->spilled);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * --aggregate SECONDS: the user side of bpf/aggregate.bpf.c.  Once an
 * interval, the sampler is switched to the other set of maps, the set it
 * left is emptied (two batch reads) and each (pid, tid, uid, event, stack)
 * it counted goes to the subscribers as one sample: its periods summed,
 * timed at the interval's end, so that a reader weighting samples by their
 * period (perf report does) finds the shares it would have found in every
 * sample.  Markers, tracepoint hits and the sideband still come through
 * the ring, as they are.
 */
#include <errno.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "aggregate_wire.h"
#include "clock.h"
#include "collector_int.h"
#include "jsonf.h"

#define AGG_MAX_COUNTS  16384     /* (pid, tid, uid, event, stack) per interval */
#define AGG_MAX_STACKS  4096      /* distinct stacks per interval */
#define AGG_BATCH       256       /* entries per batch read */
#define AGG_WAIT_NS     10000000  /* for a CPU still counting into the old set, at most */

struct collector_agg {
	int ctl_fd, busy_fd, counts_fd[2], stacks_fd[2];
	uint32_t slot;               /* the set the sampler counts into */
	uint64_t seed;               /* of the stack hash (agg_ctl's) */
	uint64_t interval_ns;
	uint64_t next_ns;            /* the current interval's end */
	int ncpus;
	struct pm_agg_key *keys;     /* one interval's counts */
	struct pm_agg_val *vals;
	size_t nr_counts;
	uint64_t *stack_keys;        /* one interval's stacks, sorted by hash */
	struct pm_agg_stack *stacks;
	size_t nr_stacks;
	uint32_t *busy;              /* per CPU */
	void *rec;                   /* the sample being handed out */
	struct collector_agg_stats st;
};

int collector_agg_setup(struct collector *c)
{
	bool on = c->spec.aggregate != 0;

	bpf_map__set_max_entries(c->skel->maps.agg_counts0, on ? AGG_MAX_COUNTS : 1);
	bpf_map__set_max_entries(c->skel->maps.agg_counts1, on ? AGG_MAX_COUNTS : 1);
	bpf_map__set_max_entries(c->skel->maps.agg_stacks0, on ? AGG_MAX_STACKS : 1);
	bpf_map__set_max_entries(c->skel->maps.agg_stacks1, on ? AGG_MAX_STACKS : 1);
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
	free(a->stack_keys);
	free(a->stacks);
	free(a->busy);
	free(a->rec);
	free(a);
	c->agg = NULL;
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
	a->ncpus = libbpf_num_possible_cpus();
	if (a->ncpus < 1) {
		e = a->ncpus ? a->ncpus : -EINVAL;
		goto fail;
	}
	a->keys = calloc(AGG_MAX_COUNTS, sizeof(*a->keys));
	a->vals = calloc(AGG_MAX_COUNTS, sizeof(*a->vals));
	a->stack_keys = calloc(AGG_MAX_STACKS, sizeof(*a->stack_keys));
	a->stacks = calloc(AGG_MAX_STACKS, sizeof(*a->stacks));
	a->busy = calloc((size_t)a->ncpus, sizeof(*a->busy));
	a->rec = malloc(sizeof(struct pm_sample) + PM_AGG_FRAMES * sizeof(uint64_t));
	if (!a->keys || !a->vals || !a->stack_keys || !a->stacks || !a->busy || !a->rec)
		goto fail;
	/* adopted: the set the last daemon left the sampler on goes on */
	if (!bpf_map_lookup_elem(a->ctl_fd, &zero, &ctl) && ctl.on)
		a->slot = ctl.slot & 1;
	else if (getrandom(&ctl.seed, sizeof(ctl.seed), 0) != sizeof(ctl.seed))
		ctl.seed = clock_mono_ns() * 0x9e3779b97f4a7c15ull;
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the set the sampler left: one sample per count, to the subscribers */
static void hand_out(struct collector *c, uint64_t time)
{
	struct collector_agg *a = c->agg;
	struct pm_sample *s = a->rec;
	uint64_t *order;
	size_t i;

	/* the stacks, sorted by hash with their values alongside */
	order = calloc(a->nr_stacks ? a->nr_stacks : 1, 2 * sizeof(uint64_t));
	if (!order)
		return;
	for (i = 0; i < a->nr_stacks; i++) {
		order[2 * i] = a->stack_keys[i];
		order[2 * i + 1] = i;
	}
	qsort(order, a->nr_stacks, 2 * sizeof(uint64_t), cmp_u64);
	for (i = 0; i < a->nr_counts; i++) {
		const struct pm_agg_key *k = &a->keys[i];
		const uint64_t *hit = bsearch(&k->stack, order, a->nr_stacks, 2 * sizeof(uint64_t), cmp_u64);
		const struct pm_agg_stack *st;
		size_t n;

		if (!hit) {                 /* its stack was refused (a full map): lost */
			a->st.lost += a->vals[i].count;
			continue;
		}
		st = &a->stacks[hit[1]];
		n = (size_t)st->nr_kstack + st->nr_ustack;
		if (n > PM_AGG_FRAMES)
			n = PM_AGG_FRAMES;
		*s = (struct pm_sample){
			.rec_type = PM_REC_SAMPLE, .cpu = st->cpu, .pid = k->pid, .tid = k->tid,
			.time = time, .ip = st->ip, .period = a->vals[i].period, .event = k->event,
			.nr_kstack = st->nr_kstack < n ? st->nr_kstack : (uint32_t)n,
			.user_mode = st->user_mode, .uid = k->uid,
		};
		s->nr_ustack = (uint32_t)n - s->nr_kstack;
		memcpy(s->stack, st->frames, n * sizeof(uint64_t));
		collector_dispatch_subs(c, s, sizeof(*s) + n * sizeof(uint64_t));
		a->st.stacks++;
		a->st.samples += a->vals[i].count;
	}
	free(order);
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
	a->nr_stacks = take_all(a->stacks_fd[old], a->stack_keys, sizeof(*a->stack_keys),
				a->stacks, sizeof(*a->stacks), AGG_MAX_STACKS);
	hand_out(c, now);
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
	if (!bpf_map_lookup_elem(c->bss_fd, &zero, &bss))
		st->lost = collector_agg_lost(c, bss.agg_lost);
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

#define AGG_STATS_FIELDS(X) X(seconds) X(intervals) X(stacks) X(samples) X(lost)

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
		 "(one per distinct stack) for %llu samples, %llu samples lost",
		 (unsigned long long)st->seconds, (unsigned long long)st->intervals,
		 (unsigned long long)st->stacks, (unsigned long long)st->samples,
		 (unsigned long long)st->lost);
}

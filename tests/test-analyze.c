// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/analyze's model: the tables, and profile__load() on a
 * recording written by perfdata_writer whose records are out of time order
 * inside rounds: samples must be attributed to the ranges open on their
 * thread at their time, nested ranges counted self/total, counters kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "aggregate.h"
#include "perfdata.h"
#include "perfread.h"
#include "profile.h"
#include "replay.h"
#include "table.h"
#include "uevent.h"

static void test_idmap(void **state)
{
	struct idmap m = { 0 };

	(void)state;
	for (uint64_t k = 0; k < 20000; k++)
		assert_int_equal(idmap__put(&m, k * 7919, (uint32_t)k), 0);
	for (uint64_t k = 0; k < 20000; k++)
		assert_int_equal(idmap__get(&m, k * 7919), (uint32_t)k);
	assert_int_equal(idmap__get(&m, 3), TABLE_NONE);
	assert_int_equal(idmap__put(&m, 7919, 5), 0);
	assert_int_equal(idmap__get(&m, 7919), 5);
	assert_int_equal(m.n, 20000);
	idmap__clear(&m);
	assert_int_equal(idmap__get(&m, 7919), TABLE_NONE);
	idmap__free(&m);
}

static void test_strtab(void **state)
{
	struct strtab t = { 0 };
	char buf[32];
	uint32_t a, b;

	(void)state;
	a = strtab__intern(&t, "render", 6);
	b = strtab__intern(&t, "render_scene", 6);   /* a prefix: the same string */
	assert_int_equal(a, b);
	for (int i = 0; i < 50000; i++) {
		snprintf(buf, sizeof(buf), "fn_%d", i);
		assert_int_equal(strtab__intern(&t, buf, strlen(buf)), (uint32_t)i + 1);
	}
	assert_string_equal(strtab__str(&t, a), "render");
	assert_string_equal(strtab__str(&t, 12346), "fn_12345");
	assert_int_equal(strtab__intern(&t, "fn_49999", 8), 50000);
	strtab__free(&t);
}

/* ---- a recording --------------------------------------------------------------- */

#define ID_CLOCK 11
#define ID_UEVENT 12
#define ST_CLOCK (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define ST_UEVENT (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)

static const uint64_t clock_ids[] = { ID_CLOCK }, uevent_ids[] = { ID_UEVENT };

static void add_sample(struct perfdata_writer *w, uint32_t tid, uint64_t time)
{
	uint8_t rec[256];
	struct perfdata_sample s = { .id = ID_CLOCK, .ip = 0x1234, .pid = 500, .tid = tid,
				     .time = time, .period = 1000, .misc = PERF_RECORD_MISC_USER };

	assert_int_equal(perfdata_writer__add(w, rec, perfdata_encode_sample(rec, ST_CLOCK, &s)), 0);
}

static void add_marker(struct perfdata_writer *w, uint32_t tid, uint64_t time, uint32_t type,
		       const char *name, int64_t value)
{
	uint8_t raw[128], rec[256];
	struct perfmark_uevent_hdr h = { .version = PERFMARK_UEVENT_VERSION, .type = type };
	size_t n = 0;

	if (type == PERFMARK_TYPE_COUNTER) {
		memcpy(raw + sizeof(h), &value, 8);
		n = 8;
	}
	memcpy(raw + sizeof(h) + n, name, strlen(name) + 1);
	h.size = h.orig_size = (uint32_t)(n + strlen(name) + 1);
	memcpy(raw, &h, sizeof(h));
	struct perfdata_sample s = { .id = ID_UEVENT, .pid = 500, .tid = tid, .time = time,
				     .period = 1, .raw = raw, .raw_size = (uint32_t)sizeof(h) + h.size,
				     .misc = PERF_RECORD_MISC_USER };

	assert_int_equal(perfdata_writer__add(w, rec, perfdata_encode_sample(rec, ST_UEVENT, &s)), 0);
}

/* PERF_RECORD_LOST_SAMPLES: u64 lost, then the sample_id trailer */
static void add_lost(struct perfdata_writer *w, uint64_t time, uint64_t lost)
{
	uint8_t rec[16 + PERFDATA_SAMPLE_ID_SIZE];
	struct perf_event_header h = { .type = 13, .size = sizeof(rec) };
	struct perfdata_sample_id sid = { .pid = 500, .tid = 501, .time = time, .id = ID_CLOCK };

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 8, &lost, 8);
	perfdata_encode_sample_id(rec + 16, &sid);
	assert_int_equal(perfdata_writer__add(w, rec, sizeof(rec)), 0);
}

/*
 * Thread 501: outer [100, 400] holds inner [200, 300]; samples at 150 (outer),
 * 250 (inner), 350 (outer), 450 (none).  Thread 502: a sample at 260 in no
 * range, and "lone" opened at 270 and never closed.  Counter c: 5, -2, 9.
 * 7 samples lost at 480.
 * Within each round the records are written in reverse time order.
 */
static int write_recording(void)
{
	struct perfdata_event ev[2] = { 0 };
	struct perfdata_writer_opts o = { .pipe = true, .clock_ref_mono_ns = 1,
					  .clock_ref_real_ns = 1 };
	struct perfdata_writer *w;
	int fd = memfd_create("analyze", 0);

	assert_true(fd >= 0);
	o.fd = fd;
	ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	ev[0].attr.sample_type = ST_CLOCK;
	ev[0].attr.sample_id_all = 1;
	ev[0].attr.freq = 1;
	ev[0].attr.sample_freq = 1000;
	ev[0].name = "cpu-clock";
	ev[0].ids = clock_ids;
	ev[0].nr_ids = 1;
	ev[1].attr.type = PERF_TYPE_SOFTWARE;
	ev[1].attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	ev[1].attr.sample_type = ST_UEVENT;
	ev[1].attr.sample_id_all = 1;
	ev[1].name = "perfmark:uevent";
	ev[1].ids = uevent_ids;
	ev[1].nr_ids = 1;
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	/* round 1: up to 260 (perf's rule: final once the next round ends) */
	add_sample(w, 502, 260);
	add_sample(w, 501, 250);
	add_marker(w, 501, 200, PERFMARK_TYPE_RANGE_BEGIN, "inner", 0);
	add_sample(w, 501, 150);
	add_marker(w, 501, 120, PERFMARK_TYPE_COUNTER, "c", 5);
	add_marker(w, 501, 100, PERFMARK_TYPE_RANGE_BEGIN, "outer", 0);
	assert_int_equal(perfdata_writer__round(w), 0);
	/* round 2 */
	add_sample(w, 501, 450);
	add_marker(w, 501, 400, PERFMARK_TYPE_RANGE_END, "outer", 0);
	add_sample(w, 501, 350);
	add_marker(w, 501, 310, PERFMARK_TYPE_COUNTER, "c", -2);
	add_marker(w, 501, 300, PERFMARK_TYPE_RANGE_END, "inner", 0);
	add_marker(w, 502, 270, PERFMARK_TYPE_RANGE_BEGIN, "lone", 0);
	assert_int_equal(perfdata_writer__round(w), 0);
	add_marker(w, 502, 500, PERFMARK_TYPE_COUNTER, "c", 9);
	add_lost(w, 480, 7);
	add_marker(w, 501, 460, PERFMARK_TYPE_RANGE_END, "never-begun", 0);
	assert_int_equal(perfdata_writer__finish(w), 0);
	perfdata_writer__free(w);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static const char *range_of(const struct profile *p, const struct profile_sample *s)
{
	size_t n;
	const struct profile_range *rv = profile__ranges(p, &n);

	return s->range == PROFILE_NONE ? "-" : profile__str(p, rv[s->range].name);
}

static void test_profile(void **state)
{
	int fd = write_recording();
	struct profile *p = NULL;
	struct rangestats rs;
	char err[200];
	size_t ns, nr, nc;
	const struct profile_sample *sv;
	const struct profile_range *rv;
	const struct profile_counter *cv;

	(void)state;
	assert_int_equal(profile__load(&p, fd, NULL, err, sizeof(err)), 0);
	close(fd);
	sv = profile__samples(p, &ns);
	assert_int_equal(ns, 5);
	/* time order restored, each sample in the range open on its thread then */
	uint64_t want_t[] = { 150, 250, 260, 350, 450 };
	const char *want_r[] = { "outer", "inner", "-", "outer", "-" };
	for (size_t i = 0; i < ns; i++) {
		assert_int_equal(sv[i].time, want_t[i]);
		assert_string_equal(range_of(p, &sv[i]), want_r[i]);
	}
	rv = profile__ranges(p, &nr);
	assert_int_equal(nr, 3);
	assert_string_equal(profile__str(p, rv[0].name), "outer");
	assert_int_equal(rv[0].end - rv[0].start, 300);
	assert_int_equal(rv[1].parent, 0);
	assert_int_equal(rv[1].depth, 1);
	assert_true(rv[2].open);
	assert_int_equal(rv[2].end, 500);     /* open: to its thread's last time */
	assert_true(profile__range_within(p, sv[1].range, rv[0].name));

	assert_int_equal(rangestats__build(&rs, p), 0);
	assert_int_equal(rs.n, 3);
	assert_string_equal(profile__str(p, rs.v[0].name), "outer");
	assert_int_equal(rs.v[0].count, 1);
	assert_int_equal(rs.v[0].self_samples, 2);
	assert_int_equal(rs.v[0].total_samples, 3);
	assert_int_equal(rs.v[1].total_ns, 100);
	assert_int_equal(rs.v[1].p99_ns, 100);
	assert_int_equal(rs.v[2].open, 1);
	assert_int_equal(rs.v[2].count, 0);
	rangestats__free(&rs);

	cv = profile__counters(p, &nc);
	assert_int_equal(nc, 1);
	assert_int_equal(cv[0].count, 3);
	assert_int_equal(cv[0].min, -2);
	assert_int_equal(cv[0].max, 9);
	assert_int_equal(cv[0].last, 9);
	assert_int_equal(profile__sample_freq(p), 1000);
	assert_int_equal(profile__lost(p), 7);
	profile__free(p);
}

/*
 * Range bookkeeping against the plain model it replaced (issue 18 case 3):
 * random begins, ends (of open names, of names never begun, out of nesting
 * order) and samples on two threads.  The model keeps each thread's open
 * ranges in a list and scans it; profile.c must pair the same way in O(1),
 * and the aggregations must count as a walk up the nesting per sample does.
 */
#define RND_EVENTS 4000

static void test_ranges_random(void **state)
{
	static const char *const names[] = { "a", "b", "c", "d" };
	struct perfdata_event ev[2] = { 0 };
	struct perfdata_writer_opts o = { .pipe = true, .clock_ref_mono_ns = 1,
					  .clock_ref_real_ns = 1 };
	struct perfdata_writer *w;
	/* the model: per thread its open ranges (innermost last), per range its parent */
	uint32_t open[2][RND_EVENTS], nopen[2] = { 0 }, nr = 0, ns = 0;
	uint32_t parent[RND_EVENTS], rname[RND_EVENTS], srange[RND_EVENTS];
	bool closed[RND_EVENTS] = { 0 };
	unsigned seed = 18;
	struct profile *p = NULL;
	struct rangestats rs;
	char err[200];
	size_t n;
	int fd = memfd_create("ranges", 0);

	(void)state;
	assert_true(fd >= 0);
	o.fd = fd;
	ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	ev[0].attr.sample_type = ST_CLOCK;
	ev[0].attr.sample_id_all = 1;
	ev[0].name = "cpu-clock";
	ev[0].ids = clock_ids;
	ev[0].nr_ids = 1;
	ev[1].attr.type = PERF_TYPE_SOFTWARE;
	ev[1].attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	ev[1].attr.sample_type = ST_UEVENT;
	ev[1].attr.sample_id_all = 1;
	ev[1].name = "perfmark:uevent";
	ev[1].ids = uevent_ids;
	ev[1].nr_ids = 1;
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	for (uint64_t t = 1; t <= RND_EVENTS; t++) {
		unsigned what = (unsigned)rand_r(&seed) % 10, th = (unsigned)rand_r(&seed) % 2;
		uint32_t k = (uint32_t)rand_r(&seed) % 4;

		if (what < 4) {
			add_marker(w, 600 + th, t, PERFMARK_TYPE_RANGE_BEGIN, names[k], 0);
			parent[nr] = nopen[th] ? open[th][nopen[th] - 1] : PROFILE_NONE;
			rname[nr] = k;
			open[th][nopen[th]++] = nr++;
		} else if (what < 7) {
			add_marker(w, 600 + th, t, PERFMARK_TYPE_RANGE_END, names[k], 0);
			for (uint32_t i = nopen[th]; i-- > 0;) {
				if (rname[open[th][i]] != k)
					continue;
				closed[open[th][i]] = true;
				memmove(&open[th][i], &open[th][i + 1], (nopen[th] - i - 1) * sizeof(uint32_t));
				nopen[th]--;
				break;
			}
		} else {
			add_sample(w, 600 + th, t);
			srange[ns++] = nopen[th] ? open[th][nopen[th] - 1] : PROFILE_NONE;
		}
	}
	assert_int_equal(perfdata_writer__finish(w), 0);
	perfdata_writer__free(w);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(profile__load(&p, fd, NULL, err, sizeof(err)), 0);
	close(fd);

	const struct profile_range *rv = profile__ranges(p, &n);
	assert_int_equal(n, nr);
	for (uint32_t r = 0; r < nr; r++) {
		assert_string_equal(profile__str(p, rv[r].name), names[rname[r]]);
		assert_int_equal(rv[r].parent, parent[r]);
		assert_int_equal(rv[r].open, !closed[r]);
	}
	const struct profile_sample *sv = profile__samples(p, &n);
	assert_int_equal(n, ns);
	for (uint32_t i = 0; i < ns; i++)
		assert_int_equal(sv[i].range, srange[i]);

	/* totals and --range selections: as a walk up the nesting per sample counts them */
	assert_int_equal(rangestats__build(&rs, p), 0);
	for (size_t k = 0; k < rs.n; k++) {
		struct range_pred_ctx rc;
		uint64_t total = 0;

		assert_int_equal(range_pred__init(&rc, p, rs.v[k].name), 0);
		for (uint32_t i = 0; i < ns; i++) {
			bool in = profile__range_within(p, sv[i].range, rs.v[k].name);

			assert_int_equal(aggregate__in_range(p, &sv[i], &rc), in);
			total += in;
		}
		assert_int_equal(rs.v[k].total_samples, total);
		range_pred__free(&rc);
	}
	rangestats__free(&rs);
	profile__free(p);
}

/*
 * A sample and a range at time 0 (the recording's start is 0, not the first
 * later time), and a range name the recorder cut at PERFMARK_MAX_PAYLOAD
 * bytes, without its NUL: still a range, paired with its end (case 12).
 */
static void test_edges(void **state)
{
	struct perfdata_event ev[2] = { 0 };
	struct perfdata_writer_opts o = { .pipe = true, .clock_ref_mono_ns = 1,
					  .clock_ref_real_ns = 1 };
	struct perfdata_writer *w;
	struct profile *p = NULL;
	static uint8_t raw[sizeof(struct perfmark_uevent_hdr) + PERFMARK_MAX_PAYLOAD];
	uint8_t *rec = malloc(sizeof(raw) + 256);
	struct perfmark_uevent_hdr h = { .version = PERFMARK_UEVENT_VERSION,
		.flags = PERFMARK_UEVENT_F_TRUNCATED, .size = PERFMARK_MAX_PAYLOAD,
		.orig_size = 5000 };
	char err[200];
	size_t n;
	int fd = memfd_create("edges", 0);

	(void)state;
	assert_true(fd >= 0 && rec);
	o.fd = fd;
	ev[0] = (struct perfdata_event){ .name = "cpu-clock", .ids = clock_ids, .nr_ids = 1 };
	ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev[0].attr.sample_type = ST_CLOCK;
	ev[0].attr.sample_id_all = 1;
	ev[1] = (struct perfdata_event){ .name = "perfmark:uevent", .ids = uevent_ids, .nr_ids = 1 };
	ev[1].attr.type = PERF_TYPE_SOFTWARE;
	ev[1].attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	ev[1].attr.sample_type = ST_UEVENT;
	ev[1].attr.sample_id_all = 1;
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	add_sample(w, 501, 0);
	add_marker(w, 501, 0, PERFMARK_TYPE_RANGE_BEGIN, "zero", 0);
	for (int type = PERFMARK_TYPE_RANGE_BEGIN; type <= PERFMARK_TYPE_RANGE_END; type++) {
		struct perfdata_sample s = { .id = ID_UEVENT, .pid = 500, .tid = 501,
					     .time = 1000 + (uint64_t)type, .period = 1,
					     .raw = raw, .raw_size = sizeof(raw),
					     .misc = PERF_RECORD_MISC_USER };

		h.type = (uint32_t)type;
		memcpy(raw, &h, sizeof(h));
		memset(raw + sizeof(h), 'L', PERFMARK_MAX_PAYLOAD);
		assert_int_equal(perfdata_writer__add(w, rec, perfdata_encode_sample(rec, ST_UEVENT, &s)), 0);
		if (type == PERFMARK_TYPE_RANGE_BEGIN)
			add_sample(w, 501, 1002);
	}
	add_marker(w, 501, 2000, PERFMARK_TYPE_RANGE_END, "zero", 0);
	assert_int_equal(perfdata_writer__finish(w), 0);
	perfdata_writer__free(w);
	free(rec);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(profile__load(&p, fd, NULL, err, sizeof(err)), 0);
	close(fd);
	assert_int_equal(profile__start(p), 0);
	assert_int_equal(profile__end(p), 2000);
	const struct profile_range *rv = profile__ranges(p, &n);
	assert_int_equal(n, 2);
	assert_int_equal(rv[0].start, 0);
	assert_false(rv[0].open);
	assert_int_equal(strlen(profile__str(p, rv[1].name)), PERFMARK_MAX_PAYLOAD);
	assert_false(rv[1].open);
	assert_int_equal(rv[1].end - rv[1].start, 1);
	const struct profile_sample *sv = profile__samples(p, &n);
	assert_int_equal(n, 2);
	assert_int_equal(sv[1].range, 1);
	profile__free(p);
}

/*
 * The replay's time order over many rounds whose records reach past the
 * next round's horizon (kept and moved to the front of the reorder's
 * buffer at every round's end): every marker comes out once, in time
 * order, its payload (of varying size) intact.
 */
#define RR_ROUNDS 20
#define RR_PER_ROUND 200

struct rr_seen {
	size_t n;
	uint64_t last;
};

static int rr_marker(void *ctx, const struct perfread_sample *s, const struct replay_marker *rm)
{
	struct rr_seen *seen = ctx;
	uint64_t t;

	assert_int_equal(rm->m.state, MARKER_OK);
	assert_int_equal(rm->m.type, PERFMARK_TYPE_APP_FIRST);
	assert_int_equal(rm->m.len, 8 + s->time % 53);
	memcpy(&t, rm->m.data, 8);
	assert_int_equal(t, s->time);
	for (size_t i = 8; i < rm->m.len; i++)
		assert_int_equal(rm->m.data[i], (uint8_t)(t + i));
	assert_true(s->time >= seen->last);
	seen->last = s->time;
	seen->n++;
	return 0;
}

static void add_app_marker(struct perfdata_writer *w, uint64_t time)
{
	uint8_t raw[sizeof(struct perfmark_uevent_hdr) + 64], rec[256];
	struct perfmark_uevent_hdr h = { .version = PERFMARK_UEVENT_VERSION,
		.type = PERFMARK_TYPE_APP_FIRST, .size = (uint32_t)(8 + time % 53) };
	struct perfdata_sample s = { .id = ID_UEVENT, .pid = 500, .tid = 501, .time = time,
		.period = 1, .raw = raw, .raw_size = (uint32_t)sizeof(h) + h.size,
		.misc = PERF_RECORD_MISC_USER };

	h.orig_size = h.size;
	memcpy(raw, &h, sizeof(h));
	memcpy(raw + sizeof(h), &time, 8);
	for (size_t i = 8; i < h.size; i++)
		raw[sizeof(h) + i] = (uint8_t)(time + i);
	assert_int_equal(perfdata_writer__add(w, rec, perfdata_encode_sample(rec, ST_UEVENT, &s)), 0);
}

static void test_replay_rounds(void **state)
{
	static const struct replay_ops ops = { .marker = rr_marker };
	struct perfdata_event ev[2] = { 0 };
	struct perfdata_writer_opts o = { .pipe = true, .clock_ref_mono_ns = 1,
					  .clock_ref_real_ns = 1 };
	struct perfdata_writer *w;
	struct replay *rp = NULL;
	struct rr_seen seen = { 0 };
	uint64_t t[RR_PER_ROUND];
	unsigned seed = 19;
	int fd = memfd_create("rounds", 0);

	(void)state;
	assert_true(fd >= 0);
	o.fd = fd;
	ev[0] = (struct perfdata_event){ .name = "cpu-clock", .ids = clock_ids, .nr_ids = 1 };
	ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev[0].attr.sample_type = ST_CLOCK;
	ev[0].attr.sample_id_all = 1;
	ev[1] = (struct perfdata_event){ .name = "perfmark:uevent", .ids = uevent_ids, .nr_ids = 1 };
	ev[1].attr.type = PERF_TYPE_SOFTWARE;
	ev[1].attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	ev[1].attr.sample_type = ST_UEVENT;
	ev[1].attr.sample_id_all = 1;
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	/* round k: times 2 (100 k + j) + k % 2, j < 200, shuffled: half of them
	 * past the horizon the next round's end flushes to */
	for (uint64_t k = 0; k < RR_ROUNDS; k++) {
		for (uint64_t j = 0; j < RR_PER_ROUND; j++)
			t[j] = 2 * (100 * k + j) + k % 2;
		for (size_t j = RR_PER_ROUND; j > 1; j--) {
			size_t r = (size_t)rand_r(&seed) % j;
			uint64_t x = t[j - 1];

			t[j - 1] = t[r];
			t[r] = x;
		}
		for (size_t j = 0; j < RR_PER_ROUND; j++)
			add_app_marker(w, t[j]);
		assert_int_equal(perfdata_writer__round(w), 0);
	}
	assert_int_equal(perfdata_writer__finish(w), 0);
	perfdata_writer__free(w);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(replay__open(&rp, fd, NULL), 0);
	assert_int_equal(replay__run(rp, &ops, &seen), 0);
	assert_int_equal(seen.n, RR_ROUNDS * RR_PER_ROUND);
	replay__free(rp);
	close(fd);
}

static void test_bad_input(void **state)
{
	struct profile *p = (void *)1;
	char err[200];
	int fd = memfd_create("bad", 0);

	(void)state;
	assert_int_equal(write(fd, "not a perf file at all", 22), 22);
	lseek(fd, 0, SEEK_SET);
	assert_true(profile__load(&p, fd, NULL, err, sizeof(err)) < 0);
	assert_null(p);
	assert_string_equal(err, "not a perf.data file (bad magic)");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idmap),
		cmocka_unit_test(test_strtab),
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_ranges_random),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_replay_rounds),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

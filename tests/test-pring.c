/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/write/pring.c, the persistent ring: order, eviction,
 * time-sorted reads, the kept sideband and its compaction, taking a ring
 * file over (same meta: kept; other meta or size: moved aside), a writer
 * killed in the middle of a frame (torn frame dropped, the rest kept, and
 * appending goes on), damaged files, and views read by another thread
 * while the writer goes on and laps the ring (every record the view held
 * handed on intact: the writer keeps what it evicts for an open view), the
 * last records an earlier writer left.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "pring.h"
#include "test-util.h"

#define RING (64u << 10)

/* a record: perf header, u64 index, padding up to size */
static size_t mkrec(void *buf, uint64_t idx, size_t size)
{
	struct perf_event_header *h = buf;

	memset(buf, 0xab, size);
	h->type = PERF_RECORD_SAMPLE;
	h->misc = 0;
	h->size = (uint16_t)size;
	memcpy(h + 1, &idx, sizeof(idx));
	return size;
}

static uint64_t rec_idx(const void *rec)
{
	uint64_t idx;

	memcpy(&idx, (const struct perf_event_header *)rec + 1, sizeof(idx));
	return idx;
}

struct seen {
	uint64_t idx[8192], time[8192];
	size_t n;
};

static int collect(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct seen *s = ctx;

	assert_int_equal(((const struct perf_event_header *)rec)->size, len);
	if (s->n < 8192) {
		s->idx[s->n] = rec_idx(rec);
		s->time[s->n++] = time;
	}
	return 0;
}

/* damaged files: payloads may be junk too (the sinks check records) */
static int collect_any(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct seen *s = ctx;

	if (s->n < 8192)
		s->idx[s->n++] = len >= 16 ? rec_idx(rec) : 0;
	return 0;
}

static struct pring *open_anon(uint64_t data, uint64_t sb)
{
	struct pring_opts o = { .data_size = data, .sb_size = sb };
	struct pring *r;

	assert_int_equal(pring__open(&r, &o, NULL), 0);
	return r;
}

static void test_order_and_eviction(void **state)
{
	struct pring *r = open_anon(RING, 4096);
	struct pring_stats st;
	struct seen *s = calloc(1, sizeof(*s));
	char buf[256];
	uint64_t i;

	/* 64 KiB of 24 + 104 byte frames: about 512 fit; 3000 wrap it several times */
	for (i = 0; i < 3000; i++)
		assert_int_equal(pring__append(r, 1000 + i, buf, mkrec(buf, i, 104)), 0);
	pring__stats(r, &st);
	assert_true(st.used <= RING);
	assert_true(st.used > RING - 256);
	assert_int_equal(st.frames + st.evicted, 3000);
	assert_int_equal(pring__foreach(r, false, collect, s), 0);
	assert_int_equal(s->n, st.frames);
	for (i = 0; i < s->n; i++)                   /* the newest, in order */
		assert_int_equal(s->idx[i], 3000 - s->n + i);
	assert_int_equal(pring__oldest(r), 1000 + 3000 - s->n);
	/* odd sizes make pads at the end of each lap */
	for (i = 0; i < 2000; i++)
		assert_int_equal(pring__append(r, 5000 + i, buf, mkrec(buf, i, 8 * (2 + i % 29))), 0);
	s->n = 0;
	pring__foreach(r, false, collect, s);
	for (i = 1; i < s->n; i++)
		assert_int_equal(s->idx[i], s->idx[i - 1] + 1);
	assert_int_equal(s->idx[s->n - 1], 1999);
	assert_int_equal(pring__append(r, 1, buf, 12), -EINVAL);
	pring__free(r);
	free(s);
}

static void test_too_big(void **state)
{
	struct pring *r = open_anon(RING, 4096);
	static char big[RING / 2];

	assert_int_equal(pring__append(r, 1, big, mkrec(big, 1, RING / 4)), -E2BIG);
	assert_int_equal(pring__append(r, 1, big, mkrec(big, 1, RING / 4 - 64)), 0);
	pring__free(r);
}

static void test_sorted(void **state)
{
	struct pring *r = open_anon(RING, 4096);
	struct seen *s = calloc(1, sizeof(*s));
	static const uint64_t times[] = { 50, 10, 40, 30, 30, 20, 60 };
	char buf[64];
	size_t i;

	for (i = 0; i < 7; i++)
		pring__append(r, times[i], buf, mkrec(buf, i, 32));
	pring__sb_append(r, 30, buf, mkrec(buf, 100, 32));   /* sideband at an equal time */
	pring__sb_append(r, 5, buf, mkrec(buf, 101, 32));
	assert_int_equal(pring__sorted(r, 45, collect, s), 0);
	/* 5(sb) 10 20 30(sb) 30(#3) 30(#4) 40 */
	{
		static const uint64_t want[] = { 101, 1, 5, 100, 3, 4, 2 };

		assert_int_equal(s->n, 7);
		for (i = 0; i < 7; i++)
			assert_int_equal(s->idx[i], want[i]);
	}
	pring__free(r);
	free(s);
}

static bool keep_even(void *ctx, uint64_t time, const void *rec, size_t len)
{
	return rec_idx(rec) % 2 == 0;
}

static void test_sideband(void **state)
{
	struct pring *r = open_anon(RING, 4096);
	struct seen *s = calloc(1, sizeof(*s));
	struct pring_stats st;
	char buf[64];
	uint64_t i, n = 0;

	/* a 4 KiB half holds 4096 / 64 frames of 40 bytes + 24 */
	for (i = 0; pring__sb_append(r, i, buf, mkrec(buf, i, 40)) == 0; i++)
		n++;
	assert_int_equal(n, 4096 / 64);
	assert_int_equal(pring__sb_append(r, i, buf, mkrec(buf, i, 40)), -ENOSPC);
	assert_int_equal(pring__sb_compact(r, keep_even, NULL), 0);
	pring__stats(r, &st);
	assert_int_equal(st.sb_used, n / 2 * 64);
	assert_int_equal(pring__sb_append(r, 999, buf, mkrec(buf, 999, 40)), 0);
	pring__foreach(r, true, collect, s);
	assert_int_equal(s->n, n / 2 + 1);
	for (i = 0; i < n / 2; i++)
		assert_int_equal(s->idx[i], 2 * i);
	assert_int_equal(s->idx[n / 2], 999);
	/* a second compaction goes back to the first half */
	pring__sb_compact(r, keep_even, NULL);
	s->n = 0;
	pring__foreach(r, true, collect, s);
	assert_int_equal(s->n, n / 2);
	pring__free(r);
	free(s);
}

/* --- ring files ------------------------------------------------------------ */

static char dir[64];
static int dfd = -1;

static int setup_dir(void **state)
{
	return test_tmpdir(dir, sizeof(dir), "test-pring", &dfd);
}

static int teardown_dir(void **state)
{
	return test_tmpdir_remove(dir, dfd);
}

static int open_file(struct pring **r, const char *meta, struct pring_recovery *rec)
{
	struct pring_opts o = {
		.dir_fd = dfd, .name = "r.ring", .data_size = RING, .sb_size = 4096,
		.meta = meta, .meta_len = meta ? strlen(meta) : 0,
	};

	return pring__open(r, &o, rec);
}

static void test_file_kept(void **state)
{
	struct pring_recovery rec;
	struct seen *s = calloc(1, sizeof(*s));
	struct pring *r, *r2;
	const void *meta;
	size_t len;
	char buf[64];
	uint64_t i;

	pring__unlink(dfd, "r.ring");
	assert_int_equal(open_file(&r, "events-a", &rec), 0);
	assert_false(rec.found);
	for (i = 0; i < 100; i++)
		pring__append(r, i, buf, mkrec(buf, i, 48));
	pring__sb_append(r, 0, buf, mkrec(buf, 7, 32));
	/* a second writer is refused while the first holds it */
	assert_int_equal(open_file(&r2, "events-a", NULL), -EBUSY);
	/* no sync, no close: what a kill -9 leaves */
	pring__free(r);
	assert_int_equal(open_file(&r, "events-a", &rec), 0);
	assert_true(rec.found);
	assert_int_equal(rec.frames, 100);
	assert_int_equal(rec.sb_frames, 1);
	assert_int_equal(rec.torn, 0);
	meta = pring__meta(r, &len);
	assert_int_equal(len, 8);
	assert_memory_equal(meta, "events-a", 8);
	pring__append(r, 100, buf, mkrec(buf, 100, 48));
	pring__foreach(r, false, collect, s);
	assert_int_equal(s->n, 101);
	assert_int_equal(s->idx[100], 100);
	pring__free(r);
	/* opened as it is (no meta): a stopped session's ring */
	assert_int_equal(open_file(&r, NULL, &rec), 0);
	assert_int_equal(rec.frames, 101);
	pring__free(r);
	/* other meta: moved aside, afresh */
	assert_int_equal(open_file(&r, "events-b", &rec), 0);
	assert_true(rec.replaced);
	assert_false(rec.found);
	assert_int_equal(faccessat(dfd, "r.ring.old", F_OK, 0), 0);
	s->n = 0;
	pring__foreach(r, false, collect, s);
	assert_int_equal(s->n, 0);
	pring__free(r);
	assert_int_equal(pring__unlink(dfd, "r.ring"), 0);
	assert_int_equal(faccessat(dfd, "r.ring.old", F_OK, 0), -1);
	assert_int_equal(open_file(&r, NULL, &rec), -ENOENT);
	free(s);
}

/* the last records an earlier writer left, not those appended since */
static void test_recovered_last(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct pring *r;
	char buf[64];
	uint64_t i;

	pring__unlink(dfd, "r.ring");
	assert_int_equal(open_file(&r, "events-a", NULL), 0);
	for (i = 0; i < 100; i++)
		pring__append(r, i, buf, mkrec(buf, i, 48));
	assert_int_equal(pring__recovered_last(r, 10, collect, s), 0);
	assert_int_equal(s->n, 0);      /* a new ring: nothing recovered */
	pring__free(r);                 /* what a kill -9 leaves */
	assert_int_equal(open_file(&r, "events-a", NULL), 0);
	for (i = 100; i < 105; i++)
		pring__append(r, i, buf, mkrec(buf, i, 48));
	assert_int_equal(pring__recovered_last(r, 10, collect, s), 0);
	assert_int_equal(s->n, 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(s->idx[i], 90 + i);
	s->n = 0;
	assert_int_equal(pring__recovered_last(r, 1000, collect, s), 0);
	assert_int_equal(s->n, 100);
	assert_int_equal(s->idx[0], 0);
	assert_int_equal(s->idx[99], 99);
	/* lapped since: only what is still held */
	for (i = 105; i < 1105; i++)
		pring__append(r, i, buf, mkrec(buf, i, 48));
	s->n = 0;
	assert_int_equal(pring__recovered_last(r, 1000, collect, s), 0);
	assert_int_equal(s->n, 0);
	pring__free(r);
	pring__unlink(dfd, "r.ring");
	free(s);
}

/* a child appends records 0.. and is killed in the middle of record `tear` */
static void append_until_killed(uint64_t tear, uint64_t first)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct pring *r;
		char buf[256], n[32];
		uint64_t i;

		snprintf(n, sizeof(n), "%llu", (unsigned long long)tear);
		setenv("PERFMARK_TEST_TEAR_AT", n, 1);
		if (open_file(&r, "events-a", NULL))
			_exit(2);
		for (i = 0; i < 100000; i++)
			pring__append(r, first + i, buf, mkrec(buf, first + i, 200));
		_exit(3);   /* never reached */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
}

static void test_torn(void **state)
{
	struct pring_recovery rec;
	struct seen *s = calloc(1, sizeof(*s));
	struct pring_stats ps;
	struct pring *r;
	char buf[256];
	uint64_t i;

	pring__unlink(dfd, "r.ring");
	/* killed in the 50th frame: 49 kept, the torn one dropped */
	append_until_killed(50, 0);
	assert_int_equal(open_file(&r, "events-a", &rec), 0);
	assert_true(rec.found);
	assert_int_equal(rec.torn, 1);
	assert_int_equal(rec.frames, 49);
	/* appending goes on over the torn frame */
	for (i = 0; i < 10; i++)
		pring__append(r, 1000 + i, buf, mkrec(buf, 1000 + i, 200));
	pring__foreach(r, false, collect, s);
	assert_int_equal(s->n, 59);
	for (i = 0; i < 49; i++)
		assert_int_equal(s->idx[i], i);
	assert_int_equal(s->idx[49], 1000);
	pring__free(r);
	/* killed after the ring wrapped (evictions stored the tail before reuse) */
	append_until_killed(1500, 5000);
	assert_int_equal(open_file(&r, "events-a", &rec), 0);
	assert_int_equal(rec.torn, 1);
	s->n = 0;
	pring__foreach(r, false, collect, s);
	pring__stats(r, &ps);
	assert_true(s->n > 200);
	assert_int_equal(s->idx[s->n - 1], 5000 + 1498);
	for (i = 1; i < s->n; i++)
		assert_int_equal(s->idx[i], s->idx[i - 1] + 1);
	assert_int_equal(ps.torn, 2);   /* both crashes, counted in the file */
	pring__free(r);
	free(s);
}

/* damaged bytes anywhere: recovery keeps what walks, never reads past the file */
static void test_damaged(void **state)
{
	struct pring_recovery rec;
	struct seen *s = calloc(1, sizeof(*s));
	struct pring *r;
	char buf[64];
	uint64_t i;
	int fd, k;

	srand(7);
	for (k = 0; k < 200; k++) {
		pring__unlink(dfd, "r.ring");
		assert_int_equal(open_file(&r, "events-a", NULL), 0);
		for (i = 0; i < 300; i++)
			pring__append(r, i, buf, mkrec(buf, i, 8 * (2 + i % 7)));
		for (i = 0; i < 20; i++)
			pring__sb_append(r, i, buf, mkrec(buf, i, 32));
		pring__free(r);
		fd = openat(dfd, "r.ring", O_RDWR);
		for (i = 0; i < 8; i++) {
			uint64_t junk = (uint64_t)rand() << 32 | (uint64_t)rand();
			off_t at = (off_t)(rand() % (4096 + 2 * 4096 + RING - 8)) & ~7;

			if (k % 4 == 0)
				at = 4096 + 2 * 4096 + at % 4096;   /* near the data's start */
			assert_int_equal(pwrite(fd, &junk, sizeof(junk), at), 8);
		}
		close(fd);
		if (open_file(&r, "events-a", &rec) == 0) {
			s->n = 0;
			pring__sorted(r, UINT64_MAX, collect_any, s);
			for (i = 0; i < 50; i++)
				pring__append(r, 900 + i, buf, mkrec(buf, 900 + i, 48));
			s->n = 0;
			pring__foreach(r, false, collect_any, s);
			assert_true(s->n >= 50);
			assert_int_equal(s->idx[s->n - 1], 949);
			pring__free(r);
		}
	}
	free(s);
}

/* --- views read while the writer goes on ------------------------------------ */

#define SB_IDX (1ull << 48)      /* sideband records' numbers: above any data record's */

/* a record whose every word says which record it is: a torn copy shows */
static size_t mkrec_full(void *buf, uint64_t idx, size_t size)
{
	uint64_t *w = buf;
	size_t i;

	mkrec(buf, idx, size);
	for (i = 2; i < size / 8; i++)
		w[i] = idx * 0x9E3779B97F4A7C15ull ^ i;
	return size;
}

struct vcheck {
	struct pring_view *v;
	uint64_t last_time, data, sb, max_idx;
	int bad;
	/* the first record waits until the writer has lapped the ring */
	bool hold;
	int step;                 /* 1: reader waits for the lap, 2: lap done */
	uint64_t evicted;
	int e;
	bool finished;
};

static int vcheck_cb(void *ctx, uint64_t time, const void *rec, size_t len)
{
	struct vcheck *c = ctx;
	const uint64_t *w = rec;
	uint64_t idx = rec_idx(rec);
	size_t i;

	if (time < c->last_time)
		c->bad++;
	c->last_time = time;
	if (idx >= SB_IDX) {      /* sideband */
		c->sb++;
		return 0;
	}
	for (i = 2; i < len / 8; i++)
		if (w[i] != (idx * 0x9E3779B97F4A7C15ull ^ i))
			c->bad++;
	if (idx > c->max_idx)
		c->bad++;             /* newer than the view */
	c->data++;
	if (c->hold && c->data == 1) {
		__atomic_store_n(&c->step, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&c->step, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
	}
	return 0;
}

static void *vreader(void *arg)
{
	struct vcheck *c = arg;

	c->e = pring_view__sorted(c->v, UINT64_MAX, vcheck_cb, c, &c->evicted);
	__atomic_store_n(&c->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

static void test_view_lapped(void **state)
{
	struct pring *r = open_anon(RING, 4096);
	struct vcheck c = { .hold = true };
	struct pring_stats st;
	pthread_t th;
	char buf[256];
	uint64_t i;

	for (i = 0; i < 400; i++)
		assert_int_equal(pring__append(r, 1000 + i, buf, mkrec_full(buf, i, 104)), 0);
	pring__sb_append(r, 1, buf, mkrec(buf, SB_IDX, 32));
	pring__stats(r, &st);
	c.max_idx = 399;
	assert_int_equal(pring__view(r, &c.v), 0);
	assert_int_equal(pthread_create(&th, NULL, vreader, &c), 0);
	while (__atomic_load_n(&c.step, __ATOMIC_ACQUIRE) != 1)
		sched_yield();
	/* the sideband and the first record are out: now lap the ring twice */
	for (i = 400; i < 1600; i++)
		assert_int_equal(pring__append(r, 1000 + i, buf, mkrec_full(buf, i, 104)), 0);
	pring__sb_compact(r, keep_even, NULL);
	__atomic_store_n(&c.step, 2, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(c.e, 0);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.sb, 1);
	/* every record the view held, though the ring was overwritten twice: kept for it */
	assert_int_equal(c.data, st.frames);
	assert_int_equal(c.evicted, 0);
	pring_view__free(c.v);
	/* closed: the writer keeps nothing more */
	for (i = 1600; i < 2000; i++)
		assert_int_equal(pring__append(r, 1000 + i, buf, mkrec_full(buf, i, 104)), 0);
	pring__free(r);
}

/* a writer that never stops while views are read: nothing torn, nothing missing */
static void test_view_racing(void **state)
{
	struct pring *r = open_anon(RING, 4096);
	char buf[512];
	uint64_t i = 0, lapped = 0;
	int round;

	for (round = 0; round < 200; round++) {
		struct vcheck c = { 0 };
		struct pring_stats st;
		pthread_t th;
		bool done = false;

		pring__stats(r, &st);
		c.max_idx = i ? i - 1 : 0;
		assert_int_equal(pring__view(r, &c.v), 0);
		assert_int_equal(pthread_create(&th, NULL, vreader, &c), 0);
		/* odd sizes: pads at the end of each lap */
		while (!done) {
			for (int k = 0; k < 64; k++, i++)
				pring__append(r, 1000 + i, buf, mkrec_full(buf, i, 8 * (3 + i % 61)));
			done = __atomic_load_n(&c.finished, __ATOMIC_ACQUIRE);
		}
		pthread_join(th, NULL);
		assert_int_equal(c.e, 0);
		assert_int_equal(c.bad, 0);
		assert_int_equal(c.data, st.frames);   /* all of them, intact, whatever the writer did */
		assert_int_equal(c.evicted, 0);
		lapped += pring__oldest(r) > 1000 + c.max_idx;   /* the writer overtook the whole view */
		pring_view__free(c.v);
	}
	/* the race was run: views the writer lapped while they were read */
	print_message("views: %llu of 200 lapped while read, all read whole\n", (unsigned long long)lapped);
	pring__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_eviction),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_sorted),
		cmocka_unit_test(test_sideband),
		cmocka_unit_test(test_file_kept),
		cmocka_unit_test(test_recovered_last),
		cmocka_unit_test(test_torn),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_view_lapped),
		cmocka_unit_test(test_view_racing),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/write/sinks.c, sinkfile.c, readers.c: every sink kind
 * read back with perfread.  A perfdata sink in file and pipe mode; a ring
 * sink's snapshot in time order with its kept sideband, after eviction and
 * compaction, from a ring file a "dead daemon" left; file sinks rotating by
 * size and by time, keeping N files, numbering on after a restart; live
 * readers getting the history up to the moment then the live stream, and a
 * LOST record when their queue overflows.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "perfdata.h"
#include "perfread.h"
#include "sinks.h"
#include "test-events.h"
#include "test-util.h"

#define ST TEST_ST

static const uint64_t ids[] = { 1 };
static struct perfdata_event ev;

static void make_event(void)
{
	test_cpu_clock(&ev, ids);
	ev.attr.comm = ev.attr.task = ev.attr.mmap = ev.attr.mmap2 = 1;
}

struct rec {
	char b[128];
	size_t len;
	uint64_t time;
};

static struct rec sample(uint32_t pid, uint64_t time)
{
	struct perfdata_sample s = { .id = 1, .ip = 0x1000 + time, .pid = pid, .tid = pid,
				     .time = time, .period = 1, .misc = PERF_RECORD_MISC_USER };
	struct rec r = { .time = time };

	r.len = perfdata_encode_sample(r.b, ST, &s);
	return r;
}

/* COMM (or EXIT with exit = true) of pid at time */
static struct rec task(uint32_t pid, uint64_t time, bool exit)
{
	struct perfdata_sample_id sid = { .pid = pid, .tid = pid, .time = time, .id = 1 };
	struct perf_event_header *h;
	struct rec r = { .time = time };

	memset(r.b, 0, sizeof(r.b));
	h = (void *)r.b;
	h->type = exit ? PERF_RECORD_EXIT : PERF_RECORD_COMM;
	r.len = sizeof(*h) + (exit ? 24 : 8 + 16) + PERFDATA_SAMPLE_ID_SIZE;
	h->size = (uint16_t)r.len;
	memcpy(r.b + sizeof(*h), &pid, 4);
	memcpy(r.b + sizeof(*h) + 4, &pid, 4);
	if (!exit)
		snprintf(r.b + sizeof(*h) + 8, 16, "task%u", pid);
	perfdata_set_sample_id(r.b, r.len, &sid);
	return r;
}

/* what a perf.data holds: "S<time>", "C<pid>", "E<pid>", "L<n>" per record */
static char *contents(int fd)
{
	const struct perf_event_header *h;
	struct perfread *rd = NULL;
	size_t cap = 1 << 20, len = 0;
	char *out = calloc(1, cap);
	int r;

	if (perfread__open(&rd, fd))
		fail_msg("perfread: %s", rd ? perfread__error(rd) : "?");
	while ((r = perfread__next(rd, &h)) == 1 && len + 64 < cap) {
		struct perfread_sample s;
		uint32_t pid;
		uint64_t n;

		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			assert_int_equal(perfread__parse_sample(rd, h, &s), 0);
			len += snprintf(out + len, cap - len, "S%llu ", (unsigned long long)s.time);
			break;
		case PERF_RECORD_COMM:
		case PERF_RECORD_EXIT:
			memcpy(&pid, h + 1, 4);
			len += snprintf(out + len, cap - len, "%c%u ",
					h->type == PERF_RECORD_COMM ? 'C' : 'E', pid);
			break;
		case PERF_RECORD_LOST_SAMPLES:
			memcpy(&n, h + 1, 8);
			len += snprintf(out + len, cap - len, "L%llu ", (unsigned long long)n);
			break;
		}
	}
	assert_int_equal(r, 0);
	perfread__free(rd);
	return out;
}

static void put(struct sink *k, struct rec r, bool journal, bool ordered)
{
	if (journal)
		assert_int_equal(sink__journal(k, r.time, r.b, r.len), 0);
	if (ordered)
		assert_int_equal(sink__record(k, r.time, r.b, r.len), 0);
}

static int tmpfd(void)
{
	return memfd_create("test-sinks", MFD_CLOEXEC);
}

static void test_perfdata(void **state)
{
	struct sink_opts o = { .kind = SINK_PERFDATA, .events = &ev, .nr_events = 1 };
	struct sink_stats st;
	struct sink *k;
	int fd, i;
	char *c;

	for (i = 0; i < 2; i++) {
		o.fd = fd = tmpfd();
		o.pipe = i;
		assert_int_equal(sink__new(&k, &o, NULL), 0);
		put(k, task(7, 5, false), true, true);       /* the journal is for rings only */
		put(k, sample(7, 10), false, true);
		put(k, sample(7, 20), false, true);
		assert_int_equal(sink__round(k), 0);
		put(k, sample(7, 30), false, true);
		assert_int_equal(sink__close(k), 0);
		assert_int_equal(sink__record(k, 40, sample(7, 40).b, sample(7, 40).len), -EBADF);
		assert_int_equal(sink__snapshot(k, fd, false, UINT64_MAX), -EOPNOTSUPP);
		sink__stats(k, &st);
		assert_true(st.bytes > 0);
		assert_int_equal(st.records, 4);
		sink__free(k);
		c = contents(fd);
		assert_string_equal(c, "C7 S10 S20 S30 ");
		free(c);
		close(fd);
	}
	/* a record whose size disagrees with its length is refused */
	o.fd = fd = tmpfd();
	o.pipe = false;
	assert_int_equal(sink__new(&k, &o, NULL), 0);
	assert_int_equal(sink__record(k, 1, sample(1, 1).b, 24), -EINVAL);
	sink__free(k);
	close(fd);
}

static struct sink *ring(uint64_t size, int dir_fd, const char *name, struct sink_recovery *rec)
{
	struct sink_opts o = { .kind = SINK_RING, .events = &ev, .nr_events = 1, .ring_size = size,
			       .ring_dir_fd = dir_fd, .ring_name = name };
	struct sink *k;

	assert_int_equal(sink__new(&k, &o, rec), 0);
	return k;
}

static char *snapshot(struct sink *k, uint64_t until)
{
	int fd = tmpfd();
	char *c;

	assert_int_equal(sink__snapshot(k, fd, false, until), 0);
	c = contents(fd);
	close(fd);
	return c;
}

static void test_ring_order(void **state)
{
	struct sink *k = ring(1 << 20, -1, NULL, NULL);
	char *c;

	/* arrival order is not time order: the snapshot sorts, sideband first */
	put(k, sample(7, 30), true, false);
	put(k, task(7, 10, false), true, false);
	put(k, sample(7, 10), true, false);
	put(k, sample(8, 20), true, false);
	put(k, task(8, 15, false), true, false);
	c = snapshot(k, UINT64_MAX);
	assert_string_equal(c, "C7 S10 C8 S20 S30 ");
	free(c);
	c = snapshot(k, 20);                      /* up to a moment */
	assert_string_equal(c, "C7 S10 C8 S20 ");
	free(c);
	sink__free(k);
}

static void test_ring_eviction(void **state)
{
	struct sink *k = ring(64 << 10, -1, NULL, NULL);
	struct sink_stats st;
	uint64_t t;
	char *c;

	put(k, task(7, 1, false), true, false);
	put(k, task(8, 2, false), true, false);
	put(k, task(8, 3, true), true, false);    /* pid 8 exits */
	for (t = 10; t < 10000; t++)
		put(k, sample(7, t), true, false);
	sink__stats(k, &st);
	assert_true(st.evicted > 0);
	assert_int_equal(st.held + st.evicted, 9990);
	c = snapshot(k, UINT64_MAX);
	/* the COMMs stay although the samples of their time are gone */
	assert_int_equal(strncmp(c, "C7 C8 E8 S", 10), 0);
	free(c);
	/* short-lived processes fill the sideband until it compacts: they and
	 * pid 8 exited before the oldest sample held, pid 7 did not */
	for (t = 0; t < 200000; t++) {
		uint64_t before = st.sideband_bytes;

		put(k, task(1000 + t, 5, false), true, false);
		put(k, task(1000 + t, 6, true), true, false);
		sink__stats(k, &st);
		if (st.sideband_bytes < before)
			break;
	}
	assert_true(t < 200000);
	assert_int_equal(st.sideband_dropped, 0);
	c = snapshot(k, UINT64_MAX);
	assert_non_null(strstr(c, "C7 "));
	assert_null(strstr(c, "C8 "));
	free(c);
	sink__free(k);
}

static char dir[64];
static int dfd = -1;

static int setup(void **state)
{
	make_event();
	return test_tmpdir(dir, sizeof(dir), "test-sinks", &dfd);
}

static int teardown(void **state)
{
	return test_tmpdir_remove(dir, dfd);
}

static void test_ring_file(void **state)
{
	struct sink_opts o = { .kind = SINK_RING, .ring_dir_fd = dfd, .ring_name = "s.ring" };
	struct sink_recovery rec;
	const struct perfdata_event *evs;
	struct sink *k;
	char *before, *after;

	sink__remove_ring(dfd, "s.ring");
	k = ring(1 << 20, dfd, "s.ring", &rec);
	assert_false(rec.found);
	put(k, task(7, 1, false), true, false);
	put(k, sample(7, 10), true, false);
	put(k, sample(7, 20), true, false);
	before = snapshot(k, UINT64_MAX);
	sink__free(k);                             /* the daemon goes */
	/* a stopped session's ring: the events come from the file */
	assert_int_equal(sink__new(&k, &o, &rec), 0);
	assert_true(rec.found);
	assert_int_equal(rec.records, 2);
	assert_int_equal(rec.sideband, 1);
	assert_int_equal(sink__events(k, &evs), 1);
	assert_string_equal(evs[0].name, "cpu-clock");
	assert_int_equal(evs[0].attr.sample_type, ST);
	after = snapshot(k, UINT64_MAX);
	assert_string_equal(before, after);
	sink__free(k);
	free(after);
	/* a restarted daemon goes on in it */
	k = ring(1 << 20, dfd, "s.ring", &rec);
	assert_true(rec.found);
	put(k, sample(7, 30), true, false);
	after = snapshot(k, UINT64_MAX);
	assert_string_equal(after, "C7 S10 S20 S30 ");
	sink__free(k);
	free(before);
	free(after);
	/* the kernel clamped the rate this time: same encoding, the ring is kept */
	ev.attr.sample_period = 97;
	k = ring(1 << 20, dfd, "s.ring", &rec);
	assert_true(rec.found);
	assert_false(rec.replaced);
	sink__events(k, &evs);
	assert_int_equal(evs[0].attr.sample_period, 97);
	sink__free(k);
	/* another sample layout: the old ring is set aside, a new one starts */
	ev.attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
	k = ring(1 << 20, dfd, "s.ring", &rec);
	assert_false(rec.found);
	assert_true(rec.replaced);
	assert_int_equal(faccessat(dfd, "s.ring.old", F_OK, 0), 0);
	sink__free(k);
	make_event();
	assert_int_equal(sink__remove_ring(dfd, "s.ring"), 0);
	assert_int_equal(sink__new(&k, &o, NULL), -ENOENT);
}

static int count_files(const char *prefix, int *first)
{
	char name[128];
	int i, n = 0;

	*first = -1;
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "%s-%06d.perf.data", prefix, i);
		if (!faccessat(dfd, name, F_OK, 0)) {
			if (*first < 0)
				*first = i;
			n++;
		}
	}
	return n;
}

static char *file_contents(const char *prefix, int seq)
{
	char name[128];
	int fd;
	char *c;

	snprintf(name, sizeof(name), "%s-%06d.perf.data", prefix, seq);
	fd = openat(dfd, name, O_RDONLY);
	assert_true(fd >= 0);
	c = contents(fd);
	close(fd);
	return c;
}

static struct sink *files(const char *prefix, uint64_t rotate_size, uint64_t rotate_secs,
			  uint32_t keep)
{
	struct sink_opts o = { .kind = SINK_FILE, .events = &ev, .nr_events = 1, .dir_fd = dfd,
			       .prefix = prefix, .rotate_size = rotate_size,
			       .rotate_secs = rotate_secs, .keep = keep, .uid = (uid_t)-1 };
	struct sink *k;

	assert_int_equal(sink__new(&k, &o, NULL), 0);
	return k;
}

static void test_files_size(void **state)
{
	struct sink_stats st;
	struct sink *k = files("sz", 4096, 0, 0);
	uint64_t t;
	int first, n, i;
	char *c;

	put(k, task(7, 1, false), false, true);
	for (t = 10; t < 1000; t++) {
		put(k, sample(7, t), false, true);
		if (t % 50 == 0)
			assert_int_equal(sink__round(k), 0);
	}
	assert_int_equal(sink__close(k), 0);
	sink__stats(k, &st);
	sink__free(k);
	n = count_files("sz", &first);
	assert_true(n >= 5);
	assert_int_equal(st.files, n);
	/* each file complete on its own, naming pid 7 first */
	for (i = first; i < first + n; i++) {
		c = file_contents("sz", i);
		assert_int_equal(strncmp(c, "C7 S", 4), 0);
		free(c);
	}
	/* a restart numbers on, and keep=2 removes the oldest */
	k = files("sz", 0, 0, 2);
	put(k, sample(7, 2000), false, true);
	sink__round(k);
	sink__stats(k, &st);
	assert_int_equal(st.seq, first + n + 1);
	sink__close(k);
	sink__free(k);
	assert_int_equal(count_files("sz", &first), 2);
	c = file_contents("sz", first + 1);
	assert_string_equal(c, "S2000 ");       /* a new sink has no sideband of the old one */
	free(c);
}

static void test_files_time(void **state)
{
	struct sink *k = files("tm", 0, 1, 0);
	int first;
	char *c;

	put(k, task(7, 1, false), false, true);
	put(k, sample(7, 10), false, true);
	sink__round(k);
	put(k, sample(7, 11), false, true);
	sink__round(k);
	assert_int_equal(count_files("tm", &first), 1);
	usleep(1100 * 1000);
	put(k, sample(7, 12), false, true);
	sink__round(k);                             /* a second has passed: rotated */
	c = snapshot(k, UINT64_MAX);                /* the file just closed, not an empty new one */
	assert_string_equal(c, "C7 S10 S11 S12 ");
	free(c);
	assert_int_equal(count_files("tm", &first), 1);
	put(k, sample(7, 13), false, true);
	sink__round(k);
	sink__close(k);
	sink__free(k);
	assert_int_equal(count_files("tm", &first), 2);
	c = file_contents("tm", first);
	assert_string_equal(c, "C7 S10 S11 S12 ");
	free(c);
	c = file_contents("tm", first + 1);
	assert_string_equal(c, "C7 S13 ");
	free(c);
}

/* drain a reader into out (the whole stream so far) and read that back */
static char *reader_stream(struct reader *r, int rfd, int out)
{
	char buf[65536];
	ssize_t n;

	for (;;) {
		int e = reader__flush(r);

		while ((n = read(rfd, buf, sizeof(buf))) > 0)
			assert_int_equal(write(out, buf, (size_t)n), n);
		if (e == 0)
			break;
		assert_int_equal(e, -EAGAIN);
	}
	return contents(out);
}

static void test_readers(void **state)
{
	struct sink_opts o = { .kind = SINK_RING, .events = &ev, .nr_events = 1,
			       .ring_size = 1 << 20, .reader_queue = 512 };
	struct sink_stats st;
	struct reader *r;
	struct sink *k;
	int p[2], out = tmpfd();
	char *c;

	assert_int_equal(sink__new(&k, &o, NULL), 0);
	put(k, task(7, 1, false), true, true);
	put(k, sample(7, 10), true, true);
	put(k, sample(7, 20), true, false);          /* journaled, still in the window */
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	/* attached at moment 15: the history holds up to 15, the window's 20 comes live */
	assert_int_equal(sink__attach(k, p[1], NULL, 15, &r), 0);
	assert_true(reader__pending(r));
	put(k, sample(7, 20), false, true);
	put(k, sample(7, 30), true, true);
	sink__round(k);
	c = reader_stream(r, p[0], out);
	assert_string_equal(c, "C7 S10 S20 S30 ");
	free(c);
	/* a reader that does not read: 512 bytes of queue, the rest counted lost */
	for (int i = 0; i < 40; i++)
		put(k, sample(7, 100 + i), true, true);
	sink__round(k);
	sink__stats(k, &st);
	assert_true(st.reader_lost > 20);
	assert_int_equal(st.readers, 1);
	free(reader_stream(r, p[0], out));
	/* the count goes into the stream before the next record */
	put(k, sample(7, 200), true, true);
	sink__round(k);
	c = reader_stream(r, p[0], out);
	assert_int_equal(strncmp(c, "C7 S10 S20 S30 S100 ", 20), 0);
	assert_non_null(strstr(c, " L"));
	assert_non_null(strstr(c, "S200 "));
	assert_true(strstr(c, " L") < strstr(c, "S200 "));
	free(c);
	sink__detach(k, r);
	sink__stats(k, &st);
	assert_int_equal(st.readers, 0);
	close(p[0]);
	close(out);
	sink__free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfdata),
		cmocka_unit_test(test_ring_order),
		cmocka_unit_test(test_ring_eviction),
		cmocka_unit_test(test_ring_file),
		cmocka_unit_test(test_files_size),
		cmocka_unit_test(test_files_time),
		cmocka_unit_test(test_readers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

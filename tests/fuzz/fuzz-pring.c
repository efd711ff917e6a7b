// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: taking over a ring file a dead daemon left (pring.c,
 * through the ring sink as perfmarkd does).  A real ring file is made once
 * (records, sideband, wrapped, a crash's torn frame); each input is a list
 * of patches over it: { u32 offset, u8 length, bytes }, anywhere in the
 * header, the meta (event description), the sideband halves or the data.
 * Whatever the file holds:
 *   - recovery and a snapshot never crash, and the snapshot is a perf.data
 *     our reader reads to its end;
 *   - with no patch, the snapshot is the original ring's;
 *   - records appended after the recovery are in the next recovery.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "perfdata.h"
#include "perfread.h"
#include "sinks.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define ST_RAW (ST | PERF_SAMPLE_RAW)
#define NAME "fz.ring"

static char dir[64];
static int dfd = -1;
static uint8_t *base;
static size_t base_len;
static uint64_t base_records;

static const uint64_t id_clock = 1, id_printf = 100;

static void events(struct perfdata_event ev[2])
{
	memset(ev, 0, 2 * sizeof(*ev));
	ev[0].attr.size = sizeof(ev[0].attr);
	ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	ev[0].attr.sample_period = 1;
	ev[0].attr.sample_type = ST;
	ev[0].attr.sample_id_all = 1;
	ev[0].attr.comm = ev[0].attr.task = ev[0].attr.mmap2 = 1;
	ev[0].name = "cpu-clock";
	ev[0].ids = &id_clock;
	ev[0].nr_ids = 1;
	ev[1].attr = ev[0].attr;
	ev[1].attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	ev[1].attr.sample_type = ST_RAW;
	ev[1].attr.comm = ev[1].attr.task = ev[1].attr.mmap2 = 0;
	ev[1].name = "perfmark:printf";
	ev[1].ids = &id_printf;
	ev[1].nr_ids = 1;
}

static void put_sample(struct sink *k, uint32_t pid, uint64_t time, bool marker)
{
	char text[40], buf[256];
	struct perfdata_sample s = { .id = marker ? id_printf : id_clock, .ip = 0x400000 + time % 4096,
				     .pid = pid, .tid = pid, .time = time, .period = 1,
				     .misc = PERF_RECORD_MISC_USER };
	size_t len;

	if (marker) {
		snprintf(text, sizeof(text), "seq=%llu", (unsigned long long)time);
		s.raw = text;
		s.raw_size = (uint32_t)strlen(text) + 1;
	}
	len = perfdata_encode_sample(buf, marker ? ST_RAW : ST, &s);
	CHECK(sink__journal(k, time, buf, len) == 0, "journal");
}

static void put_task(struct sink *k, uint32_t pid, uint64_t time, bool exit)
{
	struct perfdata_sample_id sid = { .pid = pid, .tid = pid, .time = time, .id = id_clock };
	char buf[128] = { 0 };
	struct perf_event_header *h = (void *)buf;
	size_t len = sizeof(*h) + (exit ? 24 : 24) + PERFDATA_SAMPLE_ID_SIZE;

	h->type = exit ? PERF_RECORD_EXIT : PERF_RECORD_COMM;
	h->size = (uint16_t)len;
	memcpy(buf + sizeof(*h), &pid, 4);
	memcpy(buf + sizeof(*h) + 4, &pid, 4);
	if (!exit)
		snprintf(buf + sizeof(*h) + 8, 16, "task%u", pid);
	perfdata_set_sample_id(buf, len, &sid);
	CHECK(sink__journal(k, time, buf, len) == 0, "journal");
}

static struct sink *open_ring(bool with_events, struct sink_recovery *rec)
{
	struct perfdata_event ev[2];
	struct sink_opts o = { .kind = SINK_RING, .ring_size = 32 << 10, .ring_sideband = 8 << 10,
			       .ring_dir_fd = dfd, .ring_name = NAME };
	struct sink *k = NULL;

	events(ev);
	if (with_events) {
		o.events = ev;
		o.nr_events = 2;
	}
	return sink__new(&k, &o, rec) ? NULL : k;
}

/* a snapshot, read back: the number of records, and -1 if unreadable */
static long snapshot(struct sink *k, uint64_t want_time, long *found)
{
	const struct perf_event_header *h;
	struct perfread *rd = NULL;
	int fd = memfd_create("fz", MFD_CLOEXEC), r;
	long n = 0;

	CHECK(fd >= 0, "memfd");
	CHECK(sink__snapshot(k, fd, false, UINT64_MAX) == 0, "snapshot failed: %s", strerror(errno));
	CHECK(perfread__open(&rd, fd) == 0, "snapshot unreadable: %s", rd ? perfread__error(rd) : "");
	while ((r = perfread__next(rd, &h)) == 1) {
		struct perfread_sample s;

		n++;
		if (found && h->type == PERF_RECORD_SAMPLE && !perfread__parse_sample(rd, h, &s) &&
		    s.time == want_time)
			(*found)++;
	}
	CHECK(r == 0, "snapshot unreadable at record %ld: %s", n, perfread__error(rd));
	perfread__free(rd);
	close(fd);
	return n;
}

static void make_base(void)
{
	struct sink_recovery rec;
	struct sink *k;
	struct stat sb;
	uint64_t t;
	pid_t pid;
	int fd, st;

	snprintf(dir, sizeof(dir), "/dev/shm/fuzz-pring.%d", (int)getpid());
	CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir");
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sink__remove_ring(dfd, NAME);
	k = open_ring(true, NULL);
	CHECK(k, "cannot make the base ring");
	for (t = 1; t < 1600; t++) {
		if (t % 50 == 1)
			put_task(k, 1000 + (uint32_t)t / 50, t, false);
		if (t % 50 == 40)
			put_task(k, 1000 + (uint32_t)t / 50, t, true);
		put_sample(k, 1000 + (uint32_t)t / 50, 10 * t + (t % 7), t % 3 == 0);
	}
	sink__free(k);
	/* a daemon killed inside its 5th record after a restart: a torn frame */
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		setenv("PERFMARK_TEST_TEAR_AT", "5", 1);
		k = open_ring(true, NULL);
		for (t = 0; k && t < 10; t++)
			put_sample(k, 2000, 20000 + t, true);
		_exit(1);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st), "the tearing child did not die");
	k = open_ring(false, &rec);
	CHECK(k && rec.torn == 1, "no torn frame in the base ring");
	base_records = (uint64_t)snapshot(k, 0, NULL);
	sink__free(k);
	fd = openat(dfd, NAME, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && !fstat(fd, &sb), "base ring");
	base_len = (size_t)sb.st_size;
	base = malloc(base_len);
	CHECK(base && pread(fd, base, base_len, 0) == (ssize_t)base_len, "read base");
	close(fd);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sink_recovery rec;
	struct sink *k;
	size_t off = 0, patches = 0;
	long n, found = 0;
	int fd;

	if (!base) {
		make_base();
		atexit(cleanup);
	}
	fd = openat(dfd, NAME, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && pwrite(fd, base, base_len, 0) == (ssize_t)base_len, "write ring");
	while (off + 5 <= size) {
		uint32_t at;
		size_t len = data[off + 4] % 33;

		memcpy(&at, data + off, 4);
		off += 5;
		if (len > size - off)
			len = size - off;
		at %= (uint32_t)base_len;
		if (len > base_len - at)
			len = base_len - at;
		CHECK(pwrite(fd, data + off, len, at) == (ssize_t)len, "patch");
		off += len;
		patches++;
	}
	close(fd);
	unlinkat(dfd, NAME ".old", 0);
	k = open_ring(false, &rec);           /* a stopped session: the stored events */
	if (k) {
		n = snapshot(k, 0, NULL);
		if (!patches)
			CHECK((uint64_t)n == base_records && rec.found,
			      "unpatched ring: %ld of %llu records", n, (unsigned long long)base_records);
		sink__free(k);
	}
	k = open_ring(true, &rec);            /* a restarted daemon: goes on in it */
	CHECK(k, "a ring that cannot be taken over must be replaced, not refused");
	put_sample(k, 7, 999999, true);
	put_sample(k, 7, 1000000, false);
	snapshot(k, 0, NULL);
	sink__free(k);
	k = open_ring(true, &rec);
	CHECK(k && rec.found, "the ring written after recovery was not found again");
	snapshot(k, 1000000, &found);
	/* >= 1: an input may plant records of that time too */
	CHECK(found >= 1, "the record appended after recovery is gone");
	sink__free(k);
	return 0;
}

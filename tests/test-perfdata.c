/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for daemon/perfdata.c (writer) and daemon/perfread.c (reader):
 * round trips in file mode, pipe mode (through a real pipe) and zstd, byte
 * exact; truncated, empty, random and corrupted input give errors.
 *
 * PERFDATA_KEEP=/path/f keeps files for manual checks with stock perf:
 *   f, f.pipe, f.zst, f.zst.pipe: a cpu-clock event with samples inside
 *   keep_hot_function() of this binary (COMM + MMAP2 of the binary), and a
 *   perfmark:printf event with string payloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "perfdata.h"
#include "perfread.h"

#define ID_CLOCK0 101
#define ID_CLOCK1 102
#define ID_PRINTF 201
#define ST_CLOCK (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
		  PERF_SAMPLE_CALLCHAIN)
#define ST_PRINTF (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)

static const uint64_t clock_ids[] = { ID_CLOCK0, ID_CLOCK1 };
static const uint64_t printf_ids[] = { ID_PRINTF };

/* ---- the events perfmark writes (the settings stock perf 6.1 accepted) -- */

static void make_events(struct perfdata_event ev[2])
{
	struct perf_event_attr *a = &ev[0].attr;

	memset(ev, 0, 2 * sizeof(*ev));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_freq = 4000;
	a->freq = 1;
	a->sample_type = ST_CLOCK;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->exclude_guest = 1;
	ev[0].name = "cpu-clock";
	ev[0].ids = clock_ids;
	ev[0].nr_ids = 2;

	a = &ev[1].attr;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	a->sample_type = ST_PRINTF;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
	a->inherit = 1;
	a->exclude_guest = 1;
	ev[1].name = "perfmark:printf";
	ev[1].ids = printf_ids;
	ev[1].nr_ids = 1;
}

/* ---- a deterministic record stream -------------------------------------- */

static const uint32_t raw_sizes[] = { 0, 1, 7, 8, 9, 4095, 4096 };
#define NR_RAW (sizeof(raw_sizes) / sizeof(raw_sizes[0]))

struct stream {
	uint8_t *buf;           /* expected records, concatenated */
	size_t len, cap;
	size_t nr_records, nr_rounds;
	uint64_t first_time, last_time;
};

static void stream_add(struct stream *st, struct perfdata_writer *w, const void *rec, size_t len)
{
	if (st->len + len > st->cap) {
		st->cap = (st->len + len) * 2;
		st->buf = realloc(st->buf, st->cap);
		assert_non_null(st->buf);
	}
	memcpy(st->buf + st->len, rec, len);
	st->len += len;
	st->nr_records++;
	assert_int_equal(perfdata_writer__add(w, rec, len), 0);
}

static uint8_t payload_byte(size_t i, size_t k)
{
	return (uint8_t)(i * 31 + k * 7 + 1);
}

/* Sample i: even = cpu-clock with a callchain, odd = printf with raw data */
static void sample_def(size_t i, struct perfdata_sample *s, uint64_t *ips, uint8_t *raw)
{
	memset(s, 0, sizeof(*s));
	s->pid = 1000 + (uint32_t)(i % 3);
	s->tid = s->pid + (uint32_t)(i % 2);
	s->time = 1000000 + i * 1000;
	s->cpu = (uint32_t)(i % 2);
	s->misc = PERF_RECORD_MISC_USER;
	if (i % 2 == 0) {
		s->id = (i % 4) ? ID_CLOCK1 : ID_CLOCK0;
		s->ip = 0x400000 + i;
		s->period = 250000;
		s->nr_ips = (uint32_t)(i % 9);
		for (uint32_t k = 0; k < s->nr_ips; k++)
			ips[k] = k == 0 ? PERF_CONTEXT_USER : 0x400000 + i * 16 + k;
		s->ips = ips;
	} else {
		s->id = ID_PRINTF;
		s->period = 1;
		s->raw_size = raw_sizes[(i / 2) % NR_RAW];
		for (size_t k = 0; k < s->raw_size; k++)
			raw[k] = payload_byte(i, k);
		s->raw = raw;
	}
}

static size_t make_comm(uint8_t *p, uint32_t pid, const char *comm, uint64_t time)
{
	size_t clen = (strlen(comm) + 1 + 7) & ~(size_t)7;
	size_t size = 8 + 8 + clen + PERFDATA_SAMPLE_ID_SIZE;
	struct perf_event_header h = { PERF_RECORD_COMM, 0, (uint16_t)size };
	struct perfdata_sample_id sid = { pid, pid, time, 0, ID_CLOCK0 };

	memset(p, 0, size);
	memcpy(p, &h, 8);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, &pid, 4);
	memcpy(p + 16, comm, strlen(comm));
	perfdata_encode_sample_id(p + 16 + clen, &sid);
	return size;
}

static size_t make_mmap2(uint8_t *p, uint32_t pid, uint64_t addr, uint64_t len,
			 uint64_t pgoff, const char *file, uint64_t time)
{
	size_t flen = (strlen(file) + 1 + 7) & ~(size_t)7;
	size_t size = 8 + 64 + flen + PERFDATA_SAMPLE_ID_SIZE;
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, (uint16_t)size };
	struct perfdata_sample_id sid = { pid, pid, time, 0, ID_CLOCK0 };
	uint32_t prot = 5 /* PROT_READ|PROT_EXEC */, flags = 2 /* MAP_PRIVATE */;

	memset(p, 0, size);
	memcpy(p, &h, 8);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, &pid, 4);
	memcpy(p + 16, &addr, 8);
	memcpy(p + 24, &len, 8);
	memcpy(p + 32, &pgoff, 8);
	/* maj, min, ino, ino_generation left 0 */
	memcpy(p + 64, &prot, 4);
	memcpy(p + 68, &flags, 4);
	memcpy(p + 72, file, strlen(file));
	perfdata_encode_sample_id(p + 72 + flen, &sid);
	return size;
}

#define NR_SAMPLES 200
#define ROUND_EVERY 37

/* Write the standard stream with a writer; fills st with the expectation */
static size_t round_every = ROUND_EVERY;

static void write_stream(int fd, bool pipe, int level, struct stream *st)
{
	struct perfdata_event ev[2];
	char *argv[] = { "perfmark", "record", "-g" };
	struct perfdata_writer_opts o = {
		.fd = fd, .pipe = pipe, .zstd_level = level, .argc = 3, .argv = argv,
		.clock_ref_mono_ns = 1000000, .clock_ref_real_ns = 1700000000000000000ull,
	};
	struct perfdata_writer *w;
	static uint8_t rec[65536], raw[4096];
	uint64_t ips[16];
	struct perfdata_stats stats;

	memset(st, 0, sizeof(*st));
	make_events(ev);
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	stream_add(st, w, rec, make_comm(rec, 1000, "worker", 999000));
	stream_add(st, w, rec, make_mmap2(rec, 1000, 0x400000, 0x10000, 0, "/bin/true", 999500));
	for (size_t i = 0; i < NR_SAMPLES; i++) {
		struct perfdata_sample s;
		uint64_t type;
		size_t n;

		sample_def(i, &s, ips, raw);
		type = (i % 2) ? ST_PRINTF : ST_CLOCK;
		n = perfdata_encode_sample(rec, type, &s);
		assert_int_equal(n, perfdata_sample_size(type, &s));
		assert_int_equal(n % 8, 0);
		stream_add(st, w, rec, n);
		if (i % round_every == round_every - 1) {
			assert_int_equal(perfdata_writer__round(w), 0);
			st->nr_rounds++;
		}
	}
	st->first_time = 1000000;
	st->last_time = 1000000 + (NR_SAMPLES - 1) * 1000;
	assert_int_equal(perfdata_writer__finish(w), 0);
	st->nr_rounds++;
	perfdata_writer__stats(w, &stats);
	assert_int_equal(stats.records, st->nr_records);
	assert_int_equal(stats.raw_bytes, st->len + 0);
	perfdata_writer__free(w);
}

/* Read everything back and compare */
static void check_stream(int fd, bool pipe, const struct stream *st)
{
	struct perfread *r;
	const struct perf_event_header *h;
	size_t off = 0, nrec = 0, nround = 0, nsample = 0;
	int ret;

	ret = perfread__open(&r, fd);
	if (ret)
		fail_msg("open: %s", perfread__error(r));
	assert_int_equal(perfread__is_pipe(r), pipe);
	assert_int_equal(perfread__nr_events(r), 2);
	assert_string_equal(perfread__event(r, 0)->name, "cpu-clock");
	assert_string_equal(perfread__event(r, 1)->name, "perfmark:printf");
	assert_int_equal(perfread__event(r, 0)->attr.sample_type, ST_CLOCK);
	assert_int_equal(perfread__event(r, 0)->attr.size, PERFDATA_ATTR_SIZE);
	assert_int_equal(perfread__event(r, 0)->nr_ids, 2);
	assert_int_equal(perfread__event(r, 0)->ids[1], ID_CLOCK1);
	assert_ptr_equal(perfread__event_by_id(r, ID_PRINTF), perfread__event(r, 1));
	assert_null(perfread__event_by_id(r, 7));
	assert_string_equal(perfread__feature_string(r, PERFDATA_FEAT_VERSION),
			    "perfmark " PERFMARK_VERSION);
	assert_string_equal(perfread__feature_string(r, PERFDATA_FEAT_CMDLINE),
			    "perfmark record -g");
	assert_non_null(perfread__feature_string(r, PERFDATA_FEAT_HOSTNAME));
	assert_true(perfread__has_feature(r, PERFDATA_FEAT_CLOCK_DATA));
	assert_int_equal(perfread__has_feature(r, PERFDATA_FEAT_SAMPLE_TIME), !pipe);

	while ((ret = perfread__next(r, &h)) == 1) {
		struct perfread_sample s;
		struct perfdata_sample e;
		uint64_t ips[16];
		uint8_t raw[4096];

		assert_int_equal((uintptr_t)h % 8, 0);
		if (h->type == PERFDATA_RECORD_FINISHED_ROUND) {
			assert_int_equal(h->size, 8);
			nround++;
			continue;
		}
		assert_true(off + h->size <= st->len);
		assert_memory_equal(h, st->buf + off, h->size);
		off += h->size;
		nrec++;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		assert_int_equal(perfread__parse_sample(r, h, &s), 0);
		sample_def(nsample, &e, ips, raw);
		assert_int_equal(s.id, e.id);
		assert_ptr_equal(s.event, perfread__event_by_id(r, e.id));
		assert_int_equal(s.ip, e.ip);
		assert_int_equal(s.pid, e.pid);
		assert_int_equal(s.tid, e.tid);
		assert_int_equal(s.time, e.time);
		assert_int_equal(s.cpu, e.cpu);
		assert_int_equal(s.period, e.period);
		assert_int_equal(s.misc, e.misc);
		assert_int_equal(s.nr_ips, e.nr_ips);
		if (e.nr_ips)
			assert_memory_equal(s.ips, e.ips, e.nr_ips * 8);
		if (nsample % 2) {
			/* raw_size is padded so that u32 + raw is a multiple of 8 */
			assert_int_equal((s.raw_size + 4) % 8, 0);
			assert_true(s.raw_size >= e.raw_size && s.raw_size < e.raw_size + 8);
			if (e.raw_size)
				assert_memory_equal(s.raw, e.raw, e.raw_size);
			for (size_t k = e.raw_size; k < s.raw_size; k++)
				assert_int_equal(((const uint8_t *)s.raw)[k], 0);
		} else {
			assert_int_equal(s.raw_size, 0);
		}
		nsample++;
	}
	if (ret)
		fail_msg("next: %s", perfread__error(r));
	assert_int_equal(off, st->len);
	assert_int_equal(nrec, st->nr_records);
	assert_int_equal(nsample, NR_SAMPLES);
	assert_int_equal(nround, st->nr_rounds);
	perfread__free(r);
}

static int tmpfile_fd(char *path)
{
	int fd;

	strcpy(path, "/tmp/test-perfdata.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

/* fd of a pipe whose writer end is fed the content of src by a child */
static int pipe_from(int src, pid_t *child)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	*child = fork();
	assert_true(*child >= 0);
	if (*child == 0) {
		char b[8192];
		ssize_t n;
		off_t off = 0;

		close(p[0]);
		while ((n = pread(src, b, sizeof(b), off)) > 0) {
			if (write(p[1], b, (size_t)n) != n)
				_exit(1);
			off += n;
		}
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

static void roundtrip(bool pipe, int level)
{
	char path[64];
	struct stream st;
	int fd = tmpfile_fd(path);

	write_stream(fd, pipe, level, &st);
	check_stream(fd, pipe, &st);
	if (pipe) {
		pid_t child;
		int status, pfd = pipe_from(fd, &child);

		check_stream(pfd, true, &st);
		close(pfd);
		assert_int_equal(waitpid(child, &status, 0), child);
	}
	free(st.buf);
	close(fd);
}

static void test_file(void **state) { roundtrip(false, 0); }
static void test_pipe(void **state) { roundtrip(true, 0); }
static void test_file_zstd1(void **state) { roundtrip(false, 1); }
static void test_file_zstd3(void **state) { roundtrip(false, 3); }
static void test_pipe_zstd1(void **state) { roundtrip(true, 1); }
static void test_pipe_zstd3(void **state) { roundtrip(true, 3); }

/* one round of ~450 KiB: several COMPRESSED records per round */
static void test_zstd_biground(void **state)
{
	round_every = 100000;
	roundtrip(false, 1);
	roundtrip(true, 1);
	roundtrip(false, 0);
	round_every = ROUND_EVERY;
}

/* ---- error handling ---------------------------------------------------- */

/* Read a whole buffer as a perf.data file; returns the first error or 0 */
static int read_all_mem(const void *data, size_t len, char *msg, size_t msgsz)
{
	char path[64];
	int fd = tmpfile_fd(path), ret;
	struct perfread *r = NULL;
	const struct perf_event_header *h;

	assert_int_equal(pwrite(fd, data, len, 0), (ssize_t)len);
	ret = perfread__open(&r, fd);
	if (!ret) {
		while ((ret = perfread__next(r, &h)) == 1) {
			struct perfread_sample s;

			if (h->type == PERF_RECORD_SAMPLE)
				perfread__parse_sample(r, h, &s);
		}
	}
	if (msg)
		snprintf(msg, msgsz, "%s", perfread__error(r));
	perfread__free(r);
	close(fd);
	return ret;
}

static uint8_t *file_bytes(bool pipe, int level, size_t *len, struct stream *st)
{
	char path[64];
	int fd = tmpfile_fd(path);
	off_t size;
	uint8_t *b;

	write_stream(fd, pipe, level, st);
	size = lseek(fd, 0, SEEK_END);
	b = malloc((size_t)size);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)size, 0), size);
	close(fd);
	*len = (size_t)size;
	return b;
}

static void test_empty(void **state)
{
	char msg[200];

	assert_int_equal(read_all_mem("", 0, msg, sizeof(msg)), -ENODATA);
	assert_string_equal(msg, "empty file, nothing to read");
	assert_int_equal(read_all_mem("hello world, this is text\n", 26, msg, sizeof(msg)),
			 -EINVAL);
	assert_string_equal(msg, "not a perf.data file (bad magic)");
	assert_true(read_all_mem("PERFILE2", 8, msg, sizeof(msg)) < 0);
	assert_non_null(strstr(msg, "truncated header"));
}

static void test_truncated(void **state)
{
	for (int mode = 0; mode < 4; mode++) {
		bool pipe = mode & 1;
		int level = (mode & 2) ? 1 : 0;
		struct stream st;
		size_t len, step;
		uint8_t *b = file_bytes(pipe, level, &len, &st);
		char msg[200];
		int errors = 0, tries = 0;

		/* the data section ends before the features in file mode */
		step = len / 97 + 1;
		for (size_t cut = 1; cut < len; cut += step) {
			int ret = read_all_mem(b, cut, msg, sizeof(msg));

			tries++;
			if (ret < 0) {
				errors++;
				assert_true(strlen(msg) > 0);
			}
		}
		/* pipe streams have no length: only cuts inside a record fail */
		assert_true(errors > tries / 3);
		/* a cut inside the last record: a precise message */
		if (!level) {
			assert_true(read_all_mem(b, pipe ? len - 3 : 1000, msg, sizeof(msg)) < 0);
			assert_non_null(strstr(msg, "truncated"));
		}
		free(b);
		free(st.buf);
	}
}

/* A file whose recorder died before the first round: data.size == 0 */
static void test_crashed_recorder(void **state)
{
	struct stream st;
	size_t len;
	uint8_t *b = file_bytes(false, 0, &len, &st);
	uint64_t data_off, data_size;
	char msg[200];

	memcpy(&data_off, b + 40, 8);
	memcpy(&data_size, b + 48, 8);
	assert_true(data_size > 0);
	memset(b + 48, 0, 8);                           /* data.size = 0 */
	memset(b + 72, 0, 32);                          /* no features   */
	/* the records up to the end of the data section are still read */
	assert_int_equal(read_all_mem(b, (size_t)(data_off + data_size), msg, sizeof(msg)), 0);
	/* a partial record at the tail ends reading quietly */
	assert_int_equal(read_all_mem(b, (size_t)(data_off + data_size / 2 + 3), msg,
				      sizeof(msg)), 0);
	free(b);
	free(st.buf);
}

static void test_garbage(void **state)
{
	struct stream st;
	size_t len;
	uint8_t *good[4];
	size_t glen[4];
	unsigned seed = 12345;

	for (int m = 0; m < 4; m++)
		good[m] = file_bytes(m & 1, (m & 2) ? 3 : 0, &glen[m], &st), free(st.buf);

	for (int iter = 0; iter < 400; iter++) {
		int m = iter % 4;
		uint8_t *b;
		size_t n;

		if (iter % 8 < 2) {
			/* pure random bytes, sometimes with a valid magic + size */
			n = (size_t)(rand_r(&seed) % 4096);
			b = malloc(n + 16);
			for (size_t k = 0; k < n + 16; k++)
				b[k] = (uint8_t)rand_r(&seed);
			if (iter % 8 == 1) {
				uint64_t sz = (rand_r(&seed) & 1) ? 16 : 104;

				memcpy(b, "PERFILE2", 8);
				memcpy(b + 8, &sz, 8);
			}
			len = n + 16;
		} else {
			/* flip a few bytes of a good file */
			len = glen[m];
			b = malloc(len);
			memcpy(b, good[m], len);
			for (int k = 0; k < 1 + iter % 5; k++)
				b[(size_t)rand_r(&seed) % len] ^= (uint8_t)(1 + rand_r(&seed) % 255);
		}
		read_all_mem(b, len, NULL, 0);     /* must not crash */
		free(b);
	}
	for (int m = 0; m < 4; m++)
		free(good[m]);
}

static void test_corrupt_compressed(void **state)
{
	for (int pipe = 0; pipe < 2; pipe++) {
		struct stream st;
		size_t len, off;
		uint8_t *b = file_bytes(pipe, 1, &len, &st);
		char msg[200];
		uint64_t data_off = 0;
		int found = 0;

		/* find the first COMPRESSED record and smash its payload */
		if (pipe) {
			off = 16;
		} else {
			memcpy(&data_off, b + 40, 8);
			off = (size_t)data_off;
		}
		while (off + 8 <= len) {
			struct perf_event_header h;

			memcpy(&h, b + off, 8);
			if (h.size < 8)
				break;
			if (h.type == PERFDATA_RECORD_COMPRESSED) {
				for (size_t k = off + 8 + 4; k < off + h.size; k++)
					b[k] = 0xa5;
				found = 1;
				break;
			}
			off += h.size;
		}
		assert_true(found);
		assert_true(read_all_mem(b, len, msg, sizeof(msg)) < 0);
		assert_non_null(strstr(msg, "corrupt compressed record at offset"));
		free(b);
		free(st.buf);
	}
}

static void test_write_error_sticky(void **state)
{
	struct perfdata_event ev[2];
	struct perfdata_writer *w;
	struct perfdata_writer_opts o = { .pipe = true };
	int p[2];
	uint8_t rec[64];
	struct perfdata_sample s = { .id = ID_PRINTF, .raw_size = 0 };
	size_t n;

	signal(SIGPIPE, SIG_IGN);
	make_events(ev);
	assert_int_equal(pipe(p), 0);
	o.fd = p[1];
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	close(p[0]);
	n = perfdata_encode_sample(rec, ST_PRINTF, &s);
	assert_int_equal(perfdata_writer__add(w, rec, n), 0);
	assert_int_equal(perfdata_writer__round(w), -EPIPE);
	assert_int_equal(perfdata_writer__add(w, rec, n), -EPIPE);
	assert_int_equal(perfdata_writer__finish(w), -EPIPE);
	perfdata_writer__free(w);
	close(p[1]);
	/* bad arguments */
	o.fd = -1;
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), -EINVAL);
}

static void test_sample_encoding(void **state)
{
	uint8_t buf[256], raw[3] = { 1, 2, 3 };
	uint64_t ips[2] = { PERF_CONTEXT_USER, 0x1234 };
	struct perfdata_sample s = {
		.id = 9, .ip = 0x10, .pid = 3, .tid = 4, .time = 5, .cpu = 6, .period = 7,
		.nr_ips = 2, .ips = ips, .raw_size = 3, .raw = raw, .misc = 2,
	};
	uint64_t type = ST_CLOCK | PERF_SAMPLE_RAW;
	size_t n = perfdata_encode_sample(buf, type, &s);
	static const uint8_t want[] = {
		9, 0, 0, 0, 2, 0, 88, 0,       /* header: SAMPLE, misc 2, size 88 */
		9, 0, 0, 0, 0, 0, 0, 0,        /* IDENTIFIER */
		0x10, 0, 0, 0, 0, 0, 0, 0,     /* IP */
		3, 0, 0, 0, 4, 0, 0, 0,        /* TID */
		5, 0, 0, 0, 0, 0, 0, 0,        /* TIME */
		6, 0, 0, 0, 0, 0, 0, 0,        /* CPU */
		7, 0, 0, 0, 0, 0, 0, 0,        /* PERIOD */
		2, 0, 0, 0, 0, 0, 0, 0,        /* CALLCHAIN nr */
		0x00, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x34, 0x12, 0, 0, 0, 0, 0, 0,
		4, 0, 0, 0, 1, 2, 3, 0,        /* RAW: size 4 (padded), data */
	};
	struct perfdata_sample_id sid = { 1, 2, 3, 4, 5 };
	static const uint8_t want_sid[] = {
		1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
		4, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,
	};

	/* RAW field: u32 + 3 bytes = 7, padded to 8: raw_size written = 4 */
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(buf, want, n);
	assert_int_equal(perfdata_sample_size(type, &s), n);
	perfdata_encode_sample_id(buf, &sid);
	assert_memory_equal(buf, want_sid, sizeof(want_sid));
}

/* ---- PERFDATA_KEEP: files for stock perf --------------------------------- */

__attribute__((noinline)) int keep_hot_function(int x);
__attribute__((noinline)) int keep_hot_function(int x)
{
	volatile int v = x;

	for (int i = 0; i < 100; i++)
		v = v * 3 + i;
	return v;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void keep_one(const char *path, bool pipe, int level, bool finish)
{
	struct perfdata_event ev[2];
	char *argv[] = { "perfmark", "record", "-g", "--", "test-perfdata" };
	struct perfdata_writer_opts o = {
		.pipe = pipe, .zstd_level = level, .argc = 5, .argv = argv,
	};
	struct perfdata_writer *w;
	uint8_t rec[8192];
	char exe[4096], line[4096 + 256];
	uint64_t start = 0, end = 0, pgoff = 0, t;
	uint32_t pid = (uint32_t)getpid();
	FILE *maps;
	ssize_t n;
	int fd;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	maps = fopen("/proc/self/maps", "r");
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long s, e, off;
		char perms[8], file[4096];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, file) == 5 &&
		    !strcmp(file, exe) && perms[2] == 'x') {
			start = s;
			end = e;
			pgoff = off;
		}
	}
	fclose(maps);
	assert_true(start && (uintptr_t)keep_hot_function >= start &&
		    (uintptr_t)keep_hot_function < end);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	o.fd = fd;
	o.clock_ref_mono_ns = now_ns(CLOCK_MONOTONIC);
	o.clock_ref_real_ns = now_ns(CLOCK_REALTIME);
	make_events(ev);
	assert_int_equal(perfdata_writer__new(&w, &o, ev, 2), 0);
	t = now_ns(CLOCK_MONOTONIC);
	assert_int_equal(perfdata_writer__add(w, rec, make_comm(rec, pid, "test-perfdata", t)), 0);
	assert_int_equal(perfdata_writer__add(w, rec, make_mmap2(rec, pid, start, end - start,
								 pgoff, exe, t + 1)), 0);
	for (int i = 0; i < 1000; i++) {
		struct perfdata_sample s = {
			.pid = pid, .tid = pid, .time = t + 1000 + (uint64_t)i * 250000,
			.cpu = (uint32_t)(i % 2), .misc = PERF_RECORD_MISC_USER,
		};
		uint64_t ips[2] = { PERF_CONTEXT_USER, 0 };
		char msg[64];

		if (i % 10 == 9) {
			snprintf(msg, sizeof(msg), "hello from perfmark %d", i);
			s.id = ID_PRINTF;
			s.period = 1;
			s.raw = msg;
			s.raw_size = (uint32_t)strlen(msg) + 1;
			n = (ssize_t)perfdata_encode_sample(rec, ST_PRINTF, &s);
		} else {
			s.id = (i % 2) ? ID_CLOCK1 : ID_CLOCK0;
			s.ip = (uintptr_t)keep_hot_function + (uint64_t)(i % 16);
			ips[1] = s.ip;
			s.ips = ips;
			s.nr_ips = 2;
			s.period = 250000;
			n = (ssize_t)perfdata_encode_sample(rec, ST_CLOCK, &s);
		}
		assert_int_equal(perfdata_writer__add(w, rec, (size_t)n), 0);
		if (i % 100 == 99)
			assert_int_equal(perfdata_writer__round(w), 0);
	}
	/* !finish: what a SIGKILLed recorder leaves (no last round, no features) */
	if (finish)
		assert_int_equal(perfdata_writer__finish(w), 0);
	perfdata_writer__free(w);
	close(fd);
}

static void test_keep(void **state)
{
	const char *path = getenv("PERFDATA_KEEP");
	char p[4096];

	if (!path || !*path)
		skip();
	keep_hot_function(1);
	keep_one(path, false, 0, true);
	snprintf(p, sizeof(p), "%s.pipe", path);
	keep_one(p, true, 0, true);
	snprintf(p, sizeof(p), "%s.zst", path);
	keep_one(p, false, 1, true);
	snprintf(p, sizeof(p), "%s.zst.pipe", path);
	keep_one(p, true, 3, true);
	snprintf(p, sizeof(p), "%s.killed", path);
	keep_one(p, false, 0, false);
	snprintf(p, sizeof(p), "%s.killed.zst", path);
	keep_one(p, false, 1, false);
	/* the unit-test stream: 4 KiB payloads, rounds > one compressed chunk */
	for (int m = 0; m < 4; m++) {
		struct stream st;
		int fd;

		snprintf(p, sizeof(p), "%s.stream%s%s", path, (m & 2) ? ".zst" : "",
			 (m & 1) ? ".pipe" : "");
		fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		round_every = 100000;
		write_stream(fd, m & 1, (m & 2) ? 3 : 0, &st);
		round_every = ROUND_EVERY;
		free(st.buf);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_encoding),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_file_zstd1),
		cmocka_unit_test(test_file_zstd3),
		cmocka_unit_test(test_pipe_zstd1),
		cmocka_unit_test(test_pipe_zstd3),
		cmocka_unit_test(test_zstd_biground),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_crashed_recorder),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_corrupt_compressed),
		cmocka_unit_test(test_write_error_sticky),
		cmocka_unit_test(test_keep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/write/perfdata.c (writer) and lib/write/perfread.c (reader):
 * round trips in file mode, pipe mode (through a real pipe) and zstd, byte
 * exact; truncated, empty, random and corrupted input give errors.
 * What stock perf makes of these files: test-perfdata-perf.c.
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
#include <unistd.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "perfdata-stream.h"
#include "perfdata.h"
#include "perfread.h"

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

/* one round of ~4.5 MiB: written in pieces as it grows, read back whole */
static void test_round_pieces(void **state)
{
	round_every = 100000;
	nr_samples = 10 * NR_SAMPLES;
	roundtrip(false, 0);
	roundtrip(true, 0);
	roundtrip(false, 1);
	roundtrip(true, 3);
	nr_samples = NR_SAMPLES;
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
		cmocka_unit_test(test_round_pieces),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_crashed_recorder),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_corrupt_compressed),
		cmocka_unit_test(test_write_error_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

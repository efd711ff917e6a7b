// SPDX-License-Identifier: LGPL-2.1-or-later
/* The perf.data tests' events and stream: see perfdata-stream.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "perfdata-stream.h"
#include "perfread.h"

static const uint64_t clock_ids[] = { ID_CLOCK0, ID_CLOCK1 };
static const uint64_t printf_ids[] = { ID_PRINTF };

/* ---- the events perfmark writes (the settings stock perf 6.1 accepted) -- */

void make_events(struct perfdata_event ev[2])
{
	struct perf_event_attr *a = &ev[0].attr;

	perfdata_event_init(&ev[0], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, ST_CLOCK,
			    "cpu-clock", clock_ids, 2);
	perfdata_event_init(&ev[1], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, ST_PRINTF,
			    "perfmark:printf", printf_ids, 1);
	for (int i = 0; i < 2; i++) {
		ev[i].attr.disabled = 1;
		ev[i].attr.inherit = 1;
		ev[i].attr.exclude_guest = 1;
	}
	a->sample_freq = 4000;
	a->freq = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	ev[1].attr.sample_period = 1;
}

/* ---- a deterministic record stream -------------------------------------- */

static const uint32_t raw_sizes[] = { 0, 1, 7, 8, 9, 4095, 4096 };
#define NR_RAW (sizeof(raw_sizes) / sizeof(raw_sizes[0]))

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

void sample_def(size_t i, struct perfdata_sample *s, uint64_t *ips, uint8_t *raw)
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

size_t make_comm(uint8_t *p, uint32_t pid, const char *comm, uint64_t time)
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

size_t make_mmap2(uint8_t *p, uint32_t pid, uint64_t addr, uint64_t len,
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

size_t round_every = ROUND_EVERY;
size_t nr_samples = NR_SAMPLES;

void write_stream(int fd, bool pipe, int level, struct stream *st)
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
	for (size_t i = 0; i < nr_samples; i++) {
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
	st->last_time = 1000000 + (nr_samples - 1) * 1000;
	assert_int_equal(perfdata_writer__finish(w), 0);
	st->nr_rounds++;
	perfdata_writer__stats(w, &stats);
	assert_int_equal(stats.records, st->nr_records);
	assert_int_equal(stats.raw_bytes, st->len + 0);
	perfdata_writer__free(w);
}

void check_stream(int fd, bool pipe, const struct stream *st)
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
	assert_int_equal(nsample, nr_samples);
	assert_int_equal(nround, st->nr_rounds);
	perfread__free(r);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ring-bench DIR|- RECORDS RING_MIB: the cost of a ring sink's journal, the
 * path every record a ring session reads takes.  "-": the ring in memory
 * only; DIR: the persistent ring, a file there (lib/write/pring.c).
 * RECORDS records (samples of 8 frames and 40-byte string markers, 3:1)
 * are journaled with their time and handed over in time order, a round
 * every 5000, as a session does; then one snapshot is written.
 * Prints: "ns_per_record snapshot_ms records_held" (bench/bench-ring.sh).
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perfdata.h"
#include "sinks.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const uint64_t ids[] = { 1, 100 };
	uint64_t chain[10] = { PERF_CONTEXT_USER, 0x401000, 0x401100, 0x401200, 0x401300,
			       0x401400, 0x401500, 0x401600, 0x401700 };
	struct perfdata_event ev[2];
	struct sink_opts o = { .kind = SINK_RING };
	struct sink_stats st;
	struct sink *k;
	char smp[512], mrk[256], text[40];
	size_t slen, mlen;
	long n, i;
	double t0, t1, t2;
	int dfd = -1, fd;

	if (argc != 4)
		return 2;
	n = atol(argv[2]);
	memset(ev, 0, sizeof(ev));
	for (i = 0; i < 2; i++) {
		ev[i].attr.size = sizeof(ev[i].attr);
		ev[i].attr.type = PERF_TYPE_SOFTWARE;
		ev[i].attr.config = i ? PERF_COUNT_SW_BPF_OUTPUT : PERF_COUNT_SW_CPU_CLOCK;
		ev[i].attr.sample_period = 1;
		ev[i].attr.sample_type = i ? ST | PERF_SAMPLE_RAW : ST | PERF_SAMPLE_CALLCHAIN;
		ev[i].attr.sample_id_all = 1;
		ev[i].name = i ? "perfmark:printf" : "cpu-clock";
		ev[i].ids = &ids[i];
		ev[i].nr_ids = 1;
	}
	{
		struct perfdata_sample s = { .id = 1, .ip = 0x401000, .pid = 7, .tid = 7, .period = 1,
					     .nr_ips = 9, .ips = chain };
		struct perfdata_sample m = { .id = 100, .ip = 0x500000, .pid = 7, .tid = 7, .period = 1,
					     .raw = text, .raw_size = sizeof(text) };

		memset(text, 'x', sizeof(text) - 1);
		text[sizeof(text) - 1] = '\0';
		slen = perfdata_encode_sample(smp, ST | PERF_SAMPLE_CALLCHAIN, &s);
		mlen = perfdata_encode_sample(mrk, ST | PERF_SAMPLE_RAW, &m);
	}
	o.events = ev;
	o.nr_events = 2;
	o.ring_size = (uint64_t)atol(argv[3]) << 20;
	if (strcmp(argv[1], "-")) {
		dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return perror(argv[1]), 1;
		sink__remove_ring(dfd, "bench.ring");
		o.ring_dir_fd = dfd;
		o.ring_name = "bench.ring";
	}
	if (sink__new(&k, &o, NULL))
		return fprintf(stderr, "ring-bench: cannot make the ring\n"), 1;
	t0 = now();
	for (i = 0; i < n; i++) {
		uint64_t time = 1000000 + (uint64_t)i * 100 - (uint64_t)(i % 7) * 150;
		bool marker = i % 4 == 3;
		char *rec = marker ? mrk : smp;
		size_t len = marker ? mlen : slen;

		memcpy(rec + 8 + 8 + 8 + 8, &time, 8);    /* the TIME field: after header, id, ip, tid */
		sink__journal(k, time, rec, len);
		sink__record(k, time, rec, len);
		if (i % 5000 == 4999)
			sink__round(k);
	}
	sink__round(k);
	t1 = now();
	fd = memfd_create("ring-bench", MFD_CLOEXEC);
	sink__snapshot(k, fd, false, UINT64_MAX);
	t2 = now();
	sink__stats(k, &st);
	printf("%.1f %.1f %llu\n", (t1 - t0) * 1e9 / n, (t2 - t1) * 1e3, (unsigned long long)st.held);
	close(fd);
	sink__free(k);
	if (dfd >= 0) {
		sink__remove_ring(dfd, "bench.ring");
		close(dfd);
	}
	return 0;
}

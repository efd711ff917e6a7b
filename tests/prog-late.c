// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * prog-late FILE [unordered]: a perf.data written through perfmark's reorder
 * window (lib/engine/window.c) and perf.data writer, with records arriving
 * in these drains:  1.0 2.0 | 3.0 | 2.5 (1.5 with "unordered") | 4.0 s.
 * Prints the window's late counts.  tests/t-session-late.sh checks what
 * stock perf makes of the file.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfdata.h"
#include "test-events.h"
#include "window.h"

#define ST TEST_ST
#define SEC 1000000000ull

static struct perfdata_writer *w;
static struct window *ro;

static void arrive(uint64_t time)
{
	struct perfdata_sample s = { .id = 1, .ip = time / 1000000, .pid = 1, .tid = 1,
				     .time = time, .period = 1, .misc = PERF_RECORD_MISC_USER };
	void *rec = window__alloc(ro, (uint32_t)perfdata_sample_size(ST, &s), time);

	perfdata_encode_sample(rec, ST, &s);
}

static int out(void *ctx, uint64_t time, const void *rec, size_t len)
{
	return perfdata_writer__add(w, rec, len);
}

static void drain(uint64_t cutoff)
{
	if (window__flush(ro, cutoff, out, NULL) < 0 || perfdata_writer__round(w))
		perror("drain");
}

int main(int argc, char **argv)
{
	static const uint64_t id = 1;
	struct perfdata_event ev;
	struct perfdata_writer_opts o = { 0 };
	struct window_stats st;

	if (argc < 2)
		return 2;
	test_cpu_clock(&ev, &id);
	o.fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o.fd < 0 || perfdata_writer__new(&w, &o, &ev, 1) || window__new(&ro))
		return 1;
	arrive(1 * SEC);
	arrive(2 * SEC);
	drain(2 * SEC);
	arrive(3 * SEC);
	drain(3 * SEC);
	arrive(argc > 2 ? 3 * SEC / 2 : 5 * SEC / 2);
	drain(3 * SEC + SEC / 10);
	arrive(4 * SEC);
	drain(UINT64_MAX);
	window__stats(ro, &st);
	printf("late=%llu late_unordered=%llu\n", (unsigned long long)st.late,
	       (unsigned long long)st.late_unordered);
	if (perfdata_writer__finish(w))
		return 1;
	perfdata_writer__free(w);
	window__free(ro);
	return close(o.fd) ? 1 : 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * markers-demo: about one second of CPU work in two functions, with every
 * kind of marker around it, so that CPU samples and markers interleave on
 * one timeline:
 *
 *   perfmark record -o /tmp/demo.data -- markers-demo
 *   perf script -i /tmp/demo.data          # samples + perfmark:printf strings
 *   perfmark script -i /tmp/demo.data      # every marker decoded
 *
 * Build:  cc -O2 -fno-omit-frame-pointer markers-demo.c \
 *             $(pkg-config --cflags --libs perfmark)
 * Usage:  markers-demo [SECONDS]   (default 1)
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <perfmark.h>

/* An application-defined marker type: its payload is this struct. */
#define DEMO_TYPE_BATCH (PERFMARK_TYPE_APP_FIRST + 1)

struct demo_batch {
	uint32_t round;
	uint32_t items;
	uint64_t checksum;
};

/* keep the work functions whole, so samples name them plainly */
#if defined(__GNUC__) && !defined(__clang__)
# define WORK_FN __attribute__((noinline, noclone))
#else
# define WORK_FN __attribute__((noinline))
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* integer hashing: stands for "parsing" */
static WORK_FN uint64_t parse_input(uint64_t seed, int n)
{
	uint64_t h = seed;

	for (int i = 0; i < n; i++) {
		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	return h;
}

/* floating point: stands for "rendering" */
static WORK_FN double render_frame(double x, int n)
{
	double acc = 0;

	for (int i = 0; i < n; i++) {
		x = x * 1.0000001 + 0.5;
		if (x > 1e6)
			x /= 3.0;
		acc += x / (i + 1);
	}
	return acc;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double start = now();
	uint64_t checksum = 0;
	double acc = 0;
	uint32_t round = 0;

	if (seconds <= 0)
		seconds = 1.0;
	printf("markers-demo: pid %d, %s, %.1f s of work\n", (int)getpid(),
	       perfmark_enabled() ? "traced" : "not traced", seconds);

	perf_printf("markers-demo start: %.1f s of work", seconds);
	while (now() - start < seconds) {
		struct demo_batch b = { .round = round, .items = 3200000 };

		perfmark_range_begin("parse");
		checksum += parse_input(round, 3200000);
		perfmark_range_end("parse");

		perfmark_range_begin("render");
		acc += render_frame(round, 1600000);
		perfmark_range_end("render");

		b.checksum = checksum;
		perfmark_emit(DEMO_TYPE_BATCH, &b, sizeof(b));
		perfmark_counter("rounds", round);
		if (round % 10 == 0)
			perf_printf("round %" PRIu32 ": checksum %016" PRIx64, round, checksum);
		round++;
	}
	perf_printf("markers-demo done: %" PRIu32 " rounds", round);
	printf("markers-demo: %" PRIu32 " rounds, checksum %016" PRIx64 " (%.3g)\n",
	       round, checksum, acc);
	return 0;
}

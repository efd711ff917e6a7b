/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * markers-bench: marker costs measured inside the process (bench/bench-markers.sh).
 *
 *   markers-bench side N ROUNDS TRACE_MARKER
 *       Run under `perfmark record`.  ROUNDS rounds, alternating, of N calls
 *       each of: perf_printf("bench %ld", i); snprintf of the same string +
 *       write() to the ftrace TRACE_MARKER file; perfmark_emit of 64 bytes;
 *       perfmark_emit of 4096 bytes.  Prints the median ns/call of each and
 *       how many markers were emitted in total.
 *   markers-bench untraced N ROUNDS
 *       Untraced perf_printf and perfmark_emit ns/call (medians), beside an
 *       empty out-of-line function call for scale.
 *   markers-bench rate RATE SECONDS
 *       Emits 16-byte perfmark_emit markers (type BENCH_TYPE_RATE, payload
 *       u64 sequence + u64 time) from this thread, paced at RATE per second
 *       (0: as fast as possible) for SECONDS.  Prints what it emitted and the
 *       rate achieved.
 *
 * Output lines are "key value" pairs for the script to read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfmark.h"

#define BENCH_TYPE_64   (PERFMARK_TYPE_APP_FIRST + 100)
#define BENCH_TYPE_4K   (PERFMARK_TYPE_APP_FIRST + 101)
#define BENCH_TYPE_RATE (PERFMARK_TYPE_APP_FIRST + 102)
#define MAX_ROUNDS 64

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per call of one timed loop: wall clock and this thread's CPU time */
struct cost {
	double wall, cpu;
};

#define TIMED(c, n, body) do { \
	uint64_t w0_ = now_ns(), c0_ = cpu_ns(); \
	body; \
	(c).cpu = (double)(cpu_ns() - c0_) / (n); \
	(c).wall = (double)(now_ns() - w0_) / (n); \
} while (0)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long errors;

static struct cost run_printf(long n, long base)
{
	struct cost c;

	TIMED(c, n, for (long i = base; i < base + n; i++)
		if (perf_printf("bench %ld", i))
			errors++);
	return c;
}

static struct cost run_ftrace(int fd, long n, long base)
{
	char buf[64];
	struct cost c;

	TIMED(c, n, for (long i = base; i < base + n; i++) {
		int len = snprintf(buf, sizeof(buf), "bench %ld", i);

		if (write(fd, buf, (size_t)len) != len)
			errors++;
	});
	return c;
}

static struct cost run_emit(uint32_t type, const void *buf, uint32_t size, long n)
{
	struct cost c;

	TIMED(c, n, for (long i = 0; i < n; i++)
		if (perfmark_emit(type, buf, size))
			errors++);
	return c;
}

/*
 * 4 KiB markers come in bursts that fit the 16 MiB ring, with a pause between
 * them (not timed) so the recorder drains: what is timed is the cost of a
 * marker that is recorded, not of one dropped on a full ring.
 */
#define BURST_4K 1000
static struct cost run_emit4k(const void *buf, long n)
{
	struct timespec pause = { 0, 30 * 1000 * 1000 };
	struct cost c, sum = { 0, 0 };
	long done = 0;

	while (done < n) {
		long k = n - done < BURST_4K ? n - done : BURST_4K;

		nanosleep(&pause, NULL);
		c = run_emit(BENCH_TYPE_4K, buf, PERFMARK_MAX_PAYLOAD, k);
		sum.wall += c.wall * k;
		sum.cpu += c.cpu * k;
		done += k;
	}
	sum.wall /= n;
	sum.cpu /= n;
	return sum;
}

static double minimum(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* median (thread CPU time), its wall-time twin, and the best round */
static void report(const char *name, double *wall, double *cpu, int rounds)
{
	printf("%s_min_ns %.1f\n", name, minimum(cpu, rounds));
	printf("%s_ns %.1f\n", name, median(cpu, rounds));
	printf("%s_wall_ns %.1f\n", name, median(wall, rounds));
}

static int mode_side(long n, int rounds, const char *marker)
{
	static uint8_t big[PERFMARK_MAX_PAYLOAD], small[64];
	double pw[MAX_ROUNDS], pc[MAX_ROUNDS], fw[MAX_ROUNDS], fc[MAX_ROUNDS];
	double ew[MAX_ROUNDS], ec[MAX_ROUNDS], bw[MAX_ROUNDS], bc[MAX_ROUNDS];
	long n4k = n / 40 > 0 ? n / 40 : 1;
	long printfs = 0, emits64 = 0, emits4k = 0;
	struct cost p, f, e, b;
	int fd;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		return 2;
	fd = open(marker, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "markers-bench: %s: %s\n", marker, strerror(errno));
		return 1;
	}
	memset(big, 0x4b, sizeof(big));
	memset(small, 0x40, sizeof(small));
	printf("enabled %d\n", (int)perfmark_enabled());
	/* warm up: the kernel optimises the probe site on its first hits */
	run_printf(1000, -1000);
	run_ftrace(fd, 1000, -1000);
	printfs += 1000;
	for (int r = 0; r < rounds; r++) {
		/* alternate the order so drift hits both alike */
		if (r % 2) {
			f = run_ftrace(fd, n, (long)r * n);
			p = run_printf(n, (long)r * n);
		} else {
			p = run_printf(n, (long)r * n);
			f = run_ftrace(fd, n, (long)r * n);
		}
		printfs += n;
		e = run_emit(BENCH_TYPE_64, small, sizeof(small), n);
		emits64 += n;
		b = run_emit4k(big, n4k);
		emits4k += n4k;
		pw[r] = p.wall; pc[r] = p.cpu; fw[r] = f.wall; fc[r] = f.cpu;
		ew[r] = e.wall; ec[r] = e.cpu; bw[r] = b.wall; bc[r] = b.cpu;
		printf("round %d cpu ns/call: printf %.1f ftrace %.1f emit64 %.1f emit4k %.1f"
		       "  (wall %.1f %.1f %.1f %.1f)\n", r, p.cpu, f.cpu, e.cpu, b.cpu,
		       p.wall, f.wall, e.wall, b.wall);
	}
	close(fd);
	/* the two loops of a round ran back to back: their ratio shares the drift */
	{
		double ratio[MAX_ROUNDS];

		for (int r = 0; r < rounds; r++)
			ratio[r] = pc[r] / fc[r];
		printf("ratio_paired %.2f\n", median(ratio, rounds));
	}
	report("printf", pw, pc, rounds);
	report("ftrace", fw, fc, rounds);
	report("emit64", ew, ec, rounds);
	report("emit4k", bw, bc, rounds);
	printf("emitted_printf %ld\n", printfs);
	printf("emitted_emit64 %ld\n", emits64);
	printf("emitted_emit4k %ld\n", emits4k);
	printf("errors %ld\n", errors);
	return 0;
}

__attribute__((noinline)) int empty_call(const char *fmt, ...)
{
	__asm__ volatile("" ::: "memory");
	return 0;
}

static int mode_untraced(long n, int rounds)
{
	double pp[MAX_ROUNDS], pe[MAX_ROUNDS], ec[MAX_ROUNDS];
	int (*volatile empty)(const char *, ...) = empty_call;
	int (*fn)(const char *, ...) = empty;
	uint64_t v = 0, t0;
	int rc = 0;

	/* thread CPU time: a preempted loop does not count the time it waited */
#define now_ns cpu_ns

	if (rounds < 1 || rounds > MAX_ROUNDS)
		return 2;
	printf("enabled %d\n", (int)perfmark_enabled());
	for (int r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (long i = 0; i < n; i++)
			rc |= perf_printf("bench %ld", i);
		pp[r] = (double)(now_ns() - t0) / n;
		t0 = now_ns();
		for (long i = 0; i < n; i++)
			rc |= perfmark_emit(BENCH_TYPE_64, &v, sizeof(v));
		pe[r] = (double)(now_ns() - t0) / n;
		t0 = now_ns();
		for (long i = 0; i < n; i++)
			rc |= fn("bench %ld", i);
		ec[r] = (double)(now_ns() - t0) / n;
	}
	printf("untraced_printf_min_ns %.2f\n", minimum(pp, rounds));
	printf("untraced_emit_min_ns %.2f\n", minimum(pe, rounds));
	printf("empty_call_min_ns %.2f\n", minimum(ec, rounds));
	printf("untraced_printf_ns %.2f\n", median(pp, rounds));
	printf("untraced_emit_ns %.2f\n", median(pe, rounds));
	printf("empty_call_ns %.2f\n", median(ec, rounds));
	printf("errors %d\n", rc != 0);
	return 0;
#undef now_ns
}

static int mode_rate(double rate, double secs)
{
	uint64_t p[2], t0, end, now, i = 0;
	double step = rate > 0 ? 1e9 / rate : 0;
	long bad = 0;

	uint64_t c0;

	printf("enabled %d\n", (int)perfmark_enabled());
	c0 = cpu_ns();
	t0 = now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	now = t0;
	while (now < end) {
		p[0] = i;
		p[1] = now;
		if (perfmark_emit(BENCH_TYPE_RATE, p, sizeof(p)))
			bad++;
		i++;
		now = now_ns();
		if (step > 0) {
			uint64_t due = t0 + (uint64_t)(i * step);

			while (now < due)
				now = now_ns();
		}
	}
	printf("emitted %" PRIu64 "\n", i);
	printf("achieved_rate %.0f\n", i / ((now - t0) / 1e9));
	/* markers per second of this thread's CPU time: the rate it would reach
	 * with a CPU to itself (pacing spins count as CPU time too) */
	printf("cpu_rate %.0f\n", i / ((cpu_ns() - c0) / 1e9));
	printf("cpu_share %.2f\n", (cpu_ns() - c0) / (double)(now - t0));
	printf("errors %ld\n", bad);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "side"))
		return mode_side(atol(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "untraced"))
		return mode_untraced(atol(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "rate"))
		return mode_rate(atof(argv[2]), atof(argv[3]));
	fprintf(stderr, "usage: markers-bench side N ROUNDS TRACE_MARKER | untraced N ROUNDS | "
		"rate RATE SECONDS\n");
	return 2;
}

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
 *   markers-bench whole N [TRACE_MARKER]
 *       A whole process: from its first instruction, N perf_printf("bench
 *       %ld") (with TRACE_MARKER: snprintf + write() of the same string to
 *       it instead), no pause, then the process's CPU time since it started
 *       (exec, loading, libperfmark's constructor, the first markers'
 *       trap lane, full rings: all of it) per call, and wall time per call
 *       from main().
 *   markers-bench rate RATE SECONDS [THREADS]
 *       Emits 16-byte perfmark_emit markers (type BENCH_TYPE_RATE, payload
 *       u64 sequence + u64 time) from THREADS threads (default 1), together
 *       paced at RATE per second (0: each as fast as it can) for SECONDS.
 *       Prints what they emitted, the rate achieved and their CPU time.
 *
 * Output lines are "key value" pairs for the script to read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
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

enum kind { K_PRINTF, K_FTRACE, K_EMIT64, K_EMIT4K };

static int trace_fd = -1;
static uint8_t small[64], big[PERFMARK_MAX_PAYLOAD];

/* n calls of one kind, numbered from base */
static void calls(enum kind k, long n, long base)
{
	char buf[64];

	for (long i = base; i < base + n; i++) {
		int len;

		switch (k) {
		case K_PRINTF:
			if (perf_printf("bench %ld", i))
				errors++;
			break;
		case K_FTRACE:
			len = snprintf(buf, sizeof(buf), "bench %ld", i);
			if (write(trace_fd, buf, (size_t)len) != len)
				errors++;
			break;
		case K_EMIT64:
			if (perfmark_emit(BENCH_TYPE_64, small, sizeof(small)))
				errors++;
			break;
		case K_EMIT4K:
			if (perfmark_emit(BENCH_TYPE_4K, big, sizeof(big)))
				errors++;
			break;
		}
	}
}

/*
 * Markers come in bursts that fill at most half of a thread's fast-lane
 * ring (1 MiB by default), with a pause between them (not timed) so the
 * recorder drains: what is timed is the cost of a marker that goes down the
 * fast lane, not of one a full ring sends to the trap lane.  How much a
 * thread sustains is measured apart (rate mode).  trace_marker gets the
 * same bursts and pauses.
 */
static struct cost bursts(enum kind k, long n, long base)
{
	static const long burst[] = { [K_PRINTF] = 4096, [K_FTRACE] = 4096,
				      [K_EMIT64] = 4096, [K_EMIT4K] = 100 };
	struct timespec pause = { 0, 5 * 1000 * 1000 };
	struct cost c, sum = { 0, 0 };
	long done = 0;

	while (done < n) {
		long m = n - done < burst[k] ? n - done : burst[k];

		nanosleep(&pause, NULL);
		TIMED(c, m, calls(k, m, base + done));
		sum.wall += c.wall * m;
		sum.cpu += c.cpu * m;
		done += m;
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
	double pw[MAX_ROUNDS], pc[MAX_ROUNDS], fw[MAX_ROUNDS], fc[MAX_ROUNDS];
	double ew[MAX_ROUNDS], ec[MAX_ROUNDS], bw[MAX_ROUNDS], bc[MAX_ROUNDS];
	long n4k = n / 40 > 0 ? n / 40 : 1;
	long printfs = 0, emits64 = 0, emits4k = 0;
	struct cost p, f, e, b;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		return 2;
	trace_fd = open(marker, O_WRONLY | O_CLOEXEC);
	if (trace_fd < 0) {
		fprintf(stderr, "markers-bench: %s: %s\n", marker, strerror(errno));
		return 1;
	}
	memset(big, 0x4b, sizeof(big));
	memset(small, 0x40, sizeof(small));
	printf("enabled %d\n", (int)perfmark_enabled());
	/* warm up: the first markers wait for the recorder to attach */
	calls(K_PRINTF, 1000, -1000);
	calls(K_FTRACE, 1000, -1000);
	printfs += 1000;
	usleep(200 * 1000);
	for (int r = 0; r < rounds; r++) {
		/* alternate the order so drift hits both alike */
		if (r % 2) {
			f = bursts(K_FTRACE, n, (long)r * n);
			p = bursts(K_PRINTF, n, (long)r * n);
		} else {
			p = bursts(K_PRINTF, n, (long)r * n);
			f = bursts(K_FTRACE, n, (long)r * n);
		}
		printfs += n;
		e = bursts(K_EMIT64, n, 0);
		emits64 += n;
		b = bursts(K_EMIT4K, n4k, 0);
		emits4k += n4k;
		pw[r] = p.wall; pc[r] = p.cpu; fw[r] = f.wall; fc[r] = f.cpu;
		ew[r] = e.wall; ec[r] = e.cpu; bw[r] = b.wall; bc[r] = b.cpu;
		printf("round %d cpu ns/call: printf %.1f ftrace %.1f emit64 %.1f emit4k %.1f"
		       "  (wall %.1f %.1f %.1f %.1f)\n", r, p.cpu, f.cpu, e.cpu, b.cpu,
		       p.wall, f.wall, e.wall, b.wall);
	}
	close(trace_fd);
	/* the two loops of a round ran back to back: their ratio shares the drift */
	{
		double ratio[MAX_ROUNDS], r64[MAX_ROUNDS], r4k[MAX_ROUNDS];

		for (int r = 0; r < rounds; r++) {
			ratio[r] = pc[r] / fc[r];
			r64[r] = ec[r] / fc[r];
			r4k[r] = bc[r] / fc[r];
		}
		printf("ratio_paired %.3f\n", median(ratio, rounds));
		printf("ratio64_paired %.3f\n", median(r64, rounds));
		printf("ratio4k_paired %.3f\n", median(r4k, rounds));
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

/* one emitting thread of rate mode */
struct rater {
	pthread_t th;
	double step;             /* ns between markers, 0: unpaced */
	uint64_t t0, end;        /* common start and end (CLOCK_MONOTONIC) */
	uint64_t emitted, last, cpu;
	long bad;
};

static void *rate_thread(void *arg)
{
	struct rater *r = arg;
	uint64_t p[2], now, i = 0, c0 = cpu_ns();

	while ((now = now_ns()) < r->t0)
		;
	while (now < r->end) {
		p[0] = i;
		p[1] = now;
		if (perfmark_emit(BENCH_TYPE_RATE, p, sizeof(p)))
			r->bad++;
		i++;
		now = now_ns();
		if (r->step > 0) {
			uint64_t due = r->t0 + (uint64_t)(i * r->step);

			while (now < due)
				now = now_ns();
		}
	}
	r->emitted = i;
	r->last = now;
	r->cpu = cpu_ns() - c0;
	return NULL;
}

/* THREADS threads, together paced at RATE (0: each as fast as it can) */
static int mode_rate(double rate, double secs, int threads)
{
	struct rater r[64];
	uint64_t total = 0, last = 0, cpu = 0, t0;
	long bad = 0;

	if (threads < 1 || threads > 64)
		return 2;
	printf("enabled %d\n", (int)perfmark_enabled());
	/* the first marker makes the fast lane; give the recorder time to join */
	perfmark_emit(BENCH_TYPE_RATE + 1, NULL, 0);
	usleep(300 * 1000);
	t0 = now_ns() + 20 * 1000 * 1000;
	for (int k = 0; k < threads; k++) {
		r[k] = (struct rater){ .step = rate > 0 ? 1e9 * threads / rate : 0, .t0 = t0,
				       .end = t0 + (uint64_t)(secs * 1e9) };
		if (pthread_create(&r[k].th, NULL, rate_thread, &r[k]))
			return 1;
	}
	for (int k = 0; k < threads; k++) {
		pthread_join(r[k].th, NULL);
		total += r[k].emitted;
		cpu += r[k].cpu;
		bad += r[k].bad;
		if (r[k].last > last)
			last = r[k].last;
	}
	printf("emitted %" PRIu64 "\n", total);
	printf("achieved_rate %.0f\n", total / ((last - t0) / 1e9));
	/* markers per second of the emitting threads' CPU time: the rate they
	 * would reach with CPUs to themselves (pacing spins count too) */
	printf("cpu_rate %.0f\n", total / (cpu / 1e9));
	printf("cpu_share %.2f\n", cpu / (double)(last - t0) / threads);
	printf("thread_cpu_s %.3f\n", cpu / 1e9);
	printf("errors %ld\n", bad);
	return 0;
}

static int mode_whole(long n, const char *marker)
{
	uint64_t w0 = now_ns();
	struct timespec ts;
	double cpu;

	if (marker) {
		trace_fd = open(marker, O_WRONLY | O_CLOEXEC);
		if (trace_fd < 0) {
			fprintf(stderr, "markers-bench: %s: %s\n", marker, strerror(errno));
			return 1;
		}
	}
	calls(marker ? K_FTRACE : K_PRINTF, n, 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	cpu = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
	printf("enabled %d\n", (int)perfmark_enabled());
	printf("whole_ns %.1f\n", cpu / n);
	printf("whole_wall_ns %.1f\n", (double)(now_ns() - w0) / n);
	printf("emitted %ld\n", marker ? 0 : n);
	printf("errors %ld\n", errors);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "side"))
		return mode_side(atol(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "untraced"))
		return mode_untraced(atol(argv[2]), atoi(argv[3]));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "whole"))
		return mode_whole(atol(argv[2]), argc == 4 ? argv[3] : NULL);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "rate"))
		return mode_rate(atof(argv[2]), atof(argv[3]), argc == 5 ? atoi(argv[4]) : 1);
	fprintf(stderr, "usage: markers-bench side N ROUNDS TRACE_MARKER | untraced N ROUNDS | "
		"whole N [TRACE_MARKER] | rate RATE SECONDS [THREADS]\n");
	return 2;
}

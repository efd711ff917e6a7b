/*
 * prog-latency: the workloads of the perfmarkd --http tests (t-http-*.sh).
 *
 *   prog-latency SECONDS    waits (up to 30 s) until a session traces it,
 *                           then for SECONDS runs range "render" { sleep D }
 *                           with D 1-3 ms (94 %) or 8-16 ms (6 %), 1 ms
 *                           apart; prints "p99_ns X count N" of the
 *                           durations it measured itself around the markers
 *   prog-latency --cpu SECONDS  waits the same, then for SECONDS of wall
 *                           time: range "render" { render_scene(): 3 ms of
 *                           this thread's CPU time }, range "update" {
 *                           update_world(): 1 ms }: a 3:1 profile whatever
 *                           the machine's load
 *   prog-latency --names N  waits the same, then counter "names" = N, a few hostile range names
 *                           (quote, backslash, newline, invalid UTF-8), then
 *                           N ranges of distinct names "r-I"; prints "done"
 *
 * Its comm is "pm-latency"; it prints "pid P" first, then waits for a
 * session (and for $PM_GO_FILE to exist, when set).
 */
#include <perfmark.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts))
		;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

#define SPIN_CPU(ns) do { \
	uint64_t end_ = cpu_ns() + (ns), x_ = sink; \
	do { for (int i_ = 0; i_ < 2000; i_++) x_ = x_ * 6364136223846793005ull + 1; } \
	while (cpu_ns() < end_); \
	sink = x_; \
} while (0)

__attribute__((noinline)) void render_scene(void) { SPIN_CPU(3000000); }
__attribute__((noinline)) void update_world(void) { SPIN_CPU(1000000); }

static int cpu(long seconds)
{
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;

	while (now_ns() < end) {
		perfmark_range_begin("render");
		render_scene();
		perfmark_range_end("render");
		perfmark_range_begin("update");
		update_world();
		perfmark_range_end("update");
	}
	return 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The session attaches after we start: wait for it (and, with
 * $PM_GO_FILE, until the test created that file: its sessions are all
 * attached then), a deadline on both.
 */
static void wait_traced(void)
{
	uint64_t until = now_ns() + 30000000000ull;
	const char *go = getenv("PM_GO_FILE");

	while ((!perfmark_enabled() || (go && access(go, F_OK))) && now_ns() < until)
		sleep_ns(10000000);
}

static int names(long n)
{
	static const char *const hostile[] = { "quo\"te", "back\\slash", "new\nline", "bad\xff\xfe utf8" };
	char name[32];

	perfmark_counter("names", n);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		perfmark_range_begin(hostile[i]);
		perfmark_range_end(hostile[i]);
	}
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "r-%ld", i);
		perfmark_range_begin(name);
		perfmark_range_end(name);
	}
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t *d = NULL, end;
	size_t n = 0, cap = 0;

	if (argc < 2)
		return 2;
	prctl(PR_SET_NAME, "pm-latency");
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	wait_traced();
	if (!strcmp(argv[1], "--cpu"))
		return argc > 2 ? cpu(atol(argv[2])) : 2;
	if (!strcmp(argv[1], "--names"))
		return argc > 2 ? names(atol(argv[2])) : 2;
	end = now_ns() + (uint64_t)atol(argv[1]) * 1000000000ull;
	while (now_ns() < end) {
		uint64_t r = next(), want, t0, t1;

		want = r % 100 < 94 ? 1000000 + r / 100 % 2000000 : 8000000 + r / 100 % 8000000;
		t0 = now_ns();
		perfmark_range_begin("render");
		sleep_ns(want);
		perfmark_range_end("render");
		t1 = now_ns();
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			d = realloc(d, cap * sizeof(*d));
			if (!d)
				return 1;
		}
		d[n++] = t1 - t0;
		sleep_ns(1000000);
	}
	if (!n)
		return 1;
	qsort(d, n, sizeof(*d), cmp);
	printf("p99_ns %llu count %zu\n", (unsigned long long)d[(n * 99 + 99) / 100 - 1], n);
	free(d);
	return 0;
}

/* prog-phases: a workload with known marker-range lengths for the report,
 * flame graph and export tests (t-report-*.sh, t-export-*.sh).
 *
 *   prog-phases [FRAMES]   default 20
 *
 * Thread "pm-frames" runs FRAMES times:
 *     range "frame" {
 *         frame_overhead()    spins  4 ms
 *         range "update" { update_world()  spins  8 ms }
 *         range "render" { render_scene()  spins 16 ms }
 *     }
 * Thread "pm-io" runs alongside, FRAMES times:
 *     range "io" { compress_block() spins 12 ms }, then sleeps 12 ms
 * Counter "frames" counts the frames (0 .. FRAMES-1).
 *
 * Each range is timed by the program itself with CLOCK_MONOTONIC right
 * around its begin and end markers, twice: from before the begin call to
 * after the end call returned (T, M), and from after the begin call
 * returned to before the end call (TI, MI).  A marker's time is taken
 * somewhere inside its call, so what a recorder measures lies between the
 * two; they differ by the calls' cost (a few hundred ns), unless a call was
 * slow: a thread's first markers fault in its stack and ring pages, and a
 * thread preempted inside a call (by the other one, by whatever else runs
 * on the machine) waits there for milliseconds.  At the end it prints one
 * line per range name:
 *     range NAME count N total_ns T max_ns M total_in_ns TI max_in_ns MI
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "perfmark.h"

enum { R_FRAME, R_UPDATE, R_RENDER, R_IO, R_NUM };
static const char *const names[R_NUM] = { "frame", "update", "render", "io" };
static uint64_t total[R_NUM], maxd[R_NUM], count[R_NUM], total_in[R_NUM], maxd_in[R_NUM];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;
static int frames = 20;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin in the caller's frame until ms have passed. */
#define SPIN_FOR(ms) do { \
	uint64_t end_ = now_ns() + (uint64_t)((ms) * 1e6), x_ = sink; \
	do { for (int i_ = 0; i_ < 2000; i_++) x_ = x_ * 6364136223846793005ull + 1; } \
	while (now_ns() < end_); \
	sink = x_; \
} while (0)

__attribute__((noinline)) void frame_overhead(void) { SPIN_FOR(4); }
__attribute__((noinline)) void update_world(void) { SPIN_FOR(8); }
__attribute__((noinline)) void render_scene(void) { SPIN_FOR(16); }
__attribute__((noinline)) void compress_block(void) { SPIN_FOR(12); }

/* a range's times: before its begin call, after it returned */
struct span {
	uint64_t out, in;
};

static struct span begin(int r)
{
	struct span t = { .out = now_ns() };

	perfmark_range_begin(names[r]);
	t.in = now_ns();
	return t;
}

static void end(int r, struct span t0)
{
	uint64_t d, d_in = now_ns() - t0.in;

	perfmark_range_end(names[r]);
	d = now_ns() - t0.out;
	pthread_mutex_lock(&lock);
	total[r] += d;
	total_in[r] += d_in;
	count[r]++;
	if (d > maxd[r])
		maxd[r] = d;
	if (d_in > maxd_in[r])
		maxd_in[r] = d_in;
	pthread_mutex_unlock(&lock);
}

static void *io_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "pm-io");
	for (int i = 0; i < frames; i++) {
		struct span t = begin(R_IO);

		compress_block();
		end(R_IO, t);
		usleep(12000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t io;

	if (argc > 1)
		frames = atoi(argv[1]);
	if (frames <= 0)
		frames = 20;
	pthread_setname_np(pthread_self(), "pm-frames");
	if (pthread_create(&io, NULL, io_thread, NULL))
		return 1;
	for (int i = 0; i < frames; i++) {
		struct span tf = begin(R_FRAME), t;

		perfmark_counter("frames", i);
		frame_overhead();
		t = begin(R_UPDATE);
		update_world();
		end(R_UPDATE, t);
		t = begin(R_RENDER);
		render_scene();
		end(R_RENDER, t);
		end(R_FRAME, tf);
	}
	pthread_join(io, NULL);
	for (int r = 0; r < R_NUM; r++)
		printf("range %s count %llu total_ns %llu max_ns %llu total_in_ns %llu max_in_ns %llu\n",
		       names[r], (unsigned long long)count[r], (unsigned long long)total[r],
		       (unsigned long long)maxd[r], (unsigned long long)total_in[r],
		       (unsigned long long)maxd_in[r]);
	return 0;
}

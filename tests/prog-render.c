/* prog-render: a frame loop whose "render" range can be made slower, for
 * `perfmark diff` (t-diff.sh) and pprof's source lines (built with -g).
 *
 *   prog-render [FRAMES] [SLOW]    defaults 40 and 0
 *
 * Thread "pm-render" runs FRAMES times:
 *     range "frame" {
 *         burn_update()             spins  4 ms
 *         range "render" {
 *             burn_render()         spins  8 ms (12 ms every 10th frame: a tail for p99)
 *             burn_shadows()        spins  4 ms + SLOW % of 16 ms
 *             burn_ui()             spins  4 ms
 *         }
 *     }
 * so SLOW=50 makes render 50 % slower (16 -> 24 ms), all of it in
 * burn_shadows.  Each range is timed by the program itself with
 * CLOCK_MONOTONIC right around its begin and end markers; at the end it
 * prints, per range name, its own truth:
 *     "range NAME count N mean_ns M p50_ns P p99_ns Q"
 * (p50, p99: nearest rank, as perfmark report computes them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "perfmark.h"

#define MAX_FRAMES 10000

static volatile uint64_t sink;
static int slow;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin in the caller's frame until us microseconds have passed. */
#define SPIN_FOR_US(us) do { \
	uint64_t end_ = now_ns() + (uint64_t)(us) * 1000u, x_ = sink; \
	do { \
		for (int i_ = 0; i_ < 2000; i_++) \
			x_ = x_ * 6364136223846793005ull + 1; \
	} while (now_ns() < end_); \
	sink = x_; \
} while (0)

__attribute__((noinline)) void burn_update(void)
{
	SPIN_FOR_US(4000);
}

__attribute__((noinline)) void burn_render(int frame)
{
	SPIN_FOR_US(frame % 10 == 9 ? 12000 : 8000);
}

__attribute__((noinline)) void burn_shadows(void)
{
	SPIN_FOR_US(4000 + 160 * slow);
}

__attribute__((noinline)) void burn_ui(void)
{
	SPIN_FOR_US(4000);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void truth(const char *name, uint64_t *d, int n)
{
	uint64_t sum = 0;

	qsort(d, (size_t)n, sizeof(*d), cmp_u64);
	for (int i = 0; i < n; i++)
		sum += d[i];
	printf("range %s count %d mean_ns %llu p50_ns %llu p99_ns %llu\n", name, n,
	       (unsigned long long)(sum / (uint64_t)n), (unsigned long long)d[(n * 50 + 99) / 100 - 1],
	       (unsigned long long)d[(n * 99 + 99) / 100 - 1]);
}

int main(int argc, char **argv)
{
	static uint64_t frame_ns[MAX_FRAMES], render_ns[MAX_FRAMES];
	int frames = argc > 1 ? atoi(argv[1]) : 40;

	slow = argc > 2 ? atoi(argv[2]) : 0;
	if (frames <= 0 || frames > MAX_FRAMES)
		frames = 40;
	if (slow < 0 || slow > 1000)
		slow = 0;
	prctl(PR_SET_NAME, "pm-render");
	for (int i = 0; i < frames; i++) {
		uint64_t tf = now_ns(), tr;

		perfmark_range_begin("frame");
		burn_update();
		tr = now_ns();
		perfmark_range_begin("render");
		burn_render(i);
		burn_shadows();
		burn_ui();
		perfmark_range_end("render");
		render_ns[i] = now_ns() - tr;
		perfmark_range_end("frame");
		frame_ns[i] = now_ns() - tf;
	}
	truth("frame", frame_ns, frames);
	truth("render", render_ns, frames);
	return 0;
}

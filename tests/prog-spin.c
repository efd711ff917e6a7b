/* prog-spin: burns CPU in spin_loop() for SECONDS of its own CPU time
 * (default 30), then exits 0.  Its comm is "prog-spin".  CPU time, not wall
 * time: a sampler sees as many of its samples on a loaded machine as on an
 * idle one (it takes longer).
 *
 *   prog-spin [SECONDS] */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* this thread's CPU time */
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin_loop(double secs)
{
	double end = now() + secs;
	uint64_t x = 1;
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sink = x;
	} while (now() < end);
}

int main(int argc, char **argv)
{
	spin_loop(argc > 1 ? atof(argv[1]) : 30.0);
	return 0;
}

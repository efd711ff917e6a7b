/* prog-spin: burns CPU in spin_loop() for SECONDS of wall time (default 30),
 * then exits 0.  Its comm is "prog-spin".
 *
 *   prog-spin [SECONDS] */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
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

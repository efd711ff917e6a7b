/*
 * prog-emit N TAG [MS [LINGER]]: prints "pid P", then emits N string
 * markers "TAG seq=S" (S = 0..N-1) with perf_printf, MS milliseconds apart
 * (default 0: back to back), stays LINGER more seconds (default 0), and
 * exits.  The workload of the session durability tests (t-session-*.sh).
 */
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, i;
	double ms;

	if (argc < 3)
		return 2;
	n = atol(argv[1]);
	ms = argc > 3 ? atof(argv[3]) : 0;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < n; i++) {
		perf_printf("%s seq=%ld", argv[2], i);
		if (ms > 0) {
			struct timespec ts = { (time_t)(ms / 1000), (long)(ms * 1e6) % 1000000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (argc > 4 && atof(argv[4]) > 0) {
		double l = atof(argv[4]);
		struct timespec ts = { (time_t)l, (long)((l - (double)(time_t)l) * 1e9) };

		nanosleep(&ts, NULL);
	}
	return 0;
}

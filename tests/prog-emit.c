/*
 * prog-emit N TAG [MS]: prints "pid P", then emits N string markers
 * "TAG seq=S" (S = 0..N-1) with perf_printf, MS milliseconds apart (default
 * 0: back to back), and exits.  The workload of the session durability
 * tests (t-session-*.sh).
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
	return 0;
}

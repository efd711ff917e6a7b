/*
 * prog-emit N TAG [MS [LINGER]]: prints "pid P", then emits N string
 * markers "TAG seq=S" (S = 0..N-1) with perf_printf, MS milliseconds apart
 * (default 0: back to back), prints "emitted N", stays LINGER more seconds
 * (default 0), and exits.  The workload of the session durability tests
 * (t-session-*.sh).
 *
 * For tests that act on where the workload is, not on a clock:
 *   PROG_EMIT_EVERY=K  prints "at S" after every K markers (S emitted so far);
 *                      "at 1" after the first comes whatever K
 *   PROG_EMIT_GO=1     waits for a line on stdin before the first marker
 *                      (so a session can be made for its pid first)
 *   PROG_EMIT_DETACH=1 forks at once and the parent exits: the child, given
 *                      to init (or a subreaper), is the one that prints and
 *                      emits (a daemon that detaches from its launcher)
 * SIGUSR1 ends the emission early: "emitted S" says how many were (0..S-1),
 * then it lingers as usual.
 */
#include <perfmark.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_usr1(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *ev = getenv("PROG_EMIT_EVERY");
	long n, i, every = ev ? atol(ev) : 0;
	struct sigaction sa;
	double ms;

	if (argc < 3)
		return 2;
	if (getenv("PROG_EMIT_DETACH")) {
		pid_t child = fork();

		if (child < 0)
			return 2;
		if (child > 0)
			_exit(0);
	}
	n = atol(argv[1]);
	ms = argc > 3 ? atof(argv[3]) : 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (getenv("PROG_EMIT_GO")) {
		char line[16];

		if (!fgets(line, sizeof(line), stdin))
			return 2;
	}
	for (i = 0; i < n && !stop; i++) {
		perf_printf("%s seq=%ld", argv[2], i);
		if (i == 0 || (every > 0 && (i + 1) % every == 0)) {
			printf("at %ld\n", i + 1);
			fflush(stdout);
		}
		if (ms > 0) {
			struct timespec ts = { (time_t)(ms / 1000), (long)(ms * 1e6) % 1000000000L };

			nanosleep(&ts, NULL);
		}
	}
	printf("emitted %ld\n", i);
	fflush(stdout);
	if (argc > 4 && atof(argv[4]) > 0) {
		double l = atof(argv[4]);
		struct timespec ts = { (time_t)l, (long)((l - (double)(time_t)l) * 1e9) };

		nanosleep(&ts, NULL);
	}
	return 0;
}

/* pingpong: two threads pass a byte back and forth over two pipes, the
 * most context switches per second a program makes (bench-offcpu.sh).
 *
 *   pingpong ROUND_TRIPS RESULT_FILE
 *
 * RESULT_FILE gets "WALL_NS SWITCHES CPU_NS": the wall time of the round
 * trips, the context switches both threads made meanwhile (getrusage per
 * thread), and the process's CPU time, user and system (what BPF programs
 * on its switches cost is in the system part).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long trips;
static long switches[2];

static long thread_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

__attribute__((noinline)) static void bounce(int in, int out, int who)
{
	long i, s0 = thread_switches();
	char c = 0;

	for (i = 0; i < trips; i++) {
		if (who == 0 && write(out, &c, 1) != 1)
			exit(2);
		if (read(in, &c, 1) != 1)
			exit(2);
		if (who == 1 && write(out, &c, 1) != 1)
			exit(2);
	}
	switches[who] = thread_switches() - s0;
}

static void *other(void *arg __attribute__((unused)))
{
	bounce(ping[0], pong[1], 1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	pthread_t t;
	FILE *f;

	if (argc != 3 || (trips = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: pingpong ROUND_TRIPS RESULT_FILE\n");
		return 2;
	}
	if (pipe(ping) || pipe(pong))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_create(&t, NULL, other, NULL);
	bounce(pong[0], ping[1], 0);
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	f = fopen(argv[2], "w");
	if (!f)
		return 2;
	fprintf(f, "%lld %ld %lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec),
		switches[0] + switches[1],
		(long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll);
	return fclose(f) ? 2 : 0;
}

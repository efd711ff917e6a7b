/* loop: a fixed amount of CPU work for the recorder benchmarks.
 *
 *   loop [ITERATIONS [RESULT_FILE]]     default 40000000 (~2 s here)
 *
 * Calls a small function chain ITERATIONS times (so -g has a few frames to
 * walk), then writes "WALL_S CPU_S PARENT_CPU_S PARENT_RUNS PARENT_FAULTS" to RESULT_FILE
 * (stdout when absent): the wall time of the work loop alone, this
 * process's own user+sys CPU time (the sampling interrupts it took
 * included: they run in its context), so the caller can subtract it from
 * a recorder's total, and what the parent (the recorder that started it)
 * spent while the loop ran: CPU seconds of all its threads, how many
 * times they were scheduled in (its wakeups), summed over
 * /proc/PPID/task/TID/schedstat, and its minor page faults (/proc/PPID/stat).
 * Start-up and the recorder's last flush are left out of those two. */
#include <dirent.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t x)
{
	for (int i = 0; i < 16; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x ^ (x >> 29);
}

__attribute__((noinline)) static uint64_t middle(uint64_t x)
{
	return leaf(x) + leaf(x + 1);
}

__attribute__((noinline)) static uint64_t outer(uint64_t x)
{
	return middle(x) ^ middle(x >> 1);
}

/* the parent's threads: ns on CPU and times scheduled in, summed; its minor faults */
static void parent_sched(uint64_t *ns, uint64_t *runs, uint64_t *faults)
{
	char path[64], buf[1024], *p;
	struct dirent *d;
	DIR *dir;
	FILE *f;

	*ns = *runs = *faults = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getppid());
	f = fopen(path, "r");
	if (f) {
		/* after "(comm)": state ppid pgrp session tty tpgid flags minflt */
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
			sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %" SCNu64, faults);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)getppid());
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		unsigned long long a, b, c;
		char p[384];
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s/schedstat", path, d->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu %llu %llu", &a, &b, &c) == 3) {
			*ns += a;
			*runs += c;
		}
		fclose(f);
	}
	closedir(dir);
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 40000000;
	FILE *out = stdout;
	struct rusage ru;
	uint64_t x = 1, pns0, pruns0, pf0, pns1, pruns1, pf1;
	double t0, t1;

	parent_sched(&pns0, &pruns0, &pf0);
	t0 = now();
	for (long i = 0; i < iters; i++)
		x = outer(x + (uint64_t)i);
	t1 = now();
	parent_sched(&pns1, &pruns1, &pf1);
	sink = x;
	getrusage(RUSAGE_SELF, &ru);
	if (argc > 2 && !(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fprintf(out, "%.6f %.6f %.6f %llu %llu\n", t1 - t0,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
		(pns1 - pns0) / 1e9, (unsigned long long)(pruns1 - pruns0),
		(unsigned long long)(pf1 - pf0));
	return fclose(out) ? 1 : 0;
}

/* prog-ratio: CPU work split 3:1 between work_a() and work_b(), plus a little
 * time in libc (lib_work) and in the kernel (sys_work), so a profile shows
 * user, shared-library and kernel frames, all reached from main().
 *
 *   prog-ratio [SECONDS]      default 2 (CPU seconds of this thread)
 *
 * Work is split by thread CPU time, not by iteration count, so the 3:1 ratio
 * holds whatever a tracer costs.  Expected profile (self time):
 * work_a ~ 3 x work_b; lib_work/sys_work a few percent each. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The arithmetic loop of work_a and work_b: runs until it used `ns` CPU time.
 * always_inline (which -fno-inline does not stop) copies it into each, so
 * their samples stay in work_a and work_b themselves, not in a shared callee. */
static inline __attribute__((always_inline)) void spin(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = sink | 1;
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sink = x;
	} while (cpu_ns() < end);
}

/* The same loop in both: separate functions, each with its own frame. */
__attribute__((noinline)) void work_a(uint64_t ns)
{
	spin(ns);
}

__attribute__((noinline)) void work_b(uint64_t ns)
{
	spin(ns);
}

/* Time in libc: formatting and parsing floating point numbers. */
__attribute__((noinline)) void lib_work(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;
	char buf[64];
	double d = 0;
	do {
		for (int i = 0; i < 200; i++) {
			snprintf(buf, sizeof(buf), "%.17g", 1.0 / (i + 3) + d);
			d += strtod(buf, NULL) * 1e-9;
		}
	} while (cpu_ns() < end);
	sink += (uint64_t)d;
}

/* Time in the kernel: reads from /dev/zero (clear_user) and getppid(). */
__attribute__((noinline)) void sys_work(uint64_t ns, int fd)
{
	static char buf[65536];
	uint64_t end = cpu_ns() + ns;
	do {
		for (int i = 0; i < 8; i++) {
			if (read(fd, buf, sizeof(buf)) < 0)
				abort();
			sink += (uint64_t)getppid();
		}
	} while (cpu_ns() < end);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	/* one round: a 24 ms, b 8 ms, lib 2 ms, sys 2 ms = 36 ms */
	int rounds = (int)(secs * 1000 / 36);
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("prog-ratio: /dev/zero");
		return 1;
	}
	if (rounds < 1)
		rounds = 1;
	for (int r = 0; r < rounds; r++) {
		work_a(24000000);
		work_b(8000000);
		lib_work(2000000);
		sys_work(2000000, fd);
	}
	close(fd);
	return 0;
}

/* prog-counts: a workload whose counts are known, for perfmark stat's tests.
 *
 *   prog-counts WRITES PAGES SLEEPS SLEEP_US CPU_MS [-]
 *
 * With "-" it first waits for a byte on stdin (so a counter can be attached
 * to it before it starts).  Then, spread over SLEEPS sleeps of SLEEP_US each
 * (each one a context switch), exactly WRITES write(2)s of one byte to
 * /dev/null; it touches PAGES fresh anonymous pages (one page fault each: no
 * huge pages) and spins until it has used CPU_MS of CPU time since main()
 * began, so its task-clock is CPU_MS and a little (its exec) whatever the
 * machine's load.  It writes
 * nothing else and exits 0.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long writes, pages, sleeps, sleep_us, spin, i, done = 0;
	struct timespec nap;
	char *mem;
	double start = cpu_ms();
	int fd;

	if (argc < 6)
		return 2;
	writes = atol(argv[1]);
	pages = atol(argv[2]);
	sleeps = atol(argv[3]);
	sleep_us = atol(argv[4]);
	spin = atol(argv[5]);
	if (argc > 6 && !strcmp(argv[6], "-")) {
		char b;

		if (read(0, &b, 1) != 1)
			return 3;
	}
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return 4;
	nap.tv_sec = sleep_us / 1000000;
	nap.tv_nsec = (sleep_us % 1000000) * 1000;
	for (i = 0; i < sleeps; i++) {
		long upto = writes * (i + 1) / sleeps;

		nanosleep(&nap, NULL);
		for (; done < upto; done++)
			if (write(fd, "x", 1) != 1)
				return 5;
	}
	for (; done < writes; done++)
		if (write(fd, "x", 1) != 1)
			return 5;
	if (pages > 0) {
		size_t len = (size_t)pages * 4096;

		mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return 6;
		madvise(mem, len, MADV_NOHUGEPAGE);
		for (i = 0; i < pages; i++)
			((volatile char *)mem)[i * 4096] = 1;
	}
	while (cpu_ms() - start < spin)
		;
	return 0;
}

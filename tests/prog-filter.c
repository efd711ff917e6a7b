/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The filters' workload (t-report-filters.sh): run it twice under two
 * names, and a recording has two commands and three files of user code:
 *
 *   prog-filter NAME SECONDS MAIN LIB LIBC
 *
 * names its thread NAME (prctl), prints "pid NAME PID", then for SECONDS
 * of its own CPU time does rounds of work in three files in the shares
 * MAIN : LIB : LIBC: main_work() here, pmf_lib_work() in
 * libprog-filter-lib.so (after calls to pmf_step() through this program's
 * PLT), memset() and memcpy() in libc.  Built with frame pointers, so -g
 * has its stacks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define UNIT 20000      /* steps of a unit of LIB; MAIN takes ten times as many, LIBC half */

void pmf_lib_work(uint64_t n);
uint64_t pmf_step(uint64_t x);

static volatile uint64_t sink;
static char buf_a[1 << 16], buf_b[1 << 16];

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static NOINLINE void main_work(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	sink = x;
}

static NOINLINE void lib_calls(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n / 16; i++)
		x = pmf_step(x);
	sink = x;
	pmf_lib_work(n);
}

static NOINLINE void libc_work(uint64_t n)
{
	for (uint64_t i = 0; i < n / 256; i++) {
		memset(buf_a, (int)i, sizeof(buf_a));
		memcpy(buf_b, buf_a, sizeof(buf_b));
	}
	sink += (uint64_t)buf_b[n % sizeof(buf_b)];
}

int main(int argc, char **argv)
{
	double end;
	uint64_t main_n, lib_n, libc_n;

	if (argc != 6) {
		fprintf(stderr, "usage: prog-filter NAME SECONDS MAIN LIB LIBC\n");
		return 2;
	}
	prctl(PR_SET_NAME, argv[1]);
	main_n = strtoull(argv[3], NULL, 10) * UNIT * 10;
	lib_n = strtoull(argv[4], NULL, 10) * UNIT;
	libc_n = strtoull(argv[5], NULL, 10) * UNIT / 2;
	printf("pid %s %d\n", argv[1], (int)getpid());
	fflush(stdout);
	end = cpu_now() + atof(argv[2]);
	while (cpu_now() < end) {
		main_work(main_n);
		lib_calls(lib_n);
		libc_work(libc_n);
	}
	return 0;
}

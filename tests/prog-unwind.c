/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workloads for the unwinding tests (t-unwind-*.sh), built with
 * -O2 -fomit-frame-pointer: without frame pointers, like Debian's binaries.
 *
 * SECONDS are of the program's own CPU time, so a busy machine changes how
 * long a run takes, not how many samples it gets.
 *
 *   prog-unwind tree SECONDS        a known call tree six deep; prints each
 *                                   function's own CPU time ("self NAME NS")
 *   prog-unwind dlopen LIB SECONDS  after 0.5 s, dlopen LIB and spin in it
 *   prog-unwind recurse DEPTH SECONDS   spin DEPTH calls deep
 *   prog-unwind jit SECONDS         spin in generated code (no file, no CFI,
 *                                   a frame-pointer prologue as JITs keep)
 *
 * Every call is followed by work so that no call becomes a jump and every
 * frame stays on the stack.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prog-unwind.h"

static NOINLINE void spin(uint64_t n)
{
	busy(n);
}

/* --- tree: main -> t1 -> t2 -> t3 -> {t4 -> t5 -> t6, s4} -------------------------- */

enum { T1, T2, T3, T4, T5, T6, S4, NR_FN };
static const char *const fn_names[NR_FN] = { "t1", "t2", "t3", "t4", "t5", "t6", "s4" };
static const unsigned fn_work[NR_FN] = { 6, 9, 5, 12, 15, 30, 10 };   /* shares of a round */
static double fn_self[NR_FN];
static uint64_t unit = 20000;

/* spin for function f's share, adding the thread CPU time to its self time */
static void own_work(int f)
{
	double t = cpu_now();

	spin(fn_work[f] * unit);
	fn_self[f] += cpu_now() - t;
}

static NOINLINE void t6(void) { own_work(T6); sink++; }
static NOINLINE void t5(void) { own_work(T5); t6(); sink++; }
static NOINLINE void t4(void) { own_work(T4); t5(); sink++; }
static NOINLINE void s4(void) { own_work(S4); sink++; }
static NOINLINE void t3(void) { own_work(T3); t4(); s4(); sink++; }
static NOINLINE void t2(void) { own_work(T2); t3(); sink++; }
static NOINLINE void t1(void) { own_work(T1); t2(); sink++; }

static int tree(double secs)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end)
		t1();
	for (int f = 0; f < NR_FN; f++)
		printf("self %s %.0f\n", fn_names[f], fn_self[f] * 1e9);
	return 0;
}

/* --- dlopen ---------------------------------------------------------------------- */

static NOINLINE void call_lib(void (*fn)(double), double secs)
{
	fn(secs);
	sink++;
}

static int run_dlopen(const char *lib, double secs)
{
	void (*fn)(double);
	void *h;

	usleep(500000);              /* the session is running before the library comes */
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "prog-unwind: %s\n", dlerror());
		return 1;
	}
	fn = (void (*)(double))dlsym(h, "unwind_dl_work");
	if (!fn)
		return 1;
	call_lib(fn, secs);
	sink++;
	return 0;
}

/* --- recursion ------------------------------------------------------------------- */

static NOINLINE void recurse(int depth, double end)
{
	if (depth > 0)
		recurse(depth - 1, end);
	else
		while (cpu_now() < end)
			spin(100000);
	sink++;
}

/* --- generated code --------------------------------------------------------------- */

/*
 * push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret
 * (counts its argument down: a frame-pointer frame with no CFI and no file)
 */
static const uint8_t jit_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3,
};

static NOINLINE void call_jit(void (*code)(uint64_t), double end)
{
	while (cpu_now() < end)
		code(20000000);
	sink++;
}

static int jit(double secs)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	memcpy(p, jit_code, sizeof(jit_code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	printf("jit %p\n", p);
	fflush(stdout);
	call_jit((void (*)(uint64_t))p, cpu_now() + secs);
	return 0;
}

static int run(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "tree"))
		return tree(atof(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "dlopen"))
		return run_dlopen(argv[2], atof(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "recurse")) {
		recurse(atoi(argv[2]), cpu_now() + atof(argv[3]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "jit"))
		return jit(atof(argv[2]));
	fprintf(stderr, "usage: prog-unwind tree SECONDS | dlopen LIB SECONDS | "
		"recurse DEPTH SECONDS | jit SECONDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	int r = run(argc, argv);   /* not a tail call: main stays on the stack */

	sink++;
	return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe-sites: what a trap-lane marker pays for a probe site the kernel
 * never optimises (bench/bench-markers.sh).
 *
 *   probe-sites nop5|nop1 N
 *
 * Calls a function whose first instruction is a five-byte nop (site_nop5:
 * what libperfmark had; a uprobe on it becomes a call into a trampoline
 * page, which crashes children made without fork()'s atfork handlers) or a
 * one-byte nop (site_nop1: what it has now; the uprobe stays an int3 the
 * kernel emulates) N times, and prints the ns per call (thread CPU time).
 * Run it with a uprobe on the site, the same BPF program on both.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void site_nop5(uint32_t type, const void *data, uint32_t size);
void site_nop1(uint32_t type, const void *data, uint32_t size);

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl site_nop5\n"
	"	.type site_nop5,@function\n"
	"site_nop5:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	ret\n"
	"	.size site_nop5, .-site_nop5\n"
	"	.p2align 4\n"
	"	.globl site_nop1\n"
	"	.type site_nop1,@function\n"
	"site_nop1:\n"
	"	nop\n"
	"	ret\n"
	"	.size site_nop1, .-site_nop1\n");

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	void (*site)(uint32_t, const void *, uint32_t);
	uint64_t v = 0, t0;
	long n;

	if (argc != 3 || (strcmp(argv[1], "nop5") && strcmp(argv[1], "nop1"))) {
		fprintf(stderr, "usage: probe-sites nop5|nop1 N\n");
		return 2;
	}
	site = !strcmp(argv[1], "nop5") ? site_nop5 : site_nop1;
	n = atol(argv[2]);
	for (long i = 0; i < 1000; i++)     /* the kernel optimises a nop5 site on its first hits */
		site(65536, &v, sizeof(v));
	t0 = cpu_ns();
	for (long i = 0; i < n; i++)
		site(65536, &v, sizeof(v));
	printf("%s_ns %.1f\n", argv[1], (double)(cpu_ns() - t0) / n);
	return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library prog-unwind dlopen()s after a session started: its frames
 * (built -O2 -fomit-frame-pointer) can only be unwound with a table loaded
 * when the mapping appears.
 */
#include "prog-unwind.h"

NOINLINE void unwind_dl_inner(uint64_t n)
{
	busy(n);
}

NOINLINE void unwind_dl_middle(double end)
{
	while (cpu_now() < end)
		unwind_dl_inner(200000);
	sink++;
}

void unwind_dl_work(double secs)
{
	unwind_dl_middle(cpu_now() + secs);
	sink++;
}

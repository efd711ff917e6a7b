/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A binary with no call frame information at all and no frame pointers
 * (built without unwind tables, .eh_frame removed, stripped): nothing can
 * unwind it; recording it must still work, and its stacks end, counted.
 *   prog-unwind-noeh SECONDS
 */
#include <stdlib.h>

#include "prog-unwind.h"

static NOINLINE void inner(uint64_t n)
{
	busy(n);
}

static NOINLINE void outer(double end)
{
	while (cpu_now() < end)
		inner(100000);
	sink++;
}

int main(int argc, char **argv)
{
	outer(cpu_now() + (argc > 1 ? atof(argv[1]) : 1.0));
	return 0;
}

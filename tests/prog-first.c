/* prog-first: a process's markers from its first one, for t-markers-first.sh.
 *
 *   prog-first wait N     before its first marker, waits (up to 60 s) for a
 *                         recorder to read its fast-lane area, then (up to
 *                         5 s) for every recorder that holds a register site
 *                         (others' sessions too) to have joined it, which
 *                         libperfmark offers as it loads when a recorder
 *                         listens; prints "joined_before_first 1" (0: it
 *                         never was) and "all_joined 1" (0: a site holder
 *                         had not), then emits N markers.
 *   prog-first nowait N   N markers from the first instruction of main.
 *
 * Markers: perfmark_emit, type TYPE_FIRST, payload { MAGIC, sequence }.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfmark.h"
#include "prog-fastlane.h"

#define TYPE_FIRST (PERFMARK_TYPE_APP_FIRST + 400)
#define MAGIC 0x46495253u

/* the register sites recorders hold (bit k: site k), from their USDT semaphores */
extern volatile unsigned short perfmark_register0_semaphore, perfmark_register1_semaphore,
	perfmark_register2_semaphore;

static unsigned taken_sites(void)
{
	return (perfmark_register0_semaphore ? 1u : 0) | (perfmark_register1_semaphore ? 2u : 0) |
	       (perfmark_register2_semaphore ? 4u : 0);
}

/* a recorder reads the area (bit k of readers: the recorder of site k) */
static int joined(void)
{
	const struct pm_fl_hdr *h = own_area();

	return h && h->magic == PM_FL_MAGIC && __atomic_load_n(&h->readers, __ATOMIC_ACQUIRE) != 0;
}

/*
 * ... and every recorder that holds a site has joined (the library writes
 * into the ring only then): another recorder on the machine (a system-wide
 * session) holds a site too, joins as slowly as its load lets it, and one
 * that was down when the area was offered joins only at the next offer.
 */
static int all_joined(void)
{
	const struct pm_fl_hdr *h = own_area();
	unsigned sites = taken_sites();

	return joined() && (__atomic_load_n(&h->joined, __ATOMIC_ACQUIRE) & sites) == sites;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 10000;
	struct timespec d = { 0, 2 * 1000 * 1000 };

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "wait")) {
		int ok = 0;

		for (int i = 0; i < 30000 && !(ok = joined()); i++)
			nanosleep(&d, NULL);
		for (int i = 0; ok && i < 2500 && !all_joined(); i++)
			nanosleep(&d, NULL);
		printf("joined_before_first %d\nall_joined %d\n", ok, all_joined());
		if (ok) {   /* sites whose recorder reads yet has not joined: never */
			const struct pm_fl_hdr *h = own_area();

			printf("readers_unjoined %u\n", taken_sites() & h->readers & ~h->joined);
		}
		fflush(stdout);
	} else if (strcmp(argv[1], "nowait")) {
		return 2;
	}
	for (long i = 0; i < n; i++) {
		uint32_t v[2] = { MAGIC, (uint32_t)i };

		perfmark_emit(TYPE_FIRST, v, sizeof(v));
	}
	printf("emitted %ld\n", n);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: `perfmark script` on any file (issue 8 case 6).  Each
 * input is a perf.data file, file or pipe mode, read from a memfd through
 * the whole of script: the reader (attrs, ids, features, zstd), the time
 * order, the symbolizer fed by the file's sideband (maps, forks, JIT code,
 * MMAP file names opened through fsafe), marker ranges, and the text
 * or (one size in 16) JSON output, written to /dev/null.
 *
 * What it checks besides ASan/UBSan: a run ends (0 or 1 with a reason, never
 * both a reason and success), and
 *   - the slow-input check: no input takes more than a second of CPU (the
 *     reader's expansion floor is 1 MiB here, so a linear run over the
 *     largest input stays far below, a quadratic one does not);
 *   - with tests/fuzz/perfread.options (-rss_limit_mb, -malloc_limit_mb):
 *     no input takes more memory than the stated bounds allow.  Its seeds (corpus/perfread) are small
 * versions of the hostile files of tests/prog-crafted.c, compressed: the
 * shapes that once made the reader quadratic or made it expand without end,
 * replayed and mutated at the start of every run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "script.h"

/* cli/script.c reports through these (cli/perfmark.c has the real ones) */
int pm_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	va_end(ap);
	return 1;
}

void pm_notice(const char *fmt, ...)
{
	(void)fmt;
}

static int memfd = -1;
static FILE *devnull;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct script sc = { 0 };
	const char *why = NULL;
	int werr = 0, r;
	uint64_t t0 = cpu_ns(), took;

	if (memfd < 0) {
		memfd = memfd_create("fuzz-perfread", MFD_CLOEXEC);
		devnull = fopen("/dev/null", "we");
		CHECK(memfd >= 0 && devnull, "memfd/devnull: %s", strerror(errno));
	}
	CHECK(ftruncate(memfd, 0) == 0 && pwrite(memfd, data, size, 0) == (ssize_t)size,
	      "memfd write: %s", strerror(errno));
	sc.o.input = "fuzz";
	sc.o.json = size % 16 == 1;
	sc.o.read.expand_floor = 1u << 20;
	sc.out = devnull;
	r = script__run(&sc, memfd, &why, &werr);
	CHECK(r == 0 || r == 1, "script__run returned %d", r);
	CHECK(!werr, "write error on /dev/null: %s", strerror(werr));
	CHECK(r == 1 || !why, "success with a reason: %s", why);
	CHECK(r == 0 || why, "failure without a reason");
	script__free(&sc);
	clearerr(devnull);
	took = cpu_ns() - t0;
	CHECK(took < 1000000000u, "slow input: %.2f s of CPU for %zu bytes (%s)", took / 1e9, size,
	      why ? why : "read to the end");
	return 0;
}

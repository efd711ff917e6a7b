// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: source lines from a file's DWARF (lib/analyze/srcline.c,
 * libdw underneath), as `export --format pprof` reads every file a
 * recording names: that file may be anything a traced process mapped.
 *
 * Input: { u8 nfind, then nfind little-endian u32 file offsets, then the
 * file's bytes }.  The bytes are written to a file of our own and opened as
 * a recording's path is (srcfile__open, no build id).  Whatever they are:
 *   - opening returns (a file, or NULL with a reason counted in the stats)
 *     and never touches memory it should not (ASan); no allocation over
 *     the limit in srcline.options (the budgets' point);
 *   - every lookup returns at most the lines asked for, their strings
 *     NUL-terminated (ASan reads them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "srcline.h"

#define MAX_LINES 8

static char path[64];

static void drop_file(void)
{
	unlink(path);
}

static int file_of(const uint8_t *data, size_t size)
{
	int fd;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/fuzz-srcline-%d", (int)getpid());
		atexit(drop_file);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (size) {
		ssize_t n = write(fd, data, size);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		data += n;
		size -= (size_t)n;
	}
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct srcline_stats st = { 0 };
	struct srcline out[MAX_LINES];
	struct srcfile *f;
	size_t nfind;

	if (size < 1)
		return 0;
	nfind = data[0];
	if (size < 1 + 4 * nfind)
		return 0;
	CHECK(file_of(data + 1 + 4 * nfind, size - 1 - 4 * nfind) == 0, "cannot write %s", path);
	f = srcfile__open(path, NULL, &st);
	if (!f) {
		CHECK(st.no_dwarf + st.refused_elf + st.refused_size + st.refused_alt + st.stale +
		      st.work_out > 0, "refused without a reason counted");
		return 0;
	}
	for (size_t i = 0; i < nfind; i++) {
		const uint8_t *p = data + 1 + 4 * i;
		uint64_t off = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			       (uint64_t)p[3] << 24;
		size_t n = srcfile__find(f, off, out, MAX_LINES);

		CHECK(n <= MAX_LINES, "%zu lines for %d asked", n, MAX_LINES);
		for (size_t k = 0; k < n; k++) {
			if (out[k].file)
				(void)strlen(out[k].file);
			if (out[k].func)
				(void)strlen(out[k].func);
		}
	}
	srcfile__close(f);
	return 0;
}

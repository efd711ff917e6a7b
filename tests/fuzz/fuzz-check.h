/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the libFuzzer targets in tests/fuzz share: CHECK aborts with a line. */
#ifndef PERFMARK_FUZZ_CHECK_H
#define PERFMARK_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "CHECK failed at %s:%d: %s: ", __FILE__, \
				__LINE__, #cond);                               \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
			abort();                                                \
		}                                                               \
	} while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: the decoding of tracepoint samples
 * (lib/analyze/tracepoint.c) on a recording's HEADER_TRACING_DATA and an
 * entry, both from the file.  Input: u16 entry length, the entry, then the
 * tracing data.  Whatever parses must decode the entry (when it is
 * accepted) into text and values without reading outside what it was
 * given (ASan), with every string value inside the entry (CHECKed).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "tracepoint.h"

/*
 * libtraceevent 1.7 leaks a few bytes on some malformed formats (its own
 * error paths; bounded by the formats a file may hold): not ours to fix,
 * and what leaks in our code is still reported.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const struct tpdecode_event *ev;
	struct tpdecode *d;
	struct tpvalue v;
	uint8_t *entry;
	uint16_t n;
	char err[256], text[512];
	size_t i, k;

	if (size < 2)
		return 0;
	memcpy(&n, data, 2);
	if ((size_t)n > size - 2)
		n = (uint16_t)(size - 2);
	/* the entry in a buffer of its own size: ASan sees any read past it */
	entry = malloc(n ? n : 1);
	CHECK(entry, "out of memory");
	memcpy(entry, data + 2, n);
	if (tpdecode__new(&d, data + 2 + n, size - 2 - n, err, sizeof(err))) {
		free(entry);
		return 0;
	}
	if (!tpdecode__entry(d, entry, n, &ev)) {
		tpdecode__text(d, ev, entry, n, text, sizeof(text));
		for (i = 0; i < tpdecode__nr_fields(ev); i++) {
			tpdecode__value(ev, entry, n, i, &v);
			if (v.kind == TPV_STR)
				CHECK(v.s >= (const char *)entry && v.s + v.len <= (const char *)entry + n,
				      "string outside the entry");
			if (v.kind == TPV_ARRAY) {
				CHECK(v.p >= entry && v.p + v.n * v.elem <= entry + n, "array outside the entry");
				for (k = 0; k < v.n && k < 64; k++)
					(void)tpvalue_elem(&v, k);
			}
		}
	}
	tpdecode__free(d);
	free(entry);
	return 0;
}

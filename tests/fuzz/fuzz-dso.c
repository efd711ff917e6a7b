// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: one mapped file read as report and script read it
 * (lib/analyze/dso.c: PT_LOAD segments, .symtab/.dynsym, build id, and the
 * PLT stubs of dso_plt.c named from their GOT slots' relocations).  Any
 * file a traced process maps is named by an MMAP record and read here, so
 * its sections, relocations and stubs may be anything.  The bytes are the
 * file (as an in-memory image, so no path is opened).  Whatever they are:
 *   - loading returns and reads no memory it should not (ASan);
 *   - the symbols are sorted by address, one per address, each name a
 *     string, and a sized one is found at its own address;
 *   - the PLT stubs ("NAME@plt") are at most DSO_PLT_MAX (1 << 18);
 *   - a segment's first file byte maps to an address inside a segment.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dso.h"
#include "fuzz-check.h"

static void check_segments(const struct dso *d)
{
	uint64_t v;

	for (size_t i = 0; i < d->nsegs; i++) {
		const struct load_seg *g = &d->segs[i];
		bool inside = false;

		if (!g->filesz)
			continue;
		CHECK(dso__offset_to_vaddr(d, g->offset, &v), "segment %zu's first byte maps nowhere", i);
		for (size_t j = 0; j < d->nsegs && !inside; j++)
			inside = v >= d->segs[j].vaddr && v - d->segs[j].vaddr < d->segs[j].filesz;
		CHECK(inside, "offset 0x%llx maps outside every segment", (unsigned long long)g->offset);
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct dso *d = dso__new("fuzz.so", NULL, 0);
	size_t plt = 0;

	if (!d)
		return 0;
	d->image = malloc(size ? size : 1);
	if (!d->image) {
		dso__free(d);
		return 0;
	}
	memcpy(d->image, data, size);
	d->image_size = size;
	dso__load(d);
	CHECK(d->loaded, "not marked loaded");
	for (size_t i = 0; i < d->syms.n; i++) {
		const struct sym *s = &d->syms.v[i];
		size_t len;

		CHECK(s->name, "symbol %zu has no name", i);
		len = strlen(s->name);
		CHECK(i == 0 || d->syms.v[i - 1].addr < s->addr, "symbols %zu and %zu out of order", i - 1, i);
		CHECK(!s->size || symtab__find(&d->syms, s->addr, false) == s,
		      "symbol %zu not found at its address", i);
		if (len > 4 && !strcmp(s->name + len - 4, "@plt"))
			plt++;
	}
	CHECK(plt <= (1u << 18), "%zu PLT stubs", plt);
	check_segments(d);
	dso__free(d);
	return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Address -> symbol name for `perfmark script`, fed by the sideband records
 * read from a perf.data file (COMM, MMAP, MMAP2, FORK, EXIT), with libelf
 * (.symtab, else .dynsym) for user DSOs and /proc/kallsyms for the kernel.
 * Also reads /tmp/perf-PID.map files for JIT code.
 */
#ifndef PERFMARK_SYMBOLIZE_H
#define PERFMARK_SYMBOLIZE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

int symbolizer__new(struct symbolizer **out);
/* Feed a sideband record (others are ignored). */
void symbolizer__record(struct symbolizer *s, const struct perf_event_header *rec);
/*
 * Name of the symbol covering addr in process pid; kernel addresses (>= the
 * kernel map start, or when kernel is set) go to kallsyms.  Returns a string
 * owned by the symbolizer ("[unknown]" when nothing matches).
 */
const char *symbolizer__name(struct symbolizer *s, uint32_t pid, uint64_t addr, int kernel);

/* What symbolizer__lookup() found for one address (strings owned by the symbolizer). */
struct symbolizer_loc {
	const char *name;           /* symbol name, "[unknown]" when nothing matches */
	const char *dso;            /* file path, "[kernel.kallsyms]", "[vdso]", or NULL */
	uint64_t map_start, map_end, map_pgoff;   /* the mapping holding addr (0 if none) */
	const uint8_t *build_id;    /* NULL when unknown */
	uint32_t build_id_len;
	uint64_t sym_start;         /* symbol start as an address in the process, 0 if none */
	bool exe;                   /* dso is the process's executable (the first file
				     * mapped since its exec) */
	/*
	 * addr inside dso, as perf shows an unsymbolized address: its offset
	 * in the file (addr - map_start + map_pgoff; perf prints 0x1177 for
	 * 0x401177 in a non-PIE executable), the address itself in the
	 * kernel.  Valid when dso is set.
	 */
	uint64_t dso_off;
};
/* The same lookup as symbolizer__name(), with the mapping and file it went through. */
void symbolizer__lookup(struct symbolizer *s, uint32_t pid, uint64_t addr, int kernel,
			struct symbolizer_loc *out);
/*
 * A number that changes whenever symbolizer__lookup(s, pid, ADDR, kernel)
 * may answer differently for some ADDR (pid's maps or JIT code, or the
 * kernel's map, changed), and never returns to an earlier value: a cache of
 * lookups keyed by (pid, kernel, addr, this) stays right.
 */
uint64_t symbolizer__version(struct symbolizer *s, uint32_t pid, int kernel);
/*
 * The name a frame goes by, one rule for every output: its symbol's name;
 * else, when the file is known, "DSO+0xOFFSET" (DSO the file's base name,
 * OFFSET the address's offset in that file: addr - map_start + map_pgoff,
 * one name per address as perf report's dso,sym keys it); else
 * "[unknown]".  name: the symbol (NULL or "[unknown]": none); dso: the file
 * (NULL: none).  Returns name, "[unknown]", or buf holding the made-up name
 * (cut to size bytes).
 */
#define SYMBOLIZER_FRAME_NAME_MAX 288
const char *symbolizer__frame_name(const char *name, const char *dso, uint64_t offset,
				   char *buf, size_t size);
/*
 * symbolizer__frame_name() of a lookup: loc's symbol, else its file and
 * loc->dso_off ("liblzma.so.5.4.1+0x1692b", "[kernel.kallsyms]+0xffff..."),
 * else "[unknown]".  The name every output gives a frame (issue 22: every
 * frame has an identity); it is data from the recording: escape it where
 * it is written (escape.h).
 */
const char *symbolizer_loc__frame(const struct symbolizer_loc *loc, char *buf, size_t size);
/* Is loc's name a symbol (not "[unknown]")? */
bool symbolizer_loc__has_sym(const struct symbolizer_loc *loc);
/* The base name of a file path as perf's dso column shows it ("libc.so.6", "[vdso]"). */
const char *symbolizer_dso_short(const char *path);
/*
 * Name code that has no file (JIT), as perfmark's jit-code markers announce
 * it; consulted with /tmp/perf-PID.map for addresses in no map or in an
 * anonymous one.  0 or -errno.
 */
int symbolizer__add_jit(struct symbolizer *s, uint32_t pid, uint64_t addr, uint64_t size,
			const char *name);
/*
 * Why the symbolizer stopped tracking maps (a cap, out of memory), or NULL.
 * Lookups after that may give [unknown]; a reader reports it as an error.
 */
const char *symbolizer__error(const struct symbolizer *s);
/* comm of tid, or NULL */
const char *symbolizer__comm(struct symbolizer *s, uint32_t tid);
void symbolizer__free(struct symbolizer *s);

#endif

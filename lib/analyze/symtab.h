/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sorted table of function symbols (one ELF file's, or the kernel's from
 * /proc/kallsyms): built once, then looked up by address in O(log n).
 */
#ifndef PERFMARK_SYMTAB_H
#define PERFMARK_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym {
	uint64_t addr, size;
	const char *name;
	int prio;   /* lower wins among aliases: global < local < weak */
};

struct symtab {
	struct sym *v;
	size_t n, cap;
};

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, int prio);
/* Sort, keeping one symbol per address: the one perf would show. */
void symtab__finish(struct symtab *t);
/*
 * The symbol covering addr.  A sized symbol covers [addr, addr+size); a
 * zero-sized one covers up to the next symbol when unbounded is set.
 */
const struct sym *symtab__find(const struct symtab *t, uint64_t addr, bool unbounded);
void symtab__free(struct symtab *t);
/* The text symbols of /proc/kallsyms; their names are kept in *names (the caller frees it). */
void symtab__load_kallsyms(struct symtab *t, char **names);

/*
 * /proc/kallsyms shared by every symbolizer of the process: perfmarkd
 * encodes a profile per scrape, and reading and sorting kallsyms was most
 * of one.  A table is reused while younger than KSYMS_MAX_AGE_S (modules
 * come and go), and freed when its last user puts it.  Thread-safe.
 */
#define KSYMS_MAX_AGE_S 60
struct ksyms {
	struct symtab t;
	char *names;
	unsigned refs;
	uint64_t loaded;        /* CLOCK_MONOTONIC ns */
};
/* The current table (empty when /proc/kallsyms cannot be read); NULL: out of memory. */
const struct ksyms *ksyms__get(void);
void ksyms__put(const struct ksyms *k);

#endif

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

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One mapped file (a "DSO", as perf says): its PT_LOAD table and function
 * symbols (.symtab, else .dynsym, else a separate debug file found by
 * build-id) and its PLT stubs ("clock_gettime@plt", dso_plt.c), read with
 * libelf on first use.  The path comes from an MMAP
 * record of the file being read: it is opened with fsafe_open_regular()
 * (a regular file, never blocking), see lib/common/fsafe.h.
 */
#ifndef PERFMARK_DSO_H
#define PERFMARK_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symtab.h"

#define DSO_BUILD_ID_MAX 20

struct load_seg {
	uint64_t offset, vaddr, filesz;
};

struct dso {
	char *path;
	bool loaded;
	uint8_t build_id[DSO_BUILD_ID_MAX];
	uint8_t build_id_len;
	struct load_seg *segs;
	size_t nsegs;
	struct symtab syms;
	char *names;        /* name storage for syms */
	size_t names_len, names_cap;
	void *image;        /* in-memory ELF (vdso), or NULL */
	size_t image_size;
	struct dso_plt *plt;        /* PLT stubs found, not named yet (dso_plt.c) */
	char *plt_names;            /* their names ("clock_gettime@plt") */
	size_t plt_names_len, plt_names_cap;
};

/* A file not read yet; bid (bid_len bytes, may be NULL) from an MMAP2 record */
struct dso *dso__new(const char *path, const uint8_t *bid, size_t bid_len);
/* This process's own vdso image (the same kernel's code as any sample's), or NULL */
struct dso *dso__new_vdso(void);
/* Read segments and symbols, once (a file that cannot be read has none). */
void dso__load(struct dso *d);
/* File offset -> ELF virtual address via PT_LOAD; false when no segment holds it. */
bool dso__offset_to_vaddr(const struct dso *d, uint64_t off, uint64_t *vaddr);
void dso__free(struct dso *d);

/* dso_plt.c: PLT stubs as "NAME@plt" symbols, as perf names them */
struct Elf;
/* The stubs of the file open as elf (x86-64), kept to be named; none after an error */
void dso_plt_collect(struct dso *d, struct Elf *elf);
/* After the symbols are sorted: name the ifunc stubs, add the stubs, sort again */
void dso_plt_add(struct dso *d);
void dso_plt_free(struct dso *d);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Source files and lines of code addresses, from DWARF line tables (libdw),
 * for exporters that name them (pprof's Function.filename, Line.line).
 *
 * The files come from a recording (a path in an MMAP record), so:
 *   - each is opened with fsafe_open_regular() and libdw gets the fd's
 *     ELF (read, never mapped), after unwind_table__check_fd()'s header
 *     budget; libdw opens nothing itself (split-DWARF skeleton units are
 *     skipped, a supplementary ".gnu_debugaltlink" file is looked for only
 *     where a debug file is);
 *   - a file without DWARF gets its lines from its separate debug file,
 *     only ever /usr/lib/debug/.build-id/xx/yyyy.debug by its build id;
 *   - a file whose build id is not the one the recording saw is not read
 *     (its lines would be another program's);
 *   - budgets (SRCLINE_* below): the DWARF sections libdw loads, in all
 *     (after decompression, at most UNWIND_CFI_MAX_ZRATIO times their
 *     compressed size) and the line tables' share, each compile unit's
 *     line program (what libdw decodes at once), the address ranges
 *     indexed, and the DIEs walked to find inlined frames (linear in the
 *     DWARF's size: past it, lines without inlined frames).  A file over a
 *     budget gives no lines, a unit over its budget none for its code, and
 *     srcline_stats counts them.
 */
#ifndef PERFMARK_SRCLINE_H
#define PERFMARK_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

#define SRCLINE_MAX_DWARF_BYTES   (512ull << 20)  /* .debug_* / .zdebug_* sections, loaded */
#define SRCLINE_MAX_LINE_BYTES    (32ull << 20)   /* .debug_line */
/*
 * one unit's line program: libdw decodes a unit's whole table on its first
 * lookup, up to a row per byte, ~120 bytes a row while it does (40 kept)
 */
#define SRCLINE_MAX_UNIT_LINE_BYTES (1u << 20)
#define SRCLINE_MAX_RANGES        (1u << 21)      /* address ranges of compile units and functions */
#define SRCLINE_WORK_PER_BYTE     16              /* DIEs and ranges walked per .debug_info byte */
#define SRCLINE_WORK_FLOOR        (4u << 20)
#define SRCLINE_MAX_INLINE        32              /* inlined frames of one address */
#define SRCLINE_MAX_NEST          8               /* namespaces and classes holding functions */

/* What reading files for lines met (summed over every file). */
struct srcline_stats {
	uint64_t files;         /* read for lines */
	uint64_t no_dwarf;      /* no line table, in the file or a debug file */
	uint64_t stale;         /* not the build id the recording saw */
	uint64_t refused_elf;   /* headers over unwind_table__check_fd()'s budget, not ELF, or
				 * malformed (no program headers, an unterminated string section) */
	uint64_t refused_size;  /* DWARF over SRCLINE_MAX_*_BYTES or the compression ratio */
	uint64_t refused_alt;   /* needs a supplementary file that is not in /usr/lib/debug */
	uint64_t refused_units; /* compile units whose line program is over its budget */
	uint64_t work_out;      /* stopped finding inlined frames: over the work budget */
};

struct srcline {
	const char *func;       /* an inlined function's name; NULL: the function itself */
	const char *file;       /* the source file (absolute when the DWARF says where from) */
	uint32_t line;
	uint32_t func_line;     /* where the function is declared, 0 if unknown */
};

struct srcfile;

/*
 * The file at path, as the recording named it (build_id: the hex id the
 * recording saw, or NULL), for lines; NULL when it has none (st says why).
 */
struct srcfile *srcfile__open(const char *path, const char *build_id, struct srcline_stats *st);
/*
 * The source lines of the code at file offset off: innermost inlined
 * function first, the function itself last (its func NULL); how many
 * (at most max; 0: none known).  The strings live until the next call.
 */
size_t srcfile__find(struct srcfile *f, uint64_t off, struct srcline *out, size_t max);
void srcfile__close(struct srcfile *f);

#endif

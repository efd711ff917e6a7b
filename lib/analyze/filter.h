/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which samples an analysis keeps: perf's filters, the one predicate that
 * `report`, `flamegraph`, `export` and `script` share (issue 22).  The
 * replay (replay.h) applies it to every sample as it reads them, before
 * any command sees one, so the four commands cannot disagree.
 *
 *   key          option (perf's spellings)   a sample matches when
 *   FILTER_COMM  --comm[s] A,B               its thread's command is one of them
 *   FILTER_PID   --pid 1,2                   its process is one of them
 *   FILTER_TID   --tid 1,2                   its thread is one of them
 *   FILTER_DSO   --dso[s] A,B                its leaf frame is in one of these files
 *                                            (base name or path: libc.so.6)
 *   FILTER_SYM   --sym[bols] A,B             its leaf frame is named one of these
 *                                            (as printed: "main", "libx.so+0x1a2b")
 *   FILTER_CPU   --cpu 0-2,5                 it ran on one of these CPUs
 *   FILTER_TIME  --time START,END            its time is in one of the ranges
 *
 * Two kinds of "no", as perf report has them: a sample outside --cpu or
 * --time is dropped, as if never recorded (FILTER_DROP); one of another
 * command, process, thread, file or symbol is hidden (FILTER_HIDE): not
 * shown, but still part of the total that percentages are of (perf
 * report's default --percentage absolute).  Values of one key are OR'd,
 * the keys AND'd.
 *
 * --time takes perf's forms: "START,END" in seconds with up to nine
 * decimals as `perf script` prints times, either end left out, several
 * ranges separated by spaces; or percentages of the recording's span
 * (first to last sample, from the file's header): "10%/2" the second tenth,
 * "10%-20%", several separated by commas.
 *
 * The values come from the command line; each list is bounded
 * (FILTER_MAX_VALUES values, FILTER_MAX_RANGES ranges, CPUs below
 * FILTER_MAX_CPU).
 */
#ifndef PERFMARK_FILTER_H
#define PERFMARK_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FILTER_MAX_VALUES 4096
#define FILTER_MAX_RANGES 64
#define FILTER_MAX_CPU 4096

struct filter;

enum filter_key {
	FILTER_COMM, FILTER_PID, FILTER_TID, FILTER_DSO, FILTER_SYM, FILTER_CPU, FILTER_TIME,
	FILTER_NR_KEYS,
};

enum filter_verdict {
	FILTER_KEEP,
	FILTER_HIDE,    /* counted in the total, not shown */
	FILTER_DROP,    /* outside --cpu or --time: as if not recorded */
};

int filter__new(struct filter **out);
void filter__free(struct filter *f);
/*
 * Add one option's values (arg as typed).  0, or -EINVAL / -E2BIG with a
 * one-line reason in err ("bad --cpu '3-1'"); -ENOMEM.
 */
int filter__add(struct filter *f, enum filter_key key, const char *arg, char *err, size_t errlen);
/* Was a value given for key? */
bool filter__has(const struct filter *f, enum filter_key key);

/*
 * The recording's first and last sample times, for percentages in --time
 * (known: the header had them).  0, or -EINVAL with the reason when
 * percentages were asked for and the span is unknown.
 */
int filter__set_span(struct filter *f, bool known, uint64_t first, uint64_t last,
		     char *err, size_t errlen);

/* On one of the CPUs and in one of the times asked for (else FILTER_DROP)? */
bool filter__where(const struct filter *f, uint32_t cpu, uint64_t time);
/* Of a command, process and thread asked for?  comm NULL: not known yet (":TID") */
bool filter__task(const struct filter *f, uint32_t pid, uint32_t tid, const char *comm);
/* Do --dso or --sym need the sample's leaf frame? */
bool filter__wants_leaf(const struct filter *f);
/* The leaf frame, in file dso (path, NULL if none) and named frame (as printed) */
bool filter__leaf(const struct filter *f, const char *dso, const char *frame);

#endif

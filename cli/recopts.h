/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording options `perfmark record` and `perfmark session create`
 * share (-e -F -c -g --call-graph -a -p -z --no-markers), parsed once for
 * both into a struct recspec.
 */
#ifndef PERFMARK_CLI_RECOPTS_H
#define PERFMARK_CLI_RECOPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "recspec.h"

struct recopts {
	struct recspec spec;
	bool have_freq, have_period, have_a;
};

/* getopt short letters and long options of the shared set (and --help) */
#define RECOPTS_SHORT "e:F:c:gap:z::"
#define RECOPTS_LONG \
	{ "event", required_argument, NULL, 'e' }, \
	{ "freq", required_argument, NULL, 'F' }, \
	{ "count", required_argument, NULL, 'c' }, \
	{ "call-graph", required_argument, NULL, 'G' }, \
	{ "all-cpus", no_argument, NULL, 'a' }, \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "compress", optional_argument, NULL, 'z' }, \
	{ "no-markers", no_argument, NULL, 'M' }, \
	{ "help", no_argument, NULL, 'h' }

void recopts_init(struct recopts *o);
/* 1: c was one of ours and is taken; 0: not ours; -1: bad value (error printed) */
int recopts_take(struct recopts *o, int c, const char *arg);
/*
 * getopt_long over argv, taking the shared options into o: the next option
 * that is not one of them (optarg set), -1 at the end, or RECOPTS_BAD after
 * the error line of a bad value.
 */
#define RECOPTS_BAD (-2)
int recopts_next(struct recopts *o, int argc, char **argv, const char *shortopts,
		 const struct option *longopts);
/* conflicts among the shared options, then recspec_validate; 0 or 1 (error printed) */
int recopts_check(const struct recopts *o);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording options `perfmark record` and `perfmark session create`
 * share (-e -F -c -g -a -p -z --no-markers), parsed once for both.
 */
#ifndef PERFMARK_CLI_RECOPTS_H
#define PERFMARK_CLI_RECOPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "session.h"

struct recopts {
	struct session_opts so;
	bool have_freq, have_period, have_a;
};

/* getopt short letters and long options of the shared set */
#define RECOPTS_SHORT "e:F:c:gap:z::"
#define RECOPTS_LONG \
	{ "event", required_argument, NULL, 'e' }, \
	{ "freq", required_argument, NULL, 'F' }, \
	{ "count", required_argument, NULL, 'c' }, \
	{ "call-graph", no_argument, NULL, 'g' }, \
	{ "all-cpus", no_argument, NULL, 'a' }, \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "compress", optional_argument, NULL, 'z' }, \
	{ "no-markers", no_argument, NULL, 'M' }

void recopts_init(struct recopts *o);
/* 1: c was one of ours and is taken; 0: not ours; -1: bad value (error printed) */
int recopts_take(struct recopts *o, int c, const char *arg);
/* conflicts among the shared options; 0 or 1 (error printed) */
int recopts_check(const struct recopts *o);

#endif

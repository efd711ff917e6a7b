// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdlib.h>

#include "commands.h"
#include "evspec.h"
#include "recopts.h"

void recopts_init(struct recopts *o)
{
	*o = (struct recopts){ 0 };
	recspec_init(&o->spec);
}

int recopts_take(struct recopts *o, int c, const char *arg)
{
	struct recspec *r = &o->spec;
	char err[256] = "";
	int n;

	switch (c) {
	case 'e':
		n = evspec_parse(arg, r->events, EVSPEC_MAX, err, sizeof(err));
		if (n < 0)
			return pm_err("%s", err), -1;
		r->nr_events = n;
		return 1;
	case 'F':
		if (evspec_parse_freq(arg, &r->freq, err, sizeof(err)))
			return pm_err("%s", err), -1;
		o->have_freq = true;
		return 1;
	case 'c':
		if (evspec_parse_period(arg, &r->period, err, sizeof(err)))
			return pm_err("%s", err), -1;
		o->have_period = true;
		return 1;
	case 'g':
		r->call_graph = RECSPEC_CG_FP;
		return 1;
	case 'G':
		if (recspec_parse_call_graph(arg, r, err, sizeof(err)))
			return pm_err("%s", err), -1;
		return 1;
	case 'a':
		o->have_a = true;
		return 1;
	case 'p':
		n = evspec_parse_pids(arg, r->pids, RECSPEC_MAX_PIDS, err, sizeof(err));
		if (n < 0)
			return pm_err("%s", err), -1;
		r->nr_pids = n;
		r->target = RECSPEC_TARGET_PIDS;
		return 1;
	case 'z':
		r->zstd_level = 1;
		if (arg) {
			char *end;
			long l = strtol(arg, &end, 10);

			if (*end || l < 1 || l > RECSPEC_ZSTD_MAX)
				return pm_err("bad compression level '%s' (1-22)", arg), -1;
			r->zstd_level = l;
		}
		return 1;
	case 'M':
		r->markers = false;
		return 1;
	}
	return 0;
}

int recopts_next(struct recopts *o, int argc, char **argv, const char *shortopts,
		 const struct option *longopts)
{
	int c, t;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		t = recopts_take(o, c, optarg);
		if (t < 0)
			return RECOPTS_BAD;
		if (!t)
			return c;
	}
	return -1;
}

int recopts_check(const struct recopts *o)
{
	char err[256];

	if (o->have_freq && o->have_period)
		return pm_err("-F and -c cannot be used together");
	if (o->have_a && o->spec.nr_pids)
		return pm_err("give only one of -a and -p PID");
	if (recspec_validate(&o->spec, err, sizeof(err)))
		return pm_err("%s", err);
	return 0;
}

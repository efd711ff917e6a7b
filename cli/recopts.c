// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdlib.h>

#include "commands.h"
#include "evspec.h"
#include "recopts.h"

void recopts_init(struct recopts *o)
{
	*o = (struct recopts){ 0 };
	o->so.markers = true;
	o->so.freq = 4000;
	o->so.uid_filter = (uint32_t)-1;
}

int recopts_take(struct recopts *o, int c, const char *arg)
{
	char err[256] = "";
	int n;

	switch (c) {
	case 'e':
		n = evspec_parse(arg, o->so.events, EVSPEC_MAX, err, sizeof(err));
		if (n < 0)
			return pm_err("%s", err), -1;
		o->so.nr_events = n;
		return 1;
	case 'F':
		if (evspec_parse_freq(arg, &o->so.freq, err, sizeof(err)))
			return pm_err("%s", err), -1;
		o->have_freq = true;
		return 1;
	case 'c':
		if (evspec_parse_period(arg, &o->so.period, err, sizeof(err)))
			return pm_err("%s", err), -1;
		o->have_period = true;
		return 1;
	case 'g':
		o->so.callchain = true;
		return 1;
	case 'a':
		o->have_a = true;
		return 1;
	case 'p':
		n = evspec_parse_pids(arg, o->so.pids, SESSION_MAX_PIDS, err, sizeof(err));
		if (n < 0)
			return pm_err("%s", err), -1;
		o->so.nr_pids = n;
		return 1;
	case 'z':
		o->so.zstd_level = 1;
		if (arg) {
			char *end;
			long l = strtol(arg, &end, 10);

			if (*end || l < 1 || l > 22)
				return pm_err("bad compression level '%s' (1-22)", arg), -1;
			o->so.zstd_level = l;
		}
		return 1;
	case 'M':
		o->so.markers = false;
		return 1;
	}
	return 0;
}

int recopts_check(const struct recopts *o)
{
	if (o->have_freq && o->have_period)
		return pm_err("-F and -c cannot be used together");
	return 0;
}

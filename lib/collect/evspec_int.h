/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside evspec (not for its users: they have evspec.h).
 *   evspec.c      lists, named events, modifiers, the numeric options
 *   evspec_tp.c   tracepoints and their globs, from tracefs (libtracefs)
 *   evspec_pmu.c  raw events and PMU/TERMS/, from sysfs's format files
 */
#ifndef PERFMARK_EVSPEC_INT_H
#define PERFMARK_EVSPEC_INT_H

#include "evspec.h"

/*
 * The tracepoints sys:name ([sys, sys+slen), [name, name+nlen), either a
 * glob when glob) into out[*n...], at most max of them; the count goes on
 * past max so the error can say how many.  0 or -EINVAL + err.
 */
int evspec_tracepoints(const char *sys, size_t slen, const char *name, size_t nlen, bool glob,
		       struct evspec *out, size_t max, size_t *n, char *err, size_t errlen);
/* "rHEX": 1 (parsed into e), 0 (not of that form), or -EINVAL + err */
int evspec_raw(const char *s, size_t len, struct evspec *e, char *err, size_t errlen);
/* "PMU/TERMS/" (no modifiers): 0 or -EINVAL + err */
int evspec_pmu(const char *s, size_t len, struct evspec *e, char *err, size_t errlen);
/*
 * A PMU's terms ("event=0x3c,umask=1", "tsc") encoded in cfg[0..2]
 * (config, config1, config2) from the format files in pmu_dir
 * ("/sys/bus/event_source/devices/cpu"): 0 or -EINVAL + err.
 */
int evspec_pmu_encode(const char *pmu_dir, const char *terms, size_t len, uint64_t cfg[3],
		      char *err, size_t errlen);

#endif

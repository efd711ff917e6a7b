/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the tracepoint program needs to know of one recorded tracepoint
 * (struct pm_tp_cfg, bpf/tracepoint_wire.h): its id, the size of its
 * entry and where its dynamic arrays are, from its format; its filter,
 * compiled.  Built by the collector before it attaches, and by the
 * command line before it asks anything of perfmarkd, so that a bad filter
 * is one error at the start either way.
 */
#ifndef PERFMARK_TPCONFIG_H
#define PERFMARK_TPCONFIG_H

#include <stddef.h>

#include "recspec.h"
#include "tracepoint_wire.h"

/*
 * events[i] of spec (a tracepoint) into out, event index i.  0 or -errno
 * with one line in err ("bad filter for sched:sched_switch: no field 'x'
 * at 'x == 1'", "tracepoint sched:foo changed since it was named").
 */
int tpconfig_build(const struct recspec *spec, size_t i, struct pm_tp_cfg *out,
		   char *err, size_t errlen);
/* every tracepoint of spec, built and thrown away: 0 or the first error */
int tpconfig_check(const struct recspec *spec, char *err, size_t errlen);
/*
 * May a recording limited to uid_filter's processes ((uint32_t)-1: root's,
 * all) have spec's tracepoints?  0, or -EACCES with the reason in err.
 */
int tpconfig_allowed(const struct recspec *spec, uint32_t uid_filter, char *err, size_t errlen);
/* how many of spec's events are tracepoints */
size_t tpconfig_count(const struct recspec *spec);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The perf_event_attrs a session writes (session__events): the sampling
 * events as the collector opened them, the two markers' BPF-output events,
 * and --off-cpu's offcpu-time, as perf names its own.  Apart from
 * session.c, which keeps the life cycle.
 */
#include <linux/perf_event.h>
#include <string.h>
#include <time.h>

#include "perfmark_wire.h"
#include "offcpu_wire.h"
#include "unwind_wire.h"
#include "offcpu_raw.h"
#include "uevent.h"
#include "collector.h"
#include "perfdata.h"
#include "session-int.h"

size_t session__events(const struct session *s, struct perfdata_event *evs,
		       uint64_t *ids, size_t max)
{
	static const char *const marker_names[2] = { PERFMARK_EV_PRINTF, PERFMARK_EV_UEVENT };
	size_t n = 0, i;

	for (i = 0; i < s->nr_ev && n < max; i++, n++) {
		struct perf_event_attr *a = &evs[n].attr;

		memset(&evs[n], 0, sizeof(evs[n]));
		collector__sampling_attr(s->c, i, a);
		a->disabled = 0;
		a->sample_type = s->sample_type | (s->ev[i].tracepoint ? PERF_SAMPLE_RAW : 0);
		a->sample_id_all = 1;
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		if (s->sample_type & SAMPLE_TYPE_DWARF) {   /* as perf --call-graph dwarf */
			a->sample_regs_user = PM_UREGS_MASK;
			a->sample_stack_user = s->o.spec.stack_size;
			a->exclude_callchain_user = 1;
		}
		if (i == 0) {   /* the sideband is written as this event's */
			a->mmap_data = (s->sample_type & SAMPLE_TYPE_DWARF) != 0;
			a->mmap = 1;
			a->mmap2 = 1;
			a->comm = 1;
			a->comm_exec = 1;
			a->task = 1;
		}
		ids[n] = i + 1;
		evs[n].ids = &ids[n];
		evs[n].nr_ids = 1;
		evs[n].name = s->ev[i].name;
	}
	for (i = 0; s->o.spec.markers && i < 2 && n < max; i++, n++) {
		ids[n] = i ? ID_UEVENT : ID_PRINTF;
		perfdata_event_init(&evs[n], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT,
				    MARKER_SAMPLE_TYPE, marker_names[i], &ids[n], 1);
		evs[n].attr.sample_period = 1;
	}
	/* as perf's --off-cpu: a BPF output event renamed offcpu-time */
	if (s->o.spec.off_cpu && n < max) {
		ids[n] = ID_OFFCPU;
		perfdata_event_init(&evs[n], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT,
				    s->off_sample_type, PERFMARK_OFFCPU_EVENT, &ids[n], 1);
		evs[n].attr.sample_period = 1;
		if (s->off_sample_type & SAMPLE_TYPE_DWARF) {
			evs[n].attr.sample_regs_user = PM_UREGS_MASK;
			evs[n].attr.sample_stack_user = s->o.spec.stack_size < PM_OFF_USTACK ?
				s->o.spec.stack_size : PM_OFF_USTACK;
			evs[n].attr.exclude_callchain_user = 1;
		}
		n++;
	}
	return n;
}

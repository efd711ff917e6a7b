// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A snapshot (sinks.h): a ring's or a file sink's history as one perf.data,
 * for `session snapshot` and a live reader's start (readers.c).
 */
#include <errno.h>

#include "perfdata.h"
#include "sink-int.h"

int sink__snapshot(struct sink *s, int fd, bool pipe, uint64_t until)
{
	struct perfdata_writer *w = NULL;
	int e;

	if (s->o.kind == SINK_PERFDATA)
		return -EOPNOTSUPP;
	e = sink_new_writer(s, fd, pipe, pipe ? 0 : s->o.zstd_level, &w);
	if (e)
		return e;
	if (s->o.kind == SINK_RING)
		e = sink_copy_ring(s, w, until);
	else
		e = file_snapshot(s, w);
	if (!e)
		e = perfdata_writer__finish(w);
	perfdata_writer__free(w);
	return e;
}

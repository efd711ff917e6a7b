/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A thread's command as the analyses print it when the recording never
 * named it: the idle task (tid 0) is "swapper", as perf calls it; any other
 * thread ":TID".
 */
#ifndef PERFMARK_COMMNAME_H
#define PERFMARK_COMMNAME_H

#include <stdint.h>
#include <stdio.h>

#define COMMNAME_LEN 24

static inline const char *comm_or_tid(const char *comm, uint32_t tid, char buf[COMMNAME_LEN])
{
	if (comm)
		return comm;
	if (!tid)
		return "swapper";
	snprintf(buf, COMMNAME_LEN, ":%u", tid);
	return buf;
}

#endif

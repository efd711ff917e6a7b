// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the collector's parts share: its notices, handing a record to the
 * subscribers, pinning one fd, the drain threads' priority.  At the bottom
 * of the collector (collector_int.h): it calls none of the other parts, so
 * that calls between them go one way (tests/t-calls.sh).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <bpf/bpf.h>

#include "collector_int.h"

void collector_notice(struct collector *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->nr_notices < MAX_NOTICES)
		memcpy(c->notices[c->nr_notices++], msg, sizeof(msg));
	if (c->notice)
		c->notice(c->notice_ctx, msg);
}

void collector_dispatch_subs(struct collector *c, const void *data, size_t size)
{
	c->activity++;
	for (size_t i = 0; i < c->nr_subs; i++)
		if (c->subs[i]->active)
			c->subs[i]->on_ring(c->subs[i]->ctx, data, size);
}

int collector_pin_fd(int fd, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (bpf_obj_pin(fd, path) && errno != EEXIST)
		return -errno;
	return 0;
}

void collector__boost_thread(void)
{
	(void)setpriority(PRIO_PROCESS, 0, COLLECTOR_NICE);
}

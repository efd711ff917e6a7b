// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the collector's parts share: its notices, handing a record to the
 * subscribers, pinning one fd, the drain threads' priority.  At the bottom
 * of the collector (collector_int.h): it calls none of the other parts, so
 * that calls between them go one way (tests/t-calls.sh).
 */
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <bpf/bpf.h>

#include "collector_int.h"
#include "clock.h"

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

void collector_wait_quiet(int fd, void *buf, size_t value_size, int ncpus,
			  bool (*busy)(const void *value, uint32_t arg), uint32_t arg, uint64_t wait_ns)
{
	size_t stride = COLLECTOR_PERCPU_STRIDE(value_size);
	uint64_t until = clock_mono_ns() + wait_ns;
	uint32_t zero = 0;

	for (;;) {
		bool any = false;

		if (bpf_map_lookup_elem(fd, &zero, buf))
			return;
		for (int i = 0; i < ncpus && !any; i++)
			any = busy((const char *)buf + (size_t)i * stride, arg);
		if (!any || clock_mono_ns() > until)
			return;
		sched_yield();
	}
}

void collector__boost_thread(void)
{
	(void)setpriority(PRIO_PROCESS, 0, COLLECTOR_NICE);
}

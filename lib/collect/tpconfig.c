// SPDX-License-Identifier: LGPL-2.1-or-later
/* A recorded tracepoint's struct pm_tp_cfg.  See tpconfig.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errline.h"
#include "tpconfig.h"
#include "tpfilter.h"
#include "tpformat.h"

size_t tpconfig_count(const struct recspec *spec)
{
	return spec->nr_events - recspec_nr_sampling(spec);
}

/* "sys:name" (evspec checked its characters) into its two parts */
static int split(const char *ev, char *sys, char *name, size_t len)
{
	const char *colon = strchr(ev, ':');

	if (!colon || (size_t)(colon - ev) >= len || strlen(colon + 1) >= len)
		return -EINVAL;
	memcpy(sys, ev, (size_t)(colon - ev));
	sys[colon - ev] = '\0';
	strcpy(name, colon + 1);
	return 0;
}

int tpconfig_build(const struct recspec *spec, size_t i, struct pm_tp_cfg *out,
		   char *err, size_t errlen)
{
	const struct evspec *ev = &spec->events[i];
	const char *filter = recspec_filter(spec, i);
	struct tpformat *f = NULL;
	char sys[EVSPEC_NAME_MAX], name[EVSPEC_NAME_MAX];
	size_t k;
	int e;

	memset(out, 0, sizeof(*out));
	if (!ev->tracepoint || split(ev->name, sys, name, sizeof(sys)))
		return errline(err, errlen, "%s is not a tracepoint", ev->name);
	e = tpformat__read(&f, sys, name, err, errlen);
	if (e)
		return e;
	if (tpformat__id(f) != ev->config) {
		e = errline(err, errlen, "tracepoint %s has id %u now, not %llu", ev->name,
			    tpformat__id(f), (unsigned long long)ev->config);
		goto out;
	}
	out->id = tpformat__id(f);
	out->event = (uint32_t)i;
	out->fixed = (uint16_t)tpformat__fixed(f);
	for (k = 0; k < tpformat__nr_fields(f); k++) {
		const struct tpfield *fd = tpformat__field(f, k);

		if (!fd->dyn)
			continue;
		if (out->nr_dyn == PM_TP_MAX_DYN) {
			e = errline(err, errlen, "tracepoint %s has more than %d dynamic fields",
				    ev->name, PM_TP_MAX_DYN);
			goto out;
		}
		out->dyn[out->nr_dyn++] = (uint16_t)(fd->off | (fd->rel ? PM_TP_DYN_REL : 0));
	}
	if (filter)
		e = tpfilter_compile(filter, f, out, err, errlen);
out:
	tpformat__free(f);
	return e;
}

int tpconfig_check(const struct recspec *spec, char *err, size_t errlen)
{
	struct pm_tp_cfg *tc = malloc(sizeof(*tc));
	size_t i;
	int e = 0;

	if (!tc)
		return -ENOMEM;
	for (i = 0; i < spec->nr_events && !e; i++)
		if (spec->events[i].tracepoint)
			e = tpconfig_build(spec, i, tc, err, errlen);
	free(tc);
	return e;
}

/*
 * RULE (as perf_event_open's): a tracepoint's entries describe whatever
 * the kernel was doing (another user's task switched in, a file name), not
 * only the task it fired in; users get them only where the machine gives
 * any user raw tracepoint data (kernel.perf_event_paranoid -1).
 */
int tpconfig_allowed(const struct recspec *spec, uint32_t uid_filter, char *err, size_t errlen)
{
	char b[16] = "";
	size_t i;
	FILE *f;

	if (uid_filter == (uint32_t)-1)
		return 0;
	for (i = 0; i < spec->nr_events; i++)
		if (spec->events[i].tracepoint)
			break;
	if (i == spec->nr_events)
		return 0;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (!fgets(b, sizeof(b), f))
			b[0] = '\0';
		fclose(f);
	}
	if (atoi(b) <= -1 && b[0])
		return 0;
	snprintf(err, errlen, "%s: recording tracepoints needs root (or kernel.perf_event_paranoid "
		 "-1): permission denied", spec->events[i].name);
	return -EACCES;
}

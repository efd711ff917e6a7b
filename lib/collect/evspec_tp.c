// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tracepoints for -e: SUBSYS:NAME, either part a glob, resolved to
 * PERF_TYPE_TRACEPOINT with config = the id in tracefs's events/S/N/id.
 * libtracefs finds tracefs (and mounts it when it can, as perf does) and
 * lists the systems and their events.  The names given are checked before
 * any of them becomes part of a path: perfmarkd resolves its clients'.
 */
#include <errno.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "errline.h"
#include "evspec_int.h"

#define NAME_PART_MAX 63    /* a system's or an event's name */

int evspec_set_tracing_dir(const char *dir)
{
	/* libtracefs copies it; NULL goes back to the mounted tracefs */
	return tracefs_set_tracing_dir((char *)dir) ? -errno : 0;
}

/* [A-Za-z0-9_-], and * ? where a glob is taken */
static bool good_part(const char *s, size_t len, bool glob)
{
	size_t i;

	if (!len || len > NAME_PART_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || (glob && (c == '*' || c == '?'))))
			return false;
	}
	return true;
}

static const char *tracing_events(char *dir, size_t len, char *err, size_t errlen)
{
	const char *t = tracefs_tracing_dir();

	if (!t)
		return errline(err, errlen, "tracepoints need tracefs, which is not mounted and "
			       "cannot be mounted here (mount -t tracefs tracefs /sys/kernel/tracing)"),
		       NULL;
	snprintf(dir, len, "%s/events", t);
	if (access(dir, R_OK | X_OK) && errno == ENOENT)
		return errline(err, errlen, "tracepoints need tracefs, and %s has no events/ "
			       "(mount -t tracefs tracefs /sys/kernel/tracing)", t), NULL;
	if (access(dir, R_OK | X_OK))
		return errline(err, errlen, "cannot read the tracepoints in %s: %s", dir,
			       strerror(errno)), NULL;
	return t;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the names of list that match pattern (or equal it), sorted; NULL-ended, or NULL */
static char **matching(char **list, const char *pattern)
{
	char **out = NULL;
	size_t i;

	for (i = 0; list && list[i]; i++) {
		if (fnmatch(pattern, list[i], 0))
			continue;
		char **grown = tracefs_list_add(out, list[i]);

		if (!grown) {
			tracefs_list_free(out);
			return NULL;
		}
		out = grown;
	}
	if (out)
		qsort(out, (size_t)tracefs_list_size(out), sizeof(*out), cmp_str);
	return out;
}

/* events/S/N/id: 0 and *id, or -errno */
static int read_id(const char *sys, const char *name, uint64_t *id)
{
	int size = 0;
	char *s = tracefs_event_file_read(NULL, sys, name, "id", &size), *end;
	unsigned long long v;

	if (!s)
		return errno ? -errno : -ENOENT;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n')) {
		free(s);
		return -EINVAL;
	}
	free(s);
	*id = v;
	return 0;
}

int evspec_tracepoints(const char *sys, size_t slen, const char *name, size_t nlen, bool glob,
		       struct evspec *out, size_t max, size_t *n, char *err, size_t errlen)
{
	char spat[NAME_PART_MAX + 1], npat[NAME_PART_MAX + 1], dir[4096];
	char **systems = NULL, **sys_all = NULL, **events = NULL, **ev_all = NULL;
	const char *tdir;
	size_t found = 0, start = *n, i, j;
	int e = 0;

	if (!good_part(sys, slen, glob) || !good_part(name, nlen, glob))
		return errline(err, errlen, "bad tracepoint name '%.*s:%.*s' (SUBSYS:NAME, letters, "
			       "digits, _ and -%s)", (int)(slen > 64 ? 64 : slen), sys,
			       (int)(nlen > 64 ? 64 : nlen), name, glob ? ", globs * and ?" : "");
	memcpy(spat, sys, slen);
	spat[slen] = '\0';
	memcpy(npat, name, nlen);
	npat[nlen] = '\0';
	tdir = tracing_events(dir, sizeof(dir), err, errlen);
	if (!tdir)
		return -EINVAL;

	sys_all = tracefs_event_systems(tdir);
	systems = matching(sys_all, spat);
	for (i = 0; systems && systems[i]; i++) {
		ev_all = tracefs_system_events(tdir, systems[i]);
		events = matching(ev_all, npat);
		for (j = 0; events && events[j]; j++, found++) {
			struct evspec *o;
			uint64_t id;

			if (*n >= max)
				continue;      /* counted, for the message */
			e = read_id(systems[i], events[j], &id);
			if (e) {
				errline(err, errlen, "cannot read the id of tracepoint %s:%s: %s",
					systems[i], events[j], strerror(-e));
				goto out;
			}
			o = &out[(*n)++];
			memset(o, 0, sizeof(*o));
			snprintf(o->name, sizeof(o->name), "%s:%s", systems[i], events[j]);
			o->type = PERF_TYPE_TRACEPOINT;
			o->config = id;
			o->tracepoint = true;
		}
		tracefs_list_free(events);
		tracefs_list_free(ev_all);
		events = ev_all = NULL;
	}
	if (!found) {
		e = -EINVAL;
		if (strpbrk(spat, "*?") || strpbrk(npat, "*?"))
			errline(err, errlen, "no tracepoint matches '%s:%s'", spat, npat);
		else
			errline(err, errlen, "unknown tracepoint '%s:%s' (perf list tracepoint)", spat, npat);
	} else if (start + found > max) {
		e = -EINVAL;
		if (found > 1)
			errline(err, errlen, "'%s:%s' names %zu tracepoints: more than the %zu events "
				"one list takes", spat, npat, found, max);
		else
			errline(err, errlen, "too many events (at most %zu)", max);
	}
out:
	tracefs_list_free(events);
	tracefs_list_free(ev_all);
	tracefs_list_free(systems);
	tracefs_list_free(sys_all);
	return e ? -EINVAL : 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * record's in-process back end: the session engine in this process.  It
 * also takes a recording over from perfmarkd when the daemon goes away
 * (r->resume): the same events, written on after the daemon's last round.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "perfdata.h"
#include "record_backend.h"
#include "sinks.h"

static int local_open(struct record *r)
{
	char err[256];

	r->so.notice = record_notice;
	r->so.notice_ctx = r;
	r->so.argc = r->argc;
	r->so.argv = r->argv;
	if (session__new(&r->s, &r->so, err, sizeof(err)))
		return pm_err("%s", err);
	return 0;
}

/* CMD's descendants, added as targets (a take-over sees no fork from before) */
static void add_descendants(struct session *s, pid_t top)
{
	pid_t pids[4096], found;
	size_t n = 1, i;
	bool grew = true;

	pids[0] = top;
	while (grew) {
		struct dirent *de;
		DIR *d = opendir("/proc");

		grew = false;
		while (d && (de = readdir(d)) && n < sizeof(pids) / sizeof(pids[0])) {
			char path[64], buf[512], *p;
			int ppid = 0;
			FILE *f;

			found = (pid_t)atoi(de->d_name);
			if (found <= 0)
				continue;
			for (i = 0; i < n && pids[i] != found; i++)
				;
			if (i < n)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/stat", (int)found);
			f = fopen(path, "re");
			if (!f)
				continue;
			p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			fclose(f);
			if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
				continue;
			for (i = 0; i < n && pids[i] != ppid; i++)
				;
			if (i < n) {
				pids[n++] = found;
				session__add_pid(s, found);
				grew = true;
			}
		}
		if (d)
			closedir(d);
	}
}

/* taking over from perfmarkd: a perf.data sink that goes on after its last round */
static int resume_sink(struct record *r)
{
	struct perfdata_event evs[SESSION_MAX_EVENTS];
	uint64_t ids[SESSION_MAX_EVENTS];
	struct sink_opts ko = {
		.kind = SINK_PERFDATA, .events = evs, .resume = true,
		.zstd_level = r->so.spec.zstd_level, .argc = r->argc, .argv = r->argv,
	};
	char self[64];
	int fd, e;

	/* the output was opened to write only: the same file again, to read it too */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", r->out.fd);
	fd = open(self, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(r->out.fd);
	r->out.fd = fd;
	ko.fd = fd;
	ko.nr_events = session__events(r->s, evs, ids, SESSION_MAX_EVENTS);
	e = sink__new(&r->sink, &ko, NULL);
	return e;
}

static int local_start(struct record *r)
{
	char err[256];
	int e;

	if (r->resume) {
		e = resume_sink(r);
		if (e)
			return e;
		session__set_sink(r->s, r->sink);
	} else {
		session__set_output(r->s, r->out.fd, r->out.pipe);
	}
	if (r->child > 0 && r->resume) {
		session__add_pid(r->s, r->child);          /* it runs already */
		add_descendants(r->s, r->child);
	} else if (r->child > 0) {
		session__add_cmd(r->s, r->child);
		session__watch_file(r->s, r->cmd_path);   /* libperfmark linked into CMD itself */
	}
	if (session__start(r->s, err, sizeof(err)))
		return pm_err("%s", err);
	session__boost();       /* CMD is forked already: it keeps its own priority */
	return 0;
}

static void local_fds(struct record *r, int *fds, int *n, int max)
{
	*n = session__fds(r->s, fds, (size_t)max);
}

/* the timer, or the ring filling up: drain */
static int local_step(struct record *r, bool tick, bool ready, struct session_stats *st, bool *fresh)
{
	int e;

	if (!tick && !ready)
		return 0;
	e = session__drain(r->s);
	if (e)
		session__stop(r->s);   /* finish what can be finished */
	session__stats(r->s, st);
	*fresh = true;
	return e;
}

static int local_stop(struct record *r, struct session_stats *st)
{
	int e = session__stop(r->s);

	if (r->sink) {                /* our own sink: finish the file */
		int f = sink__close(r->sink);

		if (!e)
			e = f;
	}
	session__stats(r->s, st);
	return e;
}

static void local_close(struct record *r)
{
	session__free(r->s);
	r->s = NULL;
	sink__free(r->sink);
	r->sink = NULL;
}

const struct record_backend record_local = {
	.via = "", .open = local_open, .start = local_start, .fds = local_fds,
	.step = local_step, .stop = local_stop, .close = local_close,
};

/* nothing left to record with: the driver only waits for CMD (or a signal) */
static int none_open(struct record *r)
{
	return 0;
}

static void none_fds(struct record *r, int *fds, int *n, int max)
{
	*n = 0;
}

static int none_step(struct record *r, bool tick, bool ready, struct session_stats *st, bool *fresh)
{
	return 0;
}

static int none_stop(struct record *r, struct session_stats *st)
{
	return 0;
}

static void none_close(struct record *r)
{
}

const struct record_backend record_none = {
	.via = "", .open = none_open, .start = none_open, .fds = none_fds,
	.step = none_step, .stop = none_stop, .close = none_close,
};

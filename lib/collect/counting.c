// SPDX-License-Identifier: LGPL-2.1-or-later
/* Counting mode: see counting.h. */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "counting.h"
#include "errline.h"

#define MAX_CPUS 1024

struct counting {
	struct evspec *ev;
	bool *supported;
	size_t nr_ev;
	int *fds;              /* nr_ev * nr_units, -1: not open */
	size_t nr_units;       /* CPUs, threads, or 1 */
	int *cpus;             /* per unit: the CPU (-1: any) */
	pid_t *tids;           /* per unit: the thread (-1: all) */
	enum counting_target target;
};

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* the threads of pid, appended to c's units: 0 or -errno (-ESRCH: it is gone) */
static int add_threads(struct counting *c, pid_t pid, size_t max, char *err, size_t errlen)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int e = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? (errline(err, errlen, "no process %d", (int)pid), -ESRCH)
				       : (errline(err, errlen, "cannot list the threads of %d: %s",
						  (int)pid, strerror(errno)), -errno);
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (c->nr_units >= max) {
			e = -E2BIG;
			errline(err, errlen, "more than %zu threads to count", max);
			break;
		}
		c->tids[c->nr_units] = (pid_t)tid;
		c->cpus[c->nr_units++] = -1;
	}
	closedir(dir);
	return e;
}

static int units(struct counting *c, const struct counting_opts *o, char *err, size_t errlen)
{
	size_t max = o->target == COUNTING_CPUS ? MAX_CPUS :
		     o->target == COUNTING_THREADS ? COUNTING_MAX_THREADS : 1;
	size_t i;
	int ncpus, e;

	c->cpus = calloc(max, sizeof(*c->cpus));
	c->tids = calloc(max, sizeof(*c->tids));
	if (!c->cpus || !c->tids)
		return -ENOMEM;
	switch (o->target) {
	case COUNTING_CPUS:
		ncpus = libbpf_num_possible_cpus();
		if (ncpus <= 0 || ncpus > MAX_CPUS)
			return errline(err, errlen, "cannot count CPUs"), -EINVAL;
		for (i = 0; i < (size_t)ncpus; i++) {
			c->cpus[i] = (int)i;
			c->tids[i] = -1;
		}
		c->nr_units = (size_t)ncpus;
		return 0;
	case COUNTING_THREADS:
		if (!o->nr_pids || o->nr_pids > COUNTING_MAX_PIDS)
			return errline(err, errlen, "give 1 to %d pids", COUNTING_MAX_PIDS), -EINVAL;
		for (i = 0; i < o->nr_pids; i++)
			if ((e = add_threads(c, o->pids[i], max, err, errlen)))
				return e;
		return 0;
	case COUNTING_TASK:
		if (o->nr_pids != 1)
			return -EINVAL;
		c->tids[0] = o->pids[0];
		c->cpus[0] = -1;
		c->nr_units = 1;
		return 0;
	}
	return -EINVAL;
}

/* room for n more descriptors: the soft limit raised to the hard one when short */
static int fd_room(size_t n, char *err, size_t errlen)
{
	struct rlimit rl;
	size_t want = n + 64;    /* what else stat holds: stdio, pipes, timer */

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
		return errline(err, errlen, "%zu counters need more file descriptors than the limit "
			       "of %llu (ulimit -n): fewer events or CPUs", n,
			       (unsigned long long)rl.rlim_cur), -EMFILE;
	return 0;
}

static void attr_of(const struct evspec *e, enum counting_target t, struct perf_event_attr *a)
{
	evspec_attr(e, a);
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->disabled = 1;
	a->inherit = t != COUNTING_CPUS;       /* the command's children, new threads */
	a->enable_on_exec = t == COUNTING_TASK;
}

static bool unsupported(int e)
{
	return e == -ENOENT || e == -EOPNOTSUPP || e == -ENODEV || e == -EINVAL;
}

static int open_error(const struct evspec *e, int err_no, enum counting_target t,
		      char *err, size_t errlen)
{
	if (err_no == -EACCES || err_no == -EPERM)
		return errline(err, errlen, "%s: permission denied (%s needs root or CAP_PERFMON; "
			       "see kernel.perf_event_paranoid)", e->name,
			       t == COUNTING_CPUS ? "counting every CPU" :
			       e->tracepoint ? "a tracepoint" : "this event"), err_no;
	if (err_no == -EMFILE || err_no == -ENFILE)
		return errline(err, errlen, "%s: out of file descriptors (ulimit -n)", e->name), err_no;
	return errline(err, errlen, "%s: cannot open the counter: %s", e->name,
		       strerror(-err_no)), err_no;
}

/* event i on every unit: 0, or -errno (the caller says which) */
static int open_event(struct counting *c, size_t i, int *opened)
{
	struct perf_event_attr a;
	size_t u;
	int e = 0;

	attr_of(&c->ev[i], c->target, &a);
	*opened = 0;
	for (u = 0; u < c->nr_units; u++) {
		int fd = perf_event_open(&a, c->tids[u], c->cpus[u]);

		if (fd < 0) {
			e = -errno;
			/* an offline CPU; a thread gone since the listing */
			if ((e == -ENODEV && c->target == COUNTING_CPUS) ||
			    (e == -ESRCH && c->target == COUNTING_THREADS))
				continue;
			return e;
		}
		c->fds[i * c->nr_units + u] = fd;
		(*opened)++;
	}
	return *opened ? 0 : e ? e : -ENODEV;
}

static void close_event(struct counting *c, size_t i)
{
	size_t u;

	for (u = 0; u < c->nr_units; u++) {
		int *fd = &c->fds[i * c->nr_units + u];

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

int counting__open(struct counting **out, const struct counting_opts *o, char *err, size_t errlen)
{
	struct counting *c = calloc(1, sizeof(*c));
	size_t i, kept = 0;
	int e;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->target = o->target;
	if (!o->nr_events || o->nr_events > EVSPEC_MAX) {
		e = errline(err, errlen, "give 1 to %d events", EVSPEC_MAX);
		goto fail;
	}
	if ((e = units(c, o, err, errlen)))
		goto fail;
	c->ev = calloc(o->nr_events, sizeof(*c->ev));
	c->supported = calloc(o->nr_events, sizeof(*c->supported));
	c->fds = malloc(o->nr_events * c->nr_units * sizeof(*c->fds));
	e = -ENOMEM;
	if (!c->ev || !c->supported || !c->fds)
		goto fail;
	memset(c->fds, 0xff, o->nr_events * c->nr_units * sizeof(*c->fds));
	if ((e = fd_room(o->nr_events * c->nr_units, err, errlen)))
		goto fail;
	c->nr_ev = o->nr_events;
	memcpy(c->ev, o->events, o->nr_events * sizeof(*c->ev));
	for (i = 0; i < c->nr_ev; i++) {
		int opened;

		e = open_event(c, i, &opened);
		if (e == -ESRCH || (!opened && c->target == COUNTING_THREADS && e == -ENODEV)) {
			errline(err, errlen, "the process to count is gone");
			goto fail;
		}
		if (e && !unsupported(e)) {
			open_error(&c->ev[i], e, c->target, err, errlen);
			goto fail;
		}
		if (e) {
			close_event(c, i);
			if (o->drop_unsupported)
				continue;
		}
		/* kept: moved down over the dropped ones */
		if (kept != i) {
			c->ev[kept] = c->ev[i];
			memcpy(&c->fds[kept * c->nr_units], &c->fds[i * c->nr_units],
			       c->nr_units * sizeof(*c->fds));
			memset(&c->fds[i * c->nr_units], 0xff, c->nr_units * sizeof(*c->fds));
		}
		c->supported[kept++] = !e;
	}
	c->nr_ev = kept;
	if (!kept) {
		e = errline(err, errlen, "none of the events can be counted here");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	counting__close(c);
	return e < 0 ? e : -EINVAL;
}

size_t counting__nr_events(const struct counting *c)
{
	return c->nr_ev;
}

const struct evspec *counting__event(const struct counting *c, size_t i)
{
	return i < c->nr_ev ? &c->ev[i] : NULL;
}

bool counting__supported(const struct counting *c, size_t i)
{
	return i < c->nr_ev && c->supported[i];
}

static int ioctl_all(struct counting *c, unsigned long req)
{
	size_t i;
	int e = 0;

	for (i = 0; i < c->nr_ev * c->nr_units; i++)
		if (c->fds[i] >= 0 && ioctl(c->fds[i], req, 0) && !e)
			e = -errno;
	return e;
}

int counting__enable(struct counting *c)
{
	return ioctl_all(c, PERF_EVENT_IOC_ENABLE);
}

int counting__disable(struct counting *c)
{
	return ioctl_all(c, PERF_EVENT_IOC_DISABLE);
}

int counting__read(struct counting *c, struct counting_value *v)
{
	size_t i, u;

	for (i = 0; i < c->nr_ev; i++) {
		v[i] = (struct counting_value){ 0 };
		for (u = 0; u < c->nr_units; u++) {
			uint64_t buf[3];
			int fd = c->fds[i * c->nr_units + u];

			if (fd < 0)
				continue;
			if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				return errno ? -errno : -EIO;
			v[i].val += buf[0];
			v[i].enabled += buf[1];
			v[i].running += buf[2];
		}
	}
	return 0;
}

void counting__close(struct counting *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; c->fds && i < c->nr_ev * c->nr_units; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	free(c->fds);
	free(c->ev);
	free(c->supported);
	free(c->cpus);
	free(c->tids);
	free(c);
}

struct counting_value counting_delta(const struct counting_value *now,
				     const struct counting_value *before)
{
	return (struct counting_value){
		.val = now->val - before->val,
		.enabled = now->enabled - before->enabled,
		.running = now->running - before->running,
	};
}

struct counting_result counting_scale(const struct counting_value *v, bool supported)
{
	struct counting_result r = { .state = COUNTING_COUNTED, .pct_running = 100.0 };

	if (!supported) {
		r.state = COUNTING_NOT_SUPPORTED;
		return r;
	}
	if (!v->running) {
		r.state = COUNTING_NOT_COUNTED;
		r.pct_running = 0.0;
		return r;
	}
	r.value = (double)v->val;
	if (v->running < v->enabled) {
		r.value = (double)v->val * (double)v->enabled / (double)v->running;
		r.scaled = true;
		r.pct_running = 100.0 * (double)v->running / (double)v->enabled;
	}
	return r;
}

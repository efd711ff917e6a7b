// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A collector's perf events: the sampling events, one per online CPU each
 * with the sampler attached (cycles falls back to cpu-clock where there is
 * no PMU), and the sideband events (COMM, MMAP2, FORK, EXIT) read through
 * a perf buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "collector_int.h"


static unsigned long max_sample_rate(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * How far is x from the nearest fraction a/b with b <= 8 (0: on one)?
 */
static double off_simple_fraction(double x)
{
	double best = 1;

	for (int b = 1; b <= 8; b++) {
		double y = x * b, d = (y - (double)(long long)(y + 0.5)) / b;

		if (d < 0)
			d = -d;
		if (d < best)
			best = d;
	}
	return best;
}

/*
 * RULE: a clock event sampled by frequency samples every CPU with a period
 * that is no simple fraction or multiple of the scheduler tick.
 *
 * The kernel runs a cpu-clock or task-clock asked for F Hz at the fixed
 * period 1e9/F ns on a per-CPU hrtimer.  At 4000 Hz that is 250 us, a 16th
 * of a 250 Hz tick: the sample timer keeps one phase against the tick.  A
 * task that shares its CPU is switched in at a tick (when the other task's
 * slice ends there) and is then sampled at the same offsets after each
 * switch-in, whatever it runs: its profile is biased by points, not noise
 * (under a CPU hog on each CPU, a function with 6.7 % of a tree's CPU time
 * got 3.7 % of the samples; with a period of 244.2 us, 6.8 %).  perf's
 * per-task events keep the part of the period left at the switch and do
 * not show it; per-CPU events, as here, do.  So the period is moved by at
 * most 3 % (up: the rate asked for, which kernel.perf_event_max_sample_rate
 * may cap, is never exceeded) to the one whose phase
 * against every usual tick (100, 250, 300, 1000 Hz) steps furthest from a
 * simple fraction of a turn.  Each sample carries its period, so perf
 * report's weights stay exact.  The kernel's HZ cannot be read from user
 * space, hence all four.
 */
static uint64_t clock_period(uint64_t freq)
{
	static const double ticks[] = { 1e6, 1e9 / 300, 4e6, 1e7 };
	uint64_t base = 1000000000ull / (freq ? freq : 1), best = base;
	uint64_t step = base / 20000 ? base / 20000 : 1;
	double best_score = -1;

	for (uint64_t p = base; p <= base + base * 3 / 100; p += step) {
		double score = 1;

		for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
			double r = (double)p < ticks[i] ? ticks[i] / (double)p : (double)p / ticks[i];
			double d = off_simple_fraction(r - (double)(long long)r);

			if (d < score)
				score = d;
		}
		if (score > best_score + 1e-9) {
			best_score = score;
			best = p;
		}
	}
	return best;
}

void collector__sampling_attr(const struct collector *c, size_t idx, struct perf_event_attr *a)
{
	const struct evspec *e = &c->ev[idx];

	/* :u / :k; the kernel drops the samples of the excluded side before the sampler runs */
	evspec_attr(e, a);
	if (e->tracepoint) {
		a->sample_period = 1;      /* every hit, as perf records them */
	} else if (c->spec.period) {
		a->sample_period = c->spec.period;
	} else if (evspec_is_clock(a)) {
		a->sample_period = clock_period(c->spec.freq);   /* RULE above */
	} else {
		a->freq = 1;
		a->sample_freq = c->spec.freq;
	}
	a->disabled = 1;
}

/* Open one event on every online CPU and attach the sampler to each. */
static int open_sampling(struct collector *c, size_t idx, int ncpus, char *err, size_t errlen)
{
	struct perf_event_attr a;
	LIBBPF_OPTS(bpf_perf_event_opts, popts, .bpf_cookie = idx);
	int cpu, fd, opened = 0, e = 0;

	collector__sampling_attr(c, idx, &a);
	/*
	 * RULE: a system-wide aggregated collection does not sample the idle
	 * task with a clock event: it writes its time from the kernel's idle
	 * accounting (collector_agg.c).  With exclude_idle the kernel runs no
	 * program for a tick that finds the idle task.  (The attr written to
	 * perf.data is without it: what the file holds is the same either
	 * way.)  A targeted collection, which drops the idle task's samples in
	 * the program, was meant to use it too, but never did until its spec
	 * kept that it was targeted; turned on, t-offcpu-report's first rounds
	 * went without their unwind tables more often (3 failures in 40 runs,
	 * none in 40 without), so the idle ticks are left as they were.
	 */
	if (evspec_is_clock(&a) && collector_agg_idle(c, idx))
		a.exclude_idle = 1;
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct bpf_link *l;

		fd = perf_event_open(&a, -1, cpu);
		if (fd < 0) {
			e = -errno;
			if (e == -ENODEV)      /* offline CPU */
				continue;
			return e;
		}
		l = bpf_program__attach_perf_event_opts(c->skel->progs.on_sample, fd, &popts);
		if (!l) {
			e = -errno;
			close(fd);
			snprintf(err, errlen, "cannot attach the sampler to %s on cpu %d: %s",
				 c->ev[idx].name, cpu, strerror(-e));
			return e ? e : -EINVAL;
		}
		/* libbpf enables the event on attach: it waits for a subscriber */
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		c->links[c->nr_links++] = l;
		c->pfds[c->nr_pfds++] = fd;
		c->nr_sampling_pfds = c->nr_pfds;
		opened++;
	}
	return opened ? 0 : -ENODEV;
}

int collector_open_events(struct collector *c, char *err, size_t errlen)
{
	int ncpus = libbpf_num_possible_cpus();
	unsigned long maxrate;
	size_t i;
	int e;

	if (ncpus <= 0 || ncpus > MAX_CPUS) {
		snprintf(err, errlen, "cannot count CPUs");
		return -EINVAL;
	}
	maxrate = max_sample_rate();
	if (!c->spec.period && maxrate && c->spec.freq > maxrate) {
		collector_notice(c, "frequency %llu Hz is above kernel.perf_event_max_sample_rate, using %lu Hz",
		       (unsigned long long)c->spec.freq, maxrate);
		c->spec.freq = maxrate;
	}
	c->links = calloc((size_t)ncpus * c->spec.nr_events + MAX_TP_LINKS + MAX_MARKER_LIBS, sizeof(*c->links));
	c->pfds = calloc((size_t)ncpus * c->spec.nr_events + MAX_MARKER_LIBS, sizeof(*c->pfds));
	if (!c->links || !c->pfds)
		return -ENOMEM;
	for (i = 0; i < c->spec.nr_events; i++) {
		if (c->ev[i].tracepoint)
			continue;          /* collector_tp.c */
		e = open_sampling(c, i, ncpus, err, errlen);
		if (e && (e == -ENOENT || e == -EOPNOTSUPP || e == -ENODEV) &&
		    c->ev[i].type == PERF_TYPE_HARDWARE &&
		    c->ev[i].config == PERF_COUNT_HW_CPU_CYCLES) {
			collector_notice(c, "%s is not supported here (no hardware PMU), falling back to cpu-clock",
			       c->ev[i].name);
			evspec_rebase(&c->ev[i], "cpu-clock");   /* cycles:u -> cpu-clock:u */
			e = open_sampling(c, i, ncpus, err, errlen);
		}
		if (e) {
			if (!*err) {
				if (e == -EACCES || e == -EPERM)
					snprintf(err, errlen, "%s: permission denied (need root or CAP_PERFMON)",
						 c->ev[i].name);
				else if (e == -ENOENT || e == -EOPNOTSUPP || e == -ENODEV)
					snprintf(err, errlen, "%s: not supported on this machine",
						 c->ev[i].name);
				else
					snprintf(err, errlen, "%s: cannot open event: %s",
						 c->ev[i].name, strerror(-e));
			}
			return e;
		}
	}
	return 0;
}

int collector_open_sideband(struct collector *c, perf_buffer_event_fn on_sideband,
			    char *err, size_t errlen)
{
	struct perf_event_attr a = { 0 };
	int e;

	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	a.sample_id_all = 1;
	a.mmap = 1;
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	/*
	 * No attr.build_id: kernels up to at least 6.18 set the build-id misc
	 * bit in a header shared by every event an mmap is reported to, so one
	 * build_id event corrupts every other perf user's MMAP2 records (and
	 * stock perf 6.1 then crashes).  The files' build-ids are read by synth
	 * and by perf itself.
	 */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = SIDEBAND_PAGES * 4096 / 2;
	collector_unwind_sideband_attr(c, &a);
	c->pb = perf_buffer__new_raw(c->sideband_fd, SIDEBAND_PAGES, &a, on_sideband, c, NULL);
	if (!c->pb) {
		e = -errno;
		snprintf(err, errlen, "cannot open sideband events: %s", strerror(-e));
		return e ? e : -EINVAL;
	}
	return 0;
}

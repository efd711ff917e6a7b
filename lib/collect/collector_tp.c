// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A collector's tracepoints: the program on each (bpf/tracepoint.bpf.c),
 * its config and filter (tpconfig.h).  The program of a BPF tracepoint
 * link runs on every hit whether its perf event is enabled or not, so the
 * events stay disabled and the union filter's tp_on says whether hits are
 * recorded (collector_write_filter).  A perf event on one CPU is enough:
 * the program is attached to the tracepoint, not to the event's CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "collector_int.h"
#include "tpconfig.h"

int collector_tp_setup(struct collector *c)
{
	size_t n = tpconfig_count(&c->spec);

	/* not loaded where nothing uses it: no verifier time, no risk */
	bpf_program__set_autoload(c->skel->progs.on_tracepoint, n > 0);
	return bpf_map__set_max_entries(c->skel->maps.tp_cfg, n ? (uint32_t)n : 1);
}

/* one disabled perf event on the tracepoint, on the first CPU that takes it */
static int open_tp(uint64_t id, int ncpus)
{
	struct perf_event_attr a = { 0 };
	int cpu, fd = -ENODEV;

	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = 1;
	a.disabled = 1;
	for (cpu = 0; cpu < ncpus; cpu++) {
		fd = perf_event_open(&a, -1, cpu);
		if (fd >= 0 || errno != ENODEV)
			return fd >= 0 ? fd : -errno;
	}
	return -ENODEV;
}

int collector_tp_attach(struct collector *c, char *err, size_t errlen)
{
	int ncpus = libbpf_num_possible_cpus(), cfg_fd, fd, e = 0;
	struct pm_tp_cfg *tc = malloc(sizeof(*tc));
	uint32_t k = 0;
	size_t i;

	if (!tc)
		return -ENOMEM;
	cfg_fd = bpf_map__fd(c->skel->maps.tp_cfg);
	for (i = 0; i < c->spec.nr_events && !e; i++) {
		LIBBPF_OPTS(bpf_perf_event_opts, popts, .bpf_cookie = k);
		struct bpf_link *l;

		if (!c->ev[i].tracepoint)
			continue;
		e = tpconfig_build(&c->spec, i, tc, err, errlen);
		if (e)
			break;
		if (bpf_map_update_elem(cfg_fd, &k, tc, BPF_ANY)) {
			e = -errno;
			snprintf(err, errlen, "cannot configure tracepoint %s: %s", c->ev[i].name,
				 strerror(-e));
			break;
		}
		fd = open_tp(c->ev[i].config, ncpus);
		if (fd < 0) {
			e = fd;
			snprintf(err, errlen, "%s: cannot open the tracepoint: %s%s", c->ev[i].name,
				 strerror(-e), e == -EACCES || e == -EPERM ? " (need root)" : "");
			break;
		}
		l = bpf_program__attach_perf_event_opts(c->skel->progs.on_tracepoint, fd, &popts);
		if (!l) {
			e = -errno;
			close(fd);
			snprintf(err, errlen, "cannot attach to tracepoint %s: %s", c->ev[i].name,
				 strerror(-e));
			break;
		}
		c->links[c->nr_links++] = l;
		c->pfds[c->nr_pfds++] = fd;
		c->tp_prog_fd = bpf_program__fd(c->skel->progs.on_tracepoint);
		k++;
	}
	free(tc);
	return e ? (e < 0 ? e : -EINVAL) : 0;
}

/*
 * The kernel does not run a tracing program on a CPU where one is running
 * already (a tracepoint hit inside another's helper, or in an interrupt
 * while one runs): it counts the hit in the program's recursion_misses.
 * Those are hits lost, reported with the samples the ring dropped.
 */
uint64_t collector_tp_missed(const struct collector *c)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (c->tp_prog_fd < 0 || bpf_obj_get_info_by_fd(c->tp_prog_fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

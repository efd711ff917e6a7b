// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * floor: the floor of sampling, for bench/bench-floor.sh.
 *
 *   floor empty|stacks|none|switch|switch-stacks [-F HZ] -- CMD [ARGS...]
 *
 * empty, stacks: attaches bench/floor.bpf.c's program of that name to a
 * cpu-clock event at HZ (default 4000) on every online CPU, as perfmark
 * record does, runs CMD, and detaches.  switch, switch-stacks: attaches
 * that program to sched_switch instead (the floor of --off-cpu).  none:
 * attaches nothing.  In every
 * mode the kernel's BPF run-time statistics are on while CMD runs (held
 * by a BPF_ENABLE_STATS fd, so they go back off unless someone else holds
 * them), so the programs a recorder in CMD loads can be measured too.
 *
 * Prints on stderr "floor: MODE runs N ns_per_run X entries M" (runs and
 * the mean run time of the program attached, entries: distinct
 * (pid, kernel stack, user stack) counted), and exits with CMD's status.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"

#define MAX_CPUS 1024

static int usage(void)
{
	fprintf(stderr, "usage: floor empty|stacks|none|switch|switch-stacks [-F HZ] -- CMD [ARGS...]\n");
	return 2;
}

static int on_rec(void *ctx, void *data, size_t size)
{
	(*(long *)ctx)++;
	return 0;
}

/* CMD, the rings (if any) drained every 100 ms meanwhile, as a recorder does */
static int run(char **cmd, struct ring_buffer *rb)
{
	int status;
	pid_t pid = fork(), w;

	if (pid < 0)
		return -errno;
	if (!pid) {
		execvp(cmd[0], cmd);
		fprintf(stderr, "floor: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	for (;;) {
		w = waitpid(pid, &status, rb ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (rb) {
			usleep(100000);
			ring_buffer__consume(rb);
		}
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static long count_entries(int fd)
{
	unsigned char key[64], next[64];
	long n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1, .sample_freq = 4000,
	};
	struct bpf_link *links[MAX_CPUS];
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	struct bpf_program *prog = NULL;
	struct floor_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	long nrec = 0;
	const char *mode;
	int i, ncpus, nlinks = 0, stats_fd, rc;

	if (argc < 4)
		return usage();
	mode = argv[1];
	i = 2;
	if (!strcmp(argv[i], "-F") && i + 1 < argc) {
		a.sample_freq = strtoul(argv[i + 1], NULL, 10);
		i += 2;
	}
	if (i >= argc || strcmp(argv[i], "--") || i + 1 >= argc || !a.sample_freq)
		return usage();
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		fprintf(stderr, "floor: cannot enable BPF statistics: %s\n", strerror(errno));
	if (strcmp(mode, "none")) {
		ncpus = libbpf_num_possible_cpus();
		skel = floor_bpf__open();
		if (!skel)
			return 1;
		bpf_map__set_max_entries(skel->maps.rings, ncpus);
		if (floor_bpf__load(skel)) {
			fprintf(stderr, "floor: cannot load the BPF programs: %s\n", strerror(errno));
			return 1;
		}
		if (!strcmp(mode, "empty"))
			prog = skel->progs.floor_empty;
		else if (!strcmp(mode, "stacks"))
			prog = skel->progs.floor_stacks;
		else if (!strcmp(mode, "ring"))
			prog = skel->progs.floor_ring;
		else if (!strcmp(mode, "ringpc"))
			prog = skel->progs.floor_ringpc;
		else if (!strcmp(mode, "switch"))
			prog = skel->progs.floor_switch;
		else if (!strcmp(mode, "switch-stacks"))
			prog = skel->progs.floor_switch_stacks;
		else
			return usage();
		if (prog == skel->progs.floor_ring)
			rb = ring_buffer__new(bpf_map__fd(skel->maps.ring), on_rec, &nrec, NULL);
		for (int cpu = 0; prog == skel->progs.floor_ringpc && cpu < ncpus; cpu++) {
			int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, 1 << 20, NULL);
			__u32 k = cpu;

			if (fd < 0 || bpf_map_update_elem(bpf_map__fd(skel->maps.rings), &k, &fd, 0))
				return 1;
			if (!rb)
				rb = ring_buffer__new(fd, on_rec, &nrec, NULL);
			else
				ring_buffer__add(rb, fd, on_rec, &nrec);
		}
		if (prog == skel->progs.floor_switch || prog == skel->progs.floor_switch_stacks) {
			links[nlinks] = bpf_program__attach(prog);
			if (!links[nlinks]) {
				fprintf(stderr, "floor: attach %s: %s\n", mode, strerror(errno));
				return 1;
			}
			nlinks++;
			ncpus = 0;   /* no sampling event */
		}
		for (int cpu = 0; cpu < ncpus && cpu < MAX_CPUS; cpu++) {
			int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

			if (fd < 0) {
				if (errno == ENODEV)
					continue;
				fprintf(stderr, "floor: perf_event_open cpu %d: %s\n", cpu, strerror(errno));
				return 1;
			}
			links[nlinks] = bpf_program__attach_perf_event(prog, fd);
			if (!links[nlinks]) {
				fprintf(stderr, "floor: attach cpu %d: %s\n", cpu, strerror(errno));
				return 1;
			}
			nlinks++;
		}
	}
	rc = run(&argv[i + 1], rb);
	if (rc < 0) {
		fprintf(stderr, "floor: %s: %s\n", argv[i + 1], strerror(-rc));
		rc = 127;
	}
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);   /* closes the events */
	if (prog && !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		fprintf(stderr, "floor: %s runs %llu ns_per_run %.0f entries %ld\n", mode,
			(unsigned long long)info.run_cnt,
			info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0,
			rb ? nrec : count_entries(bpf_map__fd(skel->maps.counts)));
	ring_buffer__free(rb);
	floor_bpf__destroy(skel);
	if (stats_fd >= 0)
		close(stats_fd);
	return rc;
}

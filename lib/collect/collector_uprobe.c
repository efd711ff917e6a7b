// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The uprobes of the markers' sites: a perf-event uprobe per site, or
 * uprobe_multi links (Linux 6.6), several uprobes of one file on one BPF
 * link, where the kernel has them.  Taking a uprobe off waits for the
 * kernel's grace periods (tasks-trace RCU and SRCU), and the perf event
 * under a per-site link waits again as it goes (its tracepoint's
 * unregistration): measured on Linux 6.18, closing the two perf-event links
 * of a recording took 150 to 270 ms, closing one uprobe_multi link with the
 * same two sites 20 to 36 ms.  libbpf 1.1 (Debian 12) has no call for them,
 * so the link is made by the bpf() system call, with the attribute laid out
 * as the kernel's uapi has it: the kernel reads only the bytes it is given
 * and wants those it does not know to be zero.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "perfmark.skel.h"
#include "collector_int.h"

static int read_sysfs_int(const char *path, int *out)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", out) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/*
 * Opened here rather than by libbpf so the collector owns the fd: a pinned
 * collector must be able to close it without detaching.
 */
int collector_uprobe_open(const char *path, uint64_t offset, uint64_t ref_ctr_offset)
{
	struct perf_event_attr a = { 0 };
	int type, e;

	e = read_sysfs_int("/sys/bus/event_source/devices/uprobe/type", &type);
	if (e)
		return e;
	a.size = sizeof(a);
	a.type = type;
	a.config = ref_ctr_offset << 32;   /* format: ref_ctr_offset = config:32-63 */
	a.config1 = (uint64_t)(uintptr_t)path;
	a.config2 = offset;
	a.sample_period = 1;
	a.wakeup_events = 1;
	e = perf_event_open(&a, -1, 0);
	return e < 0 ? -errno : e;
}


/* union bpf_attr's link_create, as far as its uprobe_multi member */
struct umulti_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t umulti_flags;
	uint32_t pid;
	uint32_t pad;
};

static int link_create(int prog_fd, const char *path, const uint64_t *off, const uint64_t *ref,
		       const uint64_t *cookie, uint32_t n)
{
	struct umulti_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = COLLECTOR_ATTACH_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)off;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)ref;
	a.cookies = (uint64_t)(uintptr_t)cookie;
	a.cnt = n;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

int collector_umulti_link(int prog_fd, const char *path, const uint64_t *off, const uint64_t *ref,
			  const uint64_t *cookie, uint32_t n)
{
	if (!n)
		return -EINVAL;
	return link_create(prog_fd, path, off, ref, cookie, n);
}

/*
 * Whether this kernel makes uprobe_multi links: a program of that attach
 * type loads, and a link on a directory is refused for being one (EBADF),
 * not for its attach type (EINVAL).  Asked once a process.
 */
bool collector_umulti_ok(void)
{
	static int ok = -1;
	const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = COLLECTOR_ATTACH_UPROBE_MULTI);
	const uint64_t off = 0;
	int prog, l;

	if (ok >= 0)
		return ok;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "pm_umulti", "GPL", ret0, 2, &o);
	if (prog < 0) {
		ok = 0;
		return false;
	}
	l = link_create(prog, "/", &off, NULL, NULL, 1);
	ok = l == -EBADF;
	if (l >= 0)
		close(l);
	close(prog);
	return ok;
}

/*
 * Before the load: the marker programs this collector attaches, on_probe on
 * uprobe_multi links where the kernel has them, else on_register, on_trap
 * and on_marker on a perf event each; none without markers (never verified).
 */
void collector_uprobe_setup(struct collector *c)
{
	struct bpf_program *one[] = {
		c->skel->progs.on_register, c->skel->progs.on_trap, c->skel->progs.on_marker,
	};

	c->umulti = c->spec.markers && collector_umulti_ok();
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		bpf_program__set_autoload(one[i], c->spec.markers && !c->umulti);
	bpf_program__set_autoload(c->skel->progs.on_probe, c->umulti);
	if (c->umulti)
		bpf_program__set_expected_attach_type(c->skel->progs.on_probe,
						      (enum bpf_attach_type)COLLECTOR_ATTACH_UPROBE_MULTI);
}

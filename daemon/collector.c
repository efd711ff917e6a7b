// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Collectors: BPF programs on perf events and on libperfmark's probe site,
 * shared by every session with the same settings.  See collector.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.skel.h"
#include "perfmark_wire.h"
#include "collector.h"
#include "usdt.h"

#ifndef PERFMARK_LIBDIR
#define PERFMARK_LIBDIR "/usr/local/lib/x86_64-linux-gnu"
#endif

#define DEFAULT_RINGBUF   (16u << 20)
#define SIDEBAND_PAGES    64          /* per CPU */
#define MAX_CPUS          1024
#define MAX_MARKER_LIBS   4
#define MAX_UIDS          64

struct marker_lib {
	char path[PATH_MAX];
	dev_t dev;
	ino_t ino;
};

struct collector {
	struct collector *next;        /* registry */
	int refs;
	struct collector_key key;      /* in force (rate may be clamped) */
	struct collector_key req;      /* as asked, for sharing */
	struct evspec ev[EVSPEC_MAX];  /* after fallback */
	struct perfmark_bpf *skel;     /* NULL when adopted */
	int rb_fd, targets_fd, bss_fd, cfg_fd, uids_fd, exec_fd, sideband_fd;
	bool own_fds;                  /* adopted: the map fds are ours to close */
	int own_sideband_fd;
	uint32_t rb_id;                /* identity of the pinned ring, for adoption */
	struct ring_buffer *rb;
	struct perf_buffer *pb;
	struct bpf_link **links;
	int *pfds;                     /* sampling events, then uprobe events */
	size_t nr_links, nr_pfds, nr_sampling_pfds;
	char **pin_dirs;               /* where this collector is pinned */
	size_t nr_pin_dirs;
	struct marker_lib libs[MAX_MARKER_LIBS];
	size_t nr_libs;
	struct collector_sub *subs[COLLECTOR_MAX_SUBS];
	size_t nr_subs;
	size_t nr_active;
	bool pinned, adopted;
	/* union filter, kept here and written whole to the maps */
	uint32_t nr_all;
	struct { uint32_t uid, count; } uids[MAX_UIDS];
	size_t nr_uids;
	collector_notice_fn notice;
	void *notice_ctx;
};

static struct collector *registry;

static void notice(struct collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(struct collector *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!c->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->notice(c->notice_ctx, msg);
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (getenv("PERFMARK_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* --- dispatch --------------------------------------------------------------- */

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	size_t i;

	for (i = 0; i < c->nr_subs; i++)
		if (c->subs[i]->active)
			c->subs[i]->on_ring(c->subs[i]->ctx, data, size);
	return 0;
}

static enum bpf_perf_event_ret on_sideband(void *ctx, int cpu, struct perf_event_header *h)
{
	struct collector *c = ctx;
	size_t i;

	for (i = 0; i < c->nr_subs; i++)
		if (c->subs[i]->active)
			c->subs[i]->on_sideband(c->subs[i]->ctx, h);
	return LIBBPF_PERF_EVENT_CONT;
}

/*
 * Sideband first: a FORK read before the ring lets sessions recognise the
 * new child's samples.
 */
void collector__consume(struct collector *c)
{
	perf_buffer__consume(c->pb);
	ring_buffer__consume(c->rb);
}

void collector__lost(const struct collector *c, uint64_t *samples, uint64_t *markers)
{
	struct perfmark_bpf__bss bss;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(c->bss_fd, &zero, &bss))
		memset(&bss, 0, sizeof(bss));
	*samples = bss.lost_samples;
	*markers = bss.lost_markers;
}

/* --- union filter ------------------------------------------------------------- */

static void write_cfg(struct collector *c)
{
	struct pm_cfg cfg = { .all = c->nr_all, .nr_uids = c->nr_uids };
	uint32_t zero = 0;

	bpf_map_update_elem(c->cfg_fd, &zero, &cfg, BPF_ANY);
}

static void clear_uids_map(struct collector *c)
{
	uint32_t k, next;

	while (!bpf_map_get_next_key(c->uids_fd, NULL, &next)) {
		k = next;
		if (bpf_map_delete_elem(c->uids_fd, &k))
			break;
	}
}

/* the whole union filter, from the subscribers' counts */
static void write_filter(struct collector *c)
{
	size_t i;

	clear_uids_map(c);
	for (i = 0; i < c->nr_uids; i++)
		bpf_map_update_elem(c->uids_fd, &c->uids[i].uid, &c->uids[i].count, BPF_ANY);
	write_cfg(c);
}

static int uid_count(struct collector *c, uint32_t uid, int delta)
{
	size_t i;

	for (i = 0; i < c->nr_uids; i++)
		if (c->uids[i].uid == uid)
			break;
	if (i == c->nr_uids) {
		if (delta < 0)
			return 0;
		if (c->nr_uids == MAX_UIDS)
			return -ENOSPC;
		c->uids[c->nr_uids].uid = uid;
		c->uids[c->nr_uids++].count = 0;
	}
	c->uids[i].count += delta;
	if (!c->uids[i].count)
		c->uids[i] = c->uids[--c->nr_uids];
	return 0;
}

int collector__subscribe(struct collector *c, struct collector_sub *sub)
{
	int e = 0;

	if (c->nr_subs == COLLECTOR_MAX_SUBS)
		return -ENOSPC;
	if (sub->all && sub->uid == (uint32_t)-1) {
		c->nr_all++;
	} else if (sub->all) {
		e = uid_count(c, sub->uid, 1);
		if (e)
			return e;
	}
	c->subs[c->nr_subs++] = sub;
	write_filter(c);
	return 0;
}

void collector__unsubscribe(struct collector *c, struct collector_sub *sub)
{
	size_t i;

	for (i = 0; i < c->nr_subs; i++)
		if (c->subs[i] == sub)
			break;
	if (i == c->nr_subs)
		return;
	if (sub->active)
		collector__activate(c, sub, false);
	memmove(&c->subs[i], &c->subs[i + 1], (c->nr_subs - i - 1) * sizeof(c->subs[0]));
	c->nr_subs--;
	if (sub->all && sub->uid == (uint32_t)-1)
		c->nr_all--;
	else if (sub->all)
		uid_count(c, sub->uid, -1);
	/*
	 * A pinned collector goes on collecting for its sessions while no
	 * process holds them (a daemon restart): its filter narrows only when
	 * a session's pins are removed (collector__unpin).
	 */
	if (!c->pinned)
		write_filter(c);
}

void collector__activate(struct collector *c, struct collector_sub *sub, bool active)
{
	size_t i;

	if (sub->active == active)
		return;
	sub->active = active;
	if (active && c->nr_active++ == 0) {
		for (i = 0; i < c->nr_sampling_pfds; i++)
			ioctl(c->pfds[i], PERF_EVENT_IOC_ENABLE, 0);
	} else if (!active && --c->nr_active == 0 && !c->pinned) {
		/* a pinned collector keeps sampling for its sessions */
		for (i = 0; i < c->nr_sampling_pfds; i++)
			ioctl(c->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
	}
}

static int set_pid(int map_fd, pid_t pid)
{
	uint32_t p = pid;
	uint8_t one = 1;

	if (bpf_map_update_elem(map_fd, &p, &one, BPF_ANY))
		return -errno;
	return 0;
}

int collector__add_pid_on_exec(struct collector *c, pid_t pid)
{
	return set_pid(c->exec_fd, pid);
}

int collector__add_pid(struct collector *c, pid_t pid)
{
	return set_pid(c->targets_fd, pid);
}

/* --- events ---------------------------------------------------------------- */

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

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

void collector__sampling_attr(const struct collector *c, size_t idx, struct perf_event_attr *a)
{
	const struct evspec *e = &c->ev[idx];

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = e->type;
	a->config = e->config;
	if (c->key.period) {
		a->sample_period = c->key.period;
	} else {
		a->freq = 1;
		a->sample_freq = c->key.freq ? c->key.freq : 4000;
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

static int open_events(struct collector *c, char *err, size_t errlen)
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
	if (!c->key.period && maxrate && c->key.freq > maxrate) {
		notice(c, "frequency %llu Hz is above kernel.perf_event_max_sample_rate, using %lu Hz",
		       (unsigned long long)c->key.freq, maxrate);
		c->key.freq = maxrate;
	}
	c->links = calloc((size_t)ncpus * c->key.nr_ev + 8 + MAX_MARKER_LIBS, sizeof(*c->links));
	c->pfds = calloc((size_t)ncpus * c->key.nr_ev + MAX_MARKER_LIBS, sizeof(*c->pfds));
	if (!c->links || !c->pfds)
		return -ENOMEM;
	for (i = 0; i < c->key.nr_ev; i++) {
		e = open_sampling(c, i, ncpus, err, errlen);
		if (e && (e == -ENOENT || e == -EOPNOTSUPP || e == -ENODEV) &&
		    c->ev[i].type == PERF_TYPE_HARDWARE &&
		    c->ev[i].config == PERF_COUNT_HW_CPU_CYCLES) {
			notice(c, "%s is not supported here (no hardware PMU), falling back to cpu-clock",
			       c->ev[i].name);
			evspec_lookup("cpu-clock", &c->ev[i]);
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

static int open_sideband(struct collector *c, char *err, size_t errlen)
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
	c->pb = perf_buffer__new_raw(c->sideband_fd, SIDEBAND_PAGES, &a, on_sideband, c, NULL);
	if (!c->pb) {
		e = -errno;
		snprintf(err, errlen, "cannot open sideband events: %s", strerror(-e));
		return e ? e : -EINVAL;
	}
	return 0;
}

/* --- markers ---------------------------------------------------------------- */

static void add_marker_lib(struct collector *c, const char *path)
{
	struct stat sb;
	size_t i;

	if (c->nr_libs == MAX_MARKER_LIBS || stat(path, &sb) || !S_ISREG(sb.st_mode))
		return;
	for (i = 0; i < c->nr_libs; i++)
		if (c->libs[i].dev == sb.st_dev && c->libs[i].ino == sb.st_ino)
			return;
	snprintf(c->libs[c->nr_libs].path, sizeof(c->libs[0].path), "%s", path);
	c->libs[c->nr_libs].dev = sb.st_dev;
	c->libs[c->nr_libs].ino = sb.st_ino;
	c->nr_libs++;
}

/*
 * libperfmark.so files to watch: $PERFMARK_LIB (colon separated), the one
 * next to this executable (a build tree), the installed one.
 */
static void find_marker_libs(struct collector *c)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *env, *tok, *save = NULL, *slash;
	ssize_t n;

	env = getenv("PERFMARK_LIB");
	if (env && *env) {
		char *dup = strdup(env);

		for (tok = dup ? strtok_r(dup, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save))
			add_marker_lib(c, tok);
		free(dup);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/libperfmark.so.0", exe);
			add_marker_lib(c, path);
			snprintf(path, sizeof(path), "%s/../lib/x86_64-linux-gnu/libperfmark.so.0", exe);
			add_marker_lib(c, path);
		}
	}
	add_marker_lib(c, PERFMARK_LIBDIR "/libperfmark.so.0");
}

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
 * A system-wide uprobe perf event (pid -1) with the semaphore the kernel
 * raises in every process that maps the file.  Opened here rather than by
 * libbpf so the collector owns the fd: a pinned collector must be able to
 * close it without detaching.
 */
static int open_uprobe(const char *path, uint64_t offset, uint64_t ref_ctr_offset)
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

static int attach_markers(struct collector *c, char *err, size_t errlen)
{
	size_t i;

	find_marker_libs(c);
	for (i = 0; i < c->nr_libs; i++) {
		struct usdt_probe p;
		struct bpf_link *l;
		int e, fd;

		e = usdt_find(c->libs[i].path, "perfmark", "uevent", &p);
		if (e) {
			notice(c, "%s: no perfmark probe site (%s), markers from it are not recorded",
			       c->libs[i].path, strerror(-e));
			continue;
		}
		fd = open_uprobe(c->libs[i].path, p.pc_offset, p.sema_offset);
		if (fd < 0) {
			snprintf(err, errlen, "cannot open the marker probe on %s: %s",
				 c->libs[i].path, strerror(-fd));
			return fd;
		}
		l = bpf_program__attach_perf_event(c->skel->progs.on_marker, fd);
		if (!l) {
			e = -errno;
			close(fd);
			snprintf(err, errlen, "cannot attach the marker probe to %s: %s",
				 c->libs[i].path, strerror(-e));
			return e ? e : -EINVAL;
		}
		c->links[c->nr_links++] = l;
		c->pfds[c->nr_pfds++] = fd;
	}
	return 0;
}

/* --- life cycle ------------------------------------------------------------ */

#define PROC_PID_INIT_INO 0xEFFFFFFCu   /* the initial pid namespace's fixed inode */

/* our pid namespace (its dev/ino), and whether it is the initial one */
static void own_pidns(uint64_t *dev, uint64_t *ino, bool *init)
{
	struct stat sb;

	*dev = *ino = 0;
	*init = true;
	if (!stat("/proc/self/ns/pid", &sb)) {
		*dev = sb.st_dev;
		*ino = sb.st_ino;
		*init = sb.st_ino == PROC_PID_INIT_INO;
	}
}

static bool same_key(const struct collector_key *a, const struct collector_key *b)
{
	size_t i;

	if (a->nr_ev != b->nr_ev || a->freq != b->freq || a->period != b->period ||
	    a->callchain != b->callchain || a->markers != b->markers ||
	    a->ringbuf_size != b->ringbuf_size)
		return false;
	for (i = 0; i < a->nr_ev; i++)
		if (a->ev[i].type != b->ev[i].type || a->ev[i].config != b->ev[i].config)
			return false;
	return true;
}

static uint32_t map_id(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/* no events means the default one */
static void normalize_key(const struct collector_key *in, struct collector_key *out)
{
	*out = *in;
	if (!out->nr_ev) {
		evspec_lookup("cycles", &out->ev[0]);
		out->nr_ev = 1;
	}
}

static struct collector *collector_alloc(const struct collector_key *key)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	normalize_key(key, &c->key);
	c->req = c->key;
	memcpy(c->ev, c->key.ev, sizeof(c->ev));
	c->rb_fd = c->targets_fd = c->bss_fd = c->cfg_fd = c->uids_fd = c->exec_fd = -1;
	c->sideband_fd = c->own_sideband_fd = -1;
	c->refs = 1;
	return c;
}

static void collector_free(struct collector *c)
{
	struct collector **pp;
	size_t i;

	for (pp = &registry; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	ring_buffer__free(c->rb);
	perf_buffer__free(c->pb);
	for (i = 0; i < c->nr_links; i++) {
		if (c->pinned) {
			/* leave it attached, the pins hold it: close, don't detach */
			int fd = bpf_link__fd(c->links[i]);

			bpf_link__disconnect(c->links[i]);
			bpf_link__destroy(c->links[i]);
			if (fd >= 0)
				close(fd);
		} else {
			bpf_link__destroy(c->links[i]);   /* closes the perf event fds too */
		}
	}
	if (c->pinned)
		for (i = 0; i < c->nr_pfds; i++)
			close(c->pfds[i]);
	for (i = 0; i < c->nr_pin_dirs; i++)
		free(c->pin_dirs[i]);
	free(c->pin_dirs);
	free(c->links);
	free(c->pfds);
	perfmark_bpf__destroy(c->skel);
	if (c->own_fds) {
		int fds[] = { c->rb_fd, c->targets_fd, c->bss_fd, c->cfg_fd, c->uids_fd, c->exec_fd };

		for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	if (c->own_sideband_fd >= 0)
		close(c->own_sideband_fd);
	free(c);
}

void collector__put(struct collector *c)
{
	if (c && --c->refs == 0)
		collector_free(c);
}

static int collector_open_ring(struct collector *c, char *err, size_t errlen)
{
	int e = open_sideband(c, err, errlen);

	if (e)
		return e;
	c->rb = ring_buffer__new(c->rb_fd, on_ringbuf, c, NULL);
	if (!c->rb) {
		e = -errno;
		snprintf(err, errlen, "cannot open ring buffer: %s", strerror(-e));
		return e ? e : -EINVAL;
	}
	c->rb_id = map_id(c->rb_fd);
	return 0;
}

/* the last step of both constructors: read the ring, join the registry */
static int collector_publish(struct collector *c, struct collector **out, char *err, size_t errlen)
{
	int e = collector_open_ring(c, err, errlen);

	if (e)
		return e;
	c->next = registry;
	registry = c;
	*out = c;
	return 0;
}

int collector__get(struct collector **out, const struct collector_key *key,
		   collector_notice_fn notice_fn, void *notice_ctx,
		   char *err, size_t errlen)
{
	struct collector_key want;
	struct collector *c;
	size_t rbsize;
	int e;

	*out = NULL;
	err[0] = '\0';
	libbpf_set_print(silent_print);
	normalize_key(key, &want);
	for (c = registry; c; c = c->next) {
		if (!c->adopted && same_key(&c->req, &want)) {
			c->refs++;
			*out = c;
			return 0;
		}
	}
	c = collector_alloc(key);
	if (!c)
		return -ENOMEM;
	c->notice = notice_fn;
	c->notice_ctx = notice_ctx;
	c->skel = perfmark_bpf__open();
	if (!c->skel) {
		e = -errno;
		snprintf(err, errlen, "cannot open BPF object: %s", strerror(-e));
		goto fail;
	}
	c->skel->rodata->want_callchain = key->callchain;
	{
		uint64_t dev, ino;
		bool init;

		own_pidns(&dev, &ino, &init);
		c->skel->rodata->pidns_dev = dev;
		c->skel->rodata->pidns_ino = ino;
		c->skel->rodata->pidns_init = init;
	}
	rbsize = key->ringbuf_size ? key->ringbuf_size : DEFAULT_RINGBUF;
	c->skel->rodata->wakeup_bytes = rbsize / 2;
	bpf_map__set_max_entries(c->skel->maps.rb, rbsize);
	e = perfmark_bpf__load(c->skel);
	if (e) {
		if (e == -EPERM || e == -EACCES)
			snprintf(err, errlen, "cannot load BPF programs: permission denied (run as root)");
		else
			snprintf(err, errlen, "cannot load BPF programs: %s", strerror(-e));
		goto fail;
	}
	c->rb_fd = bpf_map__fd(c->skel->maps.rb);
	c->targets_fd = bpf_map__fd(c->skel->maps.targets);
	c->bss_fd = bpf_map__fd(c->skel->maps.bss);
	c->cfg_fd = bpf_map__fd(c->skel->maps.cfg);
	c->uids_fd = bpf_map__fd(c->skel->maps.uids);
	c->exec_fd = bpf_map__fd(c->skel->maps.exec_pending);
	c->sideband_fd = bpf_map__fd(c->skel->maps.sideband);
	e = open_events(c, err, errlen);
	if (e)
		goto fail;
	{
		struct bpf_link *l;

		l = bpf_program__attach(c->skel->progs.on_fork);
		if (l)
			c->links[c->nr_links++] = l;
		l = bpf_program__attach(c->skel->progs.on_exit);
		if (l)
			c->links[c->nr_links++] = l;
		l = bpf_program__attach(c->skel->progs.on_exec);
		if (l)
			c->links[c->nr_links++] = l;
	}
	if (key->markers) {
		e = attach_markers(c, err, errlen);
		if (e)
			goto fail;
	}
	c->notice = NULL;   /* only ever told during creation */
	e = collector_publish(c, out, err, errlen);
	if (e)
		goto fail;
	return 0;
fail:
	collector_free(c);
	return e ? e : -EINVAL;
}

/* --- pinning: collection that outlives the daemon --------------------- */

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static int pin_fd(int fd, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (bpf_obj_pin(fd, path) && errno != EEXIST)
		return -errno;
	return 0;
}

static int add_pin_dir(struct collector *c, const char *dir)
{
	char **nd = realloc(c->pin_dirs, (c->nr_pin_dirs + 1) * sizeof(*nd));

	if (!nd)
		return -ENOMEM;
	c->pin_dirs = nd;
	nd[c->nr_pin_dirs] = strdup(dir);
	if (!nd[c->nr_pin_dirs])
		return -ENOMEM;
	c->nr_pin_dirs++;
	c->pinned = true;
	return 0;
}

int collector__pin(struct collector *c, const char *dir)
{
	struct { int fd; const char *name; } maps[] = {
		{ c->rb_fd, "rb" }, { c->targets_fd, "targets" }, { c->bss_fd, "bss" },
		{ c->cfg_fd, "cfg" }, { c->uids_fd, "uids" }, { c->exec_fd, "exec" },
	};
	char name[32];
	size_t i;
	int e;

	if (c->adopted)
		return -EOPNOTSUPP;   /* its links are held by other pins only */
	e = mkdir_p(dir);
	if (e)
		return e;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		e = pin_fd(maps[i].fd, dir, maps[i].name);
		if (e)
			return e;
	}
	for (i = 0; i < c->nr_links; i++) {
		snprintf(name, sizeof(name), "link%zu", i);
		e = pin_fd(bpf_link__fd(c->links[i]), dir, name);
		if (e)
			return e;
	}
	e = add_pin_dir(c, dir);
	if (e)
		return e;
	return 0;
}

int collector__unpin(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct collector *c;
	size_t i;
	DIR *d;

	/* the last pin gone: the collector's fds are all that keeps it */
	for (c = registry; c; c = c->next) {
		for (i = 0; i < c->nr_pin_dirs; i++) {
			if (strcmp(c->pin_dirs[i], dir))
				continue;
			free(c->pin_dirs[i]);
			c->pin_dirs[i] = c->pin_dirs[--c->nr_pin_dirs];
			if (!c->nr_pin_dirs)
				c->pinned = false;
			write_filter(c);   /* that session's share is gone */
			break;
		}
	}
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	if (rmdir(dir))
		return -errno;
	return 0;
}

static int pinned_fd(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

int collector__adopt(struct collector **out, const struct collector_key *key,
		     const char *pin_dir, char *err, size_t errlen)
{
	int ncpus = libbpf_num_possible_cpus(), rb_fd, e;
	struct collector *c;
	uint32_t id;

	*out = NULL;
	err[0] = '\0';
	libbpf_set_print(silent_print);
	rb_fd = pinned_fd(pin_dir, "rb");
	if (rb_fd < 0) {
		snprintf(err, errlen, "nothing pinned under %s", pin_dir);
		return -ENOENT;
	}
	id = map_id(rb_fd);
	for (c = registry; c; c = c->next) {
		if (c->adopted && id && c->rb_id == id) {
			close(rb_fd);
			e = add_pin_dir(c, pin_dir);
			if (e)
				return e;
			c->refs++;
			*out = c;
			return 0;
		}
	}
	c = collector_alloc(key);
	if (!c) {
		close(rb_fd);
		return -ENOMEM;
	}
	c->adopted = true;
	c->own_fds = true;
	e = add_pin_dir(c, pin_dir);
	if (e) {
		close(rb_fd);
		collector_free(c);
		return e;
	}
	c->rb_fd = rb_fd;
	c->targets_fd = pinned_fd(pin_dir, "targets");
	c->bss_fd = pinned_fd(pin_dir, "bss");
	c->cfg_fd = pinned_fd(pin_dir, "cfg");
	c->uids_fd = pinned_fd(pin_dir, "uids");
	c->exec_fd = pinned_fd(pin_dir, "exec");
	if (c->targets_fd < 0 || c->bss_fd < 0 || c->cfg_fd < 0 || c->uids_fd < 0 ||
	    c->exec_fd < 0) {
		e = -ENOENT;
		snprintf(err, errlen, "incomplete pins under %s", pin_dir);
		goto fail;
	}
	/*
	 * The union filter stays as the last daemon left it (collection goes
	 * on) and is rewritten as the sessions subscribe again.
	 */
	c->own_sideband_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "pm_sideband",
					    sizeof(int), sizeof(int), ncpus > 0 ? ncpus : 1, NULL);
	if (c->own_sideband_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot create the sideband map: %s", strerror(-e));
		goto fail;
	}
	c->sideband_fd = c->own_sideband_fd;
	e = collector_publish(c, out, err, errlen);
	if (e)
		goto fail;
	return 0;
fail:
	collector_free(c);
	return e ? e : -EINVAL;
}

/* --- accessors ------------------------------------------------------------ */

const struct evspec *collector__events(const struct collector *c, size_t *nr)
{
	*nr = c->key.nr_ev;
	return c->ev;
}

int collector__fds(const struct collector *c, int *fds, size_t max)
{
	size_t n = 0;

	if (n < max && c->rb)
		fds[n++] = ring_buffer__epoll_fd(c->rb);
	if (n < max && c->pb)
		fds[n++] = perf_buffer__epoll_fd(c->pb);
	return n;
}

size_t collector__marker_libs(const struct collector *c, const char **paths, size_t max)
{
	size_t i;

	for (i = 0; i < c->nr_libs && i < max; i++)
		paths[i] = c->libs[i].path;
	return c->nr_libs;
}

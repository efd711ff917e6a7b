// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The session engine.  See session.h for the life cycle.
 *
 * Records reach the engine from two places: the BPF ringbuf (samples and
 * markers, already in perfmark's wire format, see bpf/perfmark.h) and the
 * perf buffers of one dummy event per CPU that the kernel fills with COMM,
 * MMAP2, FORK and EXIT sideband.  Each drain encodes everything into perf
 * records in a staging area, sorts by time, and hands to the writer what is
 * older than the drain time minus a safety margin; the rest waits for the
 * next round.  A record that still arrives late is clamped to the last
 * round's maximum so no round ever goes back in time.
 */
#include <errno.h>
#include <stdarg.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
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
#include "perfdata.h"
#include "session.h"
#include "synth.h"
#include "uevent.h"
#include "usdt.h"

#ifndef PERFMARK_LIBDIR
#define PERFMARK_LIBDIR "/usr/local/lib/x86_64-linux-gnu"
#endif

#define DEFAULT_RINGBUF   (16u << 20)
#define SIDEBAND_PAGES    64          /* per CPU */
#define REORDER_MARGIN_NS (50ull * 1000 * 1000)
#define MAX_CPUS          1024
#define MAX_MARKER_LIBS   4

#define ID_PRINTF 100
#define ID_UEVENT 101

#define SAMPLE_TYPE_BASE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* markers carry the probe site's address so perf names it, not [unknown] */
#define MARKER_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)
/* offset of the TIME field: header, IDENTIFIER, IP, TID */
#define SAMPLE_TIME_OFF 32
#define MARKER_TIME_OFF 32

struct staged {
	uint64_t time;
	uint64_t seq;
	uint32_t off, len;
	uint32_t time_off;
};

struct stage {
	char *buf;
	size_t len, cap;
	struct staged *idx;
	size_t n, cap_idx;
	uint64_t seq;
};

struct pidset {
	uint32_t *slots;      /* 0 = empty; pid 0 is never a target */
	size_t cap, n;
};

struct marker_lib {
	char path[PATH_MAX];
	dev_t dev;
	ino_t ino;
};

struct session {
	struct session_opts o;
	struct perfmark_bpf *skel;     /* NULL for an adopted session */
	int rb_fd, targets_fd, bss_fd, sideband_fd;
	int own_sideband_fd;           /* adopted: our own perf event array */
	struct ring_buffer *rb;
	struct perf_buffer *pb;
	struct bpf_link **links;
	int *pfds;                     /* sampling event fds, owned by links */
	size_t nr_links, nr_pfds;
	struct evspec ev[EVSPEC_MAX];  /* after fallback */
	size_t nr_ev;
	uint64_t sample_type;
	struct marker_lib libs[MAX_MARKER_LIBS];
	size_t nr_libs;
	struct perfdata_writer *w;
	struct stage st;
	struct pidset pids;
	struct pidset uid_ok, uid_bad;  /* uid filter on sideband, by pid */
	uint64_t t0;                   /* before anything was attached */
	uint64_t last_round_max;
	uint64_t lost_samples_seen, lost_markers_seen, lost_sideband;
	struct session_stats stats;
	char *chain_buf;               /* scratch for callchain building */
	int err;                       /* sticky writer error */
	bool started, stopped, pinned, adopted;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void notice(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(struct session *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!s->o.notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->o.notice(s->o.notice_ctx, msg);
}

/* --- pid set (user-space mirror of the BPF targets map) ----------------- */

static bool pidset_has(const struct pidset *p, uint32_t pid)
{
	size_t i;

	if (!p->cap || !pid)
		return false;
	for (i = (pid * 2654435761u) & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
		if (p->slots[i] == pid)
			return true;
	return false;
}

static int pidset_add(struct pidset *p, uint32_t pid)
{
	size_t i;

	if (!pid || pidset_has(p, pid))
		return 0;
	if ((p->n + 1) * 2 > p->cap) {
		struct pidset np = { .cap = p->cap ? p->cap * 2 : 64 };

		np.slots = calloc(np.cap, sizeof(*np.slots));
		if (!np.slots)
			return -ENOMEM;
		for (i = 0; i < p->cap; i++)
			if (p->slots[i])
				pidset_add(&np, p->slots[i]);
		free(p->slots);
		*p = np;
	}
	for (i = (pid * 2654435761u) & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
		;
	p->slots[i] = pid;
	p->n++;
	return 0;
}

/* --- staging area --------------------------------------------------------- */

/* room for one record of len bytes; stays valid until the next stage_alloc */
static void *stage_alloc(struct stage *st, uint32_t len, uint64_t time, uint32_t time_off)
{
	struct staged *e;

	if (st->len + len > st->cap) {
		size_t cap = st->cap ? st->cap : 1 << 20;
		char *nb;

		while (cap < st->len + len)
			cap *= 2;
		nb = realloc(st->buf, cap);
		if (!nb)
			return NULL;
		st->buf = nb;
		st->cap = cap;
	}
	if (st->n == st->cap_idx) {
		size_t cap = st->cap_idx ? st->cap_idx * 2 : 16384;
		struct staged *ni = realloc(st->idx, cap * sizeof(*ni));

		if (!ni)
			return NULL;
		st->idx = ni;
		st->cap_idx = cap;
	}
	e = &st->idx[st->n++];
	e->time = time;
	e->seq = st->seq++;
	e->off = st->len;
	e->len = len;
	e->time_off = time_off;
	st->len += len;
	return st->buf + e->off;
}

static int staged_cmp(const void *a, const void *b)
{
	const struct staged *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* --- encoding what the ringbuf delivers ---------------------------------- */

static int stage_sample(struct session *s, const struct pm_sample *ps, size_t size)
{
	uint64_t *ips = (uint64_t *)s->chain_buf;
	struct perfdata_sample ds = { 0 };
	uint32_t nk = ps->nr_kstack, nu = ps->nr_ustack, n = 0, i;
	size_t len;
	void *rec;

	if (size < sizeof(*ps) || ps->event >= s->nr_ev ||
	    nk > PM_MAX_STACK || nu > PM_MAX_STACK ||
	    size < sizeof(*ps) + (nk + nu) * sizeof(uint64_t))
		return 0;
	ds.id = ps->event + 1;
	ds.ip = ps->ip;
	ds.pid = ps->pid;
	ds.tid = ps->tid;
	ds.time = ps->time;
	ds.cpu = ps->cpu;
	ds.period = ps->period;
	ds.misc = ps->user_mode ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	if (s->o.callchain) {
		if (nk) {
			ips[n++] = PERF_CONTEXT_KERNEL;
			for (i = 0; i < nk; i++)
				ips[n++] = ps->stack[i];
		}
		if (nu) {
			ips[n++] = PERF_CONTEXT_USER;
			for (i = 0; i < nu; i++)
				ips[n++] = ps->stack[nk + i];
		}
		if (!n) {
			ips[n++] = ps->user_mode ? PERF_CONTEXT_USER : PERF_CONTEXT_KERNEL;
			ips[n++] = ps->ip;
		}
		ds.nr_ips = n;
		ds.ips = ips;
	}
	len = perfdata_sample_size(s->sample_type, &ds);
	rec = stage_alloc(&s->st, len, ds.time, SAMPLE_TIME_OFF);
	if (!rec)
		return -ENOMEM;
	perfdata_encode_sample(rec, s->sample_type, &ds);
	s->stats.samples++;
	return 0;
}

/* A clean string (NUL-terminated, no NUL inside) goes out as perfmark:printf. */
static bool is_clean_string(const struct pm_marker *m)
{
	return m->type == PERFMARK_TYPE_STRING && !m->flags && m->size &&
	       m->data[m->size - 1] == '\0' && memchr(m->data, '\0', m->size) == m->data + m->size - 1;
}

/*
 * A JIT code marker names a code region: append it to /tmp/perf-PID.map,
 * where stock perf looks up symbols of anonymous executable memory.  We may
 * be root and /tmp is shared: never follow a link, and only append to a
 * file owned by root or by the process's owner.
 */
static void jit_perf_map(const struct pm_marker *pm)
{
	struct {
		uint64_t addr, size;
	} h;
	char path[64], line[PM_MAX_PAYLOAD + 64], proc[32];
	const char *name;
	struct stat sb, pb;
	size_t nlen;
	int fd, n;

	if (pm->size < sizeof(h) + 1 || (pm->flags & PM_F_FAULT))
		return;
	memcpy(&h, pm->data, sizeof(h));
	name = (const char *)pm->data + sizeof(h);
	nlen = strnlen(name, pm->size - sizeof(h));
	snprintf(proc, sizeof(proc), "/proc/%u", pm->pid);
	if (stat(proc, &pb))
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pm->pid);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (sb.st_uid != 0 && sb.st_uid != pb.st_uid)) {
		close(fd);
		return;
	}
	if (sb.st_uid == 0 && sb.st_size == 0 && pb.st_uid != 0)
		(void)!fchown(fd, pb.st_uid, pb.st_gid);
	n = snprintf(line, sizeof(line), "%llx %llx %.*s\n", (unsigned long long)h.addr,
		     (unsigned long long)h.size, (int)nlen, name);
	if (n > 0)
		(void)!write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	close(fd);
}

static int stage_marker(struct session *s, const struct pm_marker *pm, size_t size)
{
	struct perfdata_sample ds = { 0 };
	struct perfmark_uevent_hdr *h;
	size_t len;
	void *rec;

	if (size < sizeof(*pm) || pm->size > PM_MAX_PAYLOAD || size < sizeof(*pm) + pm->size)
		return 0;
	if (pm->type == PERFMARK_TYPE_JIT_CODE)
		jit_perf_map(pm);
	ds.ip = pm->ip;
	ds.pid = pm->pid;
	ds.tid = pm->tid;
	ds.time = pm->time;
	ds.cpu = pm->cpu;
	ds.period = 1;
	ds.misc = PERF_RECORD_MISC_USER;
	if (is_clean_string(pm)) {
		ds.id = ID_PRINTF;
		ds.raw = pm->data;
		ds.raw_size = pm->size;
	} else {
		/* the uevent header goes just before the payload, in a copy */
		h = (struct perfmark_uevent_hdr *)s->chain_buf;
		h->version = PERFMARK_UEVENT_VERSION;
		h->flags = pm->flags;
		h->type = pm->type;
		h->size = pm->size;
		h->orig_size = pm->orig_size;
		memcpy(h + 1, pm->data, pm->size);
		ds.id = ID_UEVENT;
		ds.raw = h;
		ds.raw_size = sizeof(*h) + pm->size;
	}
	len = perfdata_sample_size(MARKER_SAMPLE_TYPE, &ds);
	rec = stage_alloc(&s->st, len, ds.time, MARKER_TIME_OFF);
	if (!rec)
		return -ENOMEM;
	perfdata_encode_sample(rec, MARKER_SAMPLE_TYPE, &ds);
	s->stats.markers++;
	return 0;
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const uint32_t *tag = data;

	if (size < sizeof(*tag))
		return 0;
	switch (*tag) {
	case PM_REC_SAMPLE:
		return stage_sample(s, data, size);
	case PM_REC_MARKER:
		return stage_marker(s, data, size);
	}
	return 0;
}

/* --- sideband from the dummy events ------------------------------------- */

/* Is pid owned by the uid the session is limited to?  Cached per pid. */
static bool uid_allows(struct session *s, uint32_t pid)
{
	char path[32];
	struct stat sb;

	if (s->o.uid_filter == (uint32_t)-1 || pid == (uint32_t)-1)
		return true;
	if (pidset_has(&s->uid_ok, pid))
		return true;
	if (pidset_has(&s->uid_bad, pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (!stat(path, &sb) && sb.st_uid == s->o.uid_filter) {
		pidset_add(&s->uid_ok, pid);
		return true;
	}
	pidset_add(&s->uid_bad, pid);
	return false;
}

/* Does this sideband record concern a target?  Follows forks. */
static bool sideband_wanted(struct session *s, const struct perf_event_header *h)
{
	const uint32_t *body = (const uint32_t *)(h + 1);

	if (h->type != PERF_RECORD_LOST && !uid_allows(s, body[0]))
		return false;
	if (s->o.target == SESSION_TARGET_ALL)
		return true;
	switch (h->type) {
	case PERF_RECORD_MMAP:
		return body[0] == (uint32_t)-1 || pidset_has(&s->pids, body[0]);
	case PERF_RECORD_FORK:
		/* body: pid, ppid, tid, ptid */
		/*
		 * Only forks by a target: a CMD child's own fork from perfmark
		 * would make perf forget the COMM synthesized for it.
		 */
		if (!pidset_has(&s->pids, body[1]))
			return false;
		pidset_add(&s->pids, body[0]);
		return true;
	case PERF_RECORD_LOST:
		return true;
	default:
		return pidset_has(&s->pids, body[0]);
	}
}

static enum bpf_perf_event_ret on_sideband(void *ctx, int cpu, struct perf_event_header *h)
{
	struct session *s = ctx;
	uint64_t time, *trailer_id;
	void *rec;

	if (h->size < sizeof(*h) + 8 + PERFDATA_SAMPLE_ID_SIZE || (h->size & 7))
		return LIBBPF_PERF_EVENT_CONT;
	switch (h->type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		break;
	case PERF_RECORD_LOST:
		s->lost_sideband += ((const uint64_t *)(h + 1))[1];
		break;
	default:
		return LIBBPF_PERF_EVENT_CONT;
	}
	if (!sideband_wanted(s, h))
		return LIBBPF_PERF_EVENT_CONT;
	memcpy(&time, (const char *)h + h->size - 24, sizeof(time));
	rec = stage_alloc(&s->st, h->size, time, h->size - 24);
	if (!rec) {
		s->err = -ENOMEM;
		return LIBBPF_PERF_EVENT_ERROR;
	}
	memcpy(rec, h, h->size);
	/* the sideband is written as belonging to the first sampling event */
	trailer_id = (uint64_t *)((char *)rec + h->size - 8);
	*trailer_id = 1;
	if (h->type == PERF_RECORD_LOST)
		((uint64_t *)((struct perf_event_header *)rec + 1))[0] = 1;
	s->stats.sideband++;
	return LIBBPF_PERF_EVENT_CONT;
}

static int on_synth(void *ctx, const void *rec, size_t len)
{
	struct session *s = ctx;
	const struct perf_event_header *h = rec;
	uint64_t time;
	void *p;

	if (len < sizeof(*h) + PERFDATA_SAMPLE_ID_SIZE || len != h->size)
		return -EINVAL;
	memcpy(&time, (const char *)rec + len - 24, sizeof(time));
	p = stage_alloc(&s->st, len, time, len - 24);
	if (!p)
		return -ENOMEM;
	memcpy(p, rec, len);
	s->stats.sideband++;
	return 0;
}

/* PERF_RECORD_LOST_SAMPLES for drops counted in BPF since the last drain */
static int stage_lost(struct session *s, uint64_t lost, uint64_t id, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint64_t lost;
		uint8_t sid[PERFDATA_SAMPLE_ID_SIZE];
	} *r;
	struct perfdata_sample_id sid = { .pid = 0, .tid = 0, .time = time, .cpu = 0, .id = id };

	r = stage_alloc(&s->st, sizeof(*r), time, sizeof(*r) - 24);
	if (!r)
		return -ENOMEM;
	r->h.type = PERF_RECORD_LOST_SAMPLES;
	r->h.misc = 0;
	r->h.size = sizeof(*r);
	r->lost = lost;
	perfdata_encode_sample_id(r->sid, &sid);
	return 0;
}

/* --- events ---------------------------------------------------------------- */

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void sampling_attr(const struct session *s, const struct evspec *e,
			  struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = e->type;
	a->config = e->config;
	if (s->o.period) {
		a->sample_period = s->o.period;
	} else {
		a->freq = 1;
		a->sample_freq = s->o.freq ? s->o.freq : 4000;
	}
	a->disabled = 1;
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

/* Open one event on every online CPU and attach the sampler to each. */
static int open_sampling(struct session *s, size_t idx, int ncpus, char *err, size_t errlen)
{
	struct perf_event_attr a;
	LIBBPF_OPTS(bpf_perf_event_opts, popts, .bpf_cookie = idx);
	int cpu, fd, opened = 0, e = 0;

	sampling_attr(s, &s->ev[idx], &a);
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct bpf_link *l;

		fd = perf_event_open(&a, -1, cpu);
		if (fd < 0) {
			e = -errno;
			if (e == -ENODEV)      /* offline CPU */
				continue;
			return e;
		}
		l = bpf_program__attach_perf_event_opts(s->skel->progs.on_sample, fd, &popts);
		if (!l) {
			e = -errno;
			close(fd);
			snprintf(err, errlen, "cannot attach the sampler to %s on cpu %d: %s",
				 s->ev[idx].name, cpu, strerror(-e));
			return e ? e : -EINVAL;
		}
		/* libbpf enables the event on attach; start() enables it again */
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		s->links[s->nr_links++] = l;
		s->pfds[s->nr_pfds++] = fd;
		opened++;
	}
	return opened ? 0 : -ENODEV;
}

static int open_events(struct session *s, char *err, size_t errlen)
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
	if (!s->o.period && maxrate && s->o.freq > maxrate) {
		notice(s, "frequency %llu Hz is above kernel.perf_event_max_sample_rate, using %lu Hz",
		       (unsigned long long)s->o.freq, maxrate);
		s->o.freq = maxrate;
	}
	s->links = calloc((size_t)ncpus * s->nr_ev + 8, sizeof(*s->links));
	s->pfds = calloc((size_t)ncpus * s->nr_ev, sizeof(*s->pfds));
	if (!s->links || !s->pfds)
		return -ENOMEM;
	for (i = 0; i < s->nr_ev; i++) {
		e = open_sampling(s, i, ncpus, err, errlen);
		if (e && s->ev[i].hardware && (e == -ENOENT || e == -EOPNOTSUPP || e == -ENODEV) &&
		    s->ev[i].type == PERF_TYPE_HARDWARE &&
		    s->ev[i].config == PERF_COUNT_HW_CPU_CYCLES) {
			notice(s, "%s is not supported here (no hardware PMU), falling back to cpu-clock",
			       s->ev[i].name);
			evspec_lookup("cpu-clock", &s->ev[i]);
			e = open_sampling(s, i, ncpus, err, errlen);
		}
		if (e) {
			if (!*err) {
				if (e == -EACCES || e == -EPERM)
					snprintf(err, errlen, "%s: permission denied (need root or CAP_PERFMON)",
						 s->ev[i].name);
				else if (e == -ENOENT || e == -EOPNOTSUPP || e == -ENODEV)
					snprintf(err, errlen, "%s: not supported on this machine",
						 s->ev[i].name);
				else
					snprintf(err, errlen, "%s: cannot open event: %s",
						 s->ev[i].name, strerror(-e));
			}
			return e;
		}
	}
	return 0;
}

static int open_sideband(struct session *s, char *err, size_t errlen)
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
	a.build_id = 1;          /* MMAP2 carries the build-id, not dev/inode */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = SIDEBAND_PAGES * 4096 / 2;
	s->pb = perf_buffer__new_raw(s->sideband_fd, SIDEBAND_PAGES,
				     &a, on_sideband, s, NULL);
	if (!s->pb) {
		e = -errno;
		snprintf(err, errlen, "cannot open sideband events: %s", strerror(-e));
		return e ? e : -EINVAL;
	}
	return 0;
}

/* --- markers ---------------------------------------------------------------- */

static void add_marker_lib(struct session *s, const char *path)
{
	struct stat sb;
	size_t i;

	if (s->nr_libs == MAX_MARKER_LIBS || stat(path, &sb) || !S_ISREG(sb.st_mode))
		return;
	for (i = 0; i < s->nr_libs; i++)
		if (s->libs[i].dev == sb.st_dev && s->libs[i].ino == sb.st_ino)
			return;
	snprintf(s->libs[s->nr_libs].path, sizeof(s->libs[0].path), "%s", path);
	s->libs[s->nr_libs].dev = sb.st_dev;
	s->libs[s->nr_libs].ino = sb.st_ino;
	s->nr_libs++;
}

/*
 * libperfmark.so files to watch: $PERFMARK_LIB (colon separated), the one
 * next to this executable (a build tree), the installed one.
 */
static void find_marker_libs(struct session *s)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *env, *tok, *save = NULL, *slash;
	ssize_t n;

	env = getenv("PERFMARK_LIB");
	if (env && *env) {
		char *dup = strdup(env);

		for (tok = dup ? strtok_r(dup, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save))
			add_marker_lib(s, tok);
		free(dup);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/libperfmark.so.0", exe);
			add_marker_lib(s, path);
			snprintf(path, sizeof(path), "%s/../lib/x86_64-linux-gnu/libperfmark.so.0", exe);
			add_marker_lib(s, path);
		}
	}
	add_marker_lib(s, PERFMARK_LIBDIR "/libperfmark.so.0");
}

static int attach_markers(struct session *s, char *err, size_t errlen)
{
	size_t i;

	find_marker_libs(s);
	for (i = 0; i < s->nr_libs; i++) {
		struct usdt_probe p;
		struct bpf_link *l;
		LIBBPF_OPTS(bpf_uprobe_opts, uo);
		int e;

		e = usdt_find(s->libs[i].path, "perfmark", "uevent", &p);
		if (e) {
			notice(s, "%s: no perfmark probe site (%s), markers from it are not recorded",
			       s->libs[i].path, strerror(-e));
			continue;
		}
		uo.ref_ctr_offset = p.sema_offset;
		l = bpf_program__attach_uprobe_opts(s->skel->progs.on_marker, -1,
						    s->libs[i].path, p.pc_offset, &uo);
		if (!l) {
			e = -errno;
			snprintf(err, errlen, "cannot attach the marker probe to %s: %s",
				 s->libs[i].path, strerror(-e));
			return e ? e : -EINVAL;
		}
		s->links[s->nr_links++] = l;
	}
	return 0;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (getenv("PERFMARK_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
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

static int pin_all(struct session *s)
{
	const char *dir = s->o.pin_dir;
	struct { struct bpf_map *map; const char *name; } maps[] = {
		{ s->skel->maps.rb, "rb" },
		{ s->skel->maps.targets, "targets" },
		{ s->skel->maps.bss, "bss" },
	};
	char path[PATH_MAX];
	size_t i;
	int e;

	e = mkdir_p(dir);
	if (e)
		return e;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, maps[i].name);
		e = bpf_map__pin(maps[i].map, path);
		if (e)
			return e;
	}
	for (i = 0; i < s->nr_links; i++) {
		snprintf(path, sizeof(path), "%s/link%zu", dir, i);
		e = bpf_link__pin(s->links[i], path);
		if (e)
			return e;
	}
	s->pinned = true;
	return 0;
}

int session__unpin(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

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

int session__adopt(struct session **out, const struct session_opts *opts,
		   char *err, size_t errlen)
{
	struct session *s;
	int ncpus = libbpf_num_possible_cpus(), e;

	*out = NULL;
	err[0] = '\0';
	libbpf_set_print(silent_print);
	if (!opts->pin_dir || !opts->nr_events)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *opts;
	s->adopted = true;
	s->pinned = true;
	s->t0 = 0;          /* synthesized state goes before the backlog */
	s->rb_fd = s->targets_fd = s->bss_fd = s->sideband_fd = s->own_sideband_fd = -1;
	memcpy(s->ev, opts->events, opts->nr_events * sizeof(s->ev[0]));
	s->nr_ev = opts->nr_events;
	s->sample_type = SAMPLE_TYPE_BASE | (opts->callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	s->chain_buf = malloc(sizeof(uint64_t) * (2 * PM_MAX_STACK + 4) + PM_MAX_PAYLOAD + 64);
	if (!s->chain_buf) {
		e = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < opts->nr_pids; i++)
		pidset_add(&s->pids, opts->pids[i]);
	s->rb_fd = pinned_fd(opts->pin_dir, "rb");
	s->targets_fd = pinned_fd(opts->pin_dir, "targets");
	s->bss_fd = pinned_fd(opts->pin_dir, "bss");
	if (s->rb_fd < 0 || s->targets_fd < 0 || s->bss_fd < 0) {
		e = -ENOENT;
		snprintf(err, errlen, "nothing pinned under %s", opts->pin_dir);
		goto fail;
	}
	s->own_sideband_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "pm_sideband",
					    sizeof(int), sizeof(int), ncpus > 0 ? ncpus : 1, NULL);
	if (s->own_sideband_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot create the sideband map: %s", strerror(-e));
		goto fail;
	}
	s->sideband_fd = s->own_sideband_fd;
	e = open_sideband(s, err, errlen);
	if (e)
		goto fail;
	s->rb = ring_buffer__new(s->rb_fd, on_ringbuf, s, NULL);
	if (!s->rb) {
		e = -errno;
		snprintf(err, errlen, "cannot open the pinned ring buffer: %s", strerror(-e));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	session__free(s);
	return e ? e : -EINVAL;
}

/* --- life cycle ------------------------------------------------------------ */

int session__new(struct session **out, const struct session_opts *opts,
		 char *err, size_t errlen)
{
	struct session *s;
	size_t rbsize;
	int e;

	*out = NULL;
	err[0] = '\0';
	libbpf_set_print(silent_print);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *opts;
	s->rb_fd = s->targets_fd = s->bss_fd = s->sideband_fd = s->own_sideband_fd = -1;
	s->t0 = mono_ns();
	if (opts->nr_events) {
		memcpy(s->ev, opts->events, opts->nr_events * sizeof(s->ev[0]));
		s->nr_ev = opts->nr_events;
	} else {
		evspec_lookup("cycles", &s->ev[0]);
		s->nr_ev = 1;
	}
	s->sample_type = SAMPLE_TYPE_BASE | (opts->callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	s->chain_buf = malloc(sizeof(uint64_t) * (2 * PM_MAX_STACK + 4) + PM_MAX_PAYLOAD + 64);
	if (!s->chain_buf) {
		e = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < opts->nr_pids; i++)
		pidset_add(&s->pids, opts->pids[i]);

	s->skel = perfmark_bpf__open();
	if (!s->skel) {
		e = -errno;
		snprintf(err, errlen, "cannot open BPF object: %s", strerror(-e));
		goto fail;
	}
	s->skel->rodata->filter_mode = opts->target == SESSION_TARGET_ALL ? PM_FILTER_ALL : PM_FILTER_PIDS;
	s->skel->rodata->filter_uid = opts->uid_filter;
	s->skel->rodata->want_callchain = opts->callchain;
	rbsize = opts->ringbuf_size ? opts->ringbuf_size : DEFAULT_RINGBUF;
	s->skel->rodata->wakeup_bytes = rbsize / 2;
	bpf_map__set_max_entries(s->skel->maps.rb, rbsize);
	e = perfmark_bpf__load(s->skel);
	if (e) {
		if (e == -EPERM || e == -EACCES)
			snprintf(err, errlen, "cannot load BPF programs: permission denied (run as root)");
		else
			snprintf(err, errlen, "cannot load BPF programs: %s", strerror(-e));
		goto fail;
	}
	s->rb_fd = bpf_map__fd(s->skel->maps.rb);
	s->targets_fd = bpf_map__fd(s->skel->maps.targets);
	s->bss_fd = bpf_map__fd(s->skel->maps.bss);
	s->sideband_fd = bpf_map__fd(s->skel->maps.sideband);
	for (size_t i = 0; i < opts->nr_pids; i++) {
		uint32_t pid = opts->pids[i];
		uint8_t one = 1;

		bpf_map_update_elem(s->targets_fd, &pid, &one, BPF_ANY);
	}
	e = open_events(s, err, errlen);
	if (e)
		goto fail;
	if (opts->target == SESSION_TARGET_PIDS) {
		struct bpf_link *l;

		l = bpf_program__attach(s->skel->progs.on_fork);
		if (l)
			s->links[s->nr_links++] = l;
		l = bpf_program__attach(s->skel->progs.on_exit);
		if (l)
			s->links[s->nr_links++] = l;
	}
	if (opts->markers) {
		e = attach_markers(s, err, errlen);
		if (e)
			goto fail;
	}
	e = open_sideband(s, err, errlen);
	if (e)
		goto fail;
	s->rb = ring_buffer__new(s->rb_fd, on_ringbuf, s, NULL);
	if (!s->rb) {
		e = -errno;
		snprintf(err, errlen, "cannot open ring buffer: %s", strerror(-e));
		goto fail;
	}
	if (opts->pin_dir) {
		e = pin_all(s);
		if (e) {
			snprintf(err, errlen, "cannot pin under %s: %s", opts->pin_dir, strerror(-e));
			session__unpin(opts->pin_dir);
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	session__free(s);
	return e ? e : -EINVAL;
}

int session__add_pid(struct session *s, pid_t pid)
{
	uint32_t p = pid;
	uint8_t one = 1;
	int e;

	e = pidset_add(&s->pids, p);
	if (e)
		return e;
	if (s->o.nr_pids < SESSION_MAX_PIDS)
		s->o.pids[s->o.nr_pids++] = pid;
	if (bpf_map_update_elem(s->targets_fd, &p, &one, BPF_ANY))
		return -errno;
	return 0;
}

void session__set_output(struct session *s, int fd, bool pipe)
{
	s->o.out_fd = fd;
	s->o.pipe = pipe;
}

size_t session__events(const struct session *s, struct perfdata_event *evs,
		       uint64_t *ids, size_t max)
{
	static const char *const marker_names[2] = { "perfmark:printf", "perfmark:uevent" };
	size_t n = 0, i;

	for (i = 0; i < s->nr_ev && n < max; i++, n++) {
		struct perf_event_attr *a = &evs[n].attr;

		memset(&evs[n], 0, sizeof(evs[n]));
		sampling_attr(s, &s->ev[i], a);
		a->disabled = 0;
		a->sample_type = s->sample_type;
		a->sample_id_all = 1;
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		if (i == 0) {   /* the sideband is written as this event's */
			a->mmap = 1;
			a->mmap2 = 1;
			a->comm = 1;
			a->comm_exec = 1;
			a->task = 1;
		}
		ids[n] = i + 1;
		evs[n].ids = &ids[n];
		evs[n].nr_ids = 1;
		evs[n].name = s->ev[i].name;
	}
	for (i = 0; s->o.markers && i < 2 && n < max; i++, n++) {
		struct perf_event_attr *a = &evs[n].attr;

		memset(&evs[n], 0, sizeof(evs[n]));
		a->size = sizeof(*a);
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_BPF_OUTPUT;
		a->sample_period = 1;
		a->sample_type = MARKER_SAMPLE_TYPE;
		a->sample_id_all = 1;
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		ids[n] = i ? ID_UEVENT : ID_PRINTF;
		evs[n].ids = &ids[n];
		evs[n].nr_ids = 1;
		evs[n].name = marker_names[i];
	}
	return n;
}

static int build_writer(struct session *s)
{
	struct perfdata_event evs[EVSPEC_MAX + 2];
	uint64_t ids[EVSPEC_MAX + 2];
	struct perfdata_writer_opts wo = {
		.fd = s->o.out_fd,
		.pipe = s->o.pipe,
		.zstd_level = s->o.zstd_level,
		.argc = s->o.argc,
		.argv = s->o.argv,
	};
	size_t n = session__events(s, evs, ids, EVSPEC_MAX + 2);

	wo.clock_ref_mono_ns = mono_ns();
	wo.clock_ref_real_ns = real_ns();
	return perfdata_writer__new(&s->w, &wo, evs, n);
}

int session__start(struct session *s, char *err, size_t errlen)
{
	struct synth_opts so = { .id = 1, .time = s->t0, .uid_filter = s->o.uid_filter };
	size_t i;
	int e;

	err[0] = '\0';
	e = s->o.sink ? 0 : build_writer(s);
	if (e) {
		snprintf(err, errlen, "cannot write the output header: %s", strerror(-e));
		return e;
	}
	synth_kernel(&so, on_synth, s);
	if (s->o.target == SESSION_TARGET_ALL) {
		synth_all(&so, on_synth, s);
	} else {
		for (i = 0; i < s->o.nr_pids; i++)
			synth_process(s->o.pids[i], &so, on_synth, s);
	}
	for (i = 0; i < s->nr_pfds; i++)
		ioctl(s->pfds[i], PERF_EVENT_IOC_ENABLE, 0);
	s->started = true;
	return 0;
}

int session__fds(const struct session *s, int *fds, size_t max)
{
	size_t n = 0;

	if (n < max && s->rb)
		fds[n++] = ring_buffer__epoll_fd(s->rb);
	if (n < max && s->pb)
		fds[n++] = perf_buffer__epoll_fd(s->pb);
	return n;
}

/* Write out staged records up to cutoff, as one round. */
static int flush_staged(struct session *s, uint64_t cutoff)
{
	struct stage *st = &s->st;
	size_t i, keep = 0;
	uint64_t max = s->last_round_max;
	int e = 0;

	qsort(st->idx, st->n, sizeof(*st->idx), staged_cmp);
	for (i = 0; i < st->n; i++) {
		struct staged *x = &st->idx[i];
		char *rec = st->buf + x->off;

		if (x->time > cutoff)
			break;
		if (x->time < s->last_round_max) {  /* late: never go back in time */
			x->time = s->last_round_max;
			memcpy(rec + x->time_off, &x->time, sizeof(x->time));
		}
		if (x->time > max)
			max = x->time;
		if (!e && s->w)
			e = perfdata_writer__add(s->w, rec, x->len);
		if (!e && s->o.sink)
			e = s->o.sink->record(s->o.sink_ctx, rec, x->len);
	}
	/* keep the rest, compacted */
	if (i < st->n) {
		char *nb = malloc(st->cap);
		size_t len = 0;

		if (!nb)
			return -ENOMEM;
		for (; i < st->n; i++, keep++) {
			struct staged *x = &st->idx[i];

			memcpy(nb + len, st->buf + x->off, x->len);
			x->off = len;
			len += x->len;
			st->idx[keep] = *x;
		}
		free(st->buf);
		st->buf = nb;
		st->len = len;
	} else {
		st->len = 0;
	}
	st->n = keep;
	s->last_round_max = max;
	if (!e && s->w)
		e = perfdata_writer__round(s->w);
	if (!e && s->o.sink && s->o.sink->round)
		e = s->o.sink->round(s->o.sink_ctx);
	return e;
}

static int drain(struct session *s, uint64_t cutoff, uint64_t now)
{
	uint64_t ls, lm;
	int e;

	if (s->err)
		return s->err;
	if (!s->started)
		return 0;
	ring_buffer__consume(s->rb);
	perf_buffer__consume(s->pb);
	{
		struct perfmark_bpf__bss bss;
		uint32_t zero = 0;

		if (bpf_map_lookup_elem(s->bss_fd, &zero, &bss))
			memset(&bss, 0, sizeof(bss));
		ls = bss.lost_samples;
		lm = bss.lost_markers;
	}
	if (ls > s->lost_samples_seen) {
		stage_lost(s, ls - s->lost_samples_seen, 1, now - REORDER_MARGIN_NS);
		s->lost_samples_seen = ls;
	}
	if (lm > s->lost_markers_seen && s->o.markers) {
		stage_lost(s, lm - s->lost_markers_seen, ID_UEVENT, now - REORDER_MARGIN_NS);
		s->lost_markers_seen = lm;
	}
	e = flush_staged(s, cutoff);
	if (e)
		s->err = e;
	return e;
}

int session__drain(struct session *s)
{
	uint64_t now = mono_ns();

	return drain(s, now - REORDER_MARGIN_NS, now);
}

int session__stop(struct session *s)
{
	size_t i;
	int e;

	if (s->stopped)
		return s->err;
	for (i = 0; i < s->nr_pfds; i++)
		ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
	e = drain(s, UINT64_MAX, mono_ns() + REORDER_MARGIN_NS);
	s->stopped = true;
	if (s->w) {
		int f = perfdata_writer__finish(s->w);

		if (!e)
			e = f;
	}
	if (e)
		s->err = e;
	return e;
}

void session__stats(const struct session *s, struct session_stats *st)
{
	struct perfdata_stats ws = { 0 };

	*st = s->stats;
	st->lost_samples = s->lost_samples_seen;
	st->lost_markers = s->lost_markers_seen;
	if (s->w)
		perfdata_writer__stats(s->w, &ws);
	st->bytes = ws.bytes;
	st->raw_bytes = ws.raw_bytes;
}

const char *session__event_name(const struct session *s, size_t i)
{
	return i < s->nr_ev ? s->ev[i].name : NULL;
}

size_t session__marker_libs(const struct session *s, const char **paths, size_t max)
{
	size_t i;

	for (i = 0; i < s->nr_libs && i < max; i++)
		paths[i] = s->libs[i].path;
	return s->nr_libs;
}

void session__free(struct session *s)
{
	size_t i;

	if (!s)
		return;
	ring_buffer__free(s->rb);
	perf_buffer__free(s->pb);
	for (i = 0; i < s->nr_links; i++) {
		/* pinned: leave it attached, the pin holds it */
		if (s->pinned)
			bpf_link__disconnect(s->links[i]);
		bpf_link__destroy(s->links[i]);   /* closes the perf event fds too */
	}
	if (s->adopted) {
		if (s->rb_fd >= 0)
			close(s->rb_fd);
		if (s->targets_fd >= 0)
			close(s->targets_fd);
		if (s->bss_fd >= 0)
			close(s->bss_fd);
	}
	if (s->own_sideband_fd >= 0)
		close(s->own_sideband_fd);
	free(s->links);
	free(s->pfds);
	perfmark_bpf__destroy(s->skel);
	perfdata_writer__free(s->w);
	free(s->st.buf);
	free(s->st.idx);
	free(s->pids.slots);
	free(s->uid_ok.slots);
	free(s->uid_bad.slots);
	free(s->chain_buf);
	free(s);
}

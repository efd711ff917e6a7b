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

#include "perfmark_wire.h"
#include "collector.h"
#include "perfdata.h"
#include "session.h"
#include "synth.h"
#include "uevent.h"

#define REORDER_MARGIN_NS (50ull * 1000 * 1000)

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

struct session {
	struct session_opts o;
	struct collector *c;
	struct collector_sub sub;
	struct evspec ev[EVSPEC_MAX];  /* after fallback */
	size_t nr_ev;
	uint64_t sample_type;
	struct perfdata_writer *w;
	struct stage st;
	struct pidset pids;
	struct pidset uid_ok, uid_bad;  /* uid filter on sideband, by pid */
	struct pidset not_ours;        /* pids known not to be targets' children */
	uint64_t t0;                   /* before anything was attached */
	uint64_t last_round_max;
	uint64_t lost_samples_seen, lost_markers_seen;
	struct session_stats stats;
	char *chain_buf;               /* scratch for callchain building */
	int err;                       /* sticky writer error */
	bool started, stopped;
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

static void on_sideband(void *ctx, const struct perf_event_header *h)
{
	struct session *s = ctx;
	uint64_t time, *trailer_id;
	void *rec;

	if (h->size < sizeof(*h) + 8 + PERFDATA_SAMPLE_ID_SIZE || (h->size & 7))
		return;
	switch (h->type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
		break;
	default:
		return;
	}
	if (!sideband_wanted(s, h))
		return;
	memcpy(&time, (const char *)h + h->size - 24, sizeof(time));
	rec = stage_alloc(&s->st, h->size, time, h->size - 24);
	if (!rec) {
		s->err = -ENOMEM;
		return;
	}
	memcpy(rec, h, h->size);
	/*
	 * We never ask for build-ids in MMAP2: a set build-id bit is another
	 * perf user's event leaking into ours (a kernel bug), the body holds
	 * dev/inode.
	 */
	if (h->type == PERF_RECORD_MMAP2)
		((struct perf_event_header *)rec)->misc &= ~PERF_RECORD_MISC_MMAP_BUILD_ID;
	/* the sideband is written as belonging to the first sampling event */
	trailer_id = (uint64_t *)((char *)rec + h->size - 8);
	*trailer_id = 1;
	if (h->type == PERF_RECORD_LOST)
		((uint64_t *)((struct perf_event_header *)rec + 1))[0] = 1;
	s->stats.sideband++;
}

/*
 * A process this session has not heard of: a child of a target whose FORK
 * has not been read yet (the ring is read just after the sideband)?
 */
static bool child_of_target(struct session *s, uint32_t pid)
{
	char path[40], line[128];
	uint32_t ppid = 0;
	FILE *f;

	if (pidset_has(&s->not_ours, pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "PPid: %u", &ppid) == 1)
				break;
		fclose(f);
	}
	if (ppid && pidset_has(&s->pids, ppid)) {
		pidset_add(&s->pids, pid);
		return true;
	}
	pidset_add(&s->not_ours, pid);
	return false;
}

/* The session's exact share of what the union filter in BPF let through. */
static bool record_wanted(struct session *s, uint32_t pid, uint32_t uid)
{
	/* pid 0: idle, or a task outside our pid namespace; never a user's */
	if (s->o.uid_filter != (uint32_t)-1 && (uid != s->o.uid_filter || !pid))
		return false;
	if (s->o.target == SESSION_TARGET_ALL)
		return true;
	return pidset_has(&s->pids, pid) || child_of_target(s, pid);
}

static void on_ring(void *ctx, const void *data, size_t size)
{
	struct session *s = ctx;
	const struct pm_sample *ps = data;
	const struct pm_marker *pm = data;

	if (size < sizeof(uint32_t))
		return;
	switch (ps->rec_type) {
	case PM_REC_SAMPLE:
		if (size >= sizeof(*ps) && record_wanted(s, ps->pid, ps->uid) &&
		    stage_sample(s, ps, size))
			s->err = -ENOMEM;
		break;
	case PM_REC_MARKER:
		if (size >= sizeof(*pm) && record_wanted(s, pm->pid, pm->uid) &&
		    stage_marker(s, pm, size))
			s->err = -ENOMEM;
		break;
	}
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

/* --- life cycle ------------------------------------------------------------ */

static void collector_key(const struct session_opts *o, struct collector_key *k)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->ev, o->events, o->nr_events * sizeof(k->ev[0]));
	k->nr_ev = o->nr_events;
	k->freq = o->period ? 0 : (o->freq ? o->freq : 4000);
	k->period = o->period;
	k->callchain = o->callchain;
	k->markers = o->markers;
	k->ringbuf_size = o->ringbuf_size;
}

static struct session *session_alloc(const struct session_opts *opts)
{
	struct session *s = calloc(1, sizeof(*s));
	size_t i;

	if (!s)
		return NULL;
	s->o = *opts;
	s->t0 = mono_ns();
	s->sample_type = SAMPLE_TYPE_BASE | (opts->callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	s->chain_buf = malloc(sizeof(uint64_t) * (2 * PM_MAX_STACK + 4) + PM_MAX_PAYLOAD + 64);
	if (!s->chain_buf) {
		free(s);
		return NULL;
	}
	for (i = 0; i < opts->nr_pids; i++)
		pidset_add(&s->pids, opts->pids[i]);
	s->sub.on_ring = on_ring;
	s->sub.on_sideband = on_sideband;
	s->sub.ctx = s;
	s->sub.all = opts->target == SESSION_TARGET_ALL;
	s->sub.uid = opts->uid_filter;
	return s;
}

/* Join the collector: filter, pids, resolved events, pins. */
static int session_join(struct session *s, char *err, size_t errlen)
{
	const struct evspec *ev;
	size_t i;
	int e;

	ev = collector__events(s->c, &s->nr_ev);
	memcpy(s->ev, ev, s->nr_ev * sizeof(s->ev[0]));
	e = collector__subscribe(s->c, &s->sub);
	if (e) {
		snprintf(err, errlen, "too many sessions on the same events");
		return e;
	}
	for (i = 0; i < s->o.nr_pids; i++)
		collector__add_pid(s->c, s->o.pids[i]);
	return 0;
}

int session__new(struct session **out, const struct session_opts *opts,
		 char *err, size_t errlen)
{
	struct collector_key key;
	struct session *s;
	uint64_t ls, lm;
	int e;

	*out = NULL;
	err[0] = '\0';
	s = session_alloc(opts);
	if (!s)
		return -ENOMEM;
	collector_key(opts, &key);
	e = collector__get(&s->c, &key, opts->notice, opts->notice_ctx, err, errlen);
	if (e)
		goto fail;
	/* drops counted before this session existed are not its own */
	collector__lost(s->c, &ls, &lm);
	s->lost_samples_seen = ls;
	s->lost_markers_seen = lm;
	e = session_join(s, err, errlen);
	if (e)
		goto fail;
	if (opts->pin_dir) {
		e = collector__pin(s->c, opts->pin_dir);
		if (e) {
			snprintf(err, errlen, "cannot pin under %s: %s", opts->pin_dir, strerror(-e));
			collector__unpin(opts->pin_dir);
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	session__free(s);
	return e ? e : -EINVAL;
}

int session__adopt(struct session **out, const struct session_opts *opts,
		   char *err, size_t errlen)
{
	struct collector_key key;
	struct session *s;
	int e;

	*out = NULL;
	err[0] = '\0';
	if (!opts->pin_dir || !opts->nr_events)
		return -EINVAL;
	s = session_alloc(opts);
	if (!s)
		return -ENOMEM;
	s->t0 = 0;          /* synthesized state goes before the backlog */
	collector_key(opts, &key);
	e = collector__adopt(&s->c, &key, opts->pin_dir, err, errlen);
	if (e)
		goto fail;
	/* what was dropped while nobody drained is reported (lost_*_seen = 0) */
	e = session_join(s, err, errlen);
	if (e)
		goto fail;
	*out = s;
	return 0;
fail:
	session__free(s);
	return e ? e : -EINVAL;
}

int session__unpin(const char *dir)
{
	return collector__unpin(dir);
}

static int add_target(struct session *s, pid_t pid, bool at_exec)
{
	int e = pidset_add(&s->pids, pid);

	if (e)
		return e;
	if (s->o.nr_pids < SESSION_MAX_PIDS)
		s->o.pids[s->o.nr_pids++] = pid;
	return at_exec ? collector__add_pid_on_exec(s->c, pid) : collector__add_pid(s->c, pid);
}

int session__add_cmd(struct session *s, pid_t pid)
{
	return add_target(s, pid, true);
}

int session__add_pid(struct session *s, pid_t pid)
{
	return add_target(s, pid, false);
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
		collector__sampling_attr(s->c, i, a);
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
	s->started = true;
	collector__activate(s->c, &s->sub, true);
	return 0;
}

int session__fds(const struct session *s, int *fds, size_t max)
{
	return collector__fds(s->c, fds, max);
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
	collector__consume(s->c);
	collector__lost(s->c, &ls, &lm);
	if (ls > s->lost_samples_seen) {
		stage_lost(s, ls - s->lost_samples_seen, 1, now - REORDER_MARGIN_NS);
		s->lost_samples_seen = ls;
	}
	if (lm > s->lost_markers_seen && s->o.markers) {
		stage_lost(s, lm - s->lost_markers_seen, ID_UEVENT, now - REORDER_MARGIN_NS);
		s->lost_markers_seen = lm;
	}
	e = s->err ? s->err : flush_staged(s, cutoff);
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
	int e;

	if (s->stopped)
		return s->err;
	e = drain(s, UINT64_MAX, mono_ns() + REORDER_MARGIN_NS);
	collector__activate(s->c, &s->sub, false);
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
	return collector__marker_libs(s->c, paths, max);
}

void session__free(struct session *s)
{
	if (!s)
		return;
	if (s->c) {
		collector__unsubscribe(s->c, &s->sub);
		collector__put(s->c);
	}
	perfdata_writer__free(s->w);
	free(s->st.buf);
	free(s->st.idx);
	free(s->pids.slots);
	free(s->uid_ok.slots);
	free(s->uid_bad.slots);
	free(s->not_ours.slots);
	free(s->chain_buf);
	free(s);
}

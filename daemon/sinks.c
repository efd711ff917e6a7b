// SPDX-License-Identifier: LGPL-2.1-or-later
/* perfmarkd sinks: flight-recorder ring, rotating files, live readers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfdata.h"
#include "perfread.h"
#include "sinks.h"

#define MAX_IDS 64
#define CHUNK_MAX (1u << 20)
#define CHUNK_MIN (64u << 10)
#define SB_MIN_CAP (4u << 20)
#define SNAP_ROUND_BYTES (4u << 20)
#define READER_QUEUE_DEFAULT (4u << 20)

struct chunk {
	struct chunk *next;
	size_t len, cap;
	uint64_t nrec;
	char data[];
};

struct reader {
	struct reader *next;
	struct sink *s;
	int fd;
	void *ctx;
	char *q;
	size_t qlen, qoff, qcap_alloc;
	uint64_t lost_pending, lost_total;
	bool dirty;
};

struct idoff {
	uint64_t id;
	uint32_t time_off;
};

struct sink {
	struct sink_opts o;
	struct perfdata_event *evs;
	uint64_t *ids;
	size_t nr_evs;
	struct idoff idoff[MAX_IDS];
	size_t nr_idoff;
	uint64_t first_id;                /* id used for synthesized LOST records */
	/* sideband kept aside */
	char *sb;
	size_t sb_len, sb_cap_alloc, sb_limit;
	/* ring */
	struct chunk *head, *tail;
	uint64_t ring_used, evicted;
	size_t chunk_size;
	/* file */
	int dir_fd, file_fd;
	struct perfdata_writer *w;
	uint64_t file_opened_ns, file_first_time, bytes_done, files;
	char current[96];
	uint64_t *kept;                   /* seqs of our files in the directory */
	size_t nr_kept;
	int err;
	bool closed;
	/* readers */
	struct reader *readers;
	uint64_t records, reader_lost;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool is_sideband(uint32_t type)
{
	return type == PERF_RECORD_COMM || type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
	       type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT;
}

static uint64_t rec_time(const struct sink *s, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	uint64_t id, t = 0;
	size_t i;

	if (h->type != PERF_RECORD_SAMPLE) {
		if (len >= sizeof(*h) + PERFDATA_SAMPLE_ID_SIZE)
			memcpy(&t, (const char *)rec + len - 24, 8);
		return t;
	}
	if (len < 16)
		return 0;
	memcpy(&id, (const char *)rec + 8, 8);
	for (i = 0; i < s->nr_idoff; i++)
		if (s->idoff[i].id == id) {
			if (s->idoff[i].time_off + 8 <= len)
				memcpy(&t, (const char *)rec + s->idoff[i].time_off, 8);
			break;
		}
	return t;
}

static uint32_t rec_pid(const void *rec)
{
	uint32_t pid;

	memcpy(&pid, (const char *)rec + sizeof(struct perf_event_header), 4);
	return pid;
}

/* --- growable buffers ------------------------------------------------------ */

static int buf_reserve(char **buf, size_t *alloc, size_t need)
{
	size_t n = *alloc ? *alloc : 4096;
	char *nb;

	if (need <= *alloc)
		return 0;
	while (n < need)
		n *= 2;
	nb = realloc(*buf, n);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*alloc = n;
	return 0;
}

/* --- sideband kept aside --------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Drop what no longer names anything: processes that exited before cutoff
 * (the oldest record still held).  If that is not enough, the oldest
 * per-process records go; the kernel's (pid -1) always stay.
 */
static void sb_compact(struct sink *s, uint64_t cutoff)
{
	uint32_t *gone = NULL;
	size_t ngone = 0, cap = 0, off, out = 0;

	for (off = 0; off < s->sb_len;) {
		const struct perf_event_header *h = (const void *)(s->sb + off);

		if (h->type == PERF_RECORD_EXIT && rec_time(s, h, h->size) < cutoff) {
			if (ngone == cap) {
				uint32_t *ng = realloc(gone, (cap = cap ? cap * 2 : 256) * sizeof(*gone));

				if (!ng)
					break;
				gone = ng;
			}
			gone[ngone++] = rec_pid(h);
		}
		off += h->size;
	}
	if (ngone)
		qsort(gone, ngone, sizeof(*gone), cmp_u32);
	for (off = 0; off < s->sb_len;) {
		const struct perf_event_header *h = (const void *)(s->sb + off);
		size_t sz = h->size;
		uint32_t pid = rec_pid(h);
		bool drop = ngone && pid != (uint32_t)-1 &&
			    bsearch(&pid, gone, ngone, sizeof(*gone), cmp_u32);

		if (!drop) {
			if (out != off)
				memmove(s->sb + out, s->sb + off, sz);
			out += sz;
		}
		off += sz;
	}
	s->sb_len = out;
	free(gone);
	/* still too big: oldest per-process records go */
	if (s->sb_len > s->sb_limit * 3 / 4) {
		size_t excess = s->sb_len - s->sb_limit / 2, dropped = 0;

		out = 0;
		for (off = 0; off < s->sb_len;) {
			const struct perf_event_header *h = (const void *)(s->sb + off);
			size_t sz = h->size;

			if (dropped < excess && rec_pid(h) != (uint32_t)-1) {
				dropped += sz;
			} else {
				if (out != off)
					memmove(s->sb + out, s->sb + off, sz);
				out += sz;
			}
			off += sz;
		}
		s->sb_len = out;
	}
}

static uint64_t oldest_time(const struct sink *s)
{
	if (s->o.kind == SINK_RING)
		return s->head && s->head->len ? rec_time(s, s->head->data,
							  ((const struct perf_event_header *)s->head->data)->size)
					       : UINT64_MAX;
	return s->file_first_time ? s->file_first_time : UINT64_MAX;
}

static int sb_add(struct sink *s, const void *rec, size_t len)
{
	int e;

	if (s->sb_len + len > s->sb_limit)
		sb_compact(s, oldest_time(s));
	e = buf_reserve(&s->sb, &s->sb_cap_alloc, s->sb_len + len);
	if (e)
		return e;
	memcpy(s->sb + s->sb_len, rec, len);
	s->sb_len += len;
	return 0;
}

/* --- ring ------------------------------------------------------------------ */

static int ring_add(struct sink *s, const void *rec, size_t len)
{
	struct chunk *c = s->tail;

	if (!c || c->len + len > c->cap) {
		size_t cap = len > s->chunk_size ? len : s->chunk_size;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return -ENOMEM;
		c->next = NULL;
		c->len = 0;
		c->cap = cap;
		c->nrec = 0;
		if (s->tail)
			s->tail->next = c;
		else
			s->head = c;
		s->tail = c;
		s->ring_used += sizeof(*c) + cap;
	}
	memcpy(c->data + c->len, rec, len);
	c->len += len;
	c->nrec++;
	while (s->ring_used > s->o.ring_size && s->head != s->tail) {
		struct chunk *old = s->head;

		s->head = old->next;
		s->ring_used -= sizeof(*old) + old->cap;
		s->evicted += old->nrec;
		free(old);
	}
	return 0;
}

/* --- files ----------------------------------------------------------------- */

static void file_name(const struct sink *s, uint64_t seq, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%06llu.perf.data", s->o.prefix, (unsigned long long)seq);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int kept_add(struct sink *s, uint64_t seq)
{
	uint64_t *n = realloc(s->kept, (s->nr_kept + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->kept = n;
	s->kept[s->nr_kept++] = seq;
	return 0;
}

/* Our earlier files in the directory (after a restart): retention and numbering. */
static void scan_dir(struct sink *s)
{
	size_t plen = strlen(s->o.prefix);
	int fd = dup(s->dir_fd);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		unsigned long long seq;
		char tail[32];

		if (strncmp(de->d_name, s->o.prefix, plen) || de->d_name[plen] != '-')
			continue;
		if (sscanf(de->d_name + plen + 1, "%llu%31s", &seq, tail) != 2 ||
		    strcmp(tail, ".perf.data"))
			continue;
		kept_add(s, seq);
		if (seq >= s->o.seq)
			s->o.seq = seq + 1;
	}
	closedir(d);
	qsort(s->kept, s->nr_kept, sizeof(*s->kept), cmp_u64);
}

static void apply_keep(struct sink *s)
{
	char name[96];
	size_t drop, i;

	if (!s->o.keep || s->nr_kept <= s->o.keep)
		return;
	drop = s->nr_kept - s->o.keep;
	for (i = 0; i < drop; i++) {
		file_name(s, s->kept[i], name, sizeof(name));
		unlinkat(s->dir_fd, name, 0);
	}
	memmove(s->kept, s->kept + drop, (s->nr_kept - drop) * sizeof(*s->kept));
	s->nr_kept -= drop;
}

static int new_writer(struct sink *s, int fd, bool pipe, int zstd, struct perfdata_writer **w)
{
	struct perfdata_writer_opts wo = {
		.fd = fd,
		.pipe = pipe,
		.zstd_level = zstd,
		.clock_ref_mono_ns = mono_ns(),
		.clock_ref_real_ns = real_ns(),
	};

	return perfdata_writer__new(w, &wo, s->evs, s->nr_evs);
}

static int file_open(struct sink *s)
{
	char name[96];
	size_t off;
	int fd = -1, e, tries;

	for (tries = 0; tries < 1000; tries++, s->o.seq++) {
		file_name(s, s->o.seq, name, sizeof(name));
		fd = openat(s->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	if (s->o.uid != (uid_t)-1 && fchown(fd, s->o.uid, s->o.gid)) {
		e = -errno;
		goto fail;
	}
	e = new_writer(s, fd, false, s->o.zstd_level, &s->w);
	if (e)
		goto fail;
	s->file_fd = fd;
	snprintf(s->current, sizeof(s->current), "%s", name);
	kept_add(s, s->o.seq);
	s->o.seq++;
	s->files++;
	s->file_opened_ns = mono_ns();
	s->file_first_time = 0;
	/* every file names the processes on its own */
	for (off = 0; off < s->sb_len && !e;) {
		const struct perf_event_header *h = (const void *)(s->sb + off);

		e = perfdata_writer__add(s->w, h, h->size);
		off += h->size;
	}
	if (!e)
		e = perfdata_writer__round(s->w);
	apply_keep(s);
	return e;
fail:
	close(fd);
	unlinkat(s->dir_fd, name, 0);
	return e;
}

static int file_close(struct sink *s)
{
	struct perfdata_stats ps;
	int e = 0;

	if (s->w) {
		e = perfdata_writer__finish(s->w);
		perfdata_writer__stats(s->w, &ps);
		s->bytes_done += ps.bytes;
		perfdata_writer__free(s->w);
		s->w = NULL;
	}
	if (s->file_fd >= 0) {
		if (!e && fsync(s->file_fd) && errno != EINVAL)
			e = -errno;
		close(s->file_fd);
		s->file_fd = -1;
	}
	return e;
}

/* --- readers --------------------------------------------------------------- */

static int q_append(struct reader *r, const void *p, size_t len)
{
	if (r->qoff && r->qlen + len > r->qcap_alloc) {
		memmove(r->q, r->q + r->qoff, r->qlen - r->qoff);
		r->qlen -= r->qoff;
		r->qoff = 0;
	}
	if (buf_reserve(&r->q, &r->qcap_alloc, r->qlen + len))
		return -ENOMEM;
	memcpy(r->q + r->qlen, p, len);
	r->qlen += len;
	return 0;
}

static void reader_add(struct sink *s, struct reader *r, const void *rec, size_t len, uint64_t time,
		       bool force)
{
	size_t cap = s->o.reader_queue, queued = r->qlen - r->qoff;
	char lrec[sizeof(struct perf_event_header) + 8 + PERFDATA_SAMPLE_ID_SIZE];

	if (force)
		cap *= 2;
	if (queued + len + sizeof(lrec) > cap) {
		r->lost_pending++;
		r->lost_total++;
		s->reader_lost++;
		return;
	}
	if (r->lost_pending) {
		struct perf_event_header *h = (void *)lrec;
		struct perfdata_sample_id sid = { .pid = 0, .tid = 0, .time = time, .cpu = 0,
						  .id = s->first_id };

		h->type = PERF_RECORD_LOST_SAMPLES;
		h->misc = 0;
		h->size = sizeof(lrec);
		memcpy(lrec + sizeof(*h), &r->lost_pending, 8);
		perfdata_encode_sample_id(lrec + sizeof(*h) + 8, &sid);
		if (q_append(r, lrec, sizeof(lrec)))
			return;
		r->lost_pending = 0;
	}
	if (q_append(r, rec, len) == 0)
		r->dirty = true;
}

static void reader_round(struct reader *r)
{
	struct perf_event_header h = { .type = PERFDATA_RECORD_FINISHED_ROUND, .size = sizeof(h) };

	if (!r->dirty)
		return;
	if (q_append(r, &h, sizeof(h)) == 0)
		r->dirty = false;
}

int reader__fd(const struct reader *r)
{
	return r->fd;
}

void *reader__ctx(const struct reader *r)
{
	return r->ctx;
}

bool reader__pending(const struct reader *r)
{
	return r->qoff < r->qlen;
}

uint64_t reader__lost(const struct reader *r)
{
	return r->lost_total;
}

int reader__flush(struct reader *r)
{
	while (r->qoff < r->qlen) {
		ssize_t n = write(r->fd, r->q + r->qoff, r->qlen - r->qoff);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		r->qoff += (size_t)n;
	}
	r->qoff = r->qlen = 0;
	/* give memory back after a burst */
	if (r->qcap_alloc > (1u << 20)) {
		free(r->q);
		r->q = NULL;
		r->qcap_alloc = 0;
	}
	return 0;
}

int sink__attach(struct sink *s, int fd, void *ctx, struct reader **out)
{
	struct perfdata_writer *w = NULL;
	struct reader *r, **pp;
	struct stat sb;
	size_t off;
	int mfd, e, fl;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->s = s;
	r->fd = -1;
	r->ctx = ctx;
	/* the stream header, made once by the pipe-mode writer */
	mfd = memfd_create("perfmark-attach", MFD_CLOEXEC);
	if (mfd < 0) {
		e = -errno;
		goto fail;
	}
	e = new_writer(s, mfd, true, 0, &w);
	perfdata_writer__free(w);
	if (!e && fstat(mfd, &sb))
		e = -errno;
	if (!e && (e = buf_reserve(&r->q, &r->qcap_alloc, (size_t)sb.st_size)) == 0) {
		if (pread(mfd, r->q, (size_t)sb.st_size, 0) != sb.st_size)
			e = -EIO;
		r->qlen = (size_t)sb.st_size;
	}
	close(mfd);
	if (e)
		goto fail;
	for (off = 0; off < s->sb_len;) {
		const struct perf_event_header *h = (const void *)(s->sb + off);

		reader_add(s, r, h, h->size, rec_time(s, h, h->size), true);
		off += h->size;
	}
	reader_round(r);
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	r->fd = fd;
	for (pp = &s->readers; *pp; pp = &(*pp)->next)
		;
	*pp = r;
	*out = r;
	return 0;
fail:
	free(r->q);
	free(r);
	return e;
}

static void reader_free(struct reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->q);
	free(r);
}

void sink__detach(struct sink *s, struct reader *r)
{
	struct reader **pp;

	for (pp = &s->readers; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			reader_free(r);
			return;
		}
}

size_t sink__readers(const struct sink *s, struct reader **out, size_t max)
{
	const struct reader *r;
	size_t n = 0;

	for (r = s->readers; r; r = r->next, n++)
		if (n < max)
			out[n] = (struct reader *)r;
	return n;
}

/* --- sink ------------------------------------------------------------------ */

int sink__new(struct sink **out, const struct sink_opts *o)
{
	struct sink *s;
	size_t i, nids = 0;
	int e = -ENOMEM;

	*out = NULL;
	if (!o->nr_events || o->nr_events > MAX_IDS)
		return -EINVAL;
	if (o->kind == SINK_FILE && (o->dir_fd < 0 || !o->prefix))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->o.prefix = NULL;
	s->dir_fd = s->file_fd = -1;
	if (!s->o.reader_queue)
		s->o.reader_queue = READER_QUEUE_DEFAULT;
	s->evs = calloc(o->nr_events, sizeof(*s->evs));
	for (i = 0; i < o->nr_events; i++)
		nids += o->events[i].nr_ids;
	s->ids = calloc(nids + 1, sizeof(*s->ids));
	if (!s->evs || !s->ids)
		goto fail;
	s->nr_evs = o->nr_events;
	nids = 0;
	for (i = 0; i < o->nr_events; i++) {
		const struct perf_event_attr *a = &o->events[i].attr;
		uint32_t toff = sizeof(struct perf_event_header);

		s->evs[i] = o->events[i];
		s->evs[i].name = strdup(o->events[i].name);
		if (!s->evs[i].name)
			goto fail;
		memcpy(s->ids + nids, o->events[i].ids, o->events[i].nr_ids * sizeof(uint64_t));
		s->evs[i].ids = s->ids + nids;
		/* where TIME sits in this event's samples */
		toff += (a->sample_type & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
		toff += (a->sample_type & PERF_SAMPLE_IP) ? 8 : 0;
		toff += (a->sample_type & PERF_SAMPLE_TID) ? 8 : 0;
		for (uint32_t j = 0; j < o->events[i].nr_ids && s->nr_idoff < MAX_IDS; j++) {
			s->idoff[s->nr_idoff].id = o->events[i].ids[j];
			s->idoff[s->nr_idoff++].time_off = toff;
		}
		if (i == 0 && o->events[i].nr_ids)
			s->first_id = o->events[i].ids[0];
		nids += o->events[i].nr_ids;
	}
	s->sb_limit = o->kind == SINK_RING && o->ring_size / 4 > SB_MIN_CAP ? o->ring_size / 4
									     : SB_MIN_CAP * 4;
	s->chunk_size = o->ring_size / 16;
	if (s->chunk_size > CHUNK_MAX)
		s->chunk_size = CHUNK_MAX;
	if (s->chunk_size < CHUNK_MIN)
		s->chunk_size = CHUNK_MIN;
	if (o->kind == SINK_FILE) {
		s->dir_fd = fcntl(o->dir_fd, F_DUPFD_CLOEXEC, 3);
		if (s->dir_fd < 0) {
			e = -errno;
			goto fail;
		}
		s->o.prefix = strdup(o->prefix);
		if (!s->o.prefix)
			goto fail;
		scan_dir(s);
		e = file_open(s);
		if (e) {
			s->err = e;
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	sink__free(s);
	return e;
}

/*
 * Rotation is lazy: a full file is closed at the end of its round and the
 * next one opened by the first record that needs it, so stopping right
 * after a rotation leaves no file holding only sideband.
 */
static int file_ensure(struct sink *s)
{
	int e;

	if (s->err)
		return s->err;
	if (s->closed)
		return -EBADF;
	if (s->w)
		return 0;
	e = file_open(s);
	if (e)
		s->err = e;
	return e;
}

int sink__record(struct sink *s, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	uint64_t t = rec_time(s, rec, len);
	struct reader *r;
	int e = 0;

	if (len < sizeof(*h) || h->size != len)
		return -EINVAL;
	s->records++;
	for (r = s->readers; r; r = r->next)
		reader_add(s, r, rec, len, t, false);
	/* before sb_add: a new file starts with the sideband kept so far */
	if (s->o.kind == SINK_FILE) {
		e = file_ensure(s);
		if (e)
			return e;
	}
	if (is_sideband(h->type)) {
		e = sb_add(s, rec, len);
		if (e)
			return e;
	}
	if (s->o.kind == SINK_RING)
		return is_sideband(h->type) ? 0 : ring_add(s, rec, len);
	if (!s->file_first_time)
		s->file_first_time = t ? t : 1;
	e = perfdata_writer__add(s->w, rec, len);
	if (e)
		s->err = e;
	return e;
}

int sink__round(struct sink *s)
{
	struct perfdata_stats ps;
	struct reader *r;
	int e;

	for (r = s->readers; r; r = r->next)
		reader_round(r);
	if (s->o.kind == SINK_RING)
		return 0;
	if (s->err)
		return s->err;
	if (s->closed)
		return -EBADF;
	if (!s->w)          /* rotated, nothing new yet */
		return 0;
	e = perfdata_writer__round(s->w);
	if (e)
		return s->err = e;
	perfdata_writer__stats(s->w, &ps);
	if ((s->o.rotate_size && ps.bytes >= s->o.rotate_size) ||
	    (s->o.rotate_secs && mono_ns() - s->file_opened_ns >= s->o.rotate_secs * 1000000000ull)) {
		e = file_close(s);
		if (e)
			s->err = e;
	}
	return e;
}

static int snapshot_ring(struct sink *s, struct perfdata_writer *w)
{
	const struct chunk *c = s->head;
	size_t coff = 0, soff = 0, since = 0;
	int e = 0;

	while (!e) {
		const struct perf_event_header *a = NULL, *b = NULL, *pick;

		while (c && coff >= c->len) {
			c = c->next;
			coff = 0;
		}
		if (c)
			a = (const void *)(c->data + coff);
		if (soff < s->sb_len)
			b = (const void *)(s->sb + soff);
		if (!a && !b)
			break;
		if (a && b)
			pick = rec_time(s, b, b->size) <= rec_time(s, a, a->size) ? b : a;
		else
			pick = a ? a : b;
		if (pick == a)
			coff += a->size;
		else
			soff += b->size;
		e = perfdata_writer__add(w, pick, pick->size);
		since += pick->size;
		if (!e && since >= SNAP_ROUND_BYTES) {
			e = perfdata_writer__round(w);
			since = 0;
		}
	}
	return e;
}

static int snapshot_file(struct sink *s, struct perfdata_writer *w)
{
	const struct perf_event_header *h;
	struct perfread *rd = NULL;
	size_t since = 0;
	int e, r;

	e = file_ensure(s);
	if (e)
		return e;
	e = perfread__open(&rd, s->file_fd);
	if (e) {
		perfread__free(rd);
		return e;
	}
	while ((r = perfread__next(rd, &h)) == 1) {
		if (h->type == PERFDATA_RECORD_FINISHED_ROUND || h->type >= PERFDATA_RECORD_HEADER_ATTR)
			continue;
		e = perfdata_writer__add(w, h, h->size);
		if (e)
			break;
		since += h->size;
		if (since >= SNAP_ROUND_BYTES) {
			e = perfdata_writer__round(w);
			if (e)
				break;
			since = 0;
		}
	}
	if (!e && r < 0)
		e = r;
	perfread__free(rd);
	return e;
}

int sink__snapshot(struct sink *s, int fd, bool pipe)
{
	struct perfdata_writer *w = NULL;
	int e;

	e = new_writer(s, fd, pipe, s->o.zstd_level, &w);
	if (e)
		return e;
	e = s->o.kind == SINK_RING ? snapshot_ring(s, w) : snapshot_file(s, w);
	if (!e)
		e = perfdata_writer__finish(w);
	perfdata_writer__free(w);
	return e;
}

int sink__close(struct sink *s)
{
	int e = 0;

	if (s->o.kind == SINK_FILE && !s->closed) {
		e = file_close(s);
		s->closed = true;
	}
	return e ? e : s->err;
}

void sink__stats(const struct sink *s, struct sink_stats *st)
{
	struct perfdata_stats ps = { 0 };
	const struct reader *r;

	memset(st, 0, sizeof(*st));
	st->kind = s->o.kind;
	st->records = s->records;
	st->sideband_bytes = s->sb_len;
	st->reader_lost = s->reader_lost;
	for (r = s->readers; r; r = r->next)
		st->readers++;
	if (s->o.kind == SINK_RING) {
		st->used = s->ring_used;
		st->capacity = s->o.ring_size;
		st->evicted = s->evicted;
		return;
	}
	if (s->w)
		perfdata_writer__stats(s->w, &ps);
	st->bytes = s->bytes_done + ps.bytes;
	st->used = ps.bytes;
	st->capacity = s->o.rotate_size;
	st->files = s->files;
	st->seq = s->o.seq;
	snprintf(st->current, sizeof(st->current), "%s", s->current);
}

void sink__free(struct sink *s)
{
	struct chunk *c, *n;
	size_t i;

	if (!s)
		return;
	while (s->readers) {
		struct reader *r = s->readers;

		s->readers = r->next;
		reader_free(r);
	}
	if (s->o.kind == SINK_FILE && !s->closed)
		file_close(s);
	for (c = s->head; c; c = n) {
		n = c->next;
		free(c);
	}
	for (i = 0; s->evs && i < s->nr_evs; i++)
		free((char *)s->evs[i].name);
	free(s->evs);
	free(s->ids);
	free(s->sb);
	free(s->kept);
	free((char *)s->o.prefix);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	free(s);
}

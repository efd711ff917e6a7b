// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live readers of a sink (sinks.h).  A reader's stream is
 *   1. what the sink held up to the moment it attached: a pipe-mode
 *      snapshot written into a memfd, sent without blocking;
 *   2. the live records, queued in memory (bounded) and written without
 *      blocking; what does not fit is dropped and the count written into
 *      the stream as PERF_RECORD_LOST_SAMPLES before the next record.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdout.h"
#include "perfdata.h"
#include "sink-int.h"

struct reader {
	struct reader *next;
	struct sink *s;
	int fd;                  /* the client's, as passed (fdout.h) */
	bool nowait;             /* a pipe or socket: RWF_NOWAIT writes */
	void *ctx;
	/* 1: the history */
	int pre_fd;
	off_t pre_off, pre_len;
	/* 2: the live queue */
	char *q;
	size_t qlen, qoff, qcap_alloc;
	uint64_t lost_pending;
	bool dirty;
};

static int q_reserve(struct reader *r, size_t need)
{
	size_t n = r->qcap_alloc ? r->qcap_alloc : 4096;
	char *nb;

	if (need <= r->qcap_alloc)
		return 0;
	while (n < need)
		n *= 2;
	nb = realloc(r->q, n);
	if (!nb)
		return -ENOMEM;
	r->q = nb;
	r->qcap_alloc = n;
	return 0;
}

static int q_append(struct reader *r, const void *p, size_t len)
{
	if (r->qoff && r->qlen + len > r->qcap_alloc) {
		memmove(r->q, r->q + r->qoff, r->qlen - r->qoff);
		r->qlen -= r->qoff;
		r->qoff = 0;
	}
	if (q_reserve(r, r->qlen + len))
		return -ENOMEM;
	memcpy(r->q + r->qlen, p, len);
	r->qlen += len;
	return 0;
}

static void reader_add(struct sink *s, struct reader *r, uint64_t time, const void *rec, size_t len)
{
	char lrec[sizeof(struct perf_event_header) + 8 + PERFDATA_SAMPLE_ID_SIZE];
	size_t queued = r->qlen - r->qoff;

	if (queued + len + sizeof(lrec) > s->o.reader_queue) {
		r->lost_pending++;
		s->reader_lost++;
		return;
	}
	if (r->lost_pending) {
		struct perf_event_header *h = (void *)lrec;
		struct perfdata_sample_id sid = { .time = time, .id = s->first_id };

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

void readers_record(struct sink *s, uint64_t time, const void *rec, size_t len)
{
	struct reader *r;

	for (r = s->readers; r; r = r->next)
		reader_add(s, r, time, rec, len);
}

void readers_round(struct sink *s)
{
	struct perf_event_header h = { .type = PERFDATA_RECORD_FINISHED_ROUND, .size = sizeof(h) };
	struct reader *r;

	for (r = s->readers; r; r = r->next)
		if (r->dirty && q_append(r, &h, sizeof(h)) == 0)
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
	return r->pre_fd >= 0 || r->qoff < r->qlen;
}

static int pre_flush(struct reader *r)
{
	int e = fdout_copy(r->fd, r->nowait, r->pre_fd, &r->pre_off, r->pre_len);

	if (e)
		return e;
	close(r->pre_fd);
	r->pre_fd = -1;
	return 0;
}

int reader__flush(struct reader *r)
{
	int e;

	if (r->pre_fd >= 0) {
		e = pre_flush(r);
		if (e)
			return e;
	}
	while (r->qoff < r->qlen) {
		ssize_t n = fdout_write(r->fd, r->nowait, r->q + r->qoff, r->qlen - r->qoff);

		if (n < 0)
			return (int)n;
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

static void reader_free(struct reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->pre_fd >= 0)
		close(r->pre_fd);
	free(r->q);
	free(r);
}

int sink__attach(struct sink *s, int fd, void *ctx, uint64_t until, struct reader **out)
{
	struct reader *r, **pp;
	struct stat sb;
	int e;

	if (s->o.kind == SINK_PERFDATA)
		return -EOPNOTSUPP;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->s = s;
	r->fd = -1;
	r->ctx = ctx;
	/* the header and the history, as a pipe-mode snapshot up to `until` */
	r->pre_fd = memfd_create("perfmark-attach", MFD_CLOEXEC);
	if (r->pre_fd < 0) {
		e = -errno;
		goto fail;
	}
	e = sink__snapshot(s, r->pre_fd, true, until);
	if (!e && fstat(r->pre_fd, &sb))
		e = -errno;
	if (e)
		goto fail;
	r->pre_len = sb.st_size;
	/* written as the client passed it: flags untouched, pipes with RWF_NOWAIT (fdout.h) */
	e = fdout_check(fd, &r->nowait);
	if (e)
		goto fail;
	r->fd = fd;
	for (pp = &s->readers; *pp; pp = &(*pp)->next)
		;
	*pp = r;
	*out = r;
	return 0;
fail:
	reader_free(r);
	return e;
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

void readers_free(struct sink *s)
{
	while (s->readers) {
		struct reader *r = s->readers;

		s->readers = r->next;
		reader_free(r);
	}
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The perf.data reader's input (perfread.c's and perfread_file.c's one
 * floor below them): the buffered source, raw records taken from it, and
 * the events and features the header gives, each checked against what the
 * input holds.  It calls neither of them.
 */
#include "perfread.h"
#include "perfread-int.h"
#include "evlist.h"
#include "pdbuf.h"
#include "perffeat.h"
#include "perfdata.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int perfread_fail(struct perfread *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return err;
}

int perfread_rec_reserve(struct perfread *r, size_t size)
{
	uint8_t *p;

	if (size <= r->rec_cap)
		return 0;
	p = realloc(r->rec, 65536 > size ? 65536 : size);
	if (!p)
		return -ENOMEM;
	r->rec = p;
	r->rec_cap = 65536 > size ? 65536 : size;
	return 0;
}

/* ---- source ------------------------------------------------------------- */

/* Make at least n bytes available at sbuf[shead]; returns bytes available
 * (< n only at the end of the input) or a negative errno. */
ssize_t perfread_src_fill(struct perfread *r, size_t n)
{
	while (r->stail - r->shead < n && !r->src_eof) {
		size_t avail = r->stail - r->shead;
		ssize_t got;
		size_t want;

		if (r->shead) {
			memmove(r->sbuf, r->sbuf + r->shead, avail);
			r->shead = 0;
			r->stail = avail;
		}
		want = SRC_BUF - r->stail;
		if (r->stream) {
			got = read(r->fd, r->sbuf + r->stail, want);
		} else {
			uint64_t off = r->spos + avail;

			if (off >= r->send) {
				r->src_eof = true;
				break;
			}
			if (want > r->send - off)
				want = (size_t)(r->send - off);
			got = pread(r->fd, r->sbuf + r->stail, want, (off_t)off);
		}
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return perfread_fail(r, -errno, "read error: %s", strerror(errno));
		}
		if (got == 0)
			r->src_eof = true;
		r->stail += (size_t)got;
	}
	return (ssize_t)(r->stail - r->shead);
}

/* Read exactly n bytes into dst (pipe header parsing).  0, or -EIO short. */
int perfread_src_read(struct perfread *r, void *dst, size_t n)
{
	ssize_t got = perfread_src_fill(r, n);

	if (got < 0)
		return (int)got;
	if ((size_t)got < n) {
		memcpy(dst, r->sbuf + r->shead, (size_t)got);
		r->shead += (size_t)got;
		r->spos += (size_t)got;
		return -EIO;
	}
	memcpy(dst, r->sbuf + r->shead, n);
	r->shead += n;
	r->spos += n;
	return 0;
}

/*
 * The next n bytes of the stream into a buffer grown as they come (a
 * stream that claims more than it has costs no more than it has).
 */
int perfread_src_take(struct perfread *r, uint64_t n, struct pdbuf *b)
{
	while (n) {
		ssize_t got = perfread_src_fill(r, 1);
		size_t k;

		if (got < 0)
			return (int)got;
		if (got == 0)
			return -EIO;
		k = (uint64_t)got < n ? (size_t)got : (size_t)n;
		pdbuf_put(b, r->sbuf + r->shead, k);
		if (b->err)
			return b->err;
		r->shead += k;
		r->spos += k;
		n -= k;
	}
	return 0;
}

/*
 * Next raw record from the input (not decompressed).  1 with *out and its
 * offset, 0 at a clean end, negative errno otherwise.
 */
int perfread_src_record(struct perfread *r, const uint8_t **out, uint64_t *off)
{
	struct perf_event_header h;
	ssize_t got = perfread_src_fill(r, sizeof(h));

	if (got < 0)
		return (int)got;
	if (got == 0)
		return 0;
	*off = r->spos;
	if ((size_t)got < sizeof(h)) {
		if (r->lenient_end)
			return 0;
		return perfread_fail(r, -EIO, "truncated record at offset %llu",
				     (unsigned long long)r->spos);
	}
	memcpy(&h, r->sbuf + r->shead, sizeof(h));
	if (h.size < sizeof(h)) {
		if (r->lenient_end)
			return 0;
		return perfread_fail(r, -EINVAL, "bad record size %u at offset %llu",
				     h.size, (unsigned long long)r->spos);
	}
	got = perfread_src_fill(r, h.size);
	if (got < 0)
		return (int)got;
	if ((size_t)got < h.size) {
		if (r->lenient_end)
			return 0;
		return perfread_fail(r, -EIO, "truncated record at offset %llu",
				     (unsigned long long)r->spos);
	}
	if (perfread_rec_reserve(r, h.size))
		return perfread_fail(r, -ENOMEM, "out of memory");
	memcpy(r->rec, r->sbuf + r->shead, h.size);
	r->shead += h.size;
	r->spos += h.size;
	*out = r->rec;
	return 1;
}

/* ---- events and features ------------------------------------------------ */

int perfread_add_event(struct perfread *r, const uint8_t *attr, size_t asz,
		       const uint8_t *ids, uint32_t n)
{
	int err = evlist__add(r->evlist, attr, asz, NULL, ids, n);

	if (err == -E2BIG)
		return perfread_fail(r, err, "too many events (more than %d)", EVLIST_MAX_EVENTS);
	if (err)
		return perfread_fail(r, err, "out of memory");
	return 0;
}

/* One feature body: processed by its table entry; unknown ones are skipped. */
int perfread_parse_feature(struct perfread *r, uint64_t feat, const uint8_t *p, size_t len)
{
	const struct perfdata_feature *f = perfdata_feature(feat);
	struct pdcursor c = { p, len, 0 };
	int err;

	if (feat >= PERFDATA_FEAT_BITS)
		return 0;
	r->env.has[feat] = true;
	if (!f)
		return 0;
	err = f->process(&r->env, &c, f->id);
	if (err == -ENOMEM)
		return perfread_fail(r, err, "out of memory");
	if (err)
		return perfread_fail(r, err, "corrupt %s feature", f->name);
	return 0;
}

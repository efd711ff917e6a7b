/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf.data reader (file and pipe mode, zstd COMPRESSED records).
 *
 * Everything read from the input is bounds-checked: sizes are validated
 * before they are used, so garbage gives an error, never a crash.  The
 * whole input is read through one buffered source: pread() for a file-mode
 * data section (limited to data.size, or to EOF when a recorder died and
 * left data.size 0), read() for a pipe stream.
 */
#include "perfread.h"
#include "perfread-int.h"
#include "evlist.h"
#include "pdbuf.h"
#include "perffeat.h"
#include "tracedata.h"
#include "perfdata.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define PERF_MAGIC2 0x32454c4946524550ULL
#define PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL
#define MAX_DECOMP (64u << 20)     /* bound on one record's decompressed bytes */

static int header_record(struct perfread *r, const uint8_t *rec, uint64_t off);
static int decompress(struct perfread *r, const uint8_t *rec, uint64_t off);


/* Pipe mode: consume HEADER_ATTR/HEADER_FEATURE/... up to FINISHED_INIT
 * (or the first data record, kept pending for next()) */
static int read_pipe_header(struct perfread *r)
{
	for (;;) {
		const uint8_t *p = NULL;
		uint64_t off = 0;
		struct perf_event_header h;
		int ret = perfread_src_record(r, &p, &off);

		/* a stream cut in its header is not an empty recording */
		if (ret == 0)
			return perfread_fail(r, -EIO, "truncated stream: it ends at offset %llu, "
					     "inside its header", (unsigned long long)r->spos);
		if (ret < 0)
			return ret;
		memcpy(&h, p, sizeof(h));
		if (h.type == PERFDATA_RECORD_FINISHED_INIT)
			return 0;
		if (h.type == PERFDATA_RECORD_COMPRESSED)
			return decompress(r, p, off);
		ret = header_record(r, p, off);
		if (ret < 0)
			return ret;
		if (!ret) {
			r->pending = true;
			return 0;
		}
	}
}

int perfread__open(struct perfread **out, int fd)
{
	return perfread__open_opts(out, fd, NULL);
}

int perfread__open_opts(struct perfread **out, int fd, const struct perfread_opts *opts)
{
	struct perfread *r;
	uint8_t first[16];
	uint64_t magic, size;
	ssize_t got;
	int err;

	if (!out || fd < 0)
		return -EINVAL;
	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->sbuf = malloc(SRC_BUF);
	if (!r->sbuf || evlist__new(&r->evlist)) {
		free(r->sbuf);
		free(r);
		return -ENOMEM;
	}
	r->env.evlist = r->evlist;
	r->expand_floor = opts && opts->expand_floor ? opts->expand_floor : PERFREAD_MAX_EXPAND_FLOOR;
	r->expand_ratio = opts && opts->expand_ratio ? opts->expand_ratio : PERFREAD_MAX_EXPAND_RATIO;
	*out = r;           /* so the caller can read the error */

	/* regular files are read with pread() from offset 0 whatever the fd's
	 * position; anything else (pipes, sockets, ttys) as a stream */
	{
		struct stat st;

		if (fstat(fd, &st) < 0)
			return perfread_fail(r, -errno, "cannot stat input: %s", strerror(errno));
		r->stream = !S_ISREG(st.st_mode);
	}
	r->pipe = true;
	r->send = UINT64_MAX;
	got = perfread_src_fill(r, 16);
	if (got < 0)
		return (int)got;
	if (got == 0)
		return perfread_fail(r, -ENODATA, "empty file, nothing to read");
	if (got < 8)
		return perfread_fail(r, -EIO, "truncated header at offset 0");
	magic = pd_get_u64(r->sbuf);
	if (magic == PERF_MAGIC2_SWAPPED)
		return perfread_fail(r, -ENOTSUP, "big-endian perf.data is not supported");
	if (magic != PERF_MAGIC2)
		return perfread_fail(r, -EINVAL, "not a perf.data file (bad magic)");
	if (got < 16)
		return perfread_fail(r, -EIO, "truncated header at offset 8");
	memcpy(first, r->sbuf, 16);
	size = pd_get_u64(first + 8);
	r->shead = 16;
	r->spos = 16;
	if (size == 16) {
		/* pipe mode: header records come from next(); read them now so
		 * events and features are known after open() */
		return read_pipe_header(r);
	}
	if (size != sizeof(struct file_header))
		return perfread_fail(r, -EINVAL, "unsupported perf.data header size %llu",
				     (unsigned long long)size);
	if (r->stream)
		return perfread_fail(r, -EINVAL, "file-mode perf.data cannot be read from a pipe");
	r->pipe = false;
	r->shead = r->stail = 0;
	r->src_eof = false;
	r->send = UINT64_MAX;
	r->spos = 16;
	err = perfread_open_file(r, first);
	if (err)
		return err;
	/* reset the source to the data section */
	r->shead = r->stail = 0;
	r->src_eof = false;
	return 0;
}

const char *perfread__error(const struct perfread *r)
{
	if (!r)
		return "out of memory";
	return r->err[0] ? r->err : "no error";
}

bool perfread__is_pipe(const struct perfread *r)
{
	return r && r->pipe;
}

size_t perfread__nr_events(const struct perfread *r)
{
	return r ? evlist__nr(r->evlist) : 0;
}

const struct perfread_event *perfread__event(const struct perfread *r, size_t i)
{
	return r ? evlist__event(r->evlist, i) : NULL;
}

const struct perfread_event *perfread__event_by_id(const struct perfread *r, uint64_t id)
{
	return r ? evlist__find(r->evlist, id) : NULL;
}

const char *perfread__feature_string(const struct perfread *r, int feature)
{
	if (!r || feature <= 0)
		return NULL;
	if (feature == PERFDATA_FEAT_CMDLINE)
		return r->env.cmdline;
	if (feature >= PERFDATA_FEAT_HOSTNAME && feature <= PERFDATA_FEAT_CPUID)
		return r->env.str[feature];
	return NULL;
}

const uint8_t *perfread__tracing_data(const struct perfread *r, size_t *len)
{
	*len = r ? r->env.tracing_len : 0;
	return r ? r->env.tracing : NULL;
}

bool perfread__has_feature(const struct perfread *r, int feature)
{
	if (!r || feature <= 0 || feature >= PERFDATA_FEAT_BITS)
		return false;
	return r->env.has[feature];
}

bool perfread__sample_time(const struct perfread *r, uint64_t *first, uint64_t *last)
{
	if (!r || !r->env.have_time)
		return false;
	*first = r->env.first_time;
	*last = r->env.last_time;
	return true;
}

/* ---- records ------------------------------------------------------------ */

/* Header-type records: consumed here.  1 if consumed, 0 if not, <0 error. */
static int header_record(struct perfread *r, const uint8_t *rec, uint64_t off)
{
	struct perf_event_header h;

	memcpy(&h, rec, sizeof(h));
	switch (h.type) {
	case PERFDATA_RECORD_HEADER_ATTR: {
		uint32_t asz;
		size_t idb;

		if (h.size < 8 + PERF_ATTR_SIZE_VER0)
			return perfread_fail(r, -EINVAL, "bad HEADER_ATTR record at offset %llu",
					     (unsigned long long)off);
		asz = pd_get_u32(rec + 8 + 4);      /* attr.size: after u32 type */
		if (asz < PERF_ATTR_SIZE_VER0 || asz > (size_t)h.size - 8)
			return perfread_fail(r, -EINVAL, "bad HEADER_ATTR record at offset %llu",
					     (unsigned long long)off);
		idb = (size_t)h.size - 8 - asz;
		return perfread_add_event(r, rec + 8, asz, rec + 8 + asz, (uint32_t)(idb / 8)) ?: 1;
	}
	case PERFDATA_RECORD_HEADER_FEATURE:
		if (h.size < 16)
			return perfread_fail(r, -EINVAL, "bad HEADER_FEATURE record at offset %llu",
					     (unsigned long long)off);
		return perfread_parse_feature(r, pd_get_u64(rec + 8), rec + 16, (size_t)h.size - 16) ?: 1;
	case PERFDATA_RECORD_HEADER_TRACING_DATA: {
		/* the tracing data follows the record, outside header.size: kept for decoders */
		struct pdbuf b = { 0 };
		uint32_t n;
		int e;

		if (h.size < 16)
			return perfread_fail(r, -EINVAL, "bad TRACING_DATA record at offset %llu",
					     (unsigned long long)off);
		n = pd_get_u32(rec + 8);
		if (n > TRACEDATA_MAX || r->env.tracing)
			return perfread_fail(r, -EINVAL, "bad TRACING_DATA record at offset %llu",
					     (unsigned long long)off);
		e = perfread_src_take(r, n, &b);
		if (e) {
			pdbuf_free(&b);
			return e == -ENOMEM ? perfread_fail(r, e, "out of memory") :
			       perfread_fail(r, -EIO, "truncated record at offset %llu", (unsigned long long)off);
		}
		r->env.tracing = b.p;
		r->env.tracing_len = b.len;
		return 1;
	}
	case 65: /* HEADER_EVENT_TYPE */
	case 67: /* HEADER_BUILD_ID */
	case PERFDATA_RECORD_FINISHED_INIT:
		return 1;
	default:
		return 0;
	}
}

/* Expand one COMPRESSED record into dbuf (after any partial leftover). */
static int decompress(struct perfread *r, const uint8_t *rec, uint64_t off)
{
	struct perf_event_header h;
	ZSTD_inBuffer in;
	size_t left = r->dtail - r->dhead;

	memcpy(&h, rec, sizeof(h));
	r->comp_off = off;
	r->comp_in += h.size;
	if (!r->ds) {
		r->ds = ZSTD_createDStream();
		if (!r->ds || ZSTD_isError(ZSTD_initDStream(r->ds)))
			return perfread_fail(r, -ENOMEM, "out of memory");
	}
	if (r->dhead) {
		memmove(r->dbuf, r->dbuf + r->dhead, left);
		r->dhead = 0;
		r->dtail = left;
	}
	in = (ZSTD_inBuffer){ rec + 8, (size_t)h.size - 8, 0 };
	while (in.pos < in.size) {
		ZSTD_outBuffer o;
		size_t ret;

		if (r->dcap - r->dtail < 65536) {
			size_t cap = r->dcap ? r->dcap * 2 : 256 * 1024;
			uint8_t *p;

			if (cap > MAX_DECOMP)
				return perfread_fail(r, -EINVAL,
						     "corrupt compressed record at offset %llu (too large)",
						     (unsigned long long)off);
			p = realloc(r->dbuf, cap);
			if (!p)
				return perfread_fail(r, -ENOMEM, "out of memory");
			r->dbuf = p;
			r->dcap = cap;
		}
		o = (ZSTD_outBuffer){ r->dbuf + r->dtail, r->dcap - r->dtail, 0 };
		ret = ZSTD_decompressStream(r->ds, &o, &in);
		if (ZSTD_isError(ret))
			return perfread_fail(r, -EINVAL, "corrupt compressed record at offset %llu: %s",
					     (unsigned long long)off, ZSTD_getErrorName(ret));
		r->dtail += o.pos;
		/*
		 * RULE: what the input expands to is bounded by the input.
		 * A 136 KB file of zstd frames once expanded to 1.3 GB.
		 */
		r->comp_out += o.pos;
		if (r->comp_out > r->expand_floor + (uint64_t)r->expand_ratio * r->comp_in)
			return perfread_fail(r, -E2BIG, "compressed data at offset %llu expands more than "
					     "%u times its size: refused (a decompression bomb?)",
					     (unsigned long long)off, r->expand_ratio);
		if (!o.pos && !ret)
			break;      /* frame ended: ignore trailing input */
	}
	return 0;
}

/* Next complete record out of dbuf: 1, or 0 if more input is needed */
static int decomp_record(struct perfread *r, const uint8_t **out)
{
	struct perf_event_header h;
	size_t left = r->dtail - r->dhead;
	const uint8_t *p;

	if (left < sizeof(h))
		return 0;
	p = r->dbuf + r->dhead;          /* dbuf is NULL until something was decompressed */
	memcpy(&h, p, sizeof(h));
	if (h.size < sizeof(h) || h.type == PERFDATA_RECORD_COMPRESSED)
		return perfread_fail(r, -EINVAL, "corrupt compressed record at offset %llu",
				     (unsigned long long)r->comp_off);
	if (left < h.size)
		return 0;
	r->dhead += h.size;
	if ((uintptr_t)p % 8) {
		if (perfread_rec_reserve(r, h.size))
			return perfread_fail(r, -ENOMEM, "out of memory");
		memcpy(r->rec, p, h.size);
		p = r->rec;
	}
	*out = p;
	return 1;
}

int perfread__next(struct perfread *r, const struct perf_event_header **rec)
{
	if (!r || !rec)
		return -EINVAL;
	if (r->err[0])
		return -EINVAL;
	if (r->pending) {
		r->pending = false;
		*rec = (const struct perf_event_header *)r->rec;
		return 1;
	}
	for (;;) {
		const uint8_t *p = NULL;
		uint64_t off = 0;
		int ret = decomp_record(r, &p);

		if (ret < 0)
			return ret;
		if (ret) {
			int hr = header_record(r, p, r->comp_off);

			if (hr < 0)
				return hr;
			if (hr)
				continue;
			*rec = (const struct perf_event_header *)p;
			return 1;
		}
		ret = perfread_src_record(r, &p, &off);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (r->dtail != r->dhead)
				return perfread_fail(r, -EIO, "truncated compressed data at offset %llu",
						     (unsigned long long)r->comp_off);
			return 0;
		}
		if (((const struct perf_event_header *)p)->type == PERFDATA_RECORD_COMPRESSED) {
			ret = decompress(r, p, off);
			if (ret < 0)
				return ret;
			continue;
		}
		if (r->dtail != r->dhead)
			return perfread_fail(r, -EINVAL, "corrupt compressed record at offset %llu",
					     (unsigned long long)r->comp_off);
		ret = header_record(r, p, off);
		if (ret < 0)
			return ret;
		if (ret)
			continue;
		*rec = (const struct perf_event_header *)p;
		return 1;
	}
}

int perfread__parse_sample(const struct perfread *r, const struct perf_event_header *rec,
			   struct perfread_sample *s)
{
	if (!r || !rec || !s)
		return -EINVAL;
	return evlist__parse_sample(r->evlist, rec, s);
}

int perfread__sample_id(const struct perfread *r, const struct perf_event_header *rec,
			struct perfread_sample_id *sid)
{
	if (!r || !rec || !sid)
		return -EINVAL;
	return evlist__sample_id(r->evlist, rec, sid);
}

void perfread__free(struct perfread *r)
{
	if (!r)
		return;
	evlist__free(r->evlist);
	perfdata_env__clear(&r->env);
	free(r->sbuf);
	free(r->rec);
	free(r->dbuf);
	ZSTD_freeDStream(r->ds);
	free(r);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf.data writer.  Format notes (checked against stock perf 6.1):
 *
 * File mode layout written here:
 *   [0]    struct file_header (104 bytes, magic "PERFILE2")
 *   [104]  nr_events x { attr (128 bytes, attr.size = 128), file_section ids }
 *          attr_size in the header = 144 (perf divides attrs.size by it)
 *          then the id arrays the sections point at
 *   [data] records; after every round the header's data.size is rewritten
 *   [data + data.size] feature section table, one file_section per bit set
 *          in adds_features (ascending), then the feature bodies.
 * adds_features stays zero until finish(), so a file cut short by SIGKILL
 * never points perf at feature sections that were never written.
 *
 * Feature encodings: perffeat.h, one table shared with the reader.
 *
 * Pipe mode: {magic, size=16}, HEADER_ATTR (64) = header + attr(128) + ids,
 * then HEADER_FEATURE (80) = header + u64 feat_id + body, ascending, and a
 * terminator whose feat_id is perf 6.1's HEADER_LAST_FEATURE (32) and empty
 * body.  EVENT_DESC must follow the HEADER_ATTRs: perf names evsels found by
 * id in the evlist built from them.  Then FINISHED_INIT (82) and the data.
 *
 * Compression: one zstd frame per round, with a content checksum, so a
 * flipped byte anywhere in a COMPRESSED record is an error for perfmark
 * script and for perf (zstd blocks carry no checksum of their own: with one
 * never-ended frame, as perf record writes, most corruption decodes into
 * plausible garbage).  Costs 10-20 % of the ratio against one stream (the
 * window restarts each round; measured 13x instead of 14x on `-g` loops).
 * Perf's reader keeps one DStream, which starts the next frame by itself.  A round is cut into chunks, runs of
 * whole records of at most COMP_CHUNK bytes: ZSTD_e_flush after each chunk
 * so every COMPRESSED record decodes on its own, ZSTD_e_end after the last.
 * compressBound(COMP_CHUNK) fits one record, so the frame end (the
 * checksum) always shares a record with data: a record that decompresses
 * to 0 bytes is an error for perf.  (A single record larger than
 * COMP_CHUNK could still be split; perf carries partial records over to
 * the next COMPRESSED record.)  FINISHED_ROUND is written uncompressed
 * after the round's COMPRESSED records, as perf record does.
 */
#include "perfdata.h"
#include "dio.h"
#include "evlist.h"
#include "perffeat.h"
#include "pdbuf.h"
#include "tracedata.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define PERF_MAGIC2 0x32454c4946524550ULL   /* "PERFILE2" little endian */
#define REC_MAX 65535u                      /* header.size is a u16 */
/* Uncompressed bytes per COMPRESSED record; compressBound() of this fits
 * in REC_MAX minus the 8-byte header. */
#define COMP_CHUNK 60000u
/* Advertised COMPRESSED mmap_len: covers COMP_CHUNK and any single record */
#define COMP_MMAP_LEN (128u * 1024)

struct file_section {
	uint64_t offset, size;
};

struct file_header {
	uint64_t magic, size, attr_size;
	struct file_section attrs, data, event_types;
	uint64_t adds_features[PERFDATA_FEAT_BITS / 64];
};

_Static_assert(sizeof(struct file_header) == 104, "perf_file_header is 104 bytes");
_Static_assert(sizeof(struct perf_event_attr) >= PERFDATA_ATTR_SIZE, "uapi attr too small");

struct perfdata_writer {
	int fd;
	bool pipe;
	int err;                /* sticky */
	bool finished;
	int zstd_level;
	struct evlist *evlist;
	struct perfdata_env env;        /* what the features describe */

	uint64_t data_off, data_size;   /* file mode */
	uint64_t kept_size;             /* data_size when features last followed it */
	uint64_t pos;                   /* bytes written so far */
	struct dio *dio;                /* file mode: the data goes out direct (dio.h) */

	struct pdbuf round;             /* records of the current round, not yet written */
	bool in_round;                  /* part of the current round is written already */
	struct pdbuf feat;              /* scratch for one feature body, one header */
	struct pdbuf zout;              /* compressed records */
	struct pdbuf fbody;             /* feature bodies (file mode) */
	bool have_features;             /* file mode: features follow the data */
	ZSTD_CCtx *cctx;

	uint64_t records, raw_bytes;
	uint64_t comp_in, comp_out;
};

/* ---- output ------------------------------------------------------------- */

/*
 * A round larger than this goes out as it fills (FINISHED_ROUND still at
 * its end, the header's data size then): its buffer is reused while in the
 * cache, instead of growing to a whole drain of fresh pages.
 */
#define ROUND_PIECE (1u << 20)
/*
 * Append to the output: pipe = write(), file = pwrite() at the data end.
 * plain: not through the direct mirror (what the next round writes over).
 */
static int out_to(struct perfdata_writer *w, const void *data, size_t len, bool plain)
{
	int err;

	if (w->err)
		return w->err;
	if (w->dio && !plain)
		err = dio__write(w->dio, data, len, w->pos);
	else
		err = fd_write_at(w->fd, data, len, w->pipe ? -1 : (int64_t)w->pos);
	if (err) {
		w->err = err;
		return err;
	}
	w->pos += len;
	return 0;
}

static int out(struct perfdata_writer *w, const void *data, size_t len)
{
	return out_to(w, data, len, false);
}

/* Append a pdbuf, or the error it kept (plain: as for out_to) */
static int out_buf(struct perfdata_writer *w, const struct pdbuf *b, bool plain)
{
	return b->err ? b->err : out_to(w, b->p, b->len, plain);
}

/* ---- header ------------------------------------------------------------- */

static size_t attrs_size(const struct perfdata_writer *w)
{
	return evlist__nr(w->evlist) * (PERFDATA_ATTR_SIZE + sizeof(struct file_section));
}

static int write_file_header(struct perfdata_writer *w, const uint64_t *feat_bits)
{
	struct file_header h = {
		.magic = PERF_MAGIC2,
		.size = sizeof(struct file_header),
		.attr_size = PERFDATA_ATTR_SIZE + sizeof(struct file_section),
		.attrs = { sizeof(struct file_header), attrs_size(w) },
		.data = { w->data_off, w->data_size },
	};
	int err;

	if (w->err)
		return w->err;
	if (feat_bits)
		memcpy(h.adds_features, feat_bits, sizeof(h.adds_features));
	err = fd_write_at(w->fd, &h, sizeof(h), 0);
	if (err)
		w->err = err;
	return err;
}

/* An attr as written: 128 bytes, size = 128 (what perf 6.1 accepts) */
static void put_attr(struct pdbuf *b, const struct perfread_event *ev)
{
	struct perf_event_attr a = ev->attr;

	a.size = PERFDATA_ATTR_SIZE;
	pdbuf_put(b, &a, PERFDATA_ATTR_SIZE);
}

/* the attrs with their id sections, then the ids: what follows the file header */
static void put_attr_sections(struct perfdata_writer *w, struct pdbuf *b)
{
	uint64_t ids_off = sizeof(struct file_header) + attrs_size(w);
	size_t n = evlist__nr(w->evlist);

	for (size_t i = 0; i < n; i++) {
		const struct perfread_event *ev = evlist__event(w->evlist, i);
		struct file_section s = { ids_off, (uint64_t)ev->nr_ids * 8 };

		put_attr(b, ev);
		pdbuf_put(b, &s, sizeof(s));
		ids_off += s.size;
	}
	for (size_t i = 0; i < n; i++) {
		const struct perfread_event *ev = evlist__event(w->evlist, i);

		pdbuf_put(b, ev->ids, (size_t)ev->nr_ids * 8);
	}
}

static int write_file_start(struct perfdata_writer *w)
{
	struct pdbuf *b = &w->feat;
	int err;

	pdbuf_reset(b);
	put_attr_sections(w, b);
	w->pos = sizeof(struct file_header);
	err = out_buf(w, b, false);
	if (err)
		return err;
	w->data_off = w->pos;
	w->data_size = 0;
	return write_file_header(w, NULL);
}

/*
 * Go on writing a perf.data that a writer of the same events left (a
 * recorder that died): after its last complete round, as the header says;
 * what follows (a round cut short, old features) is dropped.  The features
 * come at the end, as for a new file.  -ESTALE: other events, or not a
 * file this writer could have written.
 */
static int write_file_resume(struct perfdata_writer *w)
{
	struct pdbuf *b = &w->feat;
	struct file_header h;
	uint8_t *old;
	int e = 0;

	pdbuf_reset(b);
	put_attr_sections(w, b);
	if (b->err)
		return b->err;
	if (pread(w->fd, &h, 0, 0) < 0)
		return -errno;                      /* not readable (O_WRONLY) */
	if (pread(w->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != PERF_MAGIC2 ||
	    h.size != sizeof(h) || h.attrs.offset != sizeof(h) || h.attrs.size != attrs_size(w) ||
	    h.data.offset != sizeof(h) + b->len || h.data.size > UINT64_MAX / 2)
		return -ESTALE;
	old = malloc(b->len);
	if (!old)
		return -ENOMEM;
	if (pread(w->fd, old, b->len, sizeof(h)) != (ssize_t)b->len || memcmp(old, b->p, b->len))
		e = -ESTALE;
	free(old);
	if (e)
		return e;
	w->data_off = h.data.offset;
	w->data_size = h.data.size;
	w->kept_size = w->data_size;
	w->pos = w->data_off + w->data_size;
	if (ftruncate(w->fd, (off_t)w->pos))
		return -errno;
	return write_file_header(w, NULL);
}

/* One pipe-mode header record: h, then body, padded to 8 bytes */
static int out_header_record(struct perfdata_writer *w, uint32_t type, const void *pre,
			     size_t prelen, const struct pdbuf *body)
{
	size_t size = (8 + prelen + body->len + 7) & ~(size_t)7;
	struct perf_event_header h = { type, 0, (uint16_t)size };
	int err;

	if (body->err)
		return body->err;
	if (size > REC_MAX)
		return -E2BIG;
	err = out(w, &h, sizeof(h));
	if (!err)
		err = out(w, pre, prelen);
	if (!err)
		err = out(w, body->p, body->len);
	if (!err)
		err = out(w, "\0\0\0\0\0\0\0", size - 8 - prelen - body->len);
	return err;
}

/*
 * HEADER_TRACING_DATA in a pipe: a 16-byte record { header, u32 size, pad }
 * whose header.size does not count the tracing data that follows it, size
 * bytes padded to 8 (perf reads them from the stream by themselves).
 */
static int write_pipe_tracing(struct perfdata_writer *w)
{
	uint32_t size = (uint32_t)((w->env.tracing_len + 7) & ~(size_t)7);
	struct { struct perf_event_header h; uint32_t size, pad; } rec = {
		{ PERFDATA_RECORD_HEADER_TRACING_DATA, 0, 16 }, size, 0 };
	int err = out(w, &rec, sizeof(rec));

	if (!err)
		err = out(w, w->env.tracing, w->env.tracing_len);
	if (!err)
		err = out(w, "\0\0\0\0\0\0\0", size - w->env.tracing_len);
	return err;
}

static int write_pipe_start(struct perfdata_writer *w)
{
	struct { uint64_t magic, size; } ph = { PERF_MAGIC2, 16 };
	struct { struct perf_event_header h; uint64_t id; } term = {
		{ PERFDATA_RECORD_HEADER_FEATURE, 0, 16 }, PERFDATA_FEAT_LAST_6_1 };
	struct perf_event_header fin = { PERFDATA_RECORD_FINISHED_INIT, 0, 8 };
	struct pdbuf *b = &w->feat;
	int err = out(w, &ph, sizeof(ph));

	for (size_t i = 0; !err && i < evlist__nr(w->evlist); i++) {
		const struct perfread_event *ev = evlist__event(w->evlist, i);

		pdbuf_reset(b);
		put_attr(b, ev);
		pdbuf_put(b, ev->ids, (size_t)ev->nr_ids * 8);
		err = out_header_record(w, PERFDATA_RECORD_HEADER_ATTR, NULL, 0, b);
	}
	/* ascending, EVENT_DESC after the attrs; perf does not pad, we do (alignment) */
	for (unsigned i = 0; !err && i < perfdata_nr_features; i++) {
		const struct perfdata_feature *f = &perfdata_features[i];
		uint64_t id = (uint64_t)f->id;

		pdbuf_reset(b);
		if (f->write(b, &w->env, f->id))
			err = out_header_record(w, PERFDATA_RECORD_HEADER_FEATURE, &id, 8, b);
	}
	/* the terminator: perf 6.1's tools check feat_id == HEADER_LAST_FEATURE */
	if (!err)
		err = out(w, &term, sizeof(term));
	if (!err && w->env.tracing)
		err = write_pipe_tracing(w);
	if (!err)
		err = out(w, &fin, sizeof(fin));
	return err;
}

/* ---- public API --------------------------------------------------------- */

void perfdata_writer__free(struct perfdata_writer *w)
{
	if (!w)
		return;
	evlist__free(w->evlist);
	perfdata_env__clear(&w->env);
	pdbuf_free(&w->round);
	pdbuf_free(&w->feat);
	pdbuf_free(&w->zout);
	pdbuf_free(&w->fbody);
	dio__free(w->dio);
	ZSTD_freeCCtx(w->cctx);
	free(w);
}

static int writer_setup(struct perfdata_writer *w, const struct perfdata_writer_opts *opts,
			const struct perfdata_event *events, size_t nr_events)
{
	int err = evlist__new(&w->evlist);

	for (size_t i = 0; !err && i < nr_events; i++) {
		if (!events[i].name || (events[i].nr_ids && !events[i].ids) ||
		    events[i].nr_ids > 65536)
			return -EINVAL;
		err = evlist__add(w->evlist, &events[i].attr, sizeof(events[i].attr), events[i].name,
				  events[i].ids, events[i].nr_ids);
	}
	if (!err)
		err = perfdata_env__host(&w->env);
	if (!err)
		err = perfdata_env__set_cmdline(&w->env, opts->argc, opts->argv);
	/* tracepoints: their formats, for perf script to decode their entries */
	if (!err)
		err = tracedata_build(events, nr_events, &w->env.tracing, &w->env.tracing_len);
	if (err)
		return err;
	w->env.evlist = w->evlist;
	w->env.pipe = w->pipe;
	w->env.have_clock_data = opts->clock_ref_mono_ns || opts->clock_ref_real_ns;
	w->env.clockid = CLOCK_MONOTONIC;
	w->env.tod_ns = opts->clock_ref_real_ns;
	w->env.clockid_ns = opts->clock_ref_mono_ns;
	w->env.have_comp = w->zstd_level > 0;
	w->env.comp_level = (uint32_t)w->zstd_level;
	w->env.comp_ratio = 1;
	w->env.comp_mmap_len = COMP_MMAP_LEN;
	if (w->zstd_level) {
		size_t r;

		w->cctx = ZSTD_createCCtx();
		if (!w->cctx)
			return -ENOMEM;
		r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->zstd_level);
		if (!ZSTD_isError(r))
			r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
		if (ZSTD_isError(r))
			return -EINVAL;
	}
	return 0;
}

int perfdata_writer__new(struct perfdata_writer **outp,
			 const struct perfdata_writer_opts *opts,
			 const struct perfdata_event *events, size_t nr_events)
{
	struct perfdata_writer *w;
	int err;

	if (!outp || !opts || opts->fd < 0 || !events || !nr_events || nr_events > 1024 ||
	    opts->zstd_level < 0 || opts->zstd_level > 22 || opts->argc < 0 ||
	    (opts->argc && !opts->argv))
		return -EINVAL;
	*outp = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = opts->fd;
	w->pipe = opts->pipe;
	w->zstd_level = opts->zstd_level;
	err = writer_setup(w, opts, events, nr_events);
	if (!err && opts->resume && !w->pipe)
		err = write_file_resume(w);
	else if (!err)
		err = w->pipe ? write_pipe_start(w) : write_file_start(w);
	if (err) {
		perfdata_writer__free(w);
		return err;
	}
	if (!w->pipe)
		dio__open(&w->dio, w->fd, w->pos);   /* else all through fd */
	*outp = w;
	return 0;
}

/* SAMPLE_TIME bookkeeping: the time of a record that has one */
static void note_time(struct perfdata_writer *w, uint64_t time)
{
	if (!w->env.have_time || time < w->env.first_time)
		w->env.first_time = time;
	if (!w->env.have_time || time > w->env.last_time)
		w->env.last_time = time;
	w->env.have_time = true;
}

static void note_sample_time(struct perfdata_writer *w, const void *rec)
{
	struct perfread_sample_id sid;

	if (!evlist__sample_id(w->evlist, rec, &sid) && sid.have_time)
		note_time(w, sid.time);
}

static int write_piece(struct perfdata_writer *w);

/* time: the sample's own time (known to the caller), or NULL to parse it out */
static int add(struct perfdata_writer *w, const void *rec, size_t len, const uint64_t *time)
{
	struct perf_event_header h;

	if (!w || !rec)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	if (len < sizeof(h) || len > REC_MAX)
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size != len)
		return -EINVAL;
	pdbuf_put(&w->round, rec, len);
	if (w->round.err) {
		int err = w->round.err;

		w->round.err = 0;     /* nothing added: the round stays usable */
		return err;
	}
	if (h.type == PERF_RECORD_SAMPLE && time)
		note_time(w, *time);
	else if (h.type == PERF_RECORD_SAMPLE)
		note_sample_time(w, (const uint8_t *)w->round.p + w->round.len - len);
	w->records++;
	/* a large round goes out in pieces, from a buffer that stays in the cache */
	return w->round.len >= ROUND_PIECE ? write_piece(w) : 0;
}

int perfdata_writer__add(struct perfdata_writer *w, const void *rec, size_t len)
{
	return add(w, rec, len, NULL);
}

int perfdata_writer__add_timed(struct perfdata_writer *w, const void *rec, size_t len, uint64_t time)
{
	return add(w, rec, len, &time);
}

/* Compress [p, p+len) (whole records) into COMPRESSED records in w->zout;
 * last: end the round's frame (adds the checksum) */
static int compress_chunk(struct perfdata_writer *w, const uint8_t *p, size_t len,
			  bool last)
{
	ZSTD_inBuffer in = { p, len, 0 };
	const size_t max_payload = REC_MAX - 8 - 7;   /* keep size a multiple of 8 */
	size_t r;

	do {
		size_t start = w->zout.len, payload, rec_size;
		ZSTD_outBuffer o;
		struct perf_event_header h = { PERFDATA_RECORD_COMPRESSED, 0, 0 };
		int err = pdbuf_reserve(&w->zout, REC_MAX + 8);

		if (err)
			return err;
		o.dst = w->zout.p + start + 8;
		o.size = max_payload;
		o.pos = 0;
		r = ZSTD_compressStream2(w->cctx, &o, &in, last ? ZSTD_e_end : ZSTD_e_flush);
		if (ZSTD_isError(r))
			return -EIO;
		payload = o.pos;
		if (!payload && !r)
			break;
		/* perf reads payload = header.size - 8; pad with zero bytes is
		 * not allowed inside a zstd stream, so only the size is exact */
		rec_size = 8 + payload;
		h.size = (uint16_t)rec_size;
		memcpy(w->zout.p + start, &h, sizeof(h));
		w->zout.len = start + rec_size;
	} while (r != 0 || in.pos < in.size);
	w->comp_in += len;
	return 0;
}

/*
 * The round's buffer, compressed, to the output.  last: the round ends
 * here (the frame with it).  Otherwise the last chunk stays in the buffer,
 * so that the frame's end, written with the round's last records, always
 * shares a record with data.
 */
static int flush_compressed(struct perfdata_writer *w, bool last)
{
	const uint8_t *p = w->round.p;
	size_t len = w->round.len, chunk_start = 0, off = 0;
	int err;

	w->zout.len = 0;
	while (off < len) {
		struct perf_event_header h;

		memcpy(&h, p + off, sizeof(h));
		if (off > chunk_start && off - chunk_start + h.size > COMP_CHUNK) {
			err = compress_chunk(w, p + chunk_start, off - chunk_start, false);
			if (err)
				return err;
			chunk_start = off;
		}
		off += h.size;
	}
	if (off > chunk_start && last) {
		err = compress_chunk(w, p + chunk_start, off - chunk_start, true);
		if (err)
			return err;
		chunk_start = off;
	}
	w->comp_out += w->zout.len;
	w->raw_bytes += chunk_start;
	memmove(w->round.p, p + chunk_start, len - chunk_start);
	w->round.len = len - chunk_start;
	return out(w, w->zout.p, w->zout.len);
}

static int keep_last_round(struct perfdata_writer *w, int err);

/*
 * What the round holds so far goes out (file mode: over the features,
 * unlinked from the header first, as the round's end writes them again).
 */
static int write_piece(struct perfdata_writer *w)
{
	int err;

	if (!w->pipe && w->have_features) {
		err = write_file_header(w, NULL);
		if (err)
			return err;
		w->have_features = false;
	}
	w->in_round = true;
	if (w->zstd_level)
		return keep_last_round(w, flush_compressed(w, false));
	w->raw_bytes += w->round.len;
	err = out(w, w->round.p, w->round.len);
	pdbuf_reset(&w->round);
	return keep_last_round(w, err);
}

/*
 * File mode: feature table and bodies at the data end, then the header with
 * adds_features set.  Done after every round, not only at the end: perf 6.1
 * cannot decompress COMPRESSED records without the COMPRESSED feature
 * (mmap_len), and without EVENT_DESC a killed recorder's events lose their
 * names.  The next round's data overwrites these features, so round() first
 * rewrites the header without feature bits: a kill at any point leaves a
 * header that describes bytes that are really there.
 */
static int write_features(struct perfdata_writer *w)
{
	uint64_t bits[PERFDATA_FEAT_BITS / 64] = { 0 };
	struct file_section secs[PERFDATA_FEAT_BITS];
	size_t nsec = 0;
	uint64_t table_off, off;
	int err;

	if (w->comp_out)
		w->env.comp_ratio = (uint32_t)((w->comp_in + w->comp_out / 2) / w->comp_out);
	pdbuf_reset(&w->fbody);
	for (unsigned i = 0; i < perfdata_nr_features; i++) {
		const struct perfdata_feature *f = &perfdata_features[i];
		size_t start = w->fbody.len;

		if (!f->write(&w->fbody, &w->env, f->id))
			continue;
		bits[f->id / 64] |= 1ULL << (f->id % 64);
		secs[nsec].offset = start;   /* relative for now */
		secs[nsec].size = w->fbody.len - start;
		nsec++;
	}
	if (w->fbody.err)
		return w->fbody.err;
	table_off = w->data_off + w->data_size;
	off = table_off + nsec * sizeof(struct file_section);
	for (size_t i = 0; i < nsec; i++)
		secs[i].offset += off;
	w->pos = table_off;
	err = out_to(w, secs, nsec * sizeof(secs[0]), true);
	if (!err)
		err = out_buf(w, &w->fbody, true);
	w->pos = table_off;     /* the next round's data goes here */
	if (!err)
		err = write_file_header(w, bits);
	if (!err) {
		w->have_features = true;
		w->kept_size = w->data_size;
	}
	return err;
}

/*
 * A round, or its features, that could not be written (the disk is full,
 * say) leaves the file as the last round whose features fitted left it:
 * its data, then its features again.  Without them the header has no
 * feature bits, and perf cannot read a compressed file at all (no
 * COMPRESSED: no mmap_len to decompress into).  Cutting what came after
 * gives back the room the features took then.  The writer keeps its
 * error: nothing more is written.
 */
static int keep_last_round(struct perfdata_writer *w, int err)
{
	uint64_t end = w->data_off + w->kept_size;

	if (!err || w->pipe || w->have_features || !w->data_off)
		return err;
	if (ftruncate(w->fd, (off_t)end))
		return err;
	w->err = 0;
	w->data_size = w->kept_size;
	w->pos = end;
	(void)write_features(w);
	w->err = err;
	return err;
}

int perfdata_writer__round(struct perfdata_writer *w)
{
	static const struct perf_event_header fin = { PERFDATA_RECORD_FINISHED_ROUND, 0, 8 };
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	if (!w->round.len && !w->in_round)
		return 0;
	if (!w->pipe && w->have_features) {
		/* features are about to be overwritten: unlink them first */
		err = write_file_header(w, NULL);
		if (err)
			return err;
		w->have_features = false;
	}
	if (w->zstd_level) {
		err = flush_compressed(w, true);
	} else {
		w->raw_bytes += w->round.len;
		err = out(w, w->round.p, w->round.len);
	}
	pdbuf_reset(&w->round);
	w->in_round = false;
	if (!err)
		err = out(w, &fin, sizeof(fin));
	if (!err && w->dio) {
		err = dio__sync(w->dio);    /* all of the round in the file before the header says so */
		if (err)
			w->err = err;
	}
	if (err)
		return keep_last_round(w, err);
	if (!w->pipe) {
		w->data_size = w->pos - w->data_off;
		err = keep_last_round(w, write_features(w));
	}
	return err;
}

int perfdata_writer__finish(struct perfdata_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	if (w->finished)
		return w->err;
	err = perfdata_writer__round(w);
	w->finished = true;
	if (err || w->pipe)
		return err;
	if (!w->have_features)
		err = keep_last_round(w, write_features(w));
	if (err && !w->err)
		w->err = err;
	return err;
}

void perfdata_writer__stats(const struct perfdata_writer *w, struct perfdata_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!w)
		return;
	st->records = w->records;
	st->bytes = w->pos;
	st->raw_bytes = w->raw_bytes;
}

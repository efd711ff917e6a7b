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
 * Feature encodings (tools/perf/util/header.c):
 *   strings: u32 len (strlen+1 rounded up to 64) + string + zero padding
 *   NRCPUS: u32 nr_cpus_avail, u32 nr_cpus_online
 *   TOTAL_MEM: u64 kB
 *   CMDLINE: u32 nr + nr strings
 *   EVENT_DESC: u32 nr, u32 attr_size, then per event attr, u32 nr_ids,
 *               string name, u64 ids[nr_ids]; perf names evsels by ids[0]
 *   CLOCKID: u64 resolution of the clock in ns (not the clock id!)
 *   CLOCK_DATA: u32 version=1, u32 clockid, u64 tod_ns, u64 clockid_ns
 *   SAMPLE_TIME: u64 first, u64 last
 *   COMPRESSED: u32 version=0, u32 type=1 (zstd), u32 level, u32 ratio,
 *               u32 mmap_len (perf sizes its decompression buffer with it)
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

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#ifndef PERFMARK_VERSION
#define PERFMARK_VERSION "unknown"
#endif

#define PERF_MAGIC2 0x32454c4946524550ULL   /* "PERFILE2" little endian */
#define NAME_ALIGN 64
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

struct buf {
	uint8_t *p;
	size_t len, cap;
};

struct wevent {
	uint8_t attr[PERFDATA_ATTR_SIZE];
	uint64_t sample_type;
	char *name;
	uint64_t *ids;
	uint32_t nr_ids;
};

struct perfdata_writer {
	int fd;
	bool pipe;
	int err;                /* sticky */
	bool finished;
	int zstd_level;
	size_t nr_events;
	struct wevent *events;
	int argc;
	char **argv;
	uint64_t clock_mono, clock_real;

	uint64_t data_off, data_size;   /* file mode */
	uint64_t pos;                   /* bytes written so far */

	struct buf round;               /* records of the current round */
	struct buf feat;                /* scratch for feature bodies */
	struct buf zout;                /* compressed records */
	struct buf fbody;               /* feature bodies (file mode) */
	bool have_features;             /* file mode: features follow the data */
	ZSTD_CCtx *cctx;

	bool have_time;
	uint64_t first_time, last_time;
	uint64_t records, raw_bytes;
	uint64_t comp_in, comp_out;
};

/* ---- small helpers ------------------------------------------------------ */

static int buf_reserve(struct buf *b, size_t more)
{
	size_t need, cap;
	uint8_t *p;

	if (more > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	need = b->len + more;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int buf_put(struct buf *b, const void *data, size_t len)
{
	int err = buf_reserve(b, len);

	if (err)
		return err;
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

static int buf_zero(struct buf *b, size_t len)
{
	int err = buf_reserve(b, len);

	if (err)
		return err;
	memset(b->p + b->len, 0, len);
	b->len += len;
	return 0;
}

static int buf_u32(struct buf *b, uint32_t v)
{
	return buf_put(b, &v, sizeof(v));
}

static int buf_u64(struct buf *b, uint64_t v)
{
	return buf_put(b, &v, sizeof(v));
}

/* perf's do_write_string(): u32 len (NUL included, aligned to 64), bytes */
static int buf_string(struct buf *b, const char *s)
{
	size_t olen = strlen(s) + 1;
	size_t len = (olen + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	int err;

	if (len > UINT32_MAX)
		return -EINVAL;
	err = buf_u32(b, (uint32_t)len);
	if (!err)
		err = buf_put(b, s, olen);
	if (!err)
		err = buf_zero(b, len - olen);
	return err;
}

static void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* All of data, at off (pwrite), or where the fd is (write) when off < 0. */
static int write_at(int fd, const void *data, size_t len, int64_t off)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

/* Append to the output: pipe = write(), file = pwrite() at the data end. */
static int out(struct perfdata_writer *w, const void *data, size_t len)
{
	int err;

	if (w->err)
		return w->err;
	err = write_at(w->fd, data, len, w->pipe ? -1 : (int64_t)w->pos);
	if (err) {
		w->err = err;
		return err;
	}
	w->pos += len;
	return 0;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- feature bodies ----------------------------------------------------- */

static int read_small_file(const char *path, char *dst, size_t sz)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, dst, sz - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	dst[n] = 0;
	return 0;
}

/* "model name" of /proc/cpuinfo, runs of spaces squashed as perf does */
static void cpu_desc(char *dst, size_t sz)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(dst, sz, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p, *q;

		if (strncmp(line, "model name", 10))
			continue;
		p = strchr(line, ':');
		if (!p)
			break;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		q = dst;
		for (; *p && *p != '\n' && q < dst + sz - 1; p++) {
			if ((*p == ' ' || *p == '\t') && q > dst && q[-1] == ' ')
				continue;
			*q++ = (*p == '\t') ? ' ' : *p;
		}
		*q = 0;
		break;
	}
	fclose(f);
}

/* x86 perf CPUID string: "vendor,family,model,stepping" from /proc/cpuinfo */
static void cpu_id(char *dst, size_t sz)
{
	char line[512], vendor[64] = "unknown";
	unsigned family = 0, model = 0, stepping = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *p = strchr(line, ':');

			if (!p)
				continue;
			if (!strncmp(line, "vendor_id", 9))
				sscanf(p + 1, " %63s", vendor);
			else if (!strncmp(line, "cpu family", 10))
				sscanf(p + 1, " %u", &family);
			else if (!strncmp(line, "model\t", 6))
				sscanf(p + 1, " %u", &model);
			else if (!strncmp(line, "stepping", 8))
				sscanf(p + 1, " %u", &stepping);
			else if (line[0] == '\n')
				break;
		}
		fclose(f);
	}
	snprintf(dst, sz, "%s,%u,%u,%u", vendor, family, model, stepping);
}

static uint64_t total_mem_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* cpu__max_present_cpu(): last cpu of /sys/.../present + 1 */
static uint32_t nr_cpus_present(void)
{
	char s[256];
	char *p;
	long last = 0;

	if (read_small_file("/sys/devices/system/cpu/present", s, sizeof(s)) == 0) {
		p = s + strlen(s);
		while (p > s && (p[-1] < '0' || p[-1] > '9'))
			p--;
		while (p > s && p[-1] >= '0' && p[-1] <= '9')
			p--;
		last = strtol(p, NULL, 10);
		return (uint32_t)last + 1;
	}
	last = sysconf(_SC_NPROCESSORS_CONF);
	return last > 0 ? (uint32_t)last : 1;
}

static int feat_event_desc(struct perfdata_writer *w, struct buf *b)
{
	int err = buf_u32(b, (uint32_t)w->nr_events);

	if (!err)
		err = buf_u32(b, PERFDATA_ATTR_SIZE);
	for (size_t i = 0; !err && i < w->nr_events; i++) {
		const struct wevent *e = &w->events[i];

		err = buf_put(b, e->attr, PERFDATA_ATTR_SIZE);
		if (!err)
			err = buf_u32(b, e->nr_ids);
		if (!err)
			err = buf_string(b, e->name);
		if (!err)
			err = buf_put(b, e->ids, (size_t)e->nr_ids * sizeof(uint64_t));
	}
	return err;
}

/*
 * Body of feature feat into b (cleared first).  1 if written, 0 if this
 * writer does not emit it, negative errno on failure.
 */
static int feature_body(struct perfdata_writer *w, int feat, struct buf *b)
{
	struct utsname u;
	char s[512];
	int err = 0;

	b->len = 0;
	switch (feat) {
	case PERFDATA_FEAT_HOSTNAME:
	case PERFDATA_FEAT_OSRELEASE:
	case PERFDATA_FEAT_ARCH:
		if (uname(&u) < 0)
			memset(&u, 0, sizeof(u));
		err = buf_string(b, feat == PERFDATA_FEAT_HOSTNAME ? u.nodename :
				    feat == PERFDATA_FEAT_OSRELEASE ? u.release : u.machine);
		break;
	case PERFDATA_FEAT_VERSION:
		err = buf_string(b, "perfmark " PERFMARK_VERSION);
		break;
	case PERFDATA_FEAT_NRCPUS: {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		err = buf_u32(b, nr_cpus_present());
		if (!err)
			err = buf_u32(b, online > 0 ? (uint32_t)online : 1);
		break;
	}
	case PERFDATA_FEAT_CPUDESC:
		cpu_desc(s, sizeof(s));
		err = buf_string(b, s);
		break;
	case PERFDATA_FEAT_CPUID:
		cpu_id(s, sizeof(s));
		err = buf_string(b, s);
		break;
	case PERFDATA_FEAT_TOTAL_MEM:
		err = buf_u64(b, total_mem_kb());
		break;
	case PERFDATA_FEAT_CMDLINE:
		err = buf_u32(b, (uint32_t)w->argc);
		for (int i = 0; !err && i < w->argc; i++)
			err = buf_string(b, w->argv[i]);
		break;
	case PERFDATA_FEAT_EVENT_DESC:
		err = feat_event_desc(w, b);
		break;
	case PERFDATA_FEAT_SAMPLE_TIME:
		/* only known at the end: file mode only */
		if (w->pipe || !w->have_time)
			return 0;
		err = buf_u64(b, w->first_time);
		if (!err)
			err = buf_u64(b, w->last_time);
		break;
	case PERFDATA_FEAT_CLOCKID: {
		struct timespec res;

		if (clock_getres(CLOCK_MONOTONIC, &res) < 0 || res.tv_sec)
			res.tv_nsec = 1;
		err = buf_u64(b, (uint64_t)res.tv_nsec);
		break;
	}
	case PERFDATA_FEAT_COMPRESSED: {
		uint32_t ratio = 1;

		if (!w->zstd_level)
			return 0;
		if (!w->pipe && w->comp_out)
			ratio = (uint32_t)((w->comp_in + w->comp_out / 2) / w->comp_out);
		err = buf_u32(b, 0);                 /* version */
		if (!err)
			err = buf_u32(b, 1);         /* ZSTD */
		if (!err)
			err = buf_u32(b, (uint32_t)w->zstd_level);
		if (!err)
			err = buf_u32(b, ratio ? ratio : 1);
		if (!err)
			err = buf_u32(b, COMP_MMAP_LEN);
		break;
	}
	case PERFDATA_FEAT_CLOCK_DATA:
		if (!w->clock_mono && !w->clock_real)
			return 0;
		err = buf_u32(b, 1);
		if (!err)
			err = buf_u32(b, CLOCK_MONOTONIC);
		if (!err)
			err = buf_u64(b, w->clock_real);
		if (!err)
			err = buf_u64(b, w->clock_mono);
		break;
	default:
		return 0;
	}
	return err ? err : 1;
}

static const int features[] = {
	PERFDATA_FEAT_HOSTNAME, PERFDATA_FEAT_OSRELEASE, PERFDATA_FEAT_VERSION,
	PERFDATA_FEAT_ARCH, PERFDATA_FEAT_NRCPUS, PERFDATA_FEAT_CPUDESC,
	PERFDATA_FEAT_CPUID, PERFDATA_FEAT_TOTAL_MEM, PERFDATA_FEAT_CMDLINE,
	PERFDATA_FEAT_EVENT_DESC, PERFDATA_FEAT_SAMPLE_TIME, PERFDATA_FEAT_CLOCKID,
	PERFDATA_FEAT_COMPRESSED, PERFDATA_FEAT_CLOCK_DATA,
};
#define NR_FEATURES (sizeof(features) / sizeof(features[0]))

/* ---- header ------------------------------------------------------------- */

static size_t attrs_size(const struct perfdata_writer *w)
{
	return w->nr_events * (PERFDATA_ATTR_SIZE + sizeof(struct file_section));
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
	err = write_at(w->fd, &h, sizeof(h), 0);
	if (err)
		w->err = err;
	return err;
}

static int write_file_start(struct perfdata_writer *w)
{
	struct buf *b = &w->feat;
	uint64_t ids_off = sizeof(struct file_header) + attrs_size(w);
	int err = 0;

	b->len = 0;
	for (size_t i = 0; !err && i < w->nr_events; i++) {
		struct file_section s = { ids_off, (uint64_t)w->events[i].nr_ids * 8 };

		err = buf_put(b, w->events[i].attr, PERFDATA_ATTR_SIZE);
		if (!err)
			err = buf_put(b, &s, sizeof(s));
		ids_off += s.size;
	}
	for (size_t i = 0; !err && i < w->nr_events; i++)
		err = buf_put(b, w->events[i].ids, (size_t)w->events[i].nr_ids * 8);
	if (err)
		return err;
	w->pos = sizeof(struct file_header);
	err = out(w, b->p, b->len);
	if (err)
		return err;
	w->data_off = w->pos;
	w->data_size = 0;
	return write_file_header(w, NULL);
}

static int write_pipe_start(struct perfdata_writer *w)
{
	struct { uint64_t magic, size; } ph = { PERF_MAGIC2, 16 };
	struct buf *b = &w->feat;
	struct buf rec = { 0 };
	int err = out(w, &ph, sizeof(ph));

	for (size_t i = 0; !err && i < w->nr_events; i++) {
		const struct wevent *e = &w->events[i];
		size_t size = 8 + PERFDATA_ATTR_SIZE + (size_t)e->nr_ids * 8;
		struct perf_event_header h = { PERFDATA_RECORD_HEADER_ATTR, 0, (uint16_t)size };

		if (size > REC_MAX) {
			err = -E2BIG;
			break;
		}
		rec.len = 0;
		err = buf_put(&rec, &h, sizeof(h));
		if (!err)
			err = buf_put(&rec, e->attr, PERFDATA_ATTR_SIZE);
		if (!err)
			err = buf_put(&rec, e->ids, (size_t)e->nr_ids * 8);
		if (!err)
			err = out(w, rec.p, rec.len);
	}
	for (size_t i = 0; !err && i < NR_FEATURES; i++) {
		struct perf_event_header h = { PERFDATA_RECORD_HEADER_FEATURE, 0, 0 };
		uint64_t id = (uint64_t)features[i];
		size_t size;
		int r = feature_body(w, features[i], b);

		if (r <= 0) {
			err = r;
			continue;
		}
		/* perf does not pad these; we pad to 8 to keep records aligned */
		size = (16 + b->len + 7) & ~(size_t)7;
		if (size > REC_MAX) {
			err = -E2BIG;
			break;
		}
		h.size = (uint16_t)size;
		rec.len = 0;
		err = buf_put(&rec, &h, sizeof(h));
		if (!err)
			err = buf_u64(&rec, id);
		if (!err)
			err = buf_put(&rec, b->p, b->len);
		if (!err)
			err = buf_zero(&rec, size - rec.len);
		if (!err)
			err = out(w, rec.p, rec.len);
	}
	if (!err) {
		/* terminator: perf 6.1's tools check feat_id == HEADER_LAST_FEATURE */
		struct { struct perf_event_header h; uint64_t id; } term = {
			{ PERFDATA_RECORD_HEADER_FEATURE, 0, 16 }, PERFDATA_FEAT_LAST_6_1 };
		struct perf_event_header fin = { PERFDATA_RECORD_FINISHED_INIT, 0, 8 };

		err = out(w, &term, sizeof(term));
		if (!err)
			err = out(w, &fin, sizeof(fin));
	}
	buf_free(&rec);
	return err;
}

/* ---- public API --------------------------------------------------------- */

void perfdata_writer__free(struct perfdata_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr_events; i++) {
		free(w->events[i].name);
		free(w->events[i].ids);
	}
	free(w->events);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	buf_free(&w->round);
	buf_free(&w->feat);
	buf_free(&w->zout);
	buf_free(&w->fbody);
	ZSTD_freeCCtx(w->cctx);
	free(w);
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
	w->clock_mono = opts->clock_ref_mono_ns;
	w->clock_real = opts->clock_ref_real_ns;

	err = -ENOMEM;
	w->events = calloc(nr_events, sizeof(*w->events));
	if (!w->events)
		goto fail;
	w->nr_events = nr_events;
	for (size_t i = 0; i < nr_events; i++) {
		struct wevent *e = &w->events[i];
		struct perf_event_attr a = events[i].attr;

		if (!events[i].name || (events[i].nr_ids && !events[i].ids) ||
		    events[i].nr_ids > 65536) {
			err = -EINVAL;
			goto fail;
		}
		a.size = PERFDATA_ATTR_SIZE;
		memcpy(e->attr, &a, PERFDATA_ATTR_SIZE);
		e->sample_type = a.sample_type;
		e->name = strdup(events[i].name);
		e->ids = malloc((size_t)events[i].nr_ids * 8 + 8);
		if (!e->name || !e->ids)
			goto fail;
		if (events[i].nr_ids)
			memcpy(e->ids, events[i].ids, (size_t)events[i].nr_ids * 8);
		e->nr_ids = events[i].nr_ids;
	}
	if (opts->argc) {
		w->argv = calloc((size_t)opts->argc, sizeof(char *));
		if (!w->argv)
			goto fail;
		for (int i = 0; i < opts->argc; i++) {
			w->argv[i] = strdup(opts->argv[i] ? opts->argv[i] : "");
			if (!w->argv[i])
				goto fail;
			w->argc = i + 1;
		}
	}
	if (w->zstd_level) {
		size_t r;

		w->cctx = ZSTD_createCCtx();
		if (!w->cctx)
			goto fail;
		r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->zstd_level);
		if (!ZSTD_isError(r))
			r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
		if (ZSTD_isError(r)) {
			err = -EINVAL;
			goto fail;
		}
	}
	err = w->pipe ? write_pipe_start(w) : write_file_start(w);
	if (err)
		goto fail;
	*outp = w;
	return 0;
fail:
	perfdata_writer__free(w);
	return err;
}

static const struct wevent *event_by_id(const struct perfdata_writer *w, uint64_t id)
{
	for (size_t i = 0; i < w->nr_events; i++)
		for (uint32_t j = 0; j < w->events[i].nr_ids; j++)
			if (w->events[i].ids[j] == id)
				return &w->events[i];
	return w->nr_events == 1 ? &w->events[0] : NULL;
}

/* SAMPLE_TIME bookkeeping: time of a PERF_RECORD_SAMPLE, if it has one */
static void note_sample_time(struct perfdata_writer *w, const uint8_t *rec, size_t len)
{
	const struct wevent *e;
	size_t off = 8;
	uint64_t t;

	if (len < 16 || !(w->events[0].sample_type & PERF_SAMPLE_IDENTIFIER)) {
		e = w->nr_events == 1 ? &w->events[0] : NULL;
	} else {
		e = event_by_id(w, get_u64(rec + 8));
	}
	if (!e || !(e->sample_type & PERF_SAMPLE_TIME))
		return;
	if (e->sample_type & PERF_SAMPLE_IDENTIFIER)
		off += 8;
	if (e->sample_type & PERF_SAMPLE_IP)
		off += 8;
	if (e->sample_type & PERF_SAMPLE_TID)
		off += 8;
	if (off + 8 > len)
		return;
	t = get_u64(rec + off);
	if (!w->have_time || t < w->first_time)
		w->first_time = t;
	if (!w->have_time || t > w->last_time)
		w->last_time = t;
	w->have_time = true;
}

int perfdata_writer__add(struct perfdata_writer *w, const void *rec, size_t len)
{
	struct perf_event_header h;
	int err;

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
	err = buf_put(&w->round, rec, len);
	if (err)
		return err;
	if (h.type == PERF_RECORD_SAMPLE)
		note_sample_time(w, rec, len);
	w->records++;
	return 0;
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
		int err = buf_reserve(&w->zout, REC_MAX + 8);

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

static int flush_compressed(struct perfdata_writer *w)
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
	if (off > chunk_start) {
		err = compress_chunk(w, p + chunk_start, off - chunk_start, true);
		if (err)
			return err;
	}
	w->comp_out += w->zout.len;
	return out(w, w->zout.p, w->zout.len);
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
	struct file_section secs[NR_FEATURES];
	size_t nsec = 0;
	uint64_t table_off, off;
	int err = 0;

	w->fbody.len = 0;
	for (size_t i = 0; i < NR_FEATURES; i++) {
		int r = feature_body(w, features[i], &w->feat);

		if (r < 0)
			return r;
		if (r == 0)
			continue;
		bits[features[i] / 64] |= 1ULL << (features[i] % 64);
		secs[nsec].offset = w->fbody.len;   /* relative for now */
		secs[nsec].size = w->feat.len;
		nsec++;
		err = buf_put(&w->fbody, w->feat.p, w->feat.len);
		if (err)
			return err;
	}
	table_off = w->data_off + w->data_size;
	off = table_off + nsec * sizeof(struct file_section);
	for (size_t i = 0; i < nsec; i++)
		secs[i].offset += off;
	w->pos = table_off;
	err = out(w, secs, nsec * sizeof(secs[0]));
	if (!err)
		err = out(w, w->fbody.p, w->fbody.len);
	w->pos = table_off;     /* the next round's data goes here */
	if (!err)
		err = write_file_header(w, bits);
	if (!err)
		w->have_features = true;
	return err;
}

int perfdata_writer__round(struct perfdata_writer *w)
{
	static const struct perf_event_header fin = { PERFDATA_RECORD_FINISHED_ROUND, 0, 8 };
	uint64_t before;
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	if (!w->round.len)
		return 0;
	if (!w->pipe && w->have_features) {
		/* features are about to be overwritten: unlink them first */
		err = write_file_header(w, NULL);
		if (err)
			return err;
		w->have_features = false;
	}
	before = w->pos;
	w->raw_bytes += w->round.len;
	if (w->zstd_level)
		err = flush_compressed(w);
	else
		err = out(w, w->round.p, w->round.len);
	w->round.len = 0;
	if (!err)
		err = out(w, &fin, sizeof(fin));
	if (err)
		return err;
	if (!w->pipe) {
		w->data_size += w->pos - before;
		err = write_features(w);
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
		err = write_features(w);
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

/* ---- sample encoding ---------------------------------------------------- */

static size_t raw_field_size(uint32_t raw_size)
{
	/* u32 size + data, padded so the pair is a multiple of 8 */
	return ((size_t)raw_size + 4 + 7) & ~(size_t)7;
}

size_t perfdata_sample_size(uint64_t sample_type, const struct perfdata_sample *s)
{
	size_t size = sizeof(struct perf_event_header);

	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		size += 8;
	if (sample_type & PERF_SAMPLE_IP)
		size += 8;
	if (sample_type & PERF_SAMPLE_TID)
		size += 8;
	if (sample_type & PERF_SAMPLE_TIME)
		size += 8;
	if (sample_type & PERF_SAMPLE_CPU)
		size += 8;
	if (sample_type & PERF_SAMPLE_PERIOD)
		size += 8;
	if (sample_type & PERF_SAMPLE_CALLCHAIN)
		size += 8 + (size_t)s->nr_ips * 8;
	if (sample_type & PERF_SAMPLE_RAW)
		size += raw_field_size(s->raw_size);
	return size;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static uint8_t *put32x2(uint8_t *p, uint32_t a, uint32_t b)
{
	memcpy(p, &a, 4);
	memcpy(p + 4, &b, 4);
	return p + 8;
}

size_t perfdata_encode_sample(void *buf, uint64_t sample_type,
			      const struct perfdata_sample *s)
{
	size_t size = perfdata_sample_size(sample_type, s);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, s->misc, (uint16_t)size };
	uint8_t *p = buf;

	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		p = put64(p, s->id);
	if (sample_type & PERF_SAMPLE_IP)
		p = put64(p, s->ip);
	if (sample_type & PERF_SAMPLE_TID)
		p = put32x2(p, s->pid, s->tid);
	if (sample_type & PERF_SAMPLE_TIME)
		p = put64(p, s->time);
	if (sample_type & PERF_SAMPLE_CPU)
		p = put32x2(p, s->cpu, 0);
	if (sample_type & PERF_SAMPLE_PERIOD)
		p = put64(p, s->period);
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		p = put64(p, s->nr_ips);
		if (s->nr_ips)
			memcpy(p, s->ips, (size_t)s->nr_ips * 8);
		p += (size_t)s->nr_ips * 8;
	}
	if (sample_type & PERF_SAMPLE_RAW) {
		size_t field = raw_field_size(s->raw_size);
		uint32_t padded = (uint32_t)(field - 4);

		memcpy(p, &padded, 4);
		if (s->raw_size)
			memcpy(p + 4, s->raw, s->raw_size);
		memset(p + 4 + s->raw_size, 0, padded - s->raw_size);
		p += field;
	}
	return (size_t)(p - (uint8_t *)buf);
}

void perfdata_encode_sample_id(void *p, const struct perfdata_sample_id *sid)
{
	uint8_t *q = p;

	q = put32x2(q, sid->pid, sid->tid);
	q = put64(q, sid->time);
	q = put32x2(q, sid->cpu, 0);
	put64(q, sid->id);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * prog-crafted MODE OUT [N]: write a small hostile perf.data file, the kind a
 * local user hands to `perfmark script` (issue 8 case 6).  Each is valid
 * enough that stock perf reads it at once; each drove an older perfmark
 * reader into a hang, quadratic time or unbounded memory.
 *
 *   ids N [M]    N attrs (<= 4096) whose id sections all overlap one array
 *                of M ids (default 1M: an 8.6 MB file, N x 8 MB expanded)
 *   cmdline N    a CMDLINE feature of N empty arguments
 *   mmaps N      N MMAP2 records of one process, descending, zstd-compressed
 *   forks N [M]  M maps (default 4096) in one process, then N forks of it,
 *                each mapping one more file, compressed
 *   ranges N     N range-begin markers, then N range-ends that match none
 *   zbomb N      N COMPRESSED records, each expanding to 32 MiB of samples
 *   fifo PATH    an MMAP2 whose file name is PATH, and a sample inside it
 *   perfmap PID  a sample of process PID in no map (symbolized with
 *                /tmp/perf-PID.map)
 *   ranges1 N    as ranges, every begin named "a" and every end "b":
 *                compresses to a few KB (a fuzz seed)
 *   noraw        a perfmark:printf marker without its RAW field, padded so
 *                its size is 1 mod 16 (the fuzz target's JSON inputs)
 *   empty        attrs and features, no record
 *   pipeattrs N  pipe mode: N HEADER_ATTR records of 8000 ids each, in
 *                COMPRESSED records (perf never writes that; a reader may
 *                meet it)
 *   pipecmdline N  pipe mode: N CMDLINE HEADER_FEATURE records of 16000
 *                arguments each, in COMPRESSED records
 *
 * and for the commands that analyse a recording (issue 18):
 *   names EVENT COMM RANGE COUNTER JIT TEXT
 *                the sampling event named EVENT, a process named COMM, a
 *                range RANGE around samples in JIT code named JIT, a
 *                counter COUNTER and a string marker TEXT (any bytes)
 *   namesz ...   as names, zstd-compressed
 *   dwarf PATH   an MMAP2 naming PATH and a --call-graph dwarf sample in it
 *   nested N     range "outer", then N ranges nested in it with a sample
 *                each, all ended innermost first
 *   leak N       N ranges "leak" begun (each nested in the last), a sample
 *                each, none ended
 *   time0        a sample and a range begin at time 0, the rest 1 s later
 *   deep N [S]   JIT code fn_0 .. fn_N-1 (named by markers), S samples two
 *                frames deep (fn_0 -> fn_1; default 300) and one sample N
 *                frames deep (fn_0 -> ... -> fn_N-1): a flame graph's depth
 *                (issue 22)
 *
 * Prints "raw N": the data records' bytes before compression.
 *
 * Written by hand on purpose (not with perfdata.c): the point is bytes the
 * writer would never produce.
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define ATTR_SZ 128

static int noraw;     /* event 1 is perfmark:printf without PERF_SAMPLE_RAW */
static const char *ev0_name = "cpu-clock";
static int dwarf;     /* event 0 samples user registers and stack (--call-graph dwarf) */
static int chain;     /* event 0 samples call chains */
#define NAME_ALIGN 64

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 4096;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("realloc");
			exit(2);
		}
	}
	if (d)
		memcpy(b->p + b->len, d, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

static void u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void str(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	u32(b, (uint32_t)len);
	put(b, s, n);
	put(b, NULL, len - n);
}

/* events: 0 cpu-clock (id 1), 1 perfmark:uevent (id 2) */
#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define ST_RAW (ST | PERF_SAMPLE_RAW)
#define ST_DWARF (ST | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define DWARF_REGS ((1ull << 7) | (1ull << 8))   /* PERF_REG_X86_SP, _IP */
#define DWARF_STACK 64

static void attr(struct buf *b, int ev)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = ATTR_SZ;
	a.config = ev ? PERF_COUNT_SW_BPF_OUTPUT : PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = ev && !noraw ? ST_RAW : ev || !dwarf ? ST : ST_DWARF;
	if (!ev && chain)
		a.sample_type |= PERF_SAMPLE_CALLCHAIN;
	a.sample_id_all = 1;
	if (!ev && dwarf) {
		a.sample_regs_user = DWARF_REGS;
		a.sample_stack_user = DWARF_STACK;
	}
	put(b, &a, ATTR_SZ);
}

static uint64_t now = 1000000;
static int frozen;    /* same time on every record: compresses to nothing */

static void hdr(struct buf *b, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = { type, misc, (uint16_t)size };

	put(b, &h, sizeof(h));
}

static void trailer(struct buf *b, uint32_t pid)
{
	u32(b, pid), u32(b, pid), u64(b, frozen ? now : now++), u32(b, 0), u32(b, 0), u64(b, 1);
}

static void sample(struct buf *b, uint32_t pid, uint64_t ip, const void *raw, uint32_t rawsz)
{
	size_t rf = raw || rawsz ? ((size_t)rawsz + 4 + 7) & ~(size_t)7 : 0;

	hdr(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 6 * 8 + rf);
	u64(b, rf ? 2 : 1), u64(b, ip), u32(b, pid), u32(b, pid), u64(b, frozen ? now : now++);
	u32(b, 0), u32(b, 0), u64(b, 1);
	if (rf) {
		u32(b, (uint32_t)(rf - 4));
		put(b, raw, rawsz);
		put(b, NULL, rf - 4 - rawsz);
	}
}

static void mmap2(struct buf *b, uint32_t pid, uint64_t start, uint64_t len, const char *name)
{
	size_t n = (strlen(name) + 8) & ~(size_t)7;

	hdr(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 72 + n + 32);
	u32(b, pid), u32(b, pid), u64(b, start), u64(b, len), u64(b, 0);
	put(b, NULL, 24);                     /* maj min ino ino_gen */
	u32(b, 5), u32(b, 2);                 /* prot, flags */
	put(b, name, strlen(name));
	put(b, NULL, n - strlen(name));
	trailer(b, pid);
}

static void fork_rec(struct buf *b, uint32_t pid, uint32_t ppid)
{
	hdr(b, PERF_RECORD_FORK, 0, 32 + 32);
	u32(b, pid), u32(b, ppid), u32(b, pid), u32(b, ppid), u64(b, now);
	trailer(b, pid);
}

/* A perfmark:uevent marker of pid 7 with n payload bytes */
static void marker_data(struct buf *b, uint32_t type, const void *d, uint32_t n)
{
	uint32_t h[4] = { 1, type, n, n };   /* u16 version, u16 flags packed in h[0] */
	uint8_t *raw = malloc(16 + (size_t)n);

	if (!raw) {
		perror("malloc");
		exit(2);
	}
	memcpy(raw, h, 16);
	memcpy(raw + 16, d, n);
	sample(b, 7, 0x1000, raw, 16 + n);
	free(raw);
}

static void marker(struct buf *b, uint32_t type, const char *name)
{
	marker_data(b, type, name, (uint32_t)strlen(name) + 1);
}

/* A counter or JIT code marker: a fixed part, then the name and its NUL */
static void marker_named(struct buf *b, uint32_t type, const void *fixed, uint32_t len,
			 const char *name)
{
	uint8_t d[4096];
	size_t n = strlen(name) + 1;

	if (len + n > sizeof(d))
		n = sizeof(d) - len;
	memcpy(d, fixed, len);
	memcpy(d + len, name, n);
	marker_data(b, type, d, len + (uint32_t)n);
}

/* A cpu-clock sample with a user register and stack copy (perf's dwarf mode) */
static void sample_dwarf(struct buf *b, uint32_t pid, uint64_t ip, uint64_t sp)
{
	static const uint8_t stack[DWARF_STACK];

	hdr(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
	    8 + 6 * 8 + 3 * 8 + 8 + DWARF_STACK + 8);
	u64(b, 1), u64(b, ip), u32(b, pid), u32(b, pid), u64(b, now++);
	u32(b, 0), u32(b, 0), u64(b, 1);
	u64(b, PERF_SAMPLE_REGS_ABI_64), u64(b, sp), u64(b, ip);   /* regs in bit order */
	u64(b, DWARF_STACK);
	put(b, stack, DWARF_STACK);
	u64(b, DWARF_STACK);
}

/* A cpu-clock sample with a user call chain, leaf first */
static void sample_chain(struct buf *b, uint32_t pid, const uint64_t *ips, uint32_t n)
{
	hdr(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 6 * 8 + 8 + 8 * ((size_t)n + 1));
	u64(b, 1), u64(b, ips[0]), u32(b, pid), u32(b, pid), u64(b, now++);
	u32(b, 0), u32(b, 0), u64(b, 1);
	u64(b, (uint64_t)n + 1);
	u64(b, (uint64_t)PERF_CONTEXT_USER);
	for (uint32_t i = 0; i < n; i++)
		u64(b, ips[i]);
}

static void comm_rec(struct buf *b, uint32_t pid, const char *comm)
{
	size_t n = (strlen(comm) + 8) & ~(size_t)7;

	hdr(b, PERF_RECORD_COMM, 0, 8 + 8 + n + 32);
	u32(b, pid), u32(b, pid);
	put(b, comm, strlen(comm));
	put(b, NULL, n - strlen(comm));
	trailer(b, pid);
}

/* Whole records in, COMPRESSED records out (one frame per call) */
static void compress_into(struct buf *out, const struct buf *in, size_t chunk)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t off = 0;

	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 19);
	while (off < in->len) {
		size_t n = in->len - off < chunk ? in->len - off : chunk;
		ZSTD_inBuffer ib = { in->p + off, n, 0 };
		size_t r;

		do {
			uint8_t z[65000];
			ZSTD_outBuffer ob = { z, sizeof(z), 0 };

			r = ZSTD_compressStream2(c, &ob, &ib, ZSTD_e_end);
			if (ZSTD_isError(r)) {
				fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(r));
				exit(2);
			}
			hdr(out, 81, 0, 8 + ob.pos);
			put(out, z, ob.pos);
		} while (r);
		off += n;
	}
	ZSTD_freeCCtx(c);
}

static void feature_event_desc(struct buf *f)
{
	static const char *const names[] = { "cpu-clock", "perfmark:uevent" };

	u32(f, 2), u32(f, ATTR_SZ);
	for (int i = 0; i < 2; i++) {
		attr(f, i);
		u32(f, 1);
		str(f, i && noraw ? "perfmark:printf" : i ? names[i] : ev0_name);
		u64(f, (uint64_t)i + 1);
	}
}

/*
 * File: header, attrs (2, or nattr sharing one id array), data, features.
 * comp: the data as zstd COMPRESSED records (then the COMPRESSED feature).
 */
static void write_file(const char *path, const struct buf *data, int nattr,
		       uint64_t nids_shared, const struct buf *cmdline, int comp)
{
	struct buf f = { 0 }, feat = { 0 }, body = { 0 };
	uint64_t attrs_off = 104, attr_size = ATTR_SZ + 16;
	uint64_t ids_off = attrs_off + (uint64_t)nattr * attr_size, ids_len, data_off;
	uint64_t feats[4] = { 0 };
	struct buf zdata = { 0 };
	const struct buf *d = data;
	FILE *fp;

	ids_len = nids_shared ? nids_shared * 8 : (uint64_t)nattr * 8;
	data_off = ids_off + ids_len;
	if (comp) {
		compress_into(&zdata, data, comp == 2 ? (32u << 20) : 60000);
		d = &zdata;
	}
	put(&f, NULL, 104);
	for (int i = 0; i < nattr; i++) {
		attr(&f, nids_shared ? 0 : i);
		if (nids_shared)
			u64(&f, ids_off), u64(&f, nids_shared * 8);
		else
			u64(&f, ids_off + (uint64_t)i * 8), u64(&f, 8);
	}
	for (uint64_t i = 0; i < (nids_shared ? nids_shared : (uint64_t)nattr); i++)
		u64(&f, nids_shared ? 1000 + i : i + 1);
	put(&f, d->p, d->len);

	/* features, ascending: CMDLINE (11), EVENT_DESC (12), COMPRESSED (27) */
	if (cmdline) {
		feats[0] |= 1ull << 11;
		put(&body, cmdline->p, cmdline->len);
		u64(&feat, 0), u64(&feat, cmdline->len);
	}
	if (!nids_shared) {
		size_t before = body.len;

		feats[0] |= 1ull << 12;
		feature_event_desc(&body);
		u64(&feat, before), u64(&feat, body.len - before);
	}
	if (comp) {
		size_t before = body.len;

		feats[0] |= 1ull << 27;
		u32(&body, 0), u32(&body, 1), u32(&body, 19), u32(&body, 100),
			u32(&body, comp == 2 ? (64u << 20) : 128u * 1024);
		u64(&feat, before), u64(&feat, body.len - before);
	}
	/* section offsets were relative to the bodies: make them absolute */
	for (size_t i = 0; i < feat.len; i += 16) {
		uint64_t o;

		memcpy(&o, feat.p + i, 8);
		o += data_off + d->len + feat.len;
		memcpy(feat.p + i, &o, 8);
	}
	put(&f, feat.p, feat.len);
	put(&f, body.p, body.len);
	{
		uint64_t h[13] = { 0x32454c4946524550ULL, 104, attr_size,
				   attrs_off, (uint64_t)nattr * attr_size, data_off, d->len, 0, 0 };

		memcpy(f.p, h, sizeof(h));
		memcpy(f.p + 72, feats, sizeof(feats));
	}
	fp = fopen(path, "w");
	if (!fp || fwrite(f.p, 1, f.len, fp) != f.len || fclose(fp)) {
		perror(path);
		exit(2);
	}
	free(f.p), free(feat.p), free(body.p), free(zdata.p);
}

/* Pipe mode: {magic, 16}, then the body as COMPRESSED records, FINISHED_ROUND */
static void write_pipe(const char *path, const struct buf *body)
{
	struct buf f = { 0 }, z = { 0 };
	uint64_t h[2] = { 0x32454c4946524550ULL, 16 };
	FILE *fp;

	put(&f, h, sizeof(h));
	compress_into(&z, body, 32u << 20);
	put(&f, z.p, z.len);
	hdr(&f, 68, 0, 8);
	fp = fopen(path, "w");
	if (!fp || fwrite(f.p, 1, f.len, fp) != f.len || fclose(fp)) {
		perror(path);
		exit(2);
	}
	free(f.p), free(z.p);
}

int main(int argc, char **argv)
{
	struct buf d = { 0 }, c = { 0 };
	const char *mode, *out;
	unsigned long n;

	if (argc < 3) {
		fprintf(stderr, "usage: prog-crafted ids|cmdline|mmaps|forks|ranges|zbomb|fifo|perfmap OUT [N|PATH]\n");
		return 2;
	}
	mode = argv[1];
	out = argv[2];
	n = argc > 3 ? strtoul(argv[3], NULL, 0) : 1000;
	if (!strcmp(mode, "ids")) {
		write_file(out, &d, n > 4096 ? 4096 : (int)n,
			   argc > 4 ? strtoul(argv[4], NULL, 0) : 1u << 20, NULL, 0);
	} else if (!strcmp(mode, "cmdline")) {
		u32(&c, (uint32_t)n);
		for (unsigned long i = 0; i < n; i++)
			u32(&c, 0);
		sample(&d, 1, 0x1000, NULL, 0);
		write_file(out, &d, 2, 0, &c, 0);
	} else if (!strcmp(mode, "mmaps")) {
		for (unsigned long i = 0; i < n; i++)
			mmap2(&d, 100, 0x7f0000000000ull - i * 0x2000, 0x1000, "/x");
		sample(&d, 100, 0x7f0000000010ull, NULL, 0);
		write_file(out, &d, 2, 0, NULL, 1);
	} else if (!strcmp(mode, "forks")) {
		unsigned long m = argc > 4 ? strtoul(argv[4], NULL, 0) : 4096;

		for (unsigned long i = 0; i < m; i++)
			mmap2(&d, 100, 0x7f0000000000ull - i * 0x2000, 0x1000, "/x");
		for (unsigned long i = 0; i < n; i++) {
			fork_rec(&d, 1000 + (uint32_t)i, 100);
			mmap2(&d, 1000 + (uint32_t)i, 0x10000, 0x1000, "/y");
		}
		sample(&d, 100, 0x7f0000000010ull, NULL, 0);
		write_file(out, &d, 2, 0, NULL, 1);
	} else if (!strcmp(mode, "ranges")) {
		char name[32];

		for (unsigned long i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "b%lu", i);
			marker(&d, 1, name);
		}
		for (unsigned long i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "e%lu", i);
			marker(&d, 2, name);
		}
		write_file(out, &d, 2, 0, NULL, 1);
	} else if (!strcmp(mode, "ranges1")) {
		frozen = 1;
		for (unsigned long i = 0; i < n; i++)
			marker(&d, 1, "a");
		for (unsigned long i = 0; i < n; i++)
			marker(&d, 2, "b");
		write_file(out, &d, 2, 0, NULL, 2);
	} else if (!strcmp(mode, "noraw") || !strcmp(mode, "empty")) {
		noraw = !strcmp(mode, "noraw");
		if (noraw) {
			hdr(&d, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 6 * 8);
			u64(&d, 2), u64(&d, 0x1000), u32(&d, 7), u32(&d, 7), u64(&d, now);
			u32(&d, 0), u32(&d, 0), u64(&d, 1);
		}
		write_file(out, &d, 2, 0, NULL, 0);
		if (noraw) {
			FILE *fp = fopen(out, "a");
			long sz;

			fseek(fp, 0, SEEK_END);
			for (sz = ftell(fp); sz % 16 != 1; sz++)
				fputc(0, fp);
			fclose(fp);
		}
	} else if (!strcmp(mode, "pipeattrs")) {
		for (unsigned long i = 0; i < n; i++) {
			hdr(&d, 64, 0, 8 + ATTR_SZ + 8000 * 8);
			attr(&d, 0);
			for (uint64_t k = 0; k < 8000; k++)
				u64(&d, 7);
		}
		write_pipe(out, &d);
	} else if (!strcmp(mode, "pipecmdline")) {
		for (unsigned long i = 0; i < n; i++) {
			hdr(&d, 80, 0, 16 + 4 + 16000 * 4);
			u64(&d, 11);
			u32(&d, 16000);
			for (int k = 0; k < 16000; k++)
				u32(&d, 0);
		}
		write_pipe(out, &d);
	} else if (!strcmp(mode, "zbomb")) {
		static uint8_t zero[65400];

		for (unsigned long k = 0; k < n; k++) {
			while (d.len < (k + 1) * (32u << 20) - 65536)
				sample(&d, 1, 0x1000, zero, sizeof(zero));
			while (d.len < (k + 1) * (32u << 20))
				sample(&d, 1, 0x1000, NULL, 0);
		}
		write_file(out, &d, 2, 0, NULL, 2);
	} else if (!strcmp(mode, "fifo")) {
		mmap2(&d, 100, 0x400000, 0x1000, argv[3]);
		sample(&d, 100, 0x400010, NULL, 0);
		write_file(out, &d, 2, 0, NULL, 0);
	} else if (!strcmp(mode, "perfmap")) {
		sample(&d, (uint32_t)n, 0x12345678, NULL, 0);
		write_file(out, &d, 2, 0, NULL, 0);
	} else if ((!strcmp(mode, "names") || !strcmp(mode, "namesz")) && argc >= 9) {
		uint64_t jit[2] = { 0x500000, 0x1000 };
		int64_t v = 42;

		ev0_name = argv[3];
		comm_rec(&d, 7, argv[4]);
		marker_named(&d, 4, jit, sizeof(jit), argv[7]);
		marker(&d, 1, argv[5]);
		for (int i = 0; i < 3; i++)
			sample(&d, 7, 0x500010, NULL, 0);
		marker_named(&d, 3, &v, sizeof(v), argv[6]);
		marker(&d, 0, argv[8]);
		marker(&d, 2, argv[5]);
		write_file(out, &d, 2, 0, NULL, !strcmp(mode, "namesz"));
	} else if (!strcmp(mode, "dwarf")) {
		dwarf = 1;
		mmap2(&d, 100, 0x400000, 0x1000, argv[3]);
		sample_dwarf(&d, 100, 0x400010, 0x7ffc0000);
		write_file(out, &d, 2, 0, NULL, 0);
	} else if (!strcmp(mode, "nested") || !strcmp(mode, "leak")) {
		int leak = !strcmp(mode, "leak");
		char name[32];

		if (!leak)
			marker(&d, 1, "outer");
		for (unsigned long i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "n%lu", i);
			marker(&d, 1, leak ? "leak" : name);
			sample(&d, 7, 0x1000, NULL, 0);
		}
		for (unsigned long i = n; i-- > 0 && !leak;) {
			snprintf(name, sizeof(name), "n%lu", i);
			marker(&d, 2, name);
		}
		if (!leak)
			marker(&d, 2, "outer");
		write_file(out, &d, 2, 0, NULL, 1);
	} else if (!strcmp(mode, "deep")) {
		uint64_t ips[512], jit[2];
		unsigned long shallow = argc > 4 ? strtoul(argv[4], NULL, 0) : 300;
		char name[32];

		chain = 1;
		n = n < 2 ? 2 : n > 512 ? 512 : n;
		comm_rec(&d, 7, "deep");
		for (unsigned long i = 0; i < n; i++) {
			jit[0] = 0x500000 + i * 0x100;
			jit[1] = 0x100;
			snprintf(name, sizeof(name), "fn_%lu", i);
			marker_named(&d, 4, jit, sizeof(jit), name);
			ips[n - 1 - i] = jit[0] + 0x10;    /* leaf first */
		}
		for (unsigned long k = 0; k < shallow && k < 100000; k++)
			sample_chain(&d, 7, ips + n - 2, 2);
		sample_chain(&d, 7, ips, (uint32_t)n);
		write_file(out, &d, 2, 0, NULL, 0);
	} else if (!strcmp(mode, "time0")) {
		now = 0;
		frozen = 1;
		sample(&d, 7, 0x1000, NULL, 0);
		marker(&d, 1, "zero");
		frozen = 0;
		now = 1000000000;
		for (int i = 0; i < 3; i++)
			sample(&d, 7, 0x1000, NULL, 0);
		marker(&d, 2, "zero");
		write_file(out, &d, 2, 0, NULL, 0);
	} else {
		fprintf(stderr, "prog-crafted: unknown mode %s\n", mode);
		return 2;
	}
	printf("raw %zu\n", d.len);   /* data bytes before compression */
	free(d.p), free(c.p);
	return 0;
}

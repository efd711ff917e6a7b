/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the perf.data reader: what perfread.c (the source, records, pipe
 * mode) shares with perfread_file.c (opening a file-mode recording: its
 * header, attrs and ids, data section and features).
 */
#ifndef PERFMARK_PERFREAD_INT_H
#define PERFMARK_PERFREAD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zstd.h>

#include "perffeat.h"

#define SRC_BUF (256u * 1024)     /* the source's buffer */

struct pdbuf;

struct file_section {
	uint64_t offset, size;
};

struct file_header {
	uint64_t magic, size, attr_size;
	struct file_section attrs, data, event_types;
	uint64_t adds_features[4];
};

struct perfread {
	int fd;
	bool pipe;              /* pipe format (header size 16) */
	bool stream;            /* input read with read(), else pread() */
	char err[160];

	struct evlist *evlist;
	struct perfdata_env env;    /* what the header features said */

	/* source */
	uint8_t *sbuf;
	size_t shead, stail;        /* valid bytes [shead, stail) */
	uint64_t spos;              /* input offset of sbuf[shead] */
	uint64_t send;              /* file mode: end of data */
	bool lenient_end;           /* data.size was 0: partial tail ends reading */
	bool src_eof;

	/* the current raw record (copied when not contiguous / aligned) */
	uint8_t *rec;
	size_t rec_cap;

	/* decompression */
	ZSTD_DStream *ds;
	uint8_t *dbuf;
	size_t dhead, dtail, dcap;
	uint64_t comp_off;          /* offset of the last COMPRESSED record */
	uint64_t comp_in, comp_out; /* compressed bytes read, bytes they expanded to */
	uint64_t expand_floor;
	uint32_t expand_ratio;

	bool pending;               /* r->rec holds a data record not yet returned */
};

/* the error line into r (see perfread__error), and err to return */
int perfread_fail(struct perfread *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* exactly n bytes from the source: 0, -EIO at its end, or another error */
int perfread_src_read(struct perfread *r, void *dst, size_t n);
/* the source's next bytes buffered (at least n unless it ends): how many there are */
ssize_t perfread_src_fill(struct perfread *r, size_t n);
/* the next n bytes of the source into b */
int perfread_src_take(struct perfread *r, uint64_t n, struct pdbuf *b);
/* the next raw record: 1 with *out and its offset, 0 at a clean end, else -errno */
int perfread_src_record(struct perfread *r, const uint8_t **out, uint64_t *off);
/* r->rec holds at least size bytes: 0 or -ENOMEM */
int perfread_rec_reserve(struct perfread *r, size_t size);
/* one attr with the n ids of its events into the evlist: 0, or the error after its line */
int perfread_add_event(struct perfread *r, const uint8_t *attr, size_t asz,
		       const uint8_t *ids, uint32_t n);
/* one feature body, by the feature table; an unknown one skipped: 0 or the error */
int perfread_parse_feature(struct perfread *r, uint64_t feat, const uint8_t *p, size_t len);
/* A file-mode recording (its first 16 bytes read): header, events, data section, features */
int perfread_open_file(struct perfread *r, const uint8_t *first16);

#endif

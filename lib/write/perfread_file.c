/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a file-mode perf.data: the header, the attrs and their ids, the
 * data section and the features after it, each section checked against
 * the file's size before it is read (see perfread.c).
 */
#include "perfread-int.h"
#include "evlist.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A file's features: one section per bit set, after the data.  Only those
 * the table knows are read, each at most the file's size.
 */
static int read_features(struct perfread *r, const struct file_header *h, uint64_t fsize)
{
	uint64_t feat_off = r->send;
	int err;

	for (int f = 1; f < PERFDATA_FEAT_BITS; f++) {
		struct file_section s;
		uint8_t *body;

		if (!(h->adds_features[f / 64] & (1ULL << (f % 64))))
			continue;
		if (pread(r->fd, &s, sizeof(s), (off_t)feat_off) != (ssize_t)sizeof(s))
			return perfread_fail(r, -EIO, "truncated feature table at offset %llu",
					     (unsigned long long)feat_off);
		feat_off += sizeof(s);
		if (s.offset > fsize || s.size > fsize - s.offset)
			return perfread_fail(r, -EIO, "truncated feature section %d", f);
		if (!perfdata_feature((uint64_t)f)) {
			r->env.has[f] = true;
			continue;
		}
		body = malloc(s.size ? (size_t)s.size : 1);
		if (!body)
			return perfread_fail(r, -ENOMEM, "out of memory");
		if (pread(r->fd, body, (size_t)s.size, (off_t)s.offset) != (ssize_t)s.size) {
			free(body);
			return perfread_fail(r, -EIO, "truncated feature section %d", f);
		}
		err = perfread_parse_feature(r, (uint64_t)f, body, (size_t)s.size);
		free(body);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The header of a file-mode recording (its first 16 bytes already read)
 * and the file's size: the sections it names are checked against it.
 */
static int read_file_header(struct perfread *r, const uint8_t *first16, struct file_header *h,
			    uint64_t *fsize)
{
	struct stat st;
	int err;

	if (fstat(r->fd, &st) < 0)
		return perfread_fail(r, -errno, "cannot stat input: %s", strerror(errno));
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return perfread_fail(r, -EINVAL, "file-mode perf.data cannot be read from a pipe");
	*fsize = (uint64_t)st.st_size;
	memcpy(h, first16, 16);
	err = perfread_src_read(r, (uint8_t *)h + 16, sizeof(*h) - 16);
	if (err == -EIO)
		return perfread_fail(r, -EIO, "truncated header at offset %llu",
				     (unsigned long long)r->spos);
	if (err)
		return err;
	if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct file_section) ||
	    h->attr_size > 4096)
		return perfread_fail(r, -EINVAL, "bad attr size %llu in header",
				     (unsigned long long)h->attr_size);
	if (h->attrs.size % h->attr_size || h->attrs.offset > *fsize ||
	    h->attrs.size > *fsize - h->attrs.offset)
		return perfread_fail(r, -EIO, "truncated or bad attr section");
	return 0;
}

/*
 * Attr i of the attr section and the ids of its events, added to the
 * evlist; *id_bytes counts the id sections' bytes so far.
 */
static int read_attr(struct perfread *r, const struct file_header *h, uint64_t i, uint64_t fsize,
		     uint64_t *id_bytes)
{
	uint8_t a[4096];
	struct file_section ids;
	uint8_t *idbuf;
	size_t asz = (size_t)h->attr_size - sizeof(ids);
	uint64_t off = h->attrs.offset + i * h->attr_size;
	ssize_t n = pread(r->fd, a, (size_t)h->attr_size, (off_t)off);
	int err;

	if (n != (ssize_t)h->attr_size)
		return perfread_fail(r, -EIO, "truncated attr at offset %llu", (unsigned long long)off);
	memcpy(&ids, a + asz, sizeof(ids));
	if (ids.size % 8 || ids.offset > fsize || ids.size > fsize - ids.offset)
		return perfread_fail(r, -EIO, "bad id section for attr %llu", (unsigned long long)i);
	/*
	 * RULE: memory follows the input.  perf writes each id once, so
	 * the id sections together fit in the file; sections that
	 * overlap to claim more (4096 attrs x one 8 MB array) are refused.
	 */
	*id_bytes += ids.size;
	if (*id_bytes > fsize)
		return perfread_fail(r, -E2BIG, "id sections claim more bytes than the file holds "
				     "(overlapping sections at attr %llu)", (unsigned long long)i);
	idbuf = malloc(ids.size ? (size_t)ids.size : 1);
	if (!idbuf)
		return perfread_fail(r, -ENOMEM, "out of memory");
	n = pread(r->fd, idbuf, (size_t)ids.size, (off_t)ids.offset);
	if (n != (ssize_t)ids.size) {
		free(idbuf);
		return perfread_fail(r, -EIO, "truncated id section");
	}
	err = perfread_add_event(r, a, asz, idbuf, (uint32_t)(ids.size / 8));
	free(idbuf);
	return err;
}

/* Where the records are (r->spos up to r->send), then the features after them */
static int read_data_section(struct perfread *r, const struct file_header *h, uint64_t fsize)
{
	if (h->data.offset > fsize)
		return perfread_fail(r, -EIO, "truncated file: data section beyond end");
	r->spos = h->data.offset;
	if (h->data.size == 0) {
		/* a recorder that died before its first header update: read to EOF */
		r->send = fsize;
		r->lenient_end = true;
		return 0;
	}
	if (h->data.size > UINT64_MAX - h->data.offset)
		return perfread_fail(r, -EINVAL, "bad data section size");
	r->send = h->data.offset + h->data.size;
	return read_features(r, h, fsize);
}

int perfread_open_file(struct perfread *r, const uint8_t *first16)
{
	struct file_header h;
	uint64_t fsize = 0, nattr, id_bytes = 0;
	int err = read_file_header(r, first16, &h, &fsize);

	if (err)
		return err;
	nattr = h.attrs.size / h.attr_size;
	if (nattr > EVLIST_MAX_EVENTS)
		return perfread_fail(r, -E2BIG, "too many events (%llu)", (unsigned long long)nattr);
	for (uint64_t i = 0; i < nattr; i++) {
		err = read_attr(r, &h, i, fsize, &id_bytes);
		if (err)
			return err;
	}
	return read_data_section(r, &h, fsize);
}


// SPDX-License-Identifier: LGPL-2.1-or-later
/* Direct output of whole blocks: see dio.h. */
#include "dio.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIO_ALIGN 4096u          /* covers 512- and 4096-byte logical blocks */
#define DIO_CAP   (1u << 20)     /* the mirror: a direct write of up to this much */
/*
 * A sync with less than this in whole blocks writes them buffered.  A
 * direct write over a block the last sync left in the page cache (the
 * partial one) first writes that page back and waits for it: a block I/O
 * per round, whatever the round holds.  Measured on this project's VM,
 * perfmark record -g of a loop at 4000 Hz (about 30 KiB a round) spent
 * half of its CPU there; buffered, the page cache takes such rounds for
 * less.  Above this, direct pays (dio.h).
 */
#define DIO_MIN   (256u << 10)

struct dio {
	int fd;                  /* the writer's: bytes before start, the partial last block */
	int dfd;                 /* the same file, O_DIRECT; -1: refused, fd alone */
	uint8_t *buf;            /* file bytes [start, start + len) */
	uint64_t start;          /* a block boundary */
	size_t len;
};

/*
 * All of data, at off (pwrite), or where the fd is (write) when off < 0.
 * In pieces of at most 1 MiB: measured on this project's VM, 480 MB went
 * into the page cache in 0.09 s in 1 MiB writes and in 1.8 s in 16 MiB ones
 * (a drain of 10 M markers/s writes about 100 MB at once).
 */
#define WRITE_PIECE (1u << 20)

int fd_write_at(int fd, const void *data, size_t len, int64_t off)
{
	const uint8_t *p = data;

	while (len) {
		size_t piece = len < WRITE_PIECE ? len : WRITE_PIECE;
		ssize_t n = off < 0 ? write(fd, p, piece) : pwrite(fd, p, piece, (off_t)off);

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

/*
 * May fd's file be opened a second time?  Only a file of our own user that
 * fd may already write (not O_PATH, not read-only, not append-only): the
 * second open then grants nothing fd did not.  A file of another user
 * (perfmarkd writing the output a client passed) is never reopened: it is
 * written only through the descriptor given (fdout.h), buffered.
 */
static bool reopen_ok(int fd, const struct stat *st)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && !(fl & (O_PATH | O_APPEND)) && (fl & O_ACCMODE) != O_RDONLY &&
	       st->st_uid == geteuid();
}

int dio__open(struct dio **out, int fd, uint64_t pos)
{
	struct stat a, b;
	char path[40];
	struct dio *d;

	*out = NULL;
	if (fstat(fd, &a) || !S_ISREG(a.st_mode) || !reopen_ok(fd, &a))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->buf = aligned_alloc(DIO_ALIGN, DIO_CAP);
	/* a second open of the very file fd names: write access fd already has */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	d->dfd = d->buf ? open(path, O_WRONLY | O_DIRECT | O_CLOEXEC | O_NOCTTY) : -1;
	if (d->dfd < 0 || fstat(d->dfd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		int e = d->buf ? -EOPNOTSUPP : -ENOMEM;

		dio__free(d);
		return e;
	}
	d->fd = fd;
	d->start = (pos + DIO_ALIGN - 1) & ~(uint64_t)(DIO_ALIGN - 1);
	*out = d;
	return 0;
}

/* the mirror, through fd alone from now on (O_DIRECT refused after all) */
static int give_up(struct dio *d)
{
	close(d->dfd);
	d->dfd = -1;
	return fd_write_at(d->fd, d->buf, d->len, (int64_t)d->start);
}

/* the whole blocks of the mirror, direct; the partial last one stays */
static int put_blocks(struct dio *d)
{
	size_t whole = d->len & ~(size_t)(DIO_ALIGN - 1), done = 0;

	if (d->dfd < 0 || !whole)
		return 0;
	while (done < whole) {
		ssize_t n = pwrite(d->dfd, d->buf + done, whole - done, (off_t)(d->start + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (n & (DIO_ALIGN - 1))) {
			int e = give_up(d);

			d->len = 0;
			return e;
		}
		done += (size_t)n;
	}
	memmove(d->buf, d->buf + whole, d->len - whole);
	d->start += whole;
	d->len -= whole;
	return 0;
}

int dio__write(struct dio *d, const void *data, size_t len, uint64_t pos)
{
	const uint8_t *p = data;
	int e;

	if (d->dfd < 0)
		return fd_write_at(d->fd, p, len, (int64_t)pos);
	if (pos < d->start) {           /* before the first block boundary */
		size_t n = len < d->start - pos ? len : (size_t)(d->start - pos);

		e = fd_write_at(d->fd, p, n, (int64_t)pos);
		if (e)
			return e;
		p += n;
		len -= n;
		pos += n;
	}
	if (!len)
		return 0;
	if (pos > d->start + d->len)
		return -EINVAL;         /* a gap: the writer only appends */
	d->len = (size_t)(pos - d->start);   /* written over: what followed is gone */
	while (len) {
		size_t n = len < DIO_CAP - d->len ? len : DIO_CAP - d->len;

		memcpy(d->buf + d->len, p, n);
		d->len += n;
		p += n;
		len -= n;
		if (d->len == DIO_CAP) {
			e = put_blocks(d);
			if (e)
				return e;
		}
	}
	return 0;
}

int dio__sync(struct dio *d)
{
	size_t whole = d->len & ~(size_t)(DIO_ALIGN - 1);
	int e;

	if (d->dfd >= 0 && whole < DIO_MIN) {
		/* a small round: all of it buffered, the partial block kept */
		e = fd_write_at(d->fd, d->buf, d->len, (int64_t)d->start);
		if (e)
			return e;
		memmove(d->buf, d->buf + whole, d->len - whole);
		d->start += whole;
		d->len -= whole;
		return 0;
	}
	e = put_blocks(d);
	if (!e && d->len && d->dfd >= 0)
		e = fd_write_at(d->fd, d->buf, d->len, (int64_t)d->start);
	return e;
}

void dio__free(struct dio *d)
{
	if (!d)
		return;
	if (d->dfd >= 0)
		close(d->dfd);
	free(d->buf);
	free(d);
}

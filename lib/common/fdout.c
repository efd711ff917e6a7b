// SPDX-License-Identifier: LGPL-2.1-or-later
/* Writing where a client could: fdout.h */
#include "fdout.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

int fdout_check(int fd, bool *nowait)
{
	struct stat sb;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -EBADF;
	if ((fl & O_PATH) || (fl & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (fstat(fd, &sb) < 0)
		return -errno;
	/* memory devices (/dev/null, /dev/full) never block: written as files */
	if (S_ISCHR(sb.st_mode) && major(sb.st_rdev) == 1) {
		*nowait = false;
		return 0;
	}
	if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISSOCK(sb.st_mode))
		return -EINVAL;
	*nowait = !S_ISREG(sb.st_mode);
	return 0;
}

ssize_t fdout_write(int fd, bool nowait, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	ssize_t n;

	do
		n = nowait ? pwritev2(fd, &iov, 1, -1, RWF_NOWAIT) : write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}

int fdout_copy(int fd, bool nowait, int src, off_t *off, off_t end)
{
	char buf[65536];

	/* a file never waits: zero-copy */
	while (!nowait && *off < end) {
		ssize_t n = sendfile(fd, src, off, (size_t)(end - *off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
	}

	while (*off < end) {
		size_t want = (size_t)(end - *off) < sizeof(buf) ? (size_t)(end - *off) : sizeof(buf);
		ssize_t got = pread(src, buf, want, *off), done = 0;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		while (done < got) {
			ssize_t n = fdout_write(fd, nowait, buf + done, (size_t)(got - done));

			if (n == -EAGAIN && done) {
				*off += done;      /* what went out counts; the rest later */
				return -EAGAIN;
			}
			if (n < 0)
				return (int)n;
			if (n == 0)
				return -EIO;
			done += n;
		}
		*off += got;
	}
	return 0;
}

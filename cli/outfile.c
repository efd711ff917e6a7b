// SPDX-License-Identifier: LGPL-2.1-or-later
/* Output files that a failure removes only when this run created them (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"

int outfile__open(struct outfile *o, const char *path, bool keep_old)
{
	char old[PATH_MAX];
	struct stat sb;
	int fd;

	*o = (struct outfile){ .path = path, .fd = -1 };
	if (!strcmp(path, "-")) {
		if (isatty(1))
			return pm_err("refusing to write a perf.data stream to a terminal (use -o FILE or a pipe)");
		o->fd = 1;
		o->pipe = true;
		return 0;
	}
	if (keep_old && !stat(path, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    access(path, W_OK) == 0 && strlen(path) + sizeof(".old") <= sizeof(old)) {
		memcpy(old, path, strlen(path));
		memcpy(old + strlen(path), ".old", sizeof(".old"));
		rename(path, old);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0)
		o->created = true;
	else if (errno == EEXIST)
		/* not ours: written as it is (O_TRUNC is a no-op on FIFOs and devices) */
		fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return pm_err("%s: %s", path, strerror(errno));
	if (fstat(fd, &sb) < 0) {
		int e = errno;

		close(fd);
		return pm_err("%s: %s", path, strerror(e));
	}
	o->fd = fd;
	o->dev = sb.st_dev;
	o->ino = sb.st_ino;
	o->pipe = S_ISFIFO(sb.st_mode);
	return 0;
}

int outfile__open_atomic(struct outfile *o, const char *path)
{
	struct stat sb;
	mode_t mask;
	const char *base;
	int fd;

	if (!strcmp(path, "-") || (!stat(path, &sb) && !S_ISREG(sb.st_mode)))
		return outfile__open(o, path, false);
	*o = (struct outfile){ .path = path, .fd = -1 };
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (asprintf(&o->tmp, "%.*s.%s.perfmark-XXXXXX", (int)(base - path), path, base) < 0) {
		o->tmp = NULL;
		return pm_err("%s: %s", path, strerror(ENOMEM));
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		free(o->tmp);
		o->tmp = NULL;
		return pm_err("%s: %s", path, strerror(e));
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) || fstat(fd, &sb)) {
		int e = errno;

		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return pm_err("%s: %s", path, strerror(e));
	}
	o->fd = fd;
	o->created = true;
	o->dev = sb.st_dev;
	o->ino = sb.st_ino;
	return 0;
}

int outfile__commit(struct outfile *o)
{
	int e = 0;

	if (o->tmp && o->created && rename(o->tmp, o->path))
		e = errno;
	free(o->tmp);
	o->tmp = NULL;
	o->created = false;        /* the user's file now */
	return e ? pm_err("%s: %s", o->path, strerror(e)) : 0;
}

void outfile__discard(struct outfile *o)
{
	const char *p = o->tmp ? o->tmp : o->path;
	struct stat sb;

	if (o->created) {
		/* lstat: a symlink put in its place is not what we made */
		if (!lstat(p, &sb) && sb.st_dev == o->dev && sb.st_ino == o->ino)
			unlink(p);
	}
	o->created = false;
	free(o->tmp);
	o->tmp = NULL;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* Opening paths the input names: fsafe.h */
#include "fsafe.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* procfs, sysfs and friends: "regular" files with side effects or no end (/proc/kcore) */
static bool pseudo_fs(int fd)
{
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0)
		return true;
	switch ((unsigned long)fs.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC:
		return true;
	default:
		return false;
	}
}

int fsafe_open_regular(const char *path)
{
	struct stat before, after;
	int fd, flags;

	if (stat(path, &before) < 0)
		return -errno;
	if (!S_ISREG(before.st_mode))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &after) < 0 || !S_ISREG(after.st_mode) || after.st_dev != before.st_dev ||
	    after.st_ino != before.st_ino || pseudo_fs(fd)) {
		close(fd);
		return -EINVAL;
	}
	/* a regular file: blocking reads are what the caller expects */
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

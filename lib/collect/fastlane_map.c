// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fast lane, recorder side: mapping a process's area (fastlane.c
 * attaches, fastlane_keep.c takes kept ones back).  Nothing here trusts
 * the process: the file is named by the kernel, and only a sealed shmem
 * file of exactly the registered size is mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "clock.h"
#include "fastlane_int.h"

/*
 * The memfd behind [addr, addr + size) in pid, mapped here.  /proc/PID/
 * map_files opened O_PATH: the mapped file is named by the kernel, and an
 * O_PATH open has no side effects even on a device; only a sealed shmem
 * file of exactly this size is then opened for real.
 */
int fastlane_map_area(uint32_t pid, uint64_t addr, uint64_t size, void **out, int *memfd,
		      uint64_t *born)
{
	char path[96];
	struct stat sb;
	struct statfs sf;
	int pfd, fd, e = 0;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)addr, (unsigned long long)(addr + size));
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &sb) || fstatfs(pfd, &sf)) {
		e = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != size ||
	    (unsigned long)sf.f_type != TMPFS_MAGIC) {
		e = -EINVAL;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		e = -errno;
		goto out;
	}
	e = fastlane_map_fd(fd, size, out, born);
	if (e)
		close(fd);
	else
		*memfd = fd;
out:
	close(pfd);
	return e;
}

/*
 * When the file at fd was made, on CLOCK_MONOTONIC: its birth time (which
 * its owner cannot set, unlike mtime and ctime) less the clocks' offset now.
 * 0 when the filesystem does not say.
 */
static uint64_t birth_mono(int fd)
{
	struct statx sx;
	struct timespec rt;
	uint64_t born, now, real;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) || !(sx.stx_mask & STATX_BTIME) ||
	    sx.stx_btime.tv_sec < 0)
		return 0;
	/* both clocks at one moment: read again if we were preempted between them */
	for (int i = 0; i < 3; i++) {
		uint64_t before = clock_mono_ns();

		if (clock_gettime(CLOCK_REALTIME, &rt))
			return 0;
		now = clock_mono_ns();
		if (now - before < 100 * 1000)
			break;
	}
	born = (uint64_t)sx.stx_btime.tv_sec * 1000000000ull + sx.stx_btime.tv_nsec;
	real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	if (born >= real)
		return now;
	return real - born < now ? now - (real - born) : 0;
}

/*
 * fd, a shmem file sealed against shrinking, of exactly size bytes, mapped;
 * *born: when it was made (birth_mono)
 */
int fastlane_map_fd(int fd, uint64_t size, void **out, uint64_t *born)
{
	int seals = fcntl(fd, F_GET_SEALS);
	struct statfs sf;
	struct stat sb;
	void *m;

	if (seals < 0)
		return -errno;
	if (!(seals & F_SEAL_SHRINK) || fstat(fd, &sb) || fstatfs(fd, &sf) || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size != size || (unsigned long)sf.f_type != TMPFS_MAGIC)
		return -EINVAL;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	*out = m;
	*born = birth_mono(fd);
	return 0;
}

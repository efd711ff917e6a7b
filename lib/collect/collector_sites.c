// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Register sites: which of a libperfmark copy's three register sites this
 * recorder takes (lib/perfmark/perfmark.c says why each recorder needs one
 * of its own).
 *
 * Recorders do not know each other (in-process `perfmark record`, perfmarkd,
 * containers), but the kernel knows which sites carry a uprobe: it keeps
 * each site's semaphore raised in every process that maps the file, ours
 * included if we map it as a loader would (the text so that the kernel
 * installs its breakpoints, the semaphores' page private and writable).
 * Under an flock() on the file, so two recorders starting together cannot
 * pick the same free site, we read the semaphores and take the first free
 * site; the caller attaches its uprobe there before unlocking.  The lock is
 * taken without blocking (a traced user could hold an flock on their own
 * binary forever): a recorder that cannot get it, or finds no free site,
 * raises trapall instead and every marker of that file takes the trap lane.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector_int.h"

#define LOCK_TRIES 100            /* one ms apart */

int collector_site_lock(int fd)
{
	struct timespec ms = { 0, 1000 * 1000 };

	for (int i = 0; i < LOCK_TRIES; i++) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		nanosleep(&ms, NULL);
	}
	return -EAGAIN;
}

void collector_site_unlock(int fd)
{
	flock(fd, LOCK_UN);
}

/*
 * With the lock held: the first of the n sites whose semaphore (at file
 * offsets sema[]) is 0, or -1 when all are taken; a negative errno when
 * the file cannot be mapped.
 */
int collector_site_free(int fd, const uint64_t *sema, int n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	struct stat sb;
	char *base;
	int site = -1;

	if (fstat(fd, &sb) || sb.st_size <= 0)
		return -EINVAL;
	for (int k = 0; k < n; k++) {
		if (!sema[k] || sema[k] + 2 > (uint64_t)sb.st_size)
			return -EINVAL;
		lo = sema[k] < lo ? sema[k] : lo;
		hi = sema[k] + 2 > hi ? sema[k] + 2 : hi;
	}
	lo &= ~(uint64_t)4095;
	hi = (hi + 4095) & ~(uint64_t)4095;
	base = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (mmap(base + lo, hi - lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, (off_t)lo) ==
	    MAP_FAILED) {
		int e = -errno;

		munmap(base, (size_t)sb.st_size);
		return e;
	}
	for (int k = 0; k < n && site < 0; k++)
		if (!*(volatile uint16_t *)(void *)(base + sema[k]))
			site = k;
	munmap(base, (size_t)(hi > (uint64_t)sb.st_size ? hi : (uint64_t)sb.st_size));
	return site;
}

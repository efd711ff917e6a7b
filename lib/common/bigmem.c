// SPDX-License-Identifier: LGPL-2.1-or-later
/* Huge-page-backed buffers: bigmem.h */
#include "bigmem.h"

#include <stdint.h>
#include <sys/mman.h>

static size_t rounded(size_t size)
{
	return (size + BIGMEM_PAGE - 1) & ~(size_t)(BIGMEM_PAGE - 1);
}

void *bigmem_alloc(size_t size)
{
	size_t len = rounded(size), over = len + BIGMEM_PAGE;
	uintptr_t start, aligned;
	char *p;

	if (!size || len < size)
		return NULL;
	/* a page more than asked for, so an aligned run of len lies inside; the rest goes back */
	p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	start = (uintptr_t)p;
	aligned = (start + BIGMEM_PAGE - 1) & ~(uintptr_t)(BIGMEM_PAGE - 1);
	if (aligned > start)
		munmap(p, aligned - start);
	if (start + over > aligned + len)
		munmap((void *)(aligned + len), start + over - (aligned + len));
	/* no huge pages (policy "never", or none free): 4 KiB pages, as malloc's */
	(void)madvise((void *)aligned, len, MADV_HUGEPAGE);
	return (void *)aligned;
}

void bigmem_free(void *p, size_t size)
{
	if (p)
		munmap(p, rounded(size));
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Taking uprobes off, all at once.  Detaching a BPF program from a uprobe
 * event and freeing the event each wait for the kernel's RCU grace periods
 * (tasks-trace RCU, SRCU for uretprobes): measured here, 90 to 160 ms per
 * probe on a loaded machine, one after another when the links are closed
 * in turn, which was most of `record -- true`'s time after its file was
 * written.  Callers that wait for a grace period at the same time share
 * it, so the links are closed by a few threads at once.  When a thread
 * cannot be made, the rest are closed here, in turn.  Links libbpf does not
 * hold (uprobe_multi, collector_uprobe.c) come as bare fds, closed alike.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "collector_int.h"

#define DETACH_THREADS 8

struct detach {
	struct bpf_link **links;
	const int *fds;
	size_t nr, nr_fds;
	atomic_size_t next;
};

static void *detach_main(void *arg)
{
	struct detach *d = arg;
	size_t i;

	while ((i = atomic_fetch_add(&d->next, 1)) < d->nr + d->nr_fds) {
		if (i < d->nr)
			bpf_link__destroy(d->links[i]);
		else
			close(d->fds[i - d->nr]);
	}
	return NULL;
}

void collector_detach_links(struct bpf_link **links, size_t nr, const int *fds, size_t nr_fds)
{
	struct detach d = { .links = links, .fds = fds, .nr = nr, .nr_fds = nr_fds };
	pthread_t t[DETACH_THREADS];
	size_t n = 0;

	atomic_init(&d.next, 0);
	while (n + 1 < nr + nr_fds && n < DETACH_THREADS && !pthread_create(&t[n], NULL, detach_main, &d))
		n++;
	detach_main(&d);
	while (n)
		pthread_join(t[--n], NULL);
}

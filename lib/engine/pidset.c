// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A set of pids: open addressing, linear probing, the table twice the set.
 * The session engine's user-space mirror of the BPF targets map, and its
 * caches of pids known to be (or not be) a limited session's user's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "session-int.h"

bool pidset_has(const struct pidset *p, uint32_t pid)
{
	size_t i;

	if (!p->cap || !pid)
		return false;
	for (i = (pid * 2654435761u) & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
		if (p->slots[i] == pid)
			return true;
	return false;
}

int pidset_add(struct pidset *p, uint32_t pid)
{
	size_t i;

	if (!pid || pidset_has(p, pid))
		return 0;
	if ((p->n + 1) * 2 > p->cap) {
		struct pidset np = { .cap = p->cap ? p->cap * 2 : 64 };

		np.slots = calloc(np.cap, sizeof(*np.slots));
		if (!np.slots)
			return -ENOMEM;
		for (i = 0; i < p->cap; i++)
			if (p->slots[i])
				pidset_add(&np, p->slots[i]);
		free(p->slots);
		*p = np;
	}
	for (i = (pid * 2654435761u) & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
		;
	p->slots[i] = pid;
	p->n++;
	return 0;
}

/* Remove pid, shifting back the entries of its probe run. */
void pidset_del(struct pidset *p, uint32_t pid)
{
	size_t i, j, mask = p->cap - 1;

	if (!pidset_has(p, pid))
		return;
	for (i = (pid * 2654435761u) & mask; p->slots[i] != pid; i = (i + 1) & mask)
		;
	p->slots[i] = 0;
	p->n--;
	for (j = (i + 1) & mask; p->slots[j]; j = (j + 1) & mask) {
		uint32_t v = p->slots[j];

		p->slots[j] = 0;
		p->n--;
		pidset_add(p, v);
	}
}


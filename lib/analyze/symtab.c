// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sorted symbol tables, and the kernel's from /proc/kallsyms: symtab.h */
#include "symtab.h"
#include "grow.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, int prio)
{
	if (grow_to(&t->v, &t->cap, t->n + 1, sizeof(*t->v), 256))
		return -ENOMEM;
	t->v[t->n++] = (struct sym){ .addr = addr, .size = size, .name = name, .prio = prio };
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * By address; among aliases the one perf would show first: with a size,
 * not weak, global, fewer leading underscores, longer name.
 */
static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	if (x->prio != y->prio)
		return x->prio - y->prio;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sort and keep one symbol per address. */
void symtab__finish(struct symtab *t)
{
	size_t out = 0;

	if (!t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), sym_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (out && t->v[out - 1].addr == t->v[i].addr)
			continue;
		t->v[out++] = t->v[i];
	}
	t->n = out;
}

/*
 * The symbol covering addr.  A sized symbol covers [addr, addr+size); a
 * zero-sized one covers up to the next symbol when unbounded is set.
 */
const struct sym *symtab__find(const struct symtab *t, uint64_t addr, bool unbounded)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo = first symbol above addr; look back a little for nested ones */
	for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
		const struct sym *s = &t->v[lo - 1];

		if (s->size ? addr - s->addr < s->size : (k == 0 && unbounded))
			return s;
	}
	return NULL;
}

void symtab__free(struct symtab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

void symtab__load_kallsyms(struct symtab *t, char **names)
{
	char *line = NULL;
	size_t cap = 0, len = 0, ncap = 0;
	size_t *offs = NULL, noffs = 0, capoffs = 0;
	char *knames = NULL;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		*names = NULL;
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		uint64_t addr;
		char type, *name;
		int n = 0;
		size_t nlen;

		if (sscanf(line, "%" SCNx64 " %c %n", &addr, &type, &n) != 2 || !n || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = line + n;
		nlen = strcspn(name, " \t\n");
		if (!nlen)
			continue;
		/*
		 * BPF programs come and go: the one at this address now need
		 * not be the one a recording sampled (the recorder's own are
		 * gone once it exits), so a file would read differently
		 * depending on what happens to be loaded.
		 */
		if (strstr(name + nlen, "[bpf]"))
			continue;
		if (grow_to(&knames, &ncap, len + nlen + 1, 1, 1 << 20) ||
		    grow_to(&offs, &capoffs, noffs + 1, sizeof(*offs), 65536))
			break;
		memcpy(knames + len, name, nlen);
		knames[len + nlen] = '\0';
		/*
		 * Among aliases perf shows the last one listed (its end fix-up
		 * leaves the others empty): a later line gets a lower prio.
		 */
		if (noffs >= INT_MAX || symtab__add(t, addr, 0, NULL, -(int)noffs) < 0)
			break;
		offs[noffs++] = len;
		len += nlen + 1;
	}
	free(line);
	fclose(f);
	for (size_t i = 0; i < t->n && i < noffs; i++)
		t->v[i].name = knames + offs[i];
	t->n = t->n < noffs ? t->n : noffs;
	free(offs);
	symtab__finish(t);
	*names = knames;
}

/* --- the shared kernel table ------------------------------------------------ */

static pthread_mutex_t ksyms_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ksyms *ksyms_current;     /* holds a reference of its own */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void ksyms_unref(struct ksyms *k)
{
	if (k && !--k->refs) {
		symtab__free(&k->t);
		free(k->names);
		free(k);
	}
}

const struct ksyms *ksyms__get(void)
{
	struct ksyms *k;
	uint64_t now = mono_ns();

	pthread_mutex_lock(&ksyms_lock);
	k = ksyms_current;
	if (!k || now - k->loaded > KSYMS_MAX_AGE_S * 1000000000ull) {
		k = calloc(1, sizeof(*k));
		if (k) {
			symtab__load_kallsyms(&k->t, &k->names);
			k->loaded = now;
			k->refs = 1;
			ksyms_unref(ksyms_current);
			ksyms_current = k;
		}
	}
	if (k)
		k->refs++;
	pthread_mutex_unlock(&ksyms_lock);
	return k;
}

void ksyms__put(const struct ksyms *k)
{
	pthread_mutex_lock(&ksyms_lock);
	ksyms_unref((struct ksyms *)k);
	pthread_mutex_unlock(&ksyms_lock);
}

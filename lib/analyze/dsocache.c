// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The symbol tables of mapped files, kept across profiles: see dsocache.h.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dsocache.h"

struct entry {
	struct dso *d;
	unsigned refs;
	uint64_t used;                /* a counter: the least recently used goes */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	size_t bytes;                 /* its tables, once loaded */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry cache[DSOCACHE_MAX];
static size_t nr, bytes;
static uint64_t clock_;

static size_t dso_bytes(const struct dso *d)
{
	return d->names_cap + d->syms.cap * sizeof(d->syms.v[0]) + d->nsegs * sizeof(d->segs[0]);
}

static struct entry *find(const struct dso *d)
{
	for (size_t i = 0; i < nr; i++)
		if (cache[i].d == d)
			return &cache[i];
	return NULL;
}

static void drop(size_t i)
{
	bytes -= cache[i].bytes;
	dso__free(cache[i].d);
	cache[i] = cache[--nr];
}

/* Unused entries go, oldest first, while over the caps (room: one more wanted). */
static void trim(bool room)
{
	while (nr && (bytes > DSOCACHE_BYTES || (room && nr == DSOCACHE_MAX))) {
		size_t old = SIZE_MAX;

		for (size_t i = 0; i < nr; i++)
			if (!cache[i].refs && (old == SIZE_MAX || cache[i].used < cache[old].used))
				old = i;
		if (old == SIZE_MAX)
			return;
		drop(old);
	}
}

static bool same(const struct entry *e, const char *path, const uint8_t *bid, size_t bid_len,
		 const struct stat *sb)
{
	return !strcmp(e->d->path, path) && e->dev == sb->st_dev && e->ino == sb->st_ino &&
	       e->size == sb->st_size && e->mtime.tv_sec == sb->st_mtim.tv_sec &&
	       e->mtime.tv_nsec == sb->st_mtim.tv_nsec &&
	       (!bid_len || (e->d->build_id_len == bid_len && !memcmp(e->d->build_id, bid, bid_len)));
}

struct dso *dsocache__get(const char *path, const uint8_t *bid, size_t bid_len)
{
	struct stat sb;
	struct entry *e;
	struct dso *d;

	if (path[0] != '/' || stat(path, &sb) || !S_ISREG(sb.st_mode))
		return dso__new(path, bid, bid_len);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nr; i++)
		if (same(&cache[i], path, bid, bid_len, &sb)) {
			cache[i].refs++;
			cache[i].used = ++clock_;
			d = cache[i].d;
			pthread_mutex_unlock(&lock);
			return d;
		}
	trim(true);
	d = dso__new(path, bid, bid_len);
	if (d && nr < DSOCACHE_MAX) {
		e = &cache[nr++];
		*e = (struct entry){ .d = d, .refs = 1, .used = ++clock_, .dev = sb.st_dev,
				     .ino = sb.st_ino, .size = sb.st_size, .mtime = sb.st_mtim };
	}
	pthread_mutex_unlock(&lock);
	return d;
}

void dsocache__load(struct dso *d)
{
	struct entry *e;

	pthread_mutex_lock(&lock);
	if (!d->loaded) {
		dso__load(d);
		e = find(d);
		if (e) {
			e->bytes = dso_bytes(d);
			bytes += e->bytes;
		}
	}
	pthread_mutex_unlock(&lock);
}

void dsocache__put(struct dso *d)
{
	struct entry *e;

	if (!d)
		return;
	pthread_mutex_lock(&lock);
	e = find(d);
	if (e) {
		e->refs--;
		trim(false);
	} else {
		dso__free(d);
	}
	pthread_mutex_unlock(&lock);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* HEADER_TRACING_DATA from tracefs.  See tracedata.h. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "pdbuf.h"
#include "tracedata.h"

#define PART_MAX 63                  /* a system's or an event's name */
#define PRINTK_MAX (4u << 20)        /* bytes of printk_formats kept */

struct tp {
	char sys[PART_MAX + 1], name[PART_MAX + 1];
	uint64_t id;
};

static bool good_part(const char *s, size_t n)
{
	size_t i;

	if (!n || n > PART_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/*
 * The tracepoints among the events, once each.  The names come from the
 * caller's events (a session's, or a ring file's): checked before they
 * become part of a path.
 */
static size_t collect(const struct perfdata_event *ev, size_t n, struct tp *tps)
{
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		const char *name = ev[i].name, *colon = name ? strchr(name, ':') : NULL;
		struct tp t = { .id = ev[i].attr.config };

		if (ev[i].attr.type != PERF_TYPE_TRACEPOINT || !colon ||
		    !good_part(name, (size_t)(colon - name)) || !good_part(colon + 1, strlen(colon + 1)))
			continue;
		memcpy(t.sys, name, (size_t)(colon - name));
		strcpy(t.name, colon + 1);
		for (j = 0; j < k; j++)
			if (!strcmp(tps[j].sys, t.sys) && !strcmp(tps[j].name, t.name))
				break;
		if (j == k)
			tps[k++] = t;
	}
	return k;
}

/* events/S/N/format when its ID is the one recorded; NULL else */
static char *format_of(const struct tp *t, int *size)
{
	char *text = tracefs_event_file_read(NULL, t->sys, t->name, "format", size), *id;

	if (!text || *size <= 0) {
		free(text);
		return NULL;
	}
	id = strstr(text, "\nID: ");
	if (!id || strtoull(id + 5, NULL, 10) != t->id) {
		free(text);
		return NULL;
	}
	return text;
}

/* a tracefs file with its size in front (hdr bytes of it); size 0 when unreadable */
static void put_file(struct pdbuf *b, const char *file, size_t hdr, size_t max)
{
	int size = 0;
	char *text = tracefs_instance_file_read(NULL, file, &size);
	uint64_t n = text && size > 0 && (size_t)size <= max ? (uint64_t)size : 0;

	if (hdr == 8)
		pdbuf_u64(b, n);
	else
		pdbuf_u32(b, (uint32_t)n);
	if (n)
		pdbuf_put(b, text, (size_t)n);
	free(text);
}

/* the formats of the tracepoints of tps[] in system sys (all but ftrace's when sys is NULL) */
static void put_formats(struct pdbuf *b, const struct tp *tps, size_t n, const char *sys)
{
	size_t at = b->len, i;
	uint32_t count = 0;

	pdbuf_u32(b, 0);
	for (i = 0; i < n; i++) {
		char *text;
		int size;

		if (strcmp(tps[i].sys, sys))
			continue;
		text = format_of(&tps[i], &size);
		if (!text)
			continue;
		pdbuf_u64(b, (uint64_t)size);
		pdbuf_put(b, text, (size_t)size);
		free(text);
		count++;
	}
	if (!b->err)
		memcpy(b->p + at, &count, 4);
}

int tracedata_build(const struct perfdata_event *events, size_t n, uint8_t **out, size_t *len)
{
	static const char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct pdbuf b = { 0 };
	struct tp *tps;
	size_t k, i, j, at;
	uint32_t systems = 0, page = (uint32_t)sysconf(_SC_PAGESIZE);
	uint8_t endian_long[2] = { 0, sizeof(long) };

	*out = NULL;
	*len = 0;
	tps = calloc(n ? n : 1, sizeof(*tps));
	if (!tps)
		return -ENOMEM;
	k = collect(events, n, tps);
	if (!k) {
		free(tps);
		return 0;
	}
	pdbuf_put(&b, magic, sizeof(magic));
	pdbuf_put(&b, "0.6", 4);
	pdbuf_put(&b, endian_long, 2);
	pdbuf_u32(&b, page);
	pdbuf_put(&b, "header_page", 12);
	put_file(&b, "events/header_page", 8, 65536);
	pdbuf_put(&b, "header_event", 13);
	put_file(&b, "events/header_event", 8, 65536);
	put_formats(&b, tps, k, "ftrace");
	/* the other systems, in the order they first appear */
	at = b.len;
	pdbuf_u32(&b, 0);
	for (i = 0; i < k; i++) {
		if (!strcmp(tps[i].sys, "ftrace"))
			continue;
		for (j = 0; j < i; j++)
			if (!strcmp(tps[j].sys, tps[i].sys))
				break;
		if (j < i)
			continue;
		pdbuf_put(&b, tps[i].sys, strlen(tps[i].sys) + 1);
		put_formats(&b, tps, k, tps[i].sys);
		systems++;
	}
	if (!b.err)
		memcpy(b.p + at, &systems, 4);
	pdbuf_u32(&b, 0);                              /* kallsyms */
	put_file(&b, "printk_formats", 4, PRINTK_MAX);
	pdbuf_u64(&b, 0);                              /* saved command lines */
	free(tps);
	if (b.err || b.len > TRACEDATA_MAX) {
		int e = b.err ? b.err : -E2BIG;

		pdbuf_free(&b);
		return e;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

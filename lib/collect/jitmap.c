// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * /tmp/perf-PID.map for JIT code markers: jitmap.h.
 *
 * RULE (issue 8 case 3): a path a traced process controls is opened with
 * that process's rights, never root's, and never in a way that can block.
 * /tmp/perf-PID.map is opened under the process owner's fsuid/fsgid with
 * O_NOFOLLOW|O_NONBLOCK|O_NOCTTY and used only when it is a regular file
 * with one link, owned by that user; a process that is not plainly one
 * user's (setuid, non-dumpable) gets no map.  Before, a FIFO there left
 * the daemon blocked in open() and every client timed out.
 *
 * RULE (issue 18 case 9): no line is lost without a count.  The writer
 * used to look the owner up in /proc for each marker, at delivery: a
 * process that named 20 000 code ranges and exited at once got 379 lines
 * (the rest found /proc/PID gone), silently.  Now the owner known from
 * the process's fast-lane registration serves after it has gone, lines
 * are written per process and drain (not per marker), and what still
 * cannot be written is counted.  Names are the process's data: a control
 * character in one would start a line of its own, it is written as '?'.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitmap.h"
#include "perfmark.h"
#include "synth.h"

#define JITMAP_MAX_PROCS 1024          /* processes with lines waiting */

struct pending {
	uint32_t pid;
	uint32_t lines;
	uint32_t uid, gid;             /* its owner, found with its first line */
	bool owned;                    /* ... if it was found */
	char *buf;
	size_t len, cap;
};

struct jitmap {
	struct pending *v;
	size_t n;
	size_t held;                   /* bytes of lines waiting */
	size_t last;                   /* the entry found last */
	jitmap_owner_fn owner;
	void *ctx;
	struct jitmap_stats st;
};

int jitmap__new(struct jitmap **out, jitmap_owner_fn owner, void *ctx)
{
	struct jitmap *jm = calloc(1, sizeof(*jm));

	*out = jm;
	if (!jm)
		return -ENOMEM;
	jm->v = calloc(JITMAP_MAX_PROCS, sizeof(*jm->v));
	if (!jm->v) {
		free(jm);
		*out = NULL;
		return -ENOMEM;
	}
	jm->owner = owner;
	jm->ctx = ctx;
	return 0;
}

/* pid's owner: as the fast lane learnt it, else from /proc while it lives */
static bool find_owner(struct jitmap *jm, uint32_t pid, uint32_t *uid, uint32_t *gid)
{
	char proc[32];
	struct stat pb;
	pid_t tgid;

	if (jm->owner && jm->owner(jm->ctx, pid, uid, gid))
		return true;
	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	if (stat(proc, &pb) || synth_task_owner((pid_t)pid, uid, &tgid))
		return false;
	*gid = (uint32_t)pb.st_gid;
	return true;
}

/* the map file of pid, opened for appending as uid:gid (or -1) */
static int open_map(uint32_t pid, uint32_t uid, uint32_t gid)
{
	char path[64];
	struct stat sb;
	int fd, ouid, ogid;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	ogid = setfsgid(gid);
	ouid = setfsuid(uid);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		  O_CLOEXEC, 0644);
	setfsuid(ouid);
	setfsgid(ogid);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_nlink != 1 || sb.st_uid != uid) {
		close(fd);
		return -1;
	}
	return fd;
}

static void write_pending(struct jitmap *jm, struct pending *e)
{
	uint32_t uid, gid;
	size_t done = 0;
	ssize_t w;
	int fd;

	if (!e->lines)
		return;
	if (!e->owned) {
		jm->st.missed += e->lines;
		return;
	}
	uid = e->uid;
	gid = e->gid;
	if (uid == PM_UID_PRIVILEGED || (fd = open_map(e->pid, uid, gid)) < 0) {
		jm->st.refused += e->lines;
		return;
	}
	while (done < e->len && (w = write(fd, e->buf + done, e->len - done)) > 0)
		done += (size_t)w;
	close(fd);
	if (done == e->len) {
		jm->st.lines += e->lines;
	} else {
		/* a short write ends within a line, at worst: count it with the ones after */
		uint32_t left = 0;

		for (size_t i = done; i < e->len; i++)
			left += e->buf[i] == '\n';
		jm->st.lines += e->lines - left;
		jm->st.missed += left;
	}
}

void jitmap__flush(struct jitmap *jm)
{
	for (size_t i = 0; i < jm->n; i++) {
		struct pending *e = &jm->v[i];

		write_pending(jm, e);
		free(e->buf);
		*e = (struct pending){ 0 };
	}
	jm->n = 0;
	jm->held = 0;
	jm->last = 0;
}

static struct pending *entry(struct jitmap *jm, uint32_t pid)
{
	if (jm->last < jm->n && jm->v[jm->last].pid == pid)
		return &jm->v[jm->last];
	for (size_t i = 0; i < jm->n; i++) {
		if (jm->v[i].pid == pid) {
			jm->last = i;
			return &jm->v[i];
		}
	}
	if (jm->n == JITMAP_MAX_PROCS)
		jitmap__flush(jm);
	jm->last = jm->n;
	jm->v[jm->n].pid = pid;
	/* now, while the fast lane still holds its area (freed once delivered) */
	jm->v[jm->n].owned = find_owner(jm, pid, &jm->v[jm->n].uid, &jm->v[jm->n].gid);
	return &jm->v[jm->n++];
}

void jitmap__add(struct jitmap *jm, const struct pm_marker *pm, size_t size)
{
	struct {
		uint64_t addr, size;
	} h;
	char line[PM_MAX_PAYLOAD + 64];
	const unsigned char *name;
	struct pending *e;
	size_t nlen, need;
	int n;

	if (size < sizeof(*pm) || pm->size > PM_MAX_PAYLOAD || size < sizeof(*pm) + pm->size ||
	    pm->size < sizeof(h) + 1 || (pm->flags & PM_F_FAULT))
		return;
	if (pm->uid == PM_UID_PRIVILEGED) {
		jm->st.refused++;
		return;
	}
	memcpy(&h, pm->data, sizeof(h));
	name = pm->data + sizeof(h);
	nlen = strnlen((const char *)name, pm->size - sizeof(h));
	n = snprintf(line, sizeof(line), "%llx %llx ", (unsigned long long)h.addr,
		     (unsigned long long)h.size);
	for (size_t i = 0; i < nlen && (size_t)n < sizeof(line) - 1; i++)
		line[n++] = name[i] < 0x20 || name[i] == 0x7f ? '?' : (char)name[i];
	line[n++] = '\n';
	need = (size_t)n;
	if (jm->held + need > JITMAP_MAX_HELD)
		jitmap__flush(jm);
	e = entry(jm, pm->pid);
	if (e->len + need > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4096;
		char *nb;

		while (cap < e->len + need)
			cap *= 2;
		nb = realloc(e->buf, cap);
		if (!nb) {
			jm->st.missed++;
			return;
		}
		e->buf = nb;
		e->cap = cap;
	}
	memcpy(e->buf + e->len, line, need);
	e->len += need;
	e->lines++;
	jm->held += need;
}

void jitmap__stats(const struct jitmap *jm, struct jitmap_stats *st)
{
	*st = jm->st;
}

void jitmap__free(struct jitmap *jm)
{
	if (!jm)
		return;
	jitmap__flush(jm);
	free(jm->v);
	free(jm);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * File sinks: perf.data files PREFIX-NNNNNN.perf.data in a directory,
 * rotated by size or time.  Each file is complete on its own: it starts
 * with the sideband kept so far, and its header's data size is rewritten
 * after every round, so a daemon killed while writing leaves a file that
 * perf reads up to the last round; a restarted daemon scans the directory
 * and goes on in a new file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "perfdata.h"
#include "perfread.h"
#include "sink-int.h"

#define SNAP_ROUND_BYTES (4u << 20)
/*
 * --rotate TIME: a file is closed at the first round at or after its time
 * less this: rounds come at the drain's tick, and with the tick at the
 * period (a quiet perfmarkd) the round falls either side of the moment by
 * the tick's jitter; without the slack every other file was a tick longer.
 */
#define ROTATE_SLACK_NS 100000000ull

static void file_name(const struct sink *s, uint64_t seq, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%06llu.perf.data", s->o.prefix, (unsigned long long)seq);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int kept_add(struct sink *s, uint64_t seq)
{
	uint64_t *n = realloc(s->kept, (s->nr_kept + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->kept = n;
	s->kept[s->nr_kept++] = seq;
	return 0;
}

/* Our earlier files in the directory (after a restart): retention and numbering. */
static void scan_dir(struct sink *s)
{
	size_t plen = strlen(s->o.prefix);
	int fd = dup(s->dir_fd);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		unsigned long long seq;
		char tail[32];

		if (strncmp(de->d_name, s->o.prefix, plen) || de->d_name[plen] != '-')
			continue;
		if (sscanf(de->d_name + plen + 1, "%llu%31s", &seq, tail) != 2 ||
		    strcmp(tail, ".perf.data"))
			continue;
		kept_add(s, seq);
		if (seq >= s->o.seq)
			s->o.seq = seq + 1;
	}
	closedir(d);
	if (s->nr_kept > 1)
		qsort(s->kept, s->nr_kept, sizeof(*s->kept), cmp_u64);
}

static void apply_keep(struct sink *s)
{
	char name[96];
	size_t drop, i;

	if (!s->o.keep || s->nr_kept <= s->o.keep)
		return;
	drop = s->nr_kept - s->o.keep;
	for (i = 0; i < drop; i++) {
		file_name(s, s->kept[i], name, sizeof(name));
		unlinkat(s->dir_fd, name, 0);
	}
	memmove(s->kept, s->kept + drop, (s->nr_kept - drop) * sizeof(*s->kept));
	s->nr_kept -= drop;
}

static int file_open(struct sink *s)
{
	char name[96];
	int fd = -1, e, tries;

	for (tries = 0; tries < 1000; tries++, s->o.seq++) {
		file_name(s, s->o.seq, name, sizeof(name));
		fd = openat(s->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	if (s->o.uid != (uid_t)-1 && fchown(fd, s->o.uid, s->o.gid)) {
		e = -errno;
		goto fail;
	}
	e = sink_new_writer(s, fd, false, s->o.zstd_level, &s->w);
	if (e)
		goto fail;
	s->file_fd = fd;
	snprintf(s->current, sizeof(s->current), "%s", name);
	kept_add(s, s->o.seq);
	s->o.seq++;
	s->files++;
	/*
	 * --rotate TIME: a file's time starts where the one before it ended, not
	 * at its first record a round later, or each file of --rotate 1s held two
	 * rounds of a quiet daemon's 1 s tick: two seconds.
	 */
	s->file_opened_ns = s->rotated_ns ? s->rotated_ns : clock_mono_ns();
	s->rotated_ns = 0;
	s->file_first_time = 0;
	/* every file names the processes on its own */
	e = sink_copy_kept_sideband(s, s->w);
	if (!e)
		e = perfdata_writer__round(s->w);
	apply_keep(s);
	return e;
fail:
	close(fd);
	unlinkat(s->dir_fd, name, 0);
	return e;
}

int file_sink_init(struct sink *s, const char *prefix)
{
	s->dir_fd = fcntl(s->o.dir_fd, F_DUPFD_CLOEXEC, 3);
	if (s->dir_fd < 0)
		return -errno;
	s->o.prefix = strdup(prefix);
	if (!s->o.prefix)
		return -ENOMEM;
	scan_dir(s);
	return file_ensure(s);
}

int file_close(struct sink *s)
{
	struct perfdata_stats ps;
	int e = 0;

	if (s->w) {
		e = perfdata_writer__finish(s->w);
		perfdata_writer__stats(s->w, &ps);
		s->bytes_done += ps.bytes;
		s->raw_done += ps.raw_bytes;
		perfdata_writer__free(s->w);
		s->w = NULL;
	}
	if (s->file_fd >= 0) {
		if (!e && fsync(s->file_fd) && errno != EINVAL)
			e = -errno;
		close(s->file_fd);
		s->file_fd = -1;
	}
	return e;
}

/*
 * Rotation is lazy: a full file is closed at the end of its round and the
 * next one opened by the first record that needs it, so stopping right
 * after a rotation leaves no file holding only sideband.
 */
int file_ensure(struct sink *s)
{
	int e;

	if (s->err)
		return s->err;
	if (s->closed)
		return -EBADF;
	if (s->w)
		return 0;
	e = file_open(s);
	if (e)
		s->err = e;
	return e;
}

int file_round(struct sink *s)
{
	struct perfdata_stats ps;
	uint64_t now = 0;
	int e;

	if (s->closed)
		return -EBADF;
	if (!s->w)          /* rotated, nothing new yet */
		return 0;
	e = perfdata_writer__round(s->w);
	if (e)
		return s->err = e;
	perfdata_writer__stats(s->w, &ps);
	if ((s->o.rotate_size && ps.bytes >= s->o.rotate_size) ||
	    (s->o.rotate_secs &&
	     (now = clock_mono_ns()) - s->file_opened_ns + ROTATE_SLACK_NS >= s->o.rotate_secs * 1000000000ull)) {
		s->rotated_ns = now;
		e = file_close(s);
		if (e)
			s->err = e;
	}
	return e;
}

/*
 * The newest file's records, read back from it (it is what the file holds):
 * the file being written, or the one just closed by a rotation.
 */
int file_snapshot(struct sink *s, struct perfdata_writer *w)
{
	const struct perf_event_header *h;
	struct perfread *rd = NULL;
	size_t since = 0;
	int e, r = 0, fd = s->file_fd;

	if (!s->w && s->current[0] && !s->closed) {
		fd = openat(s->dir_fd, s->current, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	} else {
		e = file_ensure(s);
		if (e)
			return e;
		fd = s->file_fd;
	}
	e = perfread__open(&rd, fd);
	while (!e && (r = perfread__next(rd, &h)) == 1) {
		if (h->type == PERFDATA_RECORD_FINISHED_ROUND || h->type >= PERFDATA_RECORD_HEADER_ATTR)
			continue;
		e = perfdata_writer__add(w, h, h->size);
		if (e)
			break;
		since += h->size;
		if (since >= SNAP_ROUND_BYTES) {
			e = perfdata_writer__round(w);
			if (e)
				break;
			since = 0;
		}
	}
	if (!e && r < 0)
		e = r;
	perfread__free(rd);
	if (fd != s->file_fd)
		close(fd);
	return e;
}

void file_sink_free(struct sink *s)
{
	if (!s->closed)
		file_close(s);
	free(s->kept);
	free((char *)s->o.prefix);
	s->o.prefix = NULL;
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	s->dir_fd = -1;
}

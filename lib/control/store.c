// SPDX-License-Identifier: LGPL-2.1-or-later
/* The durable store of session definitions.  See store.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

struct store {
	int dfd;      /* STATE_DIR/sessions */
};

int store__open(struct store **out, const char *dir)
{
	struct store *st;
	char path[PATH_MAX];
	int e;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (snprintf(path, sizeof(path), "%s/sessions", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (st->dfd < 0) {
		e = -errno;
		free(st);
		return e;
	}
	*out = st;
	return 0;
}

int store__save(struct store *st, const struct sessdef *d)
{
	struct json_object *o = sessdef_to_json(d, true);
	char tmp[PROTO_NAME_MAX + 16], fin[PROTO_NAME_MAX + 16];
	const char *text;
	size_t len, off = 0;
	int fd, e = 0;

	if (!o)
		return -ENOMEM;
	if (!proto_name_valid(d->name)) {
		json_object_put(o);
		return -EINVAL;
	}
	snprintf(tmp, sizeof(tmp), ".%s.json.tmp", d->name);
	snprintf(fin, sizeof(fin), "%s.json", d->name);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	len = strlen(text);
	fd = openat(st->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		e = -errno;
		goto out;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (!e && (write(fd, "\n", 1) != 1 || fsync(fd)))
		e = -errno;
	if (close(fd) && !e)
		e = -errno;
	if (!e && renameat(st->dfd, tmp, st->dfd, fin))
		e = -errno;
	if (e)
		unlinkat(st->dfd, tmp, 0);
	else
		fsync(st->dfd);
out:
	json_object_put(o);
	return e;
}

int store__remove(struct store *st, const char *name)
{
	char fin[PROTO_NAME_MAX + 16];

	if (!proto_name_valid(name))
		return -EINVAL;
	snprintf(fin, sizeof(fin), "%s.json", name);
	if (unlinkat(st->dfd, fin, 0) && errno != ENOENT)
		return -errno;
	fsync(st->dfd);
	return 0;
}

static char *read_small(int dfd, const char *name, char *err, size_t errlen)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	char *buf;
	size_t off = 0;

	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size > PROTO_MAX_MSG) {
		snprintf(err, errlen, "not a regular file of at most 64 KiB");
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	while (buf && off < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)sb.st_size - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	if (buf)
		buf[off] = '\0';
	return buf;
}

bool store__current(struct store *st, const struct sessdef *d)
{
	struct json_object *o = sessdef_to_json(d, true);
	char fin[PROTO_NAME_MAX + 16], err[64];
	const char *text;
	char *have;
	bool same;

	if (!o || !proto_name_valid(d->name)) {
		json_object_put(o);
		return false;
	}
	snprintf(fin, sizeof(fin), "%s.json", d->name);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	have = read_small(st->dfd, fin, err, sizeof(err));
	/* as store__save writes it: the text, then a newline */
	same = have && strlen(have) == strlen(text) + 1 && !strncmp(have, text, strlen(text)) &&
	       have[strlen(text)] == '\n';
	free(have);
	json_object_put(o);
	return same;
}

int store__load(struct store *st, int (*fn)(void *ctx, const struct sessdef *d),
		void (*bad)(void *ctx, const char *file, const char *reason), void *ctx)
{
	int dfd = dup(st->dfd);
	struct dirent *de;
	DIR *dir;
	int e = 0;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		e = -errno;
		close(dfd);
		return e;
	}
	rewinddir(dir);
	while ((de = readdir(dir))) {
		char err[256] = "", name[PROTO_NAME_MAX + 1];
		size_t n = strlen(de->d_name);
		struct json_object *o;
		struct sessdef d;
		char *text;

		if (de->d_name[0] == '.') {
			/* leftovers of an interrupted save */
			if (n > 9 && !strcmp(de->d_name + n - 9, ".json.tmp"))
				unlinkat(st->dfd, de->d_name, 0);
			continue;
		}
		if (n <= 5 || strcmp(de->d_name + n - 5, ".json"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), de->d_name);
		if (n - 5 > PROTO_NAME_MAX || !proto_name_valid(name)) {
			bad(ctx, de->d_name, "not a valid session name");
			continue;
		}
		text = read_small(st->dfd, de->d_name, err, sizeof(err));
		if (!text) {
			bad(ctx, de->d_name, err);
			continue;
		}
		o = json_tokener_parse(text);
		free(text);
		if (!o || sessdef_from_json(o, &d, true, err, sizeof(err))) {
			bad(ctx, de->d_name, o ? err : "not JSON");
			json_object_put(o);
			continue;
		}
		json_object_put(o);
		snprintf(d.name, sizeof(d.name), "%s", name);
		e = fn(ctx, &d);
		if (e)
			break;
	}
	closedir(dir);
	return e;
}

void store__free(struct store *st)
{
	if (!st)
		return;
	if (st->dfd >= 0)
		close(st->dfd);
	free(st);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* Session definitions: JSON encoding with validation, durable store. */
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

#define RING_MIN (64u << 10)
#define RING_MAX (1ull << 30)

void sessdef_init(struct sessdef *d)
{
	memset(d, 0, sizeof(*d));
	d->freq = 4000;
	d->markers = true;
	d->all = true;
	d->sink = SESSDEF_SINK_RING;
	d->ring_size = 64u << 20;
}

/* --- JSON field helpers: absent is fine, a wrong type is not ------------- */

static int get_u64(struct json_object *o, const char *key, uint64_t *v, uint64_t lo, uint64_t hi,
		   char *err, size_t errlen)
{
	struct json_object *x;
	int64_t n;

	if (!json_object_object_get_ex(o, key, &x))
		return 0;
	if (!json_object_is_type(x, json_type_int)) {
		snprintf(err, errlen, "'%s' must be an integer", key);
		return -EINVAL;
	}
	n = json_object_get_int64(x);
	if (n < 0 || (uint64_t)n < lo || (uint64_t)n > hi) {
		snprintf(err, errlen, "'%s' out of range (%llu..%llu)", key,
			 (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	*v = (uint64_t)n;
	return 0;
}

static int get_bool(struct json_object *o, const char *key, bool *v, char *err, size_t errlen)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, key, &x))
		return 0;
	if (!json_object_is_type(x, json_type_boolean)) {
		snprintf(err, errlen, "'%s' must be true or false", key);
		return -EINVAL;
	}
	*v = json_object_get_boolean(x);
	return 0;
}

static int get_str(struct json_object *o, const char *key, const char **v, char *err, size_t errlen)
{
	struct json_object *x;

	*v = NULL;
	if (!json_object_object_get_ex(o, key, &x))
		return 0;
	if (!json_object_is_type(x, json_type_string)) {
		snprintf(err, errlen, "'%s' must be a string", key);
		return -EINVAL;
	}
	*v = json_object_get_string(x);
	return 0;
}

static int get_array(struct json_object *o, const char *key, struct json_object **arr, size_t max,
		     char *err, size_t errlen)
{
	*arr = NULL;
	if (!json_object_object_get_ex(o, key, arr))
		return 0;
	if (!json_object_is_type(*arr, json_type_array)) {
		snprintf(err, errlen, "'%s' must be a list", key);
		return -EINVAL;
	}
	if (json_object_array_length(*arr) > max) {
		snprintf(err, errlen, "'%s': too many entries (max %zu)", key, max);
		return -EINVAL;
	}
	return 0;
}

int sessdef_from_json(struct json_object *o, struct sessdef *d, bool trusted,
		      char *err, size_t errlen)
{
	struct json_object *arr;
	const char *s;
	uint64_t v;
	size_t i;
	int e;

	sessdef_init(d);
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "definition must be an object");
		return -EINVAL;
	}
	if ((e = get_str(o, "name", &s, err, errlen)))
		return e;
	if (s) {
		if (!proto_name_valid(s)) {
			snprintf(err, errlen, "invalid session name");
			return -EINVAL;
		}
		snprintf(d->name, sizeof(d->name), "%s", s);
	}
	if ((e = get_array(o, "events", &arr, EVSPEC_MAX, err, errlen)))
		return e;
	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(x, json_type_string) ||
		    evspec_lookup(json_object_get_string(x), &d->events[i])) {
			snprintf(err, errlen, "unknown event '%.32s'",
				 json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "?");
			return -EINVAL;
		}
		d->nr_events = i + 1;
	}
	if ((e = get_u64(o, "freq", &d->freq, 1, 100000, err, errlen)) ||
	    (e = get_u64(o, "period", &d->period, 1, UINT64_MAX >> 1, err, errlen)) ||
	    (e = get_bool(o, "callchain", &d->callchain, err, errlen)) ||
	    (e = get_bool(o, "markers", &d->markers, err, errlen)))
		return e;
	v = 0;
	if ((e = get_u64(o, "zstd", &v, 0, 22, err, errlen)))
		return e;
	d->zstd_level = (int)v;
	if ((e = get_str(o, "target", &s, err, errlen)))
		return e;
	if (s && strcmp(s, "all") && strcmp(s, "pids")) {
		snprintf(err, errlen, "'target' must be \"all\" or \"pids\"");
		return -EINVAL;
	}
	d->all = !s || !strcmp(s, "all");
	if ((e = get_array(o, "pids", &arr, SESSDEF_MAX_PIDS, err, errlen)))
		return e;
	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);
		int64_t p = json_object_get_int64(x);

		if (!json_object_is_type(x, json_type_int) || p <= 0 || p > 0x3fffffff) {
			snprintf(err, errlen, "bad pid in 'pids'");
			return -EINVAL;
		}
		d->pids[i] = (int)p;
		d->nr_pids = i + 1;
	}
	if (d->all && d->nr_pids) {
		snprintf(err, errlen, "give either a system-wide target or pids, not both");
		return -EINVAL;
	}
	if (!d->all && !d->nr_pids) {
		snprintf(err, errlen, "target \"pids\" needs at least one pid");
		return -EINVAL;
	}
	if ((e = get_str(o, "sink", &s, err, errlen)))
		return e;
	if (s && strcmp(s, "ring") && strcmp(s, "file")) {
		snprintf(err, errlen, "'sink' must be \"ring\" or \"file\"");
		return -EINVAL;
	}
	d->sink = s && !strcmp(s, "file") ? SESSDEF_SINK_FILE : SESSDEF_SINK_RING;
	if ((e = get_u64(o, "ring_size", &d->ring_size, RING_MIN, RING_MAX, err, errlen)) ||
	    (e = get_u64(o, "rotate_size", &d->rotate_size, 0, UINT64_MAX >> 1, err, errlen)) ||
	    (e = get_u64(o, "rotate_secs", &d->rotate_secs, 0, 366ull * 86400, err, errlen)))
		return e;
	if (d->rotate_size && d->rotate_size < RING_MIN) {
		snprintf(err, errlen, "rotation size must be at least 64K");
		return -EINVAL;
	}
	v = 0;
	if ((e = get_u64(o, "keep", &v, 0, 100000, err, errlen)))
		return e;
	d->keep = (uint32_t)v;
	if ((e = get_str(o, "dir", &s, err, errlen)))
		return e;
	if (s) {
		if (s[0] != '/' || strlen(s) >= sizeof(d->dir)) {
			snprintf(err, errlen, "output directory must be an absolute path");
			return -EINVAL;
		}
		snprintf(d->dir, sizeof(d->dir), "%s", s);
	}
	if (d->sink == SESSDEF_SINK_FILE && !d->dir[0]) {
		snprintf(err, errlen, "a file sink needs an output directory");
		return -EINVAL;
	}
	if (d->sink == SESSDEF_SINK_RING && (d->rotate_size || d->rotate_secs || d->keep)) {
		snprintf(err, errlen, "--rotate and --keep need --output DIR");
		return -EINVAL;
	}
	if (!trusted)
		return 0;
	if ((e = get_u64(o, "owner", &v, 0, UINT32_MAX, err, errlen)))
		return e;
	d->owner = (uint32_t)v;
	if ((e = get_array(o, "resolved", &arr, EVSPEC_MAX, err, errlen)))
		return e;
	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);
		struct evspec tmp;

		if (!json_object_is_type(x, json_type_string) ||
		    evspec_lookup(json_object_get_string(x), &tmp)) {
			snprintf(err, errlen, "bad resolved event");
			return -EINVAL;
		}
		snprintf(d->resolved[i], sizeof(d->resolved[i]), "%s", tmp.name);
		d->nr_resolved = i + 1;
	}
	if ((e = get_u64(o, "seq", &d->seq, 0, UINT64_MAX >> 1, err, errlen)) ||
	    (e = get_bool(o, "stopped", &d->stopped, err, errlen)) ||
	    (e = get_bool(o, "error", &d->error, err, errlen)) ||
	    (e = get_str(o, "message", &s, err, errlen)))
		return e;
	if (s)
		snprintf(d->message, sizeof(d->message), "%s", s);
	return 0;
}

struct json_object *sessdef_to_json(const struct sessdef *d, bool with_state)
{
	struct json_object *o = json_object_new_object(), *a;
	size_t i;

	if (!o)
		return NULL;
	if (d->name[0])
		json_object_object_add(o, "name", json_object_new_string(d->name));
	a = json_object_new_array();
	for (i = 0; i < d->nr_events; i++)
		json_object_array_add(a, json_object_new_string(d->events[i].name));
	json_object_object_add(o, "events", a);
	if (d->period)
		json_object_object_add(o, "period", json_object_new_int64((int64_t)d->period));
	else
		json_object_object_add(o, "freq", json_object_new_int64((int64_t)d->freq));
	json_object_object_add(o, "callchain", json_object_new_boolean(d->callchain));
	json_object_object_add(o, "markers", json_object_new_boolean(d->markers));
	json_object_object_add(o, "zstd", json_object_new_int(d->zstd_level));
	json_object_object_add(o, "target", json_object_new_string(d->all ? "all" : "pids"));
	if (!d->all) {
		a = json_object_new_array();
		for (i = 0; i < d->nr_pids; i++)
			json_object_array_add(a, json_object_new_int(d->pids[i]));
		json_object_object_add(o, "pids", a);
	}
	if (d->sink == SESSDEF_SINK_RING) {
		json_object_object_add(o, "sink", json_object_new_string("ring"));
		json_object_object_add(o, "ring_size", json_object_new_int64((int64_t)d->ring_size));
	} else {
		json_object_object_add(o, "sink", json_object_new_string("file"));
		json_object_object_add(o, "dir", json_object_new_string(d->dir));
		if (d->rotate_size)
			json_object_object_add(o, "rotate_size", json_object_new_int64((int64_t)d->rotate_size));
		if (d->rotate_secs)
			json_object_object_add(o, "rotate_secs", json_object_new_int64((int64_t)d->rotate_secs));
		if (d->keep)
			json_object_object_add(o, "keep", json_object_new_int64(d->keep));
	}
	if (!with_state)
		return o;
	json_object_object_add(o, "owner", json_object_new_int64(d->owner));
	a = json_object_new_array();
	for (i = 0; i < d->nr_resolved; i++)
		json_object_array_add(a, json_object_new_string(d->resolved[i]));
	json_object_object_add(o, "resolved", a);
	json_object_object_add(o, "seq", json_object_new_int64((int64_t)d->seq));
	json_object_object_add(o, "stopped", json_object_new_boolean(d->stopped));
	json_object_object_add(o, "error", json_object_new_boolean(d->error));
	if (d->message[0])
		json_object_object_add(o, "message", json_object_new_string(d->message));
	return o;
}

/* --- the store ---------------------------------------------------------- */

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

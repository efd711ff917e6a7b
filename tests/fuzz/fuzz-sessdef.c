// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: stored session definitions, as perfmarkd restores them
 * at start-up.  The input is the content of STATE_DIR/sessions/NAME.json
 * (written to a private directory on /dev/shm and read by store__load).
 * Whatever loads must save and load again to the same document, the
 * daemon's state included (CHECKed).
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "sessdef.h"
#include "store.h"

static char dir[64];
static struct store *st;

static void cleanup(void)
{
	char cmd[128];

	store__free(st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

static void bad(void *ctx, const char *file, const char *reason)
{
}

static char *doc(const struct sessdef *d)
{
	struct json_object *j = sessdef_to_json(d, true);
	char *s = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));

	json_object_put(j);
	CHECK(s, "out of memory");
	return s;
}

struct seen {
	char *first;
	int n;
};

static int loaded(void *ctx, const struct sessdef *d)
{
	struct seen *s = ctx;

	s->n++;
	if (!s->first) {
		s->first = doc(d);
		CHECK(store__save(st, d) == 0, "a loaded definition cannot be saved: %s", strerror(errno));
	} else {
		char *again = doc(d);

		CHECK(!strcmp(s->first, again), "definition changed through save and load:\n%s\n%s",
		      s->first, again);
		free(again);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct seen s = { 0 };
	char path[128];
	int fd;

	if (!st) {
		snprintf(dir, sizeof(dir), "/dev/shm/fuzz-sessdef.%d", (int)getpid());
		CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir %s", dir);
		CHECK(store__open(&st, dir) == 0, "store__open");
		atexit(cleanup);
	}
	snprintf(path, sizeof(path), "%s/sessions/fz.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "open %s", path);
	CHECK(write(fd, data, size) == (ssize_t)size, "write");
	close(fd);
	store__load(st, loaded, bad, &s);
	CHECK(s.n <= 1, "one file, %d definitions", s.n);
	if (s.first) {                  /* saved: loads again to the same document */
		store__load(st, loaded, bad, &s);
		CHECK(s.n == 2, "the saved definition did not load again");
	}
	free(s.first);
	unlink(path);
	return 0;
}

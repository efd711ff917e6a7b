// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fast lane, recorder side: keeping areas beyond this process (the
 * keeper, fastlane.h) and a restarted daemon adopting what it kept.
 * Split from fastlane.c, which attaches, reads and lets go.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fastlane.h"
#include "fastlane_int.h"

/* --- keeping areas beyond this process (fastlane.h) ------------------------- */

struct kept_area {
	int fd;                       /* -1 once taken or dropped */
	char *name;
	bool taken;
};

static struct {
	pthread_mutex_t lock;
	struct fastlane_store store;  /* the daemon's: its fd store and its caps */
	bool on;
	struct kept_area *v;
	size_t n, taken, exited;
} keeper = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void keep_area(struct fastlane *fl, struct area *a);
static void unkeep_area(struct area *a);
static const struct fastlane_keep_hooks hooks = { keep_area, unkeep_area };

void fastlane_keeper(const struct fastlane_store *store, const int *fds, char *const *names,
		     size_t n)
{
	pthread_mutex_lock(&keeper.lock);
	keeper.store = *store;
	keeper.on = true;
	fastlane_keep_hooks = &hooks;
	keeper.v = n ? calloc(n, sizeof(*keeper.v)) : NULL;
	for (size_t i = 0; keeper.v && i < n; i++) {
		keeper.v[keeper.n].fd = fds[i];
		keeper.v[keeper.n].name = strdup(names[i]);
		if (keeper.v[keeper.n].name)
			keeper.n++;
	}
	pthread_mutex_unlock(&keeper.lock);
}

void fastlane_keeper_done(size_t *taken, size_t *exited, size_t *dropped)
{
	pthread_mutex_lock(&keeper.lock);
	*taken = keeper.taken;
	*exited = keeper.exited;
	*dropped = 0;
	for (size_t i = 0; i < keeper.n; i++) {
		struct kept_area *k = &keeper.v[i];

		if (!k->taken) {
			keeper.store.put(-1, k->name);
			(*dropped)++;
		}
		if (k->fd >= 0)
			close(k->fd);
		free(k->name);
	}
	free(keeper.v);
	keeper.v = NULL;
	keeper.n = 0;
	pthread_mutex_unlock(&keeper.lock);
}

/* "pmfl-TOKEN-PID-LOCALPID-UID-NONCE", the fields in hex and decimal */
static void kept_name(char *buf, size_t len, uint64_t token, const struct area *a)
{
	snprintf(buf, len, FASTLANE_KEPT_PREFIX "%016llx-%u-%u-%u-%016llx",
		 (unsigned long long)token, a->pid, a->local_pid, a->uid,
		 (unsigned long long)a->nonce);
}

/* hand the area's memfd to the store, if its policy admits one more of the user's (fl's lock held) */
static void keep_area(struct fastlane *fl, struct area *a)
{
	pthread_mutex_lock(&keeper.lock);
	if (keeper.on && keeper.store.admit(a->uid)) {
		kept_name(a->kept, sizeof(a->kept), fl->token, a);
		keeper.store.put(a->memfd, a->kept);
	}
	pthread_mutex_unlock(&keeper.lock);
}

static void unkeep_area(struct area *a)
{
	if (!a->kept[0])
		return;
	pthread_mutex_lock(&keeper.lock);
	if (keeper.on) {
		keeper.store.put(-1, a->kept);
		keeper.store.release(a->uid);
	}
	pthread_mutex_unlock(&keeper.lock);
	a->kept[0] = '\0';
}

/*
 * Where kept area a (its memfd: fd) is still mapped in a live process: its
 * address there, with a->pidfd watching that process; 0 when the process
 * has gone.  Matched by inode, so a reused pid never passes for it.
 */
static uint64_t live_mapping(struct area *a, int fd)
{
	char path[96], line[512];
	uint64_t at = 0;
	struct stat kept, sb;
	FILE *f;

	if (fstat(fd, &kept))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", a->pid);
	f = fopen(path, "re");
	while (f && !at && fgets(line, sizeof(line), f)) {
		unsigned long long start, end;

		if (!strstr(line, "/memfd:perfmark") || sscanf(line, "%llx-%llx", &start, &end) != 2)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", a->pid, start, end);
		if (!stat(path, &sb) && sb.st_ino == kept.st_ino && sb.st_dev == kept.st_dev &&
		    end - start == a->size)
			at = start;
	}
	if (f)
		fclose(f);
	if (!at)
		return 0;
	/* the pidfd first, then the mapping once more: it is that process */
	a->pidfd = (int)syscall(SYS_pidfd_open, a->pid, 0);
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", a->pid,
		 (unsigned long long)at, (unsigned long long)(at + a->size));
	if (a->pidfd < 0 || stat(path, &sb) || sb.st_ino != kept.st_ino || sb.st_dev != kept.st_dev)
		return 0;
	return at;
}

/* the fields of a kept area's name (kept_name), if it names one of fl's */
static bool kept_ours(const struct fastlane *fl, const char *name, struct area *a)
{
	unsigned long long token, nonce;
	int n = 0;

	if (sscanf(name, FASTLANE_KEPT_PREFIX "%16llx-%u-%u-%u-%16llx%n", &token, &a->pid,
		   &a->local_pid, &a->uid, &nonce, &n) != 5 || name[n] || token != fl->token)
		return false;
	a->nonce = nonce;
	return true;
}

/*
 * Area a, kept under name with its memfd fd, read on as before the restart
 * (both locks held).  On failure it is dropped from the store.
 */
static int adopt_one(struct fastlane *fl, struct area *a, int fd, const char *name)
{
	struct pm_fastreg r = { 0 };
	struct stat sb;
	int e = -EINVAL;

	a->reg_time = clock_mono_ns();
	a->confirmed = true;    /* read as the recorder before the restart read it */
	a->cons = -1;
	a->pidfd = -1;
	a->memfd = -1;
	if (fstat(fd, &sb) || sb.st_size < PM_FL_HDR_SIZE || (uint64_t)sb.st_size > FL_MAX_AREA)
		goto fail;
	a->size = (uint64_t)sb.st_size;
	e = fastlane_map_fd(fd, a->size, &a->map, &a->born);
	if (e)
		goto fail;
	r.reg.nonce = a->nonce;
	e = fastlane_area_setup(a, &r);
	if (e)
		goto fail;
	a->reg_area = live_mapping(a, fd);
	a->gid = a->reg_area ? fastlane_proc_gid(a->pid) : (uint32_t)-1;
	if (!a->reg_area) {
		/* it exited while no daemon ran: read what it left, then let go */
		if (a->pidfd >= 0)
			close(a->pidfd);
		a->pidfd = -1;
		a->gone = true;
	}
	e = fastlane_rejoin_area(fl, a);
	if (e)
		goto fail;      /* the process let us go: nothing of ours is left in it */
	if (a->gone)
		keeper.exited++;
	if (!keeper.store.admit(a->uid)) {
		keeper.store.put(-1, name);  /* the limits were lowered: read it, keep it no more */
	} else {
		snprintf(a->kept, sizeof(a->kept), "%s", name);
	}
	a->next = fl->areas;
	fl->areas = a;
	fl->stats.areas++;
	keeper.taken++;
	return 0;
fail:
	keeper.store.put(-1, name);
	fastlane_area_free(fl, a);
	return e;
}

void fastlane__adopt_begin(struct fastlane *fl)
{
	pthread_mutex_lock(&fl->lock);
	fl->adopt_next = 0;
	__atomic_store_n(&fl->adopting, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fl->lock);
}

/* up to budget of the areas the keeper handed back with our token (fl's lock held) */
static unsigned adopt_kept(struct fastlane *fl, unsigned budget)
{
	unsigned done = 0;

	pthread_mutex_lock(&keeper.lock);
	for (; fl->adopt_next < keeper.n && done < budget; fl->adopt_next++) {
		struct kept_area *k = &keeper.v[fl->adopt_next];
		struct area *a;

		if (k->taken || !(a = calloc(1, sizeof(*a))))
			continue;
		if (!kept_ours(fl, k->name, a)) {
			free(a);
			continue;
		}
		k->taken = true;
		if (!adopt_one(fl, a, k->fd, k->name))
			fl->adopt.kept++;
		close(k->fd);           /* the store keeps its own */
		k->fd = -1;
		done++;
	}
	if (fl->adopt_next < keeper.n)
		done = budget;          /* more to come */
	pthread_mutex_unlock(&keeper.lock);
	return done;
}

/* up to budget processes of /proc scanned for live areas (fl's lock held); false: none left */
static bool rejoin_some(struct fastlane *fl, unsigned budget)
{
	struct dirent *de;

	if (!fl->adopt_dir) {
		fl->adopt_dir = opendir("/proc");
		if (!fl->adopt_dir)
			return false;
	}
	while (budget && (de = readdir(fl->adopt_dir))) {
		char *end;
		unsigned long p = strtoul(de->d_name, &end, 10);

		if (!p || *end || p > UINT32_MAX)
			continue;
		fl->adopt.rejoined += fastlane_rejoin_pid(fl, (uint32_t)p);
		fl->adopt.procs++;
		budget--;
	}
	if (budget) {           /* the end of /proc */
		closedir(fl->adopt_dir);
		fl->adopt_dir = NULL;
		return false;
	}
	return true;
}

bool fastlane__adopt_step(struct fastlane *fl, unsigned budget)
{
	bool more;

	pthread_mutex_lock(&fl->lock);
	if (!fl->adopting) {
		pthread_mutex_unlock(&fl->lock);
		return false;
	}
	fl->adopt.steps++;
	/* the rings of processes that exited meanwhile first: only the fd store has them */
	more = adopt_kept(fl, budget) >= budget || rejoin_some(fl, budget);
	__atomic_store_n(&fl->adopting, more, __ATOMIC_RELEASE);
	pthread_cond_signal(&fl->wake);
	pthread_mutex_unlock(&fl->lock);
	return more;
}

bool fastlane__adopting(struct fastlane *fl, struct fastlane_adopt_stats *st)
{
	bool on;

	if (!st)        /* every drain asks: no lock (the pump may hold it for a pass) */
		return __atomic_load_n(&fl->adopting, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&fl->lock);
	on = fl->adopting;
	*st = fl->adopt;
	st->redo = 0;
	for (struct area *a = fl->areas; a; a = a->next)
		st->redo += a->redo_left;
	pthread_mutex_unlock(&fl->lock);
	return on;
}

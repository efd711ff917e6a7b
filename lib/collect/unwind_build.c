// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The unwinder's table builder: worker threads that turn files' CFI into
 * tables (unwind_table.c) off the thread that drains the ring, which must
 * never wait for one: a first build of a large program takes half a second
 * (cc1), and meanwhile the ring fills and new processes' stacks go unread.
 *
 * The drain thread hands over a file it opened (through /proc/PID/map_files,
 * while the process lived) and fstat'ed, its ELF headers checked and its
 * build-id read (unwind_pool.c); the worker builds, under the same budgets
 * as ever, and the drain thread loads what it finds DONE into the BPF pools
 * (a memcpy) and installs the mappings that waited.  Meanwhile the BPF walk
 * copies the stacks that reach such a mapping and the collector holds the
 * copies until the table is there (collector_unwind.c).
 *
 * Bounds: UNWIND_BUILD_QUEUE files queued, under way or done at once (each
 * holds its file open); a new one past that takes the place of the least
 * urgent one not started, or is refused (its mapping resolves again later).
 * The most urgent first: a target's file, then the files the most copied
 * samples wait for.  Workers run UNWIND_BUILD_NICE below their creator and
 * give up a build under way when stopped.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "clock.h"
#include "unwind_int.h"

#define NOTE_MAX (64u << 10)   /* notes read for a build-id on the drain thread, at most */

/* --- keys ------------------------------------------------------------------------ */

/* the bytes of elf's notes, if it has sections (else program headers) */
static uint64_t note_bytes(Elf *elf)
{
	uint64_t sum = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t n = 0;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			sum += sh.sh_size;
	if (sum || elf_getphdrnum(elf, &n))
		return sum;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE)
			sum += ph.p_filesz;
	return sum;
}

void uw_build_id_key(Elf *elf, uint32_t owner, char *key)
{
	const void *bid = NULL;
	ssize_t n;

	key[0] = '\0';
	/* a hostile file's notes could be large: then the key waits for the rows */
	if (note_bytes(elf) > NOTE_MAX)
		return;
	n = dwelf_elf_gnu_build_id(elf, &bid);
	if (n <= 0 || n > 20)
		return;
	memcpy(key, "b:", 2);
	for (ssize_t i = 0; i < n; i++) {
		key[2 + 2 * i] = "0123456789abcdef"[((const uint8_t *)bid)[i] >> 4];
		key[3 + 2 * i] = "0123456789abcdef"[((const uint8_t *)bid)[i] & 15];
	}
	/*
	 * A build-id is a claim the file makes, and its owner can write its CFI:
	 * two files share a table by build-id only when one user owns both, so
	 * no user's file decides how another user's file unwinds.
	 */
	snprintf(key + 2 + 2 * n, KEY_LEN - 2 - 2 * (size_t)n, ":%u", owner);
}

/* without a build-id: "h:" FNV-1a over the rows (what the CFI says) and the file size */
static void hash_key(const struct unwind_table *t, int64_t size, char *key)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < t->nr_rows * sizeof(*t->rows); i++)
		h = (h ^ ((const uint8_t *)t->rows)[i]) * 1099511628211ull;
	snprintf(key, KEY_LEN, "h:%016" PRIx64 ":%" PRId64, h, size);
}

/* --- workers --------------------------------------------------------------------- */

static void build(struct uw_builder *b, struct uw_job *j)
{
	struct unwind_budget bud;
	uint64_t t0 = clock_mono_ns();

	j->err = unwind_table__build_until(j->elf, &j->t, &bud, &b->stop);
	j->why = bud.why;
	if (!j->err) {
		if (!j->key[0])
			hash_key(j->t, j->sb.st_size, j->key);
		uw_elf_loads(j->elf, j->loads, &j->nr_loads);
	}
	elf_end(j->elf);
	j->elf = NULL;
	close(j->fd);
	j->fd = -1;
	j->ns = clock_mono_ns() - t0;
}

/* the most urgent job queued (the oldest of those): under the lock */
static struct uw_job *next_queued(struct uw_builder *b)
{
	struct uw_job *best = NULL;

	for (size_t i = 0; i < UNWIND_BUILD_QUEUE; i++) {
		struct uw_job *j = &b->jobs[i];

		if (j->state == JOB_QUEUED &&
		    (!best || j->prio > best->prio || (j->prio == best->prio && j->order < best->order)))
			best = j;
	}
	return best;
}

static void *worker(void *arg)
{
	struct uw_builder *b = arg;
	pid_t tid = gettid();
	int nice;

	/* below the thread that drains (and so below whoever it had to keep up with) */
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)tid);
	if (!errno)
		(void)setpriority(PRIO_PROCESS, (id_t)tid,
				  nice + UNWIND_BUILD_NICE > 19 ? 19 : nice + UNWIND_BUILD_NICE);
	pthread_mutex_lock(&b->lock);
	while (!b->stop) {
		struct uw_job *j = next_queued(b);
		const uint64_t one = 1;

		if (!j) {
			pthread_cond_wait(&b->work, &b->lock);
			continue;
		}
		j->state = JOB_BUILDING;
		pthread_mutex_unlock(&b->lock);
		build(b, j);
		pthread_mutex_lock(&b->lock);
		j->state = JOB_DONE;
		b->finished++;
		for (size_t i = 0; i < b->nr_notify; i++)
			if (write(b->notify[i], &one, sizeof(one)) < 0)
				continue;       /* a full count is still a wakeup */
		pthread_cond_broadcast(&b->done);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* the workers, at the first build: no thread for a recorder that never builds */
static int start(struct uw_builder *b)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t want = cpus < 1 ? 1 : cpus > UNWIND_BUILD_THREADS ? UNWIND_BUILD_THREADS : (size_t)cpus;
	sigset_t all, old;
	int e = 0;

	/* the workers take no signal: the process's are its drain loop's (a signalfd) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (b->nr_threads < want && !e) {
		e = -pthread_create(&b->threads[b->nr_threads], NULL, worker, b);
		if (!e)
			b->nr_threads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return b->nr_threads ? 0 : e;
}

int uw_build_new(struct unwinder *u)
{
	struct uw_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->work, NULL);
	pthread_cond_init(&b->done, NULL);
	for (size_t i = 0; i < UNWIND_BUILD_QUEUE; i++)
		b->jobs[i].fd = -1;
	u->b = b;
	return 0;
}

/* --- the drain thread's side -------------------------------------------------------- */

static void job_free(struct uw_builder *b, struct uw_job *j)
{
	if (j->elf)
		elf_end(j->elf);
	if (j->fd >= 0)
		close(j->fd);
	unwind_table__free(j->t);
	*j = (struct uw_job){ .fd = -1, .gen = j->gen + 1 };
	(void)b;
}

int uw_build_submit(struct unwinder *u, int fd, Elf *elf, const struct stat *sb,
		    const char *key, uint64_t prio, uint32_t *job)
{
	struct uw_builder *b = u->b;
	struct uw_job *j = NULL, *victim = NULL;
	int e = b->nr_threads ? 0 : start(b);

	if (e) {
		elf_end(elf);
		close(fd);
		return e;
	}
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < UNWIND_BUILD_QUEUE && !j; i++) {
		struct uw_job *c = &b->jobs[i];

		if (!c->live)
			j = c;
		else if (c->state == JOB_QUEUED && c->prio < prio &&
			 (!victim || c->prio < victim->prio ||
			  (c->prio == victim->prio && c->order < victim->order)))
			victim = c;
	}
	if (!j && victim) {        /* the least urgent waits no more: resolved again when needed */
		job_free(b, victim);
		u->st.builds_dropped++;
		u->retry = true;
		j = victim;
	}
	if (!j) {
		pthread_mutex_unlock(&b->lock);
		elf_end(elf);
		close(fd);
		u->st.builds_dropped++;
		return -ENOSPC;
	}
	j->live = true;
	j->elf = elf;
	j->fd = fd;
	j->sb = *sb;
	snprintf(j->key, sizeof(j->key), "%s", key);
	j->prio = prio;
	j->order = b->order++;
	j->state = JOB_QUEUED;
	pthread_cond_signal(&b->work);
	pthread_mutex_unlock(&b->lock);
	*job = (uint32_t)(j - b->jobs);
	return 0;
}

int32_t uw_build_find(const struct unwinder *u, const struct stat *sb, const char *key)
{
	for (uint32_t i = 0; i < UNWIND_BUILD_QUEUE; i++) {
		const struct uw_job *j = &u->b->jobs[i];

		if (!j->live)
			continue;
		if ((key && key[0] && !strcmp(j->key, key)) ||
		    (sb && j->sb.st_ino == sb->st_ino && j->sb.st_dev == sb->st_dev &&
		     j->sb.st_size == sb->st_size && j->sb.st_mtim.tv_sec == sb->st_mtim.tv_sec))
			return (int32_t)i;
	}
	return -1;
}

bool uw_build_live(const struct unwinder *u, uint32_t j, uint32_t gen)
{
	return j < UNWIND_BUILD_QUEUE && u->b->jobs[j].live && u->b->jobs[j].gen == gen;
}

void uw_build_raise(struct unwinder *u, uint32_t j, uint64_t at_least, uint64_t add)
{
	struct uw_job *job = &u->b->jobs[j];

	pthread_mutex_lock(&u->b->lock);
	if (job->prio < at_least)
		job->prio = at_least;
	job->prio += add;
	pthread_mutex_unlock(&u->b->lock);
}

int32_t uw_build_next_done(struct unwinder *u)
{
	int32_t found = -1;

	pthread_mutex_lock(&u->b->lock);
	for (uint32_t i = 0; i < UNWIND_BUILD_QUEUE && found < 0; i++)
		if (u->b->jobs[i].state == JOB_DONE)
			found = (int32_t)i;
	pthread_mutex_unlock(&u->b->lock);
	return found;
}

void uw_build_release(struct unwinder *u, uint32_t j)
{
	pthread_mutex_lock(&u->b->lock);
	job_free(u->b, &u->b->jobs[j]);
	pthread_mutex_unlock(&u->b->lock);
}

size_t uw_build_pending(const struct unwinder *u)
{
	size_t n = 0;

	for (uint32_t i = 0; i < UNWIND_BUILD_QUEUE; i++)
		n += u->b->jobs[i].live;
	return n;
}

bool uw_build_wait(struct unwinder *u, uint64_t deadline)
{
	struct uw_builder *b = u->b;
	struct timespec ts;
	bool done = false;

	/* the condition's clock is CLOCK_REALTIME: the wait, from now */
	clock_gettime(CLOCK_REALTIME, &ts);
	{
		uint64_t now = clock_mono_ns(), left = deadline > now ? deadline - now : 0;
		uint64_t at = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + left;

		ts.tv_sec = (time_t)(at / 1000000000ull);
		ts.tv_nsec = (long)(at % 1000000000ull);
	}
	pthread_mutex_lock(&b->lock);
	for (;;) {
		for (uint32_t i = 0; i < UNWIND_BUILD_QUEUE && !done; i++)
			done = b->jobs[i].state == JOB_DONE;
		if (done || pthread_cond_timedwait(&b->done, &b->lock, &ts))
			break;
	}
	pthread_mutex_unlock(&b->lock);
	return done;
}

void uw_build_notify(struct unwinder *u, int efd, bool on)
{
	struct uw_builder *b = u->b;

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->nr_notify; i++)
		if (b->notify[i] == efd) {
			b->notify[i] = b->notify[--b->nr_notify];
			break;
		}
	if (on && b->nr_notify < MAX_SETS)
		b->notify[b->nr_notify++] = efd;
	pthread_mutex_unlock(&b->lock);
}

void uw_build_stop(struct unwinder *u)
{
	struct uw_builder *b = u->b;

	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_broadcast(&b->work);
	pthread_mutex_unlock(&b->lock);
	for (size_t i = 0; i < b->nr_threads; i++)
		pthread_join(b->threads[i], NULL);
	for (size_t i = 0; i < UNWIND_BUILD_QUEUE; i++)
		job_free(b, &b->jobs[i]);
	pthread_cond_destroy(&b->done);
	pthread_cond_destroy(&b->work);
	pthread_mutex_destroy(&b->lock);
	free(b);
	u->b = NULL;
}

/* --- ELF facts both sides need ---------------------------------------------------------- */

void uw_elf_loads(Elf *elf, struct uw_load *loads, size_t *nr)
{
	size_t n = 0;
	GElf_Phdr ph;

	*nr = 0;
	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && *nr < MAX_LOADS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		loads[(*nr)++] = (struct uw_load){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
}

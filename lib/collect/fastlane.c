// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fast lane, recorder side.  See fastlane.h, and lib/perfmark/fastlane.c
 * for why markers travel this way.
 *
 * Threads: the collector's thread registers areas, consumes and delivers;
 * a pump thread copies ring contents into the spill (fastlane_int.h) between drains so
 * that a busy thread's ring (1 MiB by default: ~2 ms at 10 M markers/s)
 * never waits for the session's 100 ms drain.  One mutex covers the area
 * list, the rings' tails and the spill buffer; delivery happens outside it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bigmem.h"
#include "clock.h"
#include "fastlane.h"
#include "fastlane_int.h"
#include "synth.h"
#include "testhold.h"

/* --- attaching to an area ------------------------------------------------ */

/* the header's geometry, checked once and kept in private memory */
static int check_geometry(struct area *a, const struct pm_fastreg *r)
{
	const volatile struct pm_fl_hdr *h = a->hdr;
	uint32_t hs = h->hdr_size, ns = h->nr_slots, ss = h->slot_size, rs = h->ring_size;

	if (h->magic != PM_FL_MAGIC || h->version != PM_FL_VERSION ||
	    (r->reg.nonce && h->nonce != r->reg.nonce))
		return -EINVAL;
	a->nonce = h->nonce;
	if (hs < sizeof(struct pm_fl_hdr) || hs % 64 || !ns || ns > PM_FL_MAX_SLOTS ||
	    rs < PM_FL_MIN_RING || rs > PM_FL_MAX_RING || (rs & (rs - 1)) ||
	    ss != PM_FL_CTL_SIZE + rs || hs + (uint64_t)ns * ss > a->size)
		return -EINVAL;
	a->hdr_size = hs;
	a->nr_slots = ns;
	a->slot_size = ss;
	a->ring_size = rs;
	return 0;
}

/*
 * Join the area as consumer k: the recorder holding register site k, which
 * is this collector (the site is ours for as long as our uprobe sits on it,
 * so whatever token is in word k was left by an earlier holder: a recorder
 * that died, or the daemon before a restart, whose backlog we then read).
 * A reader starts at each ring's head, or at the tails the earlier holder
 * left; a consumer that records nothing of this process joins without
 * reading, so that the process need not wait for it.  The tail we publish
 * is what we have handed on, not what we have copied (publish(),
 * fastlane_read.c): joining again, we read on from our copy and publish
 * from where we were.
 */
static void join(struct fastlane *fl, struct area *a, int k, bool read)
{
	struct pm_fl_hdr *h = a->hdr;
	uint64_t now = clock_mono_ns();
	uint64_t old = __atomic_exchange_n(&h->consumer[k].token, fl->token, __ATOMIC_ACQ_REL);
	bool backlog = old && (__atomic_load_n(&h->readers, __ATOMIC_ACQUIRE) & (1u << k));

	/* joining again (let go as silent, or reading now): go on where we were */
	bool again = a->has_tails && a->reading;

	/*
	 * The clamp's floor (fastlane_read.c).  We read from the heads as
	 * they are after now, and a producer takes a record's time just
	 * before it reserves the record's place (after seeing every site
	 * joined): a record we read is no older than now, but for one whose
	 * writer was between the two (it is clamped by that much).  A backlog
	 * was written since the area was made.
	 */
	if (!again)
		a->since = backlog ? a->born : now;
	a->cons = k;
	a->reading = read;
	a->has_tails = true;
	for (uint32_t s = 0; s < a->nr_slots; s++) {
		struct pm_fl_slot *sl = area_slot(a, s);
		uint64_t head = __atomic_load_n(&sl->head, __ATOMIC_ACQUIRE);
		uint64_t t = again ? a->tails[s] :
			     backlog ? __atomic_load_n(&sl->tail[k], __ATOMIC_ACQUIRE) : head;
		uint64_t p;

		if (t > head || head - t > a->ring_size || (t & 7))
			t = head;               /* nothing sensible there: from now on */
		p = again ? a->pub[s] : t;
		if (p > t || t - p > a->ring_size)
			p = t;
		a->tails[s] = t;
		a->pub[s] = p;
		__atomic_store_n(&sl->tail[k], p, __ATOMIC_RELEASE);
		if (!again) {
			a->unpub[s] = 0;
			/* up to a batch of what we read first may be in its sessions already */
			a->redo_left -= a->redo[s];
			a->redo[s] = backlog && t != head ? FL_PUBLISH_BATCH : 0;
			a->redo_end[s] = head;
			a->redo_left += a->redo[s];
			/* what the earlier holder took and never handed on: lost with it */
			uint64_t held = __atomic_exchange_n(&sl->held[k], 0, __ATOMIC_ACQ_REL);

			/* (the process can write here too: no more than a full spill) */
			if (backlog && held <= FL_SPILL_MAX / sizeof(struct pm_fl_rec))
				fl->stats.lost += held;
		}
	}
	__atomic_store_n(&h->consumer[k].heartbeat_ns, now, __ATOMIC_RELAXED);
	if (read)
		__atomic_fetch_or(&h->readers, 1u << k, __ATOMIC_ACQ_REL);
	else
		__atomic_fetch_and(&h->readers, ~(1u << k), __ATOMIC_ACQ_REL);
	__atomic_fetch_or(&h->joined, 1u << k, __ATOMIC_ACQ_REL);
}

static void leave(struct fastlane *fl, struct area *a)
{
	struct pm_fl_hdr *h = a->hdr;
	uint64_t mine = fl->token;

	if (a->cons < 0)
		return;
	if (__atomic_load_n(&h->consumer[a->cons].token, __ATOMIC_ACQUIRE) == mine) {
		__atomic_fetch_and(&h->readers, ~(1u << a->cons), __ATOMIC_ACQ_REL);
		__atomic_fetch_and(&h->joined, ~(1u << a->cons), __ATOMIC_ACQ_REL);
		__atomic_compare_exchange_n(&h->consumer[a->cons].token, &mine, 0, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
	a->cons = -1;
}

const struct fastlane_keep_hooks *fastlane_keep_hooks;

/* an attached area's memfd to the keeper, if there is one; ours closed (lock held) */
static void keep_area(struct fastlane *fl, struct area *a)
{
	if (a->memfd < 0)
		return;
	if (fastlane_keep_hooks)
		fastlane_keep_hooks->keep(fl, a);
	close(a->memfd);
	a->memfd = -1;
}

void fastlane_area_free(struct fastlane *fl, struct area *a)
{
	if (!a)
		return;
	if (a->hdr && a->cons >= 0)
		leave(fl, a);
	if (fastlane_keep_hooks)
		fastlane_keep_hooks->unkeep(a);
	if (a->memfd >= 0)
		close(a->memfd);
	if (a->map)
		munmap(a->map, a->size);
	if (a->pidfd >= 0)
		close(a->pidfd);
	free(a->tails);
	free(a->pub);
	free(a->unpub);
	free(a->redo);
	free(a->redo_end);
	free(a->tids);
	free(a);
}

static struct area *find_area(struct fastlane *fl, uint32_t pid, uint64_t nonce)
{
	for (struct area *a = fl->areas; a; a = a->next)
		if (a->pid == pid && a->nonce == nonce)
			return a;
	return NULL;
}

/* a freshly mapped area: its header checked, our tails made */
int fastlane_area_setup(struct area *a, const struct pm_fastreg *r)
{
	int e;

	a->hdr = a->map;
	e = check_geometry(a, r);
	if (e)
		return e;
	a->tails = calloc(a->nr_slots, sizeof(*a->tails));
	a->pub = calloc(a->nr_slots, sizeof(*a->pub));
	a->unpub = calloc(a->nr_slots, sizeof(*a->unpub));
	a->redo = calloc(a->nr_slots, sizeof(*a->redo));
	a->redo_end = calloc(a->nr_slots, sizeof(*a->redo_end));
	return a->tails && a->pub && a->unpub && a->redo && a->redo_end ? 0 : -ENOMEM;
}

/* join again as the consumer whose word holds our token (-ENOENT: none does) */
int fastlane_rejoin_area(struct fastlane *fl, struct area *a)
{
	const struct pm_fl_hdr *h = a->hdr;

	for (int k = 0; k < FASTLANE_SITES; k++) {
		if (__atomic_load_n(&h->consumer[k].token, __ATOMIC_ACQUIRE) == fl->token) {
			join(fl, a, k, __atomic_load_n(&h->readers, __ATOMIC_ACQUIRE) & (1u << k));
			return 0;
		}
	}
	return -ENOENT;
}

/* the group of /proc/PID (its owner's, see jitmap.c), (uint32_t)-1 if it has gone */
uint32_t fastlane_proc_gid(uint32_t pid)
{
	char path[32];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &sb) ? (uint32_t)-1 : (uint32_t)sb.st_gid;
}

/*
 * Map the area r offers and join it.  rejoin: found in a scan after a
 * restart, joined only where our token still holds a consumer word.
 */
static int attach(struct fastlane *fl, const struct pm_fastreg *r, struct area **out, bool rejoin)
{
	struct area *a = calloc(1, sizeof(*a));
	int e;

	if (!a)
		return -ENOMEM;
	a->pid = r->pid;
	a->uid = r->uid;
	a->local_pid = r->reg.local_pid;
	a->nonce = r->reg.nonce;
	a->reg_time = r->time;
	a->size = r->reg.size;
	a->confirmed = r->reg.kind != PM_FL_REG_EARLY;
	a->cons = -1;
	a->memfd = -1;
	/* before the mapping: if that succeeds, the pid was still this process */
	a->pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0);
	if (a->pidfd < 0) {
		e = -errno;
		goto fail;
	}
	e = fastlane_map_area(r->pid, r->reg.area, r->reg.size, &a->map, &a->memfd, &a->born);
	if (e)
		goto fail;
	a->gid = fastlane_proc_gid(r->pid);
	e = fastlane_area_setup(a, r);
	if (e)
		goto fail;
	a->reg_area = r->reg.area;
	if (rejoin) {
		e = fastlane_rejoin_area(fl, a);
		if (e)
			goto fail;
	} else {
		join(fl, a, r->site, r->wanted);
	}
	*out = a;
	return 0;
fail:
	fastlane_area_free(fl, a);
	return e;
}

void fastlane__register(struct fastlane *fl, const struct pm_fastreg *r, size_t size)
{
	struct area *a;
	int e;

	if (size < sizeof(*r) || (r->reg.kind != PM_FL_REG_AREA && r->reg.kind != PM_FL_REG_EARLY) ||
	    r->reg.version != PM_FL_VERSION ||
	    r->site >= FASTLANE_SITES ||
	    r->reg.size < PM_FL_HDR_SIZE + PM_FL_CTL_SIZE + PM_FL_MIN_RING ||
	    r->reg.size > FL_MAX_AREA || (r->reg.area & 4095) || (r->reg.size & 4095))
		return;
	pthread_mutex_lock(&fl->lock);
	a = find_area(fl, r->pid, r->reg.nonce);
	if (a && !a->confirmed && r->reg.kind == PM_FL_REG_AREA) {
		/* its first marker's offer: its markers are this owner's (BPF's, now) */
		a->uid = r->uid;
		a->confirmed = true;
	}
	if (a) {
		/* offered again: we were let go as silent, or a session now wants it */
		if (a->cons == r->site && a->reading >= (bool)r->wanted &&
		    __atomic_load_n(&a->hdr->consumer[a->cons].token, __ATOMIC_ACQUIRE) == fl->token &&
		    (__atomic_load_n(&a->hdr->joined, __ATOMIC_ACQUIRE) & (1u << a->cons)))
			goto out;
		join(fl, a, r->site, r->wanted || a->reading);
		goto out;
	}
	e = attach(fl, r, &a, false);
	if (e) {
		if (getenv("PERFMARK_DEBUG"))
			fprintf(stderr, "fastlane: pid %u area refused: %s\n", r->pid, strerror(-e));
		fl->stats.refused++;
		goto out;
	}
	keep_area(fl, a);
	a->next = fl->areas;
	fl->areas = a;
	fl->stats.areas++;
	pthread_cond_signal(&fl->wake);
out:
	pthread_mutex_unlock(&fl->lock);
}

/* one live area found in pid's maps: ours from before a restart? */
static bool rejoin_one(struct fastlane *fl, uint32_t pid, uint64_t start, uint64_t end)
{
	struct pm_fastreg r = { .pid = pid, .time = clock_mono_ns() };
	struct area *a;
	pid_t tgid;

	for (a = fl->areas; a; a = a->next)
		if (a->pid == pid && (uint64_t)(uintptr_t)a->map && a->hdr &&
		    a->size == end - start && a->reg_area == start)
			return false;
	if (synth_task_owner((pid_t)pid, &r.uid, &tgid) || (uint32_t)tgid != pid)
		return false;
	r.reg.kind = PM_FL_REG_AREA;      /* an area from before a restart: as it was */
	r.reg.version = PM_FL_VERSION;
	r.reg.area = start;
	r.reg.size = end - start;
	if (attach(fl, &r, &a, true))
		return false;
	a->local_pid = a->hdr->pid;
	keep_area(fl, a);
	a->next = fl->areas;
	fl->areas = a;
	fl->stats.areas++;
	return true;
}

/* pid's live areas ours from before a restart, joined again (lock held): how many */
unsigned fastlane_rejoin_pid(struct fastlane *fl, uint32_t pid)
{
	char path[64], line[512];
	unsigned n = 0;
	FILE *f;

	/* not ourselves: the areas we read are mapped here too */
	if (!pid || pid == (uint32_t)getpid())
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end;

		if (strstr(line, "/memfd:perfmark") && sscanf(line, "%llx-%llx", &start, &end) == 2)
			n += rejoin_one(fl, pid, start, end);
	}
	if (f)
		fclose(f);
	return n;
}

void fastlane__rejoin(struct fastlane *fl, uint32_t pid)
{
	pthread_mutex_lock(&fl->lock);
	fastlane_rejoin_pid(fl, pid);
	pthread_cond_signal(&fl->wake);
	pthread_mutex_unlock(&fl->lock);
}

/* a session now records pid (all processes: pid 0): its areas are read from now on */
void fastlane__want(struct fastlane *fl, uint32_t pid)
{
	pthread_mutex_lock(&fl->lock);
	for (struct area *a = fl->areas; a; a = a->next)
		if ((!pid || a->pid == pid) && !a->reading && a->cons >= 0)
			join(fl, a, a->cons, true);
	pthread_mutex_unlock(&fl->lock);
}

void fastlane__exec(struct fastlane *fl, uint32_t pid, uint64_t time)
{
	pthread_mutex_lock(&fl->lock);
	for (struct area *a = fl->areas; a; a = a->next)
		if (a->pid == pid && a->reg_time < time)
			a->gone = true;
	pthread_mutex_unlock(&fl->lock);
}

/* --- life cycle -------------------------------------------------------------- */

/* the session's loop: a drain is due (lock held) */
static void wake_drain(struct fastlane *fl)
{
	uint64_t one = 1;

	fl->woke = write(fl->wake_fd, &one, sizeof(one)) == sizeof(one);
}

static void *pump_main(void *arg)
{
	struct fastlane *fl = arg;
	uint64_t wait_ns = FL_PUMP_IDLE_NS;

	collector__boost_thread();
	pthread_mutex_lock(&fl->lock);
	while (!fl->stopping) {
		struct timespec until;
		uint64_t t;

		if (!fl->areas) {
			pthread_cond_wait(&fl->wake, &fl->lock);
			continue;
		}
		wait_ns = fastlane_pass(fl, wait_ns, true);
		if (fl->spilled >= FL_SPILL_WAKE && !fl->woke)
			wake_drain(fl);
		t = clock_mono_ns() + wait_ns;
		until.tv_sec = (time_t)(t / 1000000000ull);
		until.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&fl->wake, &fl->lock, &until);
	}
	pthread_mutex_unlock(&fl->lock);
	return NULL;
}

int fastlane__new(struct fastlane **out, uint64_t token, fastlane_deliver_fn deliver, void *ctx)
{
	struct fastlane *fl = calloc(1, sizeof(*fl));
	pthread_condattr_t ca;
	int e;

	*out = NULL;
	if (!fl)
		return -ENOMEM;
	fl->deliver = deliver;
	fl->ctx = ctx;
	fl->token = token;
	fl->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fl->wake_fd < 0) {
		e = -errno;
		free(fl);
		return e;
	}
	while (!fl->token)
		if (getrandom(&fl->token, sizeof(fl->token), 0) != sizeof(fl->token))
			fl->token = clock_mono_ns() ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)fl;
	pthread_mutex_init(&fl->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fl->wake, &ca);
	pthread_condattr_destroy(&ca);
	e = -pthread_create(&fl->pump, NULL, pump_main, fl);
	if (e) {
		close(fl->wake_fd);
		pthread_cond_destroy(&fl->wake);
		pthread_mutex_destroy(&fl->lock);
		free(fl);
		return e;
	}
	*out = fl;
	return 0;
}

static void free_segs(struct fl_seg *list)
{
	for (struct fl_seg *next; list; list = next) {
		next = list->next;
		bigmem_free(list, sizeof(*list) + list->cap);
	}
}

void fastlane__free(struct fastlane *fl)
{
	struct area *a, *next;

	if (!fl)
		return;
	if (getenv("PERFMARK_DEBUG"))
		fprintf(stderr, "fastlane: %llu markers, %llu areas refused, %llu corrupt, %llu evicted\n",
			(unsigned long long)fl->stats.markers, (unsigned long long)fl->stats.refused,
			(unsigned long long)fl->stats.corrupt, (unsigned long long)fl->stats.evicted);
	pthread_mutex_lock(&fl->lock);
	fl->stopping = true;
	pthread_cond_signal(&fl->wake);
	pthread_mutex_unlock(&fl->lock);
	pthread_join(fl->pump, NULL);
	for (a = fl->areas; a; a = next) {
		next = a->next;
		fastlane_area_free(fl, a);
	}
	for (a = fl->dead; a; a = next) {
		next = a->next;
		fastlane_area_free(fl, a);
	}
	if (fl->adopt_dir)
		closedir(fl->adopt_dir);
	free_segs(fl->head);
	free_segs(fl->spare);
	free(fl->tidbuf);
	close(fl->wake_fd);
	pthread_cond_destroy(&fl->wake);
	pthread_mutex_destroy(&fl->lock);
	free(fl);
}

int fastlane__fd(const struct fastlane *fl)
{
	return fl->wake_fd;
}

uint64_t fastlane__token(const struct fastlane *fl)
{
	return fl->token;
}

void fastlane__stats(struct fastlane *fl, struct fastlane_stats *st)
{
	pthread_mutex_lock(&fl->lock);
	*st = fl->stats;
	pthread_mutex_unlock(&fl->lock);
}

bool fastlane__owner(struct fastlane *fl, uint32_t pid, uint32_t *uid, uint32_t *gid)
{
	const struct area *found = NULL;

	pthread_mutex_lock(&fl->lock);
	/* a live area first: a reused pid's, not the one of a process gone */
	for (const struct area *a = fl->areas; a && !found; a = a->next)
		if (a->pid == pid && a->gid != (uint32_t)-1 && !a->gone)
			found = a;
	for (const struct area *a = fl->areas; a && !found; a = a->next)
		if (a->pid == pid && a->gid != (uint32_t)-1)
			found = a;
	for (const struct area *a = fl->dead; a && !found; a = a->next)
		if (a->pid == pid && a->gid != (uint32_t)-1)
			found = a;
	if (found) {
		*uid = found->uid;
		*gid = found->gid;
	}
	pthread_mutex_unlock(&fl->lock);
	return found != NULL;
}

/*
 * Areas whose process exited (its pidfd reads) or exec'd: after the pass
 * that follows, nothing more can come; move them to the dead list, freed
 * once what was read from them is delivered.
 */
/* nothing left to read in any ring (or not reading it at all) */
static bool drained_all(const struct area *a)
{
	uint32_t used = __atomic_load_n(&a->hdr->slots_used, __ATOMIC_ACQUIRE);

	if (!a->reading || a->cons < 0)
		return true;
	for (uint32_t s = 0; s < used && s < a->nr_slots; s++)
		if (__atomic_load_n(&area_slot(a, s)->head, __ATOMIC_ACQUIRE) != a->tails[s])
			return false;
	return true;
}

/* every area's pidfd that is not known gone yet, 256 to a poll() */
static void poll_gone(struct fastlane *fl)
{
	struct pollfd pfds[256];
	struct area *batch[256], *a = fl->areas;
	size_t n;

	do {
		for (n = 0; a && n < 256; a = a->next) {
			if (a->gone)
				continue;
			pfds[n] = (struct pollfd){ .fd = a->pidfd, .events = POLLIN };
			batch[n++] = a;
		}
		if (n && poll(pfds, n, 0) > 0)
			for (size_t i = 0; i < n; i++)
				if (pfds[i].revents)
					batch[i]->gone = true;
	} while (a);
}

static void reap(struct fastlane *fl)
{
	struct area *a, **pp;

	poll_gone(fl);
	/* gone before its first marker's offer came: what it left, root's only */
	for (a = fl->areas; a; a = a->next)
		if (a->gone && !a->confirmed && !a->read_anyway) {
			a->uid = PM_UID_PRIVILEGED;
			a->read_anyway = true;
		}
	fastlane_pass(fl, 0, false);
	for (pp = &fl->areas; (a = *pp);) {
		/*
		 * What the spill had no room for yet stays for the next
		 * pass; a record its dead process never finished, for good.
		 */
		if (a->corrupt || (a->gone && (drained_all(a) || ++a->gone_passes > FL_GONE_PASSES))) {
			*pp = a->next;
			a->next = fl->dead;
			fl->dead = a;
			fl->stats.areas--;
		} else {
			pp = &a->next;
		}
	}
}

/* the segments of list go back to the spare list (lock held) */
static void recycle(struct fastlane *fl, struct fl_seg *list)
{
	struct fl_seg *next;

	for (; list; list = next) {
		next = list->next;
		for (size_t off = 0; off < list->len;) {
			const struct fl_chunk *ch = (const void *)(list->data + off);
			ch->area->queued--;
			off += sizeof(*ch) + ch->bytes;
		}
		if (list->cap == FL_SEG_CAP && fl->nr_spare < FL_SPARE_SEGS) {
			list->next = fl->spare;
			fl->spare = list;
			fl->nr_spare++;
		} else {
			bigmem_free(list, sizeof(*list) + list->cap);
		}
	}
}

bool fastlane__consume(struct fastlane *fl)
{
	struct area *dead = NULL, *a, **pp, *next;
	struct fl_seg *list = NULL, *last = NULL;
	struct fastlane_counts counts = { 0 };
	size_t taken = 0;
	bool more;

	pthread_mutex_lock(&fl->lock);
	if (fl->woke) {
		uint64_t n;

		(void)!read(fl->wake_fd, &n, sizeof(n));
		fl->woke = false;
	}
	reap(fl);
	/* whole segments from the head, up to FL_CONSUME_MAX (at least one) */
	for (struct fl_seg *sg = fl->head; sg && (!last || taken + sg->len <= FL_CONSUME_MAX);
	     sg = sg->next) {
		taken += sg->len;
		last = sg;
	}
	if (last) {
		list = fl->head;
		fl->head = last->next;
		last->next = NULL;
		if (!fl->head)
			fl->tail = NULL;
		fl->spilled -= taken;
	}
	more = fl->head != NULL;
	if (more)
		wake_drain(fl);         /* the rest at the next drain, after the BPF ring */
	pthread_mutex_unlock(&fl->lock);

	if (list)
		test_hold_wait("fastlane", true);   /* t-daemon-kill-copied.sh: copied, not handed on */
	fastlane_deliver(fl, list, &counts);

	pthread_mutex_lock(&fl->lock);
	fl->stats.clamped += counts.clamped;
	fl->stats.lost += counts.dropped;
	recycle(fl, list);
	/* areas let go whose last chunks are out: freed */
	for (pp = &fl->dead; (a = *pp);) {
		if (a->queued) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		a->next = dead;
		dead = a;
	}
	pthread_mutex_unlock(&fl->lock);
	for (; dead; dead = next) {
		next = dead->next;
		fastlane_area_free(fl, dead);
	}
	return more;
}

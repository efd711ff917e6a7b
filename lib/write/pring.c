// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The persistent ring.  See pring.h for the frame protocol.
 *
 * DESIGN: why a mapped file, and not memfds in systemd's fd store.
 *   - It works the same under systemd and with `perfmarkd --foreground`: the
 *     fd store needs a service manager to hold the fds, a foreground daemon
 *     has none, and a daemon killed outright cannot hand anything over.
 *   - Pages of a MAP_SHARED file mapping belong to the file: the stores a
 *     process made are there after kill -9 without any flush, and a new
 *     binary (upgrade) maps the same bytes.  On tmpfs (/run) nothing is ever
 *     written to disk; elsewhere the kernel writes the pages back lazily.
 *   - A ring of a stopped session, or of a daemon that will not start again,
 *     stays readable from the file alone (the event description is in its
 *     header), as lttng-crash reads a dead session daemon's buffers.
 *   - The whole file is allocated when it is created (fallocate): a full
 *     tmpfs is refused up front instead of a SIGBUS on a later store.
 *   Costs: the ring is charged as shared memory of the file system rather
 *   than as the daemon's heap, and stays until the session is deleted.
 *
 * Torn frames: a frame's pos is stored last (release) and holds ~pos while
 * the frame is written, so a writer killed in the middle leaves a frame
 * that recovery recognises and drops; the single writer means nothing valid
 * can follow it.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "grow.h"
#include "pring-int.h"

static uint64_t round_page(uint64_t v)
{
	return (v + PAGE - 1) & ~(uint64_t)(PAGE - 1);
}

static uint64_t sb_pos(uint64_t gen, uint64_t off)
{
	return gen << 32 | off;
}

static void store_pos(struct frame *f, uint64_t pos)
{
	__atomic_store_n(&f->pos, pos, __ATOMIC_RELEASE);
}

/*
 * Write one frame at f for position pos: busy mark, body (rec NULL: len
 * bytes left as they are, a pad), header, commit.
 */
static void frame_write(struct frame *f, uint64_t pos, uint16_t kind, uint64_t time,
			const void *rec, size_t len)
{
	store_pos(f, ~pos);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (rec && len)
		memcpy(f + 1, rec, len);
	f->size = (uint32_t)(FRAME_HDR + len);
	f->magic = FRAME_MAGIC;
	f->kind = kind;
	f->time = time;
	store_pos(f, pos);
}

enum walk { WK_OK, WK_END, WK_TORN, WK_BAD };

/* Is there a valid frame of `kind` (or a pad) for pos at f, with room rem? */
static enum walk frame_check(const struct frame *f, uint64_t pos, uint64_t rem, bool pad_ok)
{
	uint64_t p = load_pos(f);

	if (p == ~pos)
		return WK_TORN;
	if (p != pos)
		return WK_END;
	if (f->magic != FRAME_MAGIC || f->size < FRAME_HDR || (f->size & 7) || f->size > rem)
		return WK_BAD;
	if (f->kind == FK_PAD && pad_ok)
		return WK_OK;
	return f->kind == (pad_ok ? FK_DATA : FK_SB) ? WK_OK : WK_BAD;
}

/* --- mapping and header ---------------------------------------------------- */

static int map_ring(struct pring *r, uint64_t data_size, uint64_t sb_size, bool anon)
{
	uint64_t total = HDR_SIZE + 2 * sb_size + data_size;
	void *p;

	if (total > SIZE_MAX_RING)
		return -E2BIG;
	p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | (anon ? MAP_ANONYMOUS : 0),
		 anon ? -1 : r->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->base = p;
	r->map_len = total;
	r->h = p;
	r->data_size = data_size;
	r->sb_size = sb_size;
	r->sb[0] = r->base + HDR_SIZE;
	r->sb[1] = r->sb[0] + sb_size;
	r->data = r->sb[1] + sb_size;
	return 0;
}

static void unmap_ring(struct pring *r)
{
	if (r->base)
		munmap(r->base, r->map_len);
	r->base = NULL;
	r->h = NULL;
}

static void init_header(struct pring *r, const void *meta, size_t meta_len)
{
	struct pring_hdr *h = r->h;

	memset(h, 0, HDR_SIZE);
	h->version = PRING_VERSION;
	h->hdr_size = HDR_SIZE;
	h->data_size = r->data_size;
	h->sb_size = r->sb_size;
	h->meta_len = meta_len;
	h->created_ns = clock_ns(CLOCK_REALTIME);
	if (meta_len)
		memcpy(r->base + META_OFF, meta, meta_len);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, PRING_MAGIC, sizeof(h->magic));
}

/* the header of an existing file, if it describes a ring of this file's size */
static bool header_valid(const struct pring_hdr *h, uint64_t file_size)
{
	return !memcmp(h->magic, PRING_MAGIC, sizeof(h->magic)) && h->version == PRING_VERSION &&
	       h->hdr_size == HDR_SIZE && h->meta_len <= PRING_META_MAX &&
	       h->data_size % PAGE == 0 && h->sb_size % PAGE == 0 &&
	       h->data_size <= SIZE_MAX_RING && h->sb_size <= SIZE_MAX_RING &&
	       HDR_SIZE + 2 * h->sb_size + h->data_size == file_size;
}

/* --- recovery --------------------------------------------------------------- */

/* After damage: nothing outside [tail, head) may ever walk again. */
static void clear_outside(struct pring *r)
{
	uint64_t ds = r->data_size, used = r->head - r->tail, a = r->head % ds;
	uint64_t n = ds - used;

	if (a + n <= ds) {
		memset(r->data + a, 0, n);
	} else {
		memset(r->data + a, 0, ds - a);
		memset(r->data, 0, n - (ds - a));
	}
}

static void recover_data(struct pring *r, struct pring_recovery *rec)
{
	uint64_t ds = r->data_size, pos = r->h->tail, end;
	enum walk w = WK_END;

	r->frames = 0;
	if (pos > (1ull << 62) || (pos & 7)) {   /* damaged: no position gets there */
		pos = 0;
		r->h->tail = 0;
	}
	r->tail = pos;
	if (!ds) {
		r->head = r->tail;
		return;
	}
	for (end = pos + ds; pos < end;) {
		uint64_t off = pos % ds, rem = ds - off;
		const struct frame *f = (const void *)(r->data + off);

		if (rem < FRAME_HDR) {       /* too short for a frame: the lap ends */
			pos += rem;
			continue;
		}
		w = frame_check(f, pos, rem, true);
		if (w == WK_TORN) {
			rec->torn++;
			rec->torn_pos = pos;
		}
		if (w == WK_OK && pos + f->size > end)
			w = WK_BAD;
		if (w != WK_OK)
			break;
		if (f->kind == FK_DATA)
			r->frames++;
		pos += f->size;
	}
	r->head = pos;
	r->recovered = pos;
	if (r->h->head > pos && r->h->head - pos <= ds)
		rec->lost_bytes = r->h->head - pos;
	if (w == WK_BAD || rec->lost_bytes)
		clear_outside(r);
	rec->frames = r->frames;
}

static void recover_sb(struct pring *r, struct pring_recovery *rec)
{
	uint32_t half = r->h->sb_active;
	uint64_t off = 0, gen;

	if (half > 1) {              /* damaged: start the sideband afresh */
		half = 0;
		r->h->sb_active = 0;
		r->h->sb_gen[0]++;
	}
	gen = r->h->sb_gen[half];
	r->sb_frames = 0;
	while (off + FRAME_HDR <= r->sb_size) {
		const struct frame *f = (const void *)(r->sb[half] + off);
		enum walk w = frame_check(f, sb_pos(gen, off), r->sb_size - off, false);

		if (w == WK_TORN)
			rec->torn++;
		if (w != WK_OK)
			break;
		r->sb_frames++;
		off += f->size;
	}
	r->sb_len = off;
	rec->sb_frames = r->sb_frames;
}

/* --- open --------------------------------------------------------------------- */

static int move_aside(int dir_fd, const char *name)
{
	char old[512];

	if (snprintf(old, sizeof(old), "%s.old", name) >= (int)sizeof(old))
		return -ENAMETOOLONG;
	return renameat(dir_fd, name, dir_fd, old) ? -errno : 0;
}

/* An existing ring file: 1 taken over, 0 none there (or moved aside), <0 error. */
static int open_existing(struct pring *r, const struct pring_opts *o, uint64_t ds, uint64_t ss,
			 struct pring_recovery *rec)
{
	struct pring_hdr h;
	struct stat sb;
	bool same;
	int e;

	r->fd = openat(o->dir_fd, o->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (r->fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (flock(r->fd, LOCK_EX | LOCK_NB))
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	if (fstat(r->fd, &sb))
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	same = sb.st_size >= (off_t)HDR_SIZE && pread(r->fd, &h, sizeof(h), 0) == sizeof(h) &&
	       header_valid(&h, (uint64_t)sb.st_size);
	if (same && o->meta) {
		uint8_t meta[PRING_META_MAX];
		size_t key = o->meta_key_len ? o->meta_key_len : o->meta_len;

		same = h.data_size == ds && h.sb_size == ss && h.meta_len >= key && key <= o->meta_len &&
		       pread(r->fd, meta, h.meta_len, META_OFF) == (ssize_t)h.meta_len &&
		       !memcmp(meta, o->meta, key);
	}
	if (!same) {
		if (!o->meta)
			return -EINVAL;   /* nothing to start afresh with */
		close(r->fd);
		r->fd = -1;
		e = move_aside(o->dir_fd, o->name);
		if (e)
			return e;
		rec->replaced = true;
		return 0;
	}
	e = map_ring(r, h.data_size, h.sb_size, false);
	if (e)
		return e;
	if (o->meta) {                /* the same encoding: the rest of the description is new */
		memcpy(r->base + META_OFF, o->meta, o->meta_len);
		r->h->meta_len = o->meta_len;
	}
	rec->found = true;
	recover_sb(r, rec);
	recover_data(r, rec);
	r->h->torn += rec->torn;
	pring__sync(r);
	return 1;
}

static int create_file(struct pring *r, const struct pring_opts *o, uint64_t total)
{
	int e;

	r->fd = openat(o->dir_fd, o->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r->fd < 0)
		return -errno;
	if (flock(r->fd, LOCK_EX | LOCK_NB)) {
		e = -errno;
		goto fail;
	}
	/* all pages now: a full tmpfs fails here, never as a SIGBUS later */
	e = fallocate(r->fd, 0, 0, (off_t)total) ? -errno : 0;
	if (e == -EOPNOTSUPP)
		e = ftruncate(r->fd, (off_t)total) ? -errno : 0;
	if (e)
		goto fail;
	return 0;
fail:
	close(r->fd);
	r->fd = -1;
	unlinkat(o->dir_fd, o->name, 0);
	return e;
}

int pring__open(struct pring **out, const struct pring_opts *o, struct pring_recovery *rec)
{
	struct pring_recovery dummy;
	uint64_t ds = round_page(o->data_size), ss = round_page(o->sb_size);
	struct pring *r;
	int e;

	*out = NULL;
	if (!rec)
		rec = &dummy;
	memset(rec, 0, sizeof(*rec));
	if (o->meta_len > PRING_META_MAX || (o->meta_len && !o->meta) ||
	    ds > SIZE_MAX_RING || ss > SIZE_MAX_RING)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	if (o->name && getenv("PERFMARK_TEST_TEAR_AT"))
		r->tear_at = strtoull(getenv("PERFMARK_TEST_TEAR_AT"), NULL, 10);
	if (o->name) {
		e = open_existing(r, o, ds, ss, rec);
		if (e < 0)
			goto fail;
		if (e == 1) {
			*out = r;
			return 0;
		}
		if (!o->meta) {
			e = -ENOENT;
			goto fail;
		}
		e = create_file(r, o, HDR_SIZE + 2 * ss + ds);
		if (e)
			goto fail;
	}
	e = map_ring(r, ds, ss, !o->name);
	if (e)
		goto fail;
	init_header(r, o->meta, o->meta_len);
	*out = r;
	return 0;
fail:
	pring__free(r);
	return e;
}

void pring__free(struct pring *r)
{
	if (!r)
		return;
	if (r->h)
		pring__sync(r);
	unmap_ring(r);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

int pring__unlink(int dir_fd, const char *name)
{
	char old[512];
	int e = 0;

	if (unlinkat(dir_fd, name, 0) && errno != ENOENT)
		e = -errno;
	if (snprintf(old, sizeof(old), "%s.old", name) < (int)sizeof(old))
		unlinkat(dir_fd, old, 0);
	return e;
}

/* --- data ------------------------------------------------------------------- */

/* Drop the oldest frames until [.., end) fits; the tail is stored first. */
static void evict(struct pring *r, uint64_t end)
{
	uint64_t ds = r->data_size, n = 0;

	while (end - r->tail > ds && r->tail < r->head) {
		uint64_t off = r->tail % ds, rem = ds - off;
		const struct frame *f = (const void *)(r->data + off);

		if (rem < FRAME_HDR) {
			r->tail += rem;
			continue;
		}
		if (frame_check(f, r->tail, rem, true) != WK_OK) {
			r->tail = r->head;     /* cannot happen to frames we wrote: start clean */
			r->frames = 0;
			break;
		}
		if (r->views)           /* before the tail passes it: a view reading it keeps it */
			pring_view_keep(r, r->tail, f);
		if (f->kind == FK_DATA) {
			r->frames--;
			n++;
		}
		r->tail += f->size;
	}
	if (r->tail == r->head && end - r->tail > ds)
		r->tail = end - ds;
	r->h->evicted += n;
	if (__atomic_load_n(&r->h->tail, __ATOMIC_RELAXED) != r->tail) {
		/*
		 * the new tail is seen before any byte it freed is overwritten:
		 * a view reading in another thread checks it after each copy
		 * (pring_view.c; the fence is a seqlock's, as DPDK's rte_seqlock)
		 */
		__atomic_store_n(&r->h->tail, r->tail, __ATOMIC_RELEASE);   /* after the kept copies */
		__atomic_thread_fence(__ATOMIC_RELEASE);                    /* before the overwrite */
	}
}

/*
 * A test of what a crash leaves: with PERFMARK_TEST_TEAR_AT=N in the
 * environment of the process that opens a ring file, that process kills
 * itself with SIGKILL in the middle of writing its Nth data frame.
 */
static void tear_here(struct pring *r, uint64_t pos, const void *rec, size_t len)
{
	struct frame *f = (struct frame *)(r->data + pos % r->data_size);

	store_pos(f, ~pos);
	memcpy(f + 1, rec, len / 2);
	raise(SIGKILL);
}

int pring__append(struct pring *r, uint64_t time, const void *rec, size_t len)
{
	uint64_t ds = r->data_size, need = FRAME_HDR + len, off, pad;

	if (len & 7)
		return -EINVAL;
	if (!ds || need > ds / 4)
		return -E2BIG;
	off = r->head % ds;
	pad = off + need > ds ? ds - off : 0;
	evict(r, r->head + pad + need);
	if (pad >= FRAME_HDR)
		frame_write((struct frame *)(r->data + off), r->head, FK_PAD, 0, NULL, pad - FRAME_HDR);
	r->head += pad;
	if (r->tear_at && ++r->appended == r->tear_at)
		tear_here(r, r->head, rec, len);
	frame_write((struct frame *)(r->data + r->head % ds), r->head, FK_DATA, time, rec, len);
	r->head += need;
	r->frames++;
	return 0;
}

uint64_t pring__oldest(const struct pring *r)
{
	uint64_t ds = r->data_size, pos = r->tail;

	while (ds && pos < r->head) {
		uint64_t off = pos % ds, rem = ds - off;
		const struct frame *f = (const void *)(r->data + off);

		if (rem < FRAME_HDR) {
			pos += rem;
			continue;
		}
		if (f->kind == FK_DATA)
			return f->time;
		pos += f->size;
	}
	return UINT64_MAX;
}

void pring__sync(struct pring *r)
{
	__atomic_store_n(&r->h->head, r->head, __ATOMIC_RELEASE);
	r->h->sb_len[r->h->sb_active & 1] = r->sb_len;
}

/* --- sideband ---------------------------------------------------------------- */

int pring__sb_append(struct pring *r, uint64_t time, const void *rec, size_t len)
{
	uint32_t half = r->h->sb_active;
	uint64_t need = FRAME_HDR + len;

	if (len & 7)
		return -EINVAL;
	if (r->sb_len + need > r->sb_size)
		return -ENOSPC;
	frame_write((struct frame *)(r->sb[half] + r->sb_len), sb_pos(r->h->sb_gen[half], r->sb_len),
		    FK_SB, time, rec, len);
	r->sb_len += need;
	r->sb_frames++;
	return 0;
}

int pring__sb_compact(struct pring *r, pring_keep_cb keep, void *ctx)
{
	uint32_t from = r->h->sb_active, to = !from;
	uint64_t gen = r->h->sb_gen[from] + 1, off = 0, out = 0, n = 0;

	while (off < r->sb_len) {
		const struct frame *f = (const void *)(r->sb[from] + off);
		size_t len = f->size - FRAME_HDR;

		if (keep(ctx, f->time, f + 1, len)) {
			frame_write((struct frame *)(r->sb[to] + out), sb_pos(gen, out), FK_SB, f->time,
				    f + 1, len);
			out += f->size;
			n++;
		}
		off += f->size;
	}
	/* the new half's generation, then the switch: a crash in between keeps the old half */
	__atomic_store_n(&r->h->sb_gen[to], gen, __ATOMIC_RELEASE);
	r->h->sb_len[to] = out;
	__atomic_store_n(&r->h->sb_active, to, __ATOMIC_RELEASE);
	r->sb_len = out;
	r->sb_frames = n;
	return 0;
}

/* --- reading ------------------------------------------------------------------ */

int pring__foreach(const struct pring *r, bool sideband, pring_cb cb, void *ctx)
{
	uint64_t ds = r->data_size, pos;
	int e;

	if (sideband) {
		const uint8_t *half = r->sb[r->h->sb_active & 1];

		for (pos = 0; pos < r->sb_len;) {
			const struct frame *f = (const void *)(half + pos);

			e = cb(ctx, f->time, f + 1, f->size - FRAME_HDR);
			if (e)
				return e;
			pos += f->size;
		}
		return 0;
	}
	for (pos = r->tail; ds && pos < r->head;) {
		uint64_t off = pos % ds, rem = ds - off;
		const struct frame *f = (const void *)(r->data + off);

		if (rem < FRAME_HDR) {
			pos += rem;
			continue;
		}
		if (f->kind == FK_DATA) {
			e = cb(ctx, f->time, f + 1, f->size - FRAME_HDR);
			if (e)
				return e;
		}
		pos += f->size;
	}
	return 0;
}

/* the data frames in [from, to) still held, the first skip of them passed over */
static int walk_data(const struct pring *r, uint64_t from, uint64_t to, uint64_t skip,
		     uint64_t *seen, pring_cb cb, void *ctx)
{
	uint64_t ds = r->data_size, pos;
	int e;

	*seen = 0;
	for (pos = from < r->tail ? r->tail : from; ds && pos < to && pos < r->head;) {
		uint64_t off = pos % ds, rem = ds - off;
		const struct frame *f = (const void *)(r->data + off);

		if (rem < FRAME_HDR) {
			pos += rem;
			continue;
		}
		if (f->kind == FK_DATA && (*seen)++ >= skip && cb) {
			e = cb(ctx, f->time, f + 1, f->size - FRAME_HDR);
			if (e)
				return e;
		}
		pos += f->size;
	}
	return 0;
}

int pring__recovered_last(const struct pring *r, uint64_t max_frames, pring_cb cb, void *ctx)
{
	uint64_t n;

	walk_data(r, 0, r->recovered, 0, &n, NULL, NULL);
	return walk_data(r, 0, r->recovered, n > max_frames ? n - max_frames : 0, &n, cb, ctx);
}

const void *pring__meta(const struct pring *r, size_t *len)
{
	*len = r->h->meta_len;
	return r->base + META_OFF;
}

void pring__stats(const struct pring *r, struct pring_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->used = r->head - r->tail;
	st->capacity = r->data_size;
	st->frames = r->frames;
	st->evicted = r->h->evicted;
	st->sb_used = r->sb_len;
	st->sb_capacity = r->sb_size;
	st->torn = r->h->torn;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: the fast lane's reader (lib/collect/fastlane*.c) on
 * rings a traced process wrote however it liked (issue 18).  The target
 * plays that process itself: each input makes an area (a sealed memfd, as
 * libperfmark does), writes it, registers it with a real fastlane (which
 * maps it through /proc/self/map_files and joins it) and lets it read, by
 * a program of operations:
 *
 *   byte 0         slots (bits 0-1: 1, 2, 3 or 32), our consumer word (bits 2-3, % 3),
 *                  backlog (bit 4: an earlier holder of the word "left"
 *                  tails, so the join reads from them)
 *   then ops       0 PATCH  u16 off/2, u8 len, bytes   raw bytes, anywhere
 *                  1 RECORD u8 slot, u64 time, u16 size, u8 how
 *                           a record at the slot's head by the protocol
 *                           (a filler first at the ring's end), then how
 *                           spoils it: bad length, bad tag, flags...
 *                  2 HEAD   u8 slot, u64 value       the head as given (top bit:
 *                                                    ring_size - 8 + low 32 signed)
 *                  3 TAIL   u8 slot, u64 value       the tail word (backlog), the same
 *                  4 READ                            register if not yet, consume
 *                  5 HDR    u8 field, u32 value      joined, readers, slots_used...
 *
 * The area is placed so that the fastlane's mapping of it ends at an
 * inaccessible page (see guard()): a read past it faults.  Whatever the
 * input, delivered markers are well formed, of this process, and carry a
 * time within what the reader saw (from before the area was offered to
 * the end of the read).  Each run ends with the area let go and freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-check.h"
#include "fastlane.h"
#include "fastlane_int.h"

#define RING   PM_FL_MIN_RING

static struct fastlane *fl;
static uint64_t lo_time, nonce = 0x5eed;
static size_t delivered;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_marker(void *ctx, const void *rec, size_t size)
{
	const struct pm_marker *m = rec;
	uint64_t now = mono_ns();

	(void)ctx;
	CHECK(size >= sizeof(*m) && size == sizeof(*m) + m->size, "record of %zu bytes, size %u", size,
	      size >= sizeof(*m) ? m->size : 0);
	CHECK(m->rec_type == PM_REC_MARKER && m->pid == (uint32_t)getpid(), "not our marker");
	CHECK(m->size <= PM_FL_MAX_PAYLOAD, "payload of %u", m->size);
	CHECK(!(m->flags & ~(PM_F_TRUNCATED | PM_F_FAULT)), "flags %#x", m->flags);
	CHECK(m->time >= lo_time && m->time <= now, "time %llu outside [%llu, %llu]",
	      (unsigned long long)m->time, (unsigned long long)lo_time, (unsigned long long)now);
	CHECK(!(m->ext & ~(PM_X_CLAMPED | PM_X_REDELIVERED)), "ext %#x", m->ext);
	/* every byte of the payload is readable (ASan: within the record) */
	for (uint32_t i = 0; i < m->size; i++)
		__asm__ volatile("" : : "r"(m->data[i]));
	delivered++;
}

static void init(void)
{
	CHECK(fastlane__new(&fl, 0, on_marker, NULL) == 0, "fastlane__new");
}

struct farea {
	struct pm_fl_hdr *h;
	uint64_t size;
	uint32_t ns;
	int fd;
};

static struct pm_fl_slot *slot(const struct farea *a, uint32_t s)
{
	return (struct pm_fl_slot *)(void *)((char *)a->h + PM_FL_HDR_SIZE +
					     (size_t)(s % a->ns) * (PM_FL_CTL_SIZE + RING));
}

/*
 * The kernel puts a new mapping at the top of the highest gap that fits:
 * free one just below an inaccessible page, so the fastlane's mapping of
 * the area ends where that page starts.
 */
static void *guard(uint64_t size)
{
	char *r = mmap(NULL, size + 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(r != MAP_FAILED, "mmap");
	munmap(r, size);
	return r + size;
}

static void make_area(struct farea *a, uint32_t ns)
{
	a->ns = ns;
	/* whole pages, ending where the last ring does */
	a->size = PM_FL_HDR_SIZE + (uint64_t)ns * (PM_FL_CTL_SIZE + RING);
	a->fd = memfd_create("perfmark", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(a->fd >= 0 && !ftruncate(a->fd, (off_t)((a->size + 4095) & ~4095ull)), "memfd");
	a->size = (a->size + 4095) & ~4095ull;
	CHECK(!fcntl(a->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), "seals");
	a->h = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	CHECK(a->h != MAP_FAILED, "mmap");
	a->h->version = PM_FL_VERSION;
	a->h->hdr_size = PM_FL_HDR_SIZE;
	a->h->nr_slots = ns;
	a->h->slot_size = PM_FL_CTL_SIZE + RING;
	a->h->ring_size = RING;
	a->h->pid = (uint32_t)getpid();
	a->h->nonce = ++nonce;
	a->h->slots_used = ns;
	a->h->magic = PM_FL_MAGIC;
}

/* offered once guard() made room for the fastlane's mapping */
static void offer(const struct farea *a, int site)
{
	struct pm_fastreg r = {
		.rec_type = PM_REC_FASTREG, .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
		.time = mono_ns(), .uid = (uint32_t)getuid(), .site = (uint16_t)site, .wanted = 1,
		.reg = { .kind = PM_FL_REG_AREA, .version = PM_FL_VERSION,
			 .area = (uint64_t)(uintptr_t)a->h, .size = a->size, .nonce = a->h->nonce,
			 .local_pid = (uint32_t)getpid(), .local_tid = (uint32_t)getpid() },
	};

	fastlane__register(fl, &r, sizeof(r));
}

/* a record at slot s's head, by the protocol; how spoils it */
static void record(const struct farea *a, uint32_t s, uint64_t time, uint16_t size, uint8_t how)
{
	struct pm_fl_slot *sl = slot(a, s);
	char *ring = (char *)sl + PM_FL_CTL_SIZE;
	uint32_t n = size % (PM_FL_MAX_PAYLOAD + 64), rlen = pm_fl_rec_bytes(n > PM_FL_MAX_PAYLOAD ? 0 : n);
	uint64_t pos = sl->head & ~7ull, off = pos & (RING - 1);
	struct pm_fl_rec *r;
	uint32_t len = rlen, tag;

	if (off + rlen > RING) {
		*(uint64_t *)(void *)(ring + off) = (uint64_t)pm_fl_tag(pos) << 32 | PM_FL_F_PAD |
						     (uint32_t)(RING - off);
		pos += RING - off;
		off = 0;
	}
	r = (struct pm_fl_rec *)(void *)(ring + off);
	r->time = time;
	r->ip = 0x401000;
	r->type = 65536;
	r->tid = (uint32_t)getpid();
	r->cpu = how >> 4;
	r->size = (uint16_t)n;        /* > PM_FL_MAX_PAYLOAD: a lie */
	r->orig_size = n;
	memset(r->data, 0xa5, rlen - sizeof(*r));
	tag = pm_fl_tag(pos);
	switch (how & 15) {
	case 1: len += 8 * (how >> 4); break;           /* longer than written */
	case 2: len = (how >> 4) * 8; break;            /* shorter */
	case 3: len |= PM_FL_F_TRUNCATED; break;
	case 4: len |= PM_FL_F_FAULT; break;
	case 5: len |= PM_FL_F_PAD; break;              /* a filler that is not at the end */
	case 6: tag ^= 1; break;                        /* never complete */
	case 7: len += 4; break;                        /* not a multiple of 8 */
	case 8: r->size = (uint16_t)(rlen - sizeof(*r) + 8); break;
	}
	*(uint64_t *)(void *)r = (uint64_t)tag << 32 | len;
	sl->head = pos + rlen;
}

static void hdr_field(struct pm_fl_hdr *h, uint8_t f, uint32_t v)
{
	switch (f % 8) {
	case 0: h->joined = v; break;
	case 1: h->readers = v; break;
	case 2: h->slots_used = v; break;
	case 3: h->consumer[v % PM_FL_MAX_CONSUMERS].token = v; break;
	case 4: h->nr_slots = v; break;
	case 5: h->ring_size = v; break;
	case 6: h->magic = v; break;
	case 7: h->consumer[v % PM_FL_MAX_CONSUMERS].heartbeat_ns = v; break;
	}
}

static void read_all(void)
{
	for (int i = 0; i < 4 && fastlane__consume(fl); i++)
		;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const unsigned char *p = data, *end = data + size;
	struct farea a;
	bool offered = false;
	void *g = NULL;
	int site;

	if (!fl)
		init();
	if (size < 1)
		return 0;
	/* before the memfd is made: its birth, on a coarse clock, is a backlog's floor */
	lo_time = mono_ns() - 20 * 1000 * 1000;
	/* 32 slots: the last ring ends where the area's pages do (a read past it faults) */
	make_area(&a, (p[0] & 3) == 3 ? 32 : 1 + (p[0] & 3));
	site = ((p[0] >> 2) & 3) % 3;
	if (p[0] & 16) {
		a.h->consumer[site].token = 0x1234;     /* an earlier holder, gone */
		a.h->readers |= 1u << site;
	}
	p++;
	delivered = 0;
	/* the pump does not pass while we write (a real producer races it: see stream_next) */
	while (p < end) {
		uint8_t op = *p++ % 6;

		pthread_mutex_lock(&fl->lock);
		if (op == 0 && end - p >= 3) {
			uint32_t off = (uint32_t)(p[0] | p[1] << 8) * 2 % a.size, len = p[2];

			p += 3;
			if (len > end - p)
				len = (uint32_t)(end - p);
			if (len > a.size - off)
				len = (uint32_t)(a.size - off);
			memcpy((char *)a.h + off, p, len);
			p += len;
		} else if (op == 1 && end - p >= 12) {
			uint64_t t;

			memcpy(&t, p + 1, 8);
			/* small values: near now (either way), else as given */
			if (t >> 40 == 0)
				t = mono_ns() + (int64_t)(int32_t)t * 1000;
			record(&a, p[0], t, (uint16_t)(p[9] | p[10] << 8), p[11]);
			p += 12;
		} else if ((op == 2 || op == 3) && end - p >= 9) {
			uint64_t v;

			memcpy(&v, p + 1, 8);
			if (v >> 63)            /* relative to the ring's end */
				v = RING - 8 + (int64_t)(int32_t)v;
			if (op == 2)
				slot(&a, p[0])->head = v;
			else
				slot(&a, p[0])->tail[site] = v;
			p += 9;
		} else if (op == 5 && end - p >= 5) {
			uint32_t v;

			memcpy(&v, p + 1, 4);
			hdr_field(a.h, p[0], v);
			p += 5;
		} else if (op != 4) {
			p = end;
		}
		pthread_mutex_unlock(&fl->lock);
		if (op == 4 || p == end) {
			if (!offered) {
				g = guard(a.size);
				offer(&a, site);
			}
			offered = true;
			read_all();
		}
	}
	/* the process "exits": its area is read to the end, let go and freed */
	fastlane__exec(fl, (uint32_t)getpid(), mono_ns() + 1);
	for (int i = 0; i < FL_GONE_PASSES + 4; i++)
		fastlane__consume(fl);
	{
		struct fastlane_stats st;

		fastlane__stats(fl, &st);
		CHECK(st.areas == 0, "the area was not let go");
		if (getenv("FUZZ_FASTLANE_VERBOSE"))
			fprintf(stderr, "delivered %zu; so far %llu markers, %llu refused, %llu corrupt, "
				"%llu clamped, %llu lost\n", delivered, (unsigned long long)st.markers,
				(unsigned long long)st.refused, (unsigned long long)st.corrupt,
				(unsigned long long)st.clamped, (unsigned long long)st.lost);
	}
	if (g)
		munmap(g, 4096);
	munmap(a.h, a.size);
	close(a.fd);
	return 0;
}

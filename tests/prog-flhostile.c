// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * prog-flhostile MODE ...: a traced process that writes its fast-lane rings
 * itself, as a hostile one can (issue 18), for tests/t-hostile-fastlane.sh.
 * Linked with libperfmark.a: it offers an area of its own making through
 * the library's register sled (perfmark__register), waits for the recorder
 * to join, then writes records by the wire format (lib/perfmark/
 * fastlane_wire.h) with whatever times and positions it likes.
 *
 *   flood N SIZE   N markers of SIZE payload bytes (N a multiple of 2000):
 *                  1000 stamped 0 (T_ZERO) and 1000 stamped 10 s before the
 *                  area was offered (T_PAST) spread among them, the rest
 *                  (T_FUTURE) now + 10^15 ns, 1000 at a time with a
 *                  10 ms pause (so the recorder keeps up).  Meanwhile a child (fork) emits
 *                  honest markers through the library, one every 200 us,
 *                  type T_HONEST with a sequence number, until the flood is
 *                  written and 200 ms more.
 *   straddle       an area whose slot heads are set before the recorder
 *                  joins: slot 0's 4 bytes before its ring's end, with a
 *                  4-byte filler there whose tag is the next slot's head
 *                  word, then a marker (T_STRADDLE) at the ring's start;
 *                  the last slot's head 4 bytes before the area's end.
 *                  Then 100 honest markers (T_HONEST) through the library.
 *
 * Prints "pid P" first; "honest pid P t0 NS t1 NS count N" (CLOCK_MONOTONIC)
 * for the honest markers; "written N" for the records it wrote itself, and
 * for flood "span T0 T1": from before the fork to when the recorder had read
 * every record and the child had exited.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "perfmark.h"

#define T_FUTURE   (PERFMARK_TYPE_APP_FIRST + 400)
#define T_ZERO     (T_FUTURE + 1)
#define T_PAST     (T_FUTURE + 2)
#define T_STRADDLE (T_FUTURE + 3)
#define T_HONEST   (T_FUTURE + 4)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

struct area {
	struct pm_fl_hdr *h;
	uint64_t size;
	uint32_t rs, ns;
};

static struct pm_fl_slot *slot(const struct area *a, uint32_t s)
{
	return (struct pm_fl_slot *)(void *)((char *)a->h + PM_FL_HDR_SIZE +
					     (size_t)s * (PM_FL_CTL_SIZE + a->rs));
}

static char *ring(const struct area *a, uint32_t s)
{
	return (char *)slot(a, s) + PM_FL_CTL_SIZE;
}

/* an area as libperfmark makes one: a sealed memfd, mapped shared */
static void make_area(struct area *a, uint32_t ns, uint32_t rs)
{
	int fd = memfd_create("perfmark", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	a->rs = rs;
	a->ns = ns;
	a->size = PM_FL_HDR_SIZE + (uint64_t)ns * (PM_FL_CTL_SIZE + rs);
	a->size = (a->size + 4095) & ~4095ull;   /* whole pages; the last slot ends before */
	if (fd < 0 || ftruncate(fd, (off_t)a->size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		fail("memfd");
	a->h = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a->h == MAP_FAILED)
		fail("mmap");
	close(fd);
	a->h->version = PM_FL_VERSION;
	a->h->hdr_size = PM_FL_HDR_SIZE;
	a->h->nr_slots = ns;
	a->h->slot_size = PM_FL_CTL_SIZE + rs;
	a->h->ring_size = rs;
	a->h->pid = (uint32_t)getpid();
	a->h->nonce = mono_ns() * 0x9e3779b97f4a7c15ull | 1;
	for (uint32_t s = 0; s < ns; s++) {
		slot(a, s)->state = PM_FL_SLOT_OWNED;
		slot(a, s)->tid = (uint32_t)gettid();
	}
	a->h->slots_used = ns;
	__atomic_store_n(&a->h->magic, PM_FL_MAGIC, __ATOMIC_RELEASE);
}

/* offer it through the sled until every recorder site holder has joined and reads */
static void offer(struct area *a)
{
	struct pm_fl_reg r = {
		.kind = PM_FL_REG_AREA, .version = PM_FL_VERSION,
		.area = (uint64_t)(uintptr_t)a->h, .size = a->size, .nonce = a->h->nonce,
		.local_pid = (uint32_t)getpid(), .local_tid = (uint32_t)gettid(),
	};

	for (int i = 0; i < 500; i++) {
		uint32_t sites = PM_SEMA_SITES(perfmark__semas[0]);
		uint32_t joined = __atomic_load_n(&a->h->joined, __ATOMIC_ACQUIRE);

		if (sites && (joined & sites) == sites && __atomic_load_n(&a->h->readers, __ATOMIC_ACQUIRE))
			return;
		if (sites)
			perfmark__register(&r);
		nap_us(20000);
	}
	fprintf(stderr, "no recorder joined the area\n");
	exit(1);
}

/* the smallest tail of the readers in slot s */
static uint64_t min_tail(const struct area *a, uint32_t s)
{
	uint32_t readers = __atomic_load_n(&a->h->readers, __ATOMIC_ACQUIRE);
	uint64_t min = UINT64_MAX;

	for (int c = 0; c < PM_FL_MAX_CONSUMERS; c++) {
		uint64_t t = __atomic_load_n(&slot(a, s)->tail[c], __ATOMIC_ACQUIRE);

		if ((readers & (1u << c)) && t < min)
			min = t;
	}
	return min;
}

/* wait until the readers have made room up to position need (10 s at most) */
static void room(const struct area *a, uint32_t s, uint64_t need)
{
	for (long i = 0; need > min_tail(a, s) + a->rs; i++) {
		if (i > 200000) {
			fprintf(stderr, "the recorder stopped reading\n");
			exit(1);
		}
		nap_us(50);
	}
}

/* one record into slot s, by the protocol, at the time given */
static void put(const struct area *a, uint32_t s, uint64_t time, uint32_t type, const void *data,
		uint16_t size)
{
	struct pm_fl_slot *sl = slot(a, s);
	uint32_t rlen = pm_fl_rec_bytes(size);
	uint64_t pos = sl->head, off = pos & (a->rs - 1);
	struct pm_fl_rec *r;

	if (off + rlen > a->rs) {
		room(a, s, pos + (a->rs - off) + rlen);
		__atomic_store_n((uint64_t *)(void *)(ring(a, s) + off),
				 (uint64_t)pm_fl_tag(pos) << 32 | PM_FL_F_PAD | (uint32_t)(a->rs - off),
				 __ATOMIC_RELEASE);
		pos += a->rs - off;
		off = 0;
	}
	room(a, s, pos + rlen);
	r = (struct pm_fl_rec *)(void *)(ring(a, s) + off);
	r->time = time;
	r->ip = (uint64_t)(uintptr_t)put;
	r->type = type;
	r->tid = (uint32_t)gettid();
	r->cpu = 0;
	r->size = size;
	r->orig_size = size;
	memcpy(r->data, data, size);
	__atomic_store_n((uint64_t *)(void *)r, (uint64_t)pm_fl_tag(pos) << 32 | rlen, __ATOMIC_RELEASE);
	__atomic_store_n(&sl->head, pos + rlen, __ATOMIC_RELEASE);
}

/* honest markers through the library: one every gap_us until *stop (or n of them) */
static void honest(volatile int *stop, long n, long gap_us)
{
	uint64_t t0 = mono_ns(), seq = 0;

	while (stop ? !*stop : (long)seq < n) {
		perfmark_emit(T_HONEST, &seq, sizeof(seq));
		seq++;
		if (gap_us)
			nap_us(gap_us);
	}
	printf("honest pid %d t0 %llu t1 %llu count %llu\n", (int)getpid(), (unsigned long long)t0,
	       (unsigned long long)mono_ns(), (unsigned long long)seq);
}

static int mode_flood(long n, uint16_t size)
{
	volatile int *stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned char payload[PM_FL_MAX_PAYLOAD];
	struct area a;
	uint64_t t_offer, t0, t1;
	long written = 0;
	pid_t child;
	int st;

	if (stop == MAP_FAILED)
		fail("mmap");
	t0 = mono_ns();
	child = fork();
	if (child < 0)
		fail("fork");
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		honest(stop, 0, 200);
		fflush(stdout);
		_exit(0);
	}
	memset(payload, 0x5a, sizeof(payload));
	make_area(&a, 1, 1u << 20);
	t_offer = mono_ns();
	offer(&a);
	/* every k-th record is from the past: 0, or 10 s before the offer, in turn */
	for (long i = 0, k = n / 2000 > 0 ? n / 2000 : 1, past = 0; i < n; i++) {
		uint64_t t = mono_ns() + 1000000000000000ull;
		uint32_t type = T_FUTURE;

		if (i % k == 0 && past < 2000) {
			type = past++ & 1 ? T_PAST : T_ZERO;
			t = type == T_ZERO ? 0 : t_offer - 10000000000ull;
		}
		memcpy(payload, &i, sizeof(i));
		put(&a, 0, t, type, payload, size);
		written++;
		if (i % 1000 == 999)
			nap_us(10000);  /* a rate a recorder keeps up with: what grows is not its backlog */
	}
	/* every record read: whatever time the recorder gives one, it is before t1 */
	room(&a, 0, slot(&a, 0)->head + a.rs);
	*stop = 1;
	waitpid(child, &st, 0);
	t1 = mono_ns();
	printf("written %ld span %llu %llu\n", written, (unsigned long long)t0, (unsigned long long)t1);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}

static int mode_straddle(void)
{
	const uint32_t rs = PM_FL_MIN_RING, last = 31;
	uint64_t seq = 7;
	struct area a;

	make_area(&a, last + 1, rs);    /* 32 slots: the last one ends where the area does */
	if ((char *)ring(&a, last) + rs != (char *)a.h + a.size)
		fail("layout");
	/*
	 * Before the recorder joins (it starts reading at the heads): slot 0
	 * at 4 bytes before its ring's end, the filler's tag half there being
	 * slot 1's head word; the last slot 4 bytes before the area's end.
	 */
	slot(&a, 0)->head = rs - 4;
	slot(&a, 1)->head = pm_fl_tag(rs - 4);
	slot(&a, last)->head = rs - 4;
	offer(&a);
	/* a 4-byte filler up to the end, then a marker at the start */
	__atomic_store_n((uint32_t *)(void *)(ring(&a, 0) + rs - 4), PM_FL_F_PAD | 4u, __ATOMIC_RELEASE);
	{
		struct pm_fl_rec *r = (struct pm_fl_rec *)(void *)ring(&a, 0);
		uint32_t rlen = pm_fl_rec_bytes(sizeof(seq));

		r->time = mono_ns();
		r->ip = (uint64_t)(uintptr_t)mode_straddle;
		r->type = T_STRADDLE;
		r->tid = (uint32_t)gettid();
		r->size = sizeof(seq);
		r->orig_size = sizeof(seq);
		memcpy(r->data, &seq, sizeof(seq));
		__atomic_store_n((uint64_t *)(void *)r, (uint64_t)pm_fl_tag(rs) << 32 | rlen,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&slot(&a, 0)->head, rs + rlen, __ATOMIC_RELEASE);
	}
	*(volatile uint32_t *)(void *)(ring(&a, last) + rs - 4) = PM_FL_F_PAD | 4u;
	__atomic_store_n(&slot(&a, last)->head, rs + 64, __ATOMIC_RELEASE);
	printf("written 1\n");
	/* the recorder reads on (or gives the area up); the library's own lane still works */
	nap_us(300000);
	honest(NULL, 100, 1000);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", (int)getpid());
	if (argc == 4 && !strcmp(argv[1], "flood"))
		return mode_flood(atol(argv[2]), (uint16_t)atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "straddle"))
		return mode_straddle();
	fprintf(stderr, "usage: prog-flhostile flood N SIZE | straddle\n");
	return 2;
}

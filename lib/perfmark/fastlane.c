/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fast lane, producer side: a traced marker is written into this
 * thread's ring in shared memory, with no trap and no system call.
 *
 * Why this design (measured on the 2-vCPU VM of this project, bench/):
 *  - A uprobe hit costs ~0.5-1 us whatever the BPF program does; a system
 *    call ~75 ns; a vDSO clock read ~16 ns; an uncontended CAS ~10 ns.  Only
 *    plain memory writes reach the targets (a marker for a tenth of a
 *    write() to trace_marker), so the marker must not leave user space.
 *  - The rings live in a sealed memfd (F_SEAL_SHRINK|F_SEAL_GROW) that the
 *    process maps MAP_SHARED and the recorder maps too, found through
 *    /proc/PID/map_files after one registration probe hit.  Unlike rings
 *    in private memory read with process_vm_readv (which cost a system call
 *    per read and vanish with the process), the pages outlive the process:
 *    markers written just before exit() or exec() are still read.  Unlike a
 *    BPF user ring buffer or arena map, nothing needs a map fd handed to the
 *    process (no daemon socket in the in-process recorder, no bpffs pin a
 *    traced user could reach), and many producers and recorders can share.
 *  - One area per process, one ring ("slot") per thread: threads do not
 *    contend, and a thread's markers stay in order in one place.  Space is
 *    reserved with a compare-and-swap, so a signal handler that interrupts
 *    a marker, raw clone() threads and vfork() children (which share the
 *    thread's TLS) never corrupt a ring.  Records become visible whole (the
 *    tag protocol in fastlane_wire.h).
 *  - fork() and clone() without CLONE_VM: the area is MADV_DONTFORK, and the
 *    page that says where it is is MADV_WIPEONFORK, so a child starts with
 *    no area and registers its own on its first marker: no atfork handler
 *    is needed, and a child never writes into its parent's rings.
 *  - The area is made and offered as the library loads when a recorder
 *    listens already (its site's semaphore is raised by then), else at
 *    the first traced marker: a recorder joins while the process starts,
 *    not while its first markers pay for the trap.
 *  - Until every recorder has joined the area (each holds one register
 *    site, perfmark.c, and sets that site's bit in hdr->joined), and
 *    whenever a ring is full, markers take the trap lane: a uprobe whose
 *    BPF program copies them into each recorder's own ring, where a drop
 *    is counted.  So the first markers of a process are not lost while the
 *    recorders attach, no recorder misses what a ring takes, and a full
 *    ring slows the program down instead of losing its markers.  So do
 *    markers written while a reader is silent (reader_silent: a dead
 *    perfmarkd), into the pinned ring that outlives it.
 *  - Payloads from the application are copied only where the copy cannot
 *    fault: the caller's stack, the executable's segments, a hardware
 *    transaction (RTM, where the CPU has it), else process_vm_readv() on
 *    ourselves, which reports an unmapped buffer as the BPF side always
 *    did: a record flagged "fault", without data.
 */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <immintrin.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"

#define DEFAULT_SLOTS       64
#define DEFAULT_RING_KIB    1024
#define REGISTER_RETRY_NS   (100ull * 1000 * 1000)     /* first retry, doubling */
#define REGISTER_RETRY_MAX  (5ull * 1000 * 1000 * 1000)
#define SILENT_READER_NS    (100ull * 1000 * 1000)    /* a reader's pump passes every <= 2 ms */
#define SILENT_CHECK_NS     (1000ull * 1000)          /* how often a thread looks */
#define STACK_MAX           (8ul << 20)
#define MAX_SEGS            8
#define KEY_SLOT_BITS       16

/*
 * The process's state, in a page of its own that fork() hands to a child
 * zeroed (MADV_WIPEONFORK): area NULL means "no area in this process yet".
 */
struct pm_proc {
	struct pm_fl_hdr *area;         /* published last, with release */
	uint64_t gen;                   /* nonzero: thread keys carry it */
	char *slots;                    /* area + hdr_size */
	uint64_t size;
	uint32_t slot_size, ring_size, nr_slots;
	uint32_t pid;                   /* getpid() when the area was made */
	uint64_t nonce;
	uint32_t sites_seen;            /* register sites taken at the last offer */
	uint32_t busy;                  /* a thread is making or confirming the area */
	uint32_t confirmed;             /* offered at or after a marker (not only at load) */
	uint64_t reg_ns, reg_wait_ns;   /* last registration, wait before the next */
	uint64_t failed_ns;             /* the area could not be made (retry later) */
	uint32_t hint;                  /* where to look for a free slot */
};

static struct pm_proc *proc;

/*
 * key: gen << 16 | slot; tid: gettid() cached at the claim; silent: a
 * reader was silent when this thread last looked, at checked_ns
 */
static __thread struct {
	uint64_t key;
	uint64_t checked_ns;
	uint32_t tid;
	bool silent;
} tls __attribute__((tls_model("initial-exec")));

/* fixed by pm_fast_init (the library constructor) */
static struct {
	uint32_t nr_slots, ring_size;
	bool off;                       /* PERFMARK_FASTLANE=0: the trap lane only */
	bool rtm;
	bool have_key;
	pthread_key_t retire_key;
	struct { uintptr_t lo, hi; } seg[MAX_SEGS];
	size_t nseg;
} cfg;

extern void *__libc_stack_end;

static inline struct pm_fl_slot *slot_at(const struct pm_proc *p, uint32_t idx)
{
	return (struct pm_fl_slot *)(void *)(p->slots + (size_t)idx * p->slot_size);
}

/* --- settings (constructor) ------------------------------------------------- */

static uint32_t env_u32(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return def;
	x = strtoul(v, &end, 10);
	if (*end || x < lo)
		return lo;
	return x > hi ? hi : (uint32_t)x;
}

static int find_exe_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum && cfg.nseg < MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		cfg.seg[cfg.nseg].lo = info->dlpi_addr + ph->p_vaddr;
		cfg.seg[cfg.nseg].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		cfg.nseg++;
	}
	return 1;   /* the first object is the executable: only it */
}

static void retire(void *v);

void pm_fast_init(void)
{
	unsigned int a, b, c, d;
	uint32_t kib;

	cfg.off = env_u32("PERFMARK_FASTLANE", 1, 0, 1) == 0;
	cfg.nr_slots = env_u32("PERFMARK_RING_SLOTS", DEFAULT_SLOTS, 1, PM_FL_MAX_SLOTS);
	kib = env_u32("PERFMARK_RING_KIB", DEFAULT_RING_KIB, PM_FL_MIN_RING >> 10,
		      PM_FL_MAX_RING >> 10);
	cfg.ring_size = 1u << (31 - __builtin_clz(kib << 10));   /* a power of two */
	/* RTM, unless the CPU says it always aborts (CPUID 7.0: EBX 11, EDX 11) */
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
		cfg.rtm = (b & (1u << 11)) && !(d & (1u << 11));
	cfg.have_key = pthread_key_create(&cfg.retire_key, retire) == 0;
	/* the executable is never unloaded: its segments are always readable */
	dl_iterate_phdr(find_exe_segments, NULL);
}

static int setup(uint32_t sites, bool early);

/*
 * A recorder that holds a register site listens already (the kernel raised
 * its semaphore as this library was mapped): the area is made and offered
 * now, while the process starts, so that the recorder has mapped and
 * joined it by the first marker.  That marker offers it again (confirm:
 * whose the markers are is decided then, as before) and the next one goes
 * into the ring at once, without waiting for the recorder to come: it
 * reads what the ring holds once it has the confirmation.  A process that
 * never emits a marker costs an area (a sealed memfd, its pages untouched
 * but the header's) and one registration.  From the constructor: the
 * process's only thread, or a dlopen() with the loader's lock held.
 */
void pm_fast_offer_early(void)
{
	uint64_t s = perfmark__semas[0];

	if (!cfg.off && PM_SEMA_SITES(s) && !perfmark__semas[1])
		setup(PM_SEMA_SITES(s), true);
}

/* --- the area ----------------------------------------------------------------- */

static struct pm_proc *get_proc(void)
{
	struct pm_proc *p = __atomic_load_n(&proc, __ATOMIC_ACQUIRE), *none = NULL;
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = ((sizeof(*p) + (size_t)pg - 1) / (size_t)pg) * (size_t)pg;
	void *page;

	if (p)
		return p;
	page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	/* without it a child could reach its parent's rings: no fast lane then */
	if (madvise(page, len, MADV_WIPEONFORK)) {
		munmap(page, len);
		return NULL;
	}
	if (!__atomic_compare_exchange_n(&proc, &none, page, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap(page, len);
		return none;
	}
	return page;
}

static uint64_t random_u64(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = __builtin_ia32_rdtsc() * 0x9e3779b97f4a7c15ull ^ (uintptr_t)&v;
	return v;
}

/* memfd, sealed so nobody can shrink it under a recorder's mapping (SIGBUS) */
static int create_area(struct pm_proc *p)
{
	uint64_t size = PM_FL_HDR_SIZE + (uint64_t)cfg.nr_slots * (PM_FL_CTL_SIZE + cfg.ring_size);
	struct pm_fl_hdr *a;
	int fd;

	fd = memfd_create("perfmark", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		int e = -errno;

		close(fd);
		return e;
	}
	a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (a == MAP_FAILED)
		return -errno;
	madvise(a, size, MADV_DONTFORK);
	p->nonce = random_u64();
	a->version = PM_FL_VERSION;
	a->hdr_size = PM_FL_HDR_SIZE;
	a->nr_slots = cfg.nr_slots;
	a->slot_size = PM_FL_CTL_SIZE + cfg.ring_size;
	a->ring_size = cfg.ring_size;
	a->pid = (uint32_t)getpid();
	a->nonce = p->nonce;
	__atomic_store_n(&a->magic, PM_FL_MAGIC, __ATOMIC_RELEASE);
	p->slots = (char *)a + PM_FL_HDR_SIZE;
	p->size = size;
	p->slot_size = a->slot_size;
	p->ring_size = cfg.ring_size;
	p->nr_slots = cfg.nr_slots;
	p->pid = a->pid;
	p->gen = (p->nonce >> KEY_SLOT_BITS) | 1;
	p->reg_wait_ns = REGISTER_RETRY_NS;
	__atomic_store_n(&p->area, a, __ATOMIC_RELEASE);
	return 0;
}

/* One call of the sled: every recorder listening learns where the area is. */
static void register_area(struct pm_proc *p, uint32_t sites, uint64_t now, uint32_t kind)
{
	struct pm_fl_reg r = {
		.kind = kind,
		.version = PM_FL_VERSION,
		.area = (uint64_t)(uintptr_t)p->area,
		.size = p->size,
		.nonce = p->nonce,
		.local_pid = p->pid,
		.local_tid = (uint32_t)gettid(),
	};

	p->sites_seen = sites;
	p->reg_ns = now;
	perfmark__register(&r);
}

/*
 * The process's first traced marker, or the library's constructor when a
 * recorder already listens (early): make the area and offer it.  The
 * marker that made it takes the trap lane (PM_TRAP_NO_AREA), before this
 * runs (pm_fast_then).
 */
static __attribute__((noinline, cold)) int setup(uint32_t sites, bool early)
{
	struct pm_proc *p = get_proc();
	uint32_t idle = 0;
	uint64_t now;

	if (!p || __atomic_load_n(&p->area, __ATOMIC_ACQUIRE))
		return PM_TRAP_NO_AREA;
	now = clock_mono_ns();
	if (p->failed_ns && now - p->failed_ns < REGISTER_RETRY_MAX)
		return PM_TRAP_NO_AREA;
	/* one maker; a signal handler or thread arriving meanwhile takes the trap */
	if (!__atomic_compare_exchange_n(&p->busy, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return PM_TRAP_NO_AREA;
	if (create_area(p)) {
		p->failed_ns = now;
	} else {
		register_area(p, sites, now, early ? PM_FL_REG_EARLY : PM_FL_REG_AREA);
		__atomic_store_n(&p->confirmed, !early, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
	return PM_TRAP_NO_AREA;
}

/*
 * The first marker of a process whose area was offered as it loaded: offer
 * it again, now, so that the recorder records its markers under the owner
 * the process has now (the trap lane's rule), then use it.  This marker
 * takes the trap lane, as a first marker always did (pm_fast_then offers,
 * after the trap).
 */
static __attribute__((noinline, cold)) void confirm(struct pm_proc *p, uint32_t sites)
{
	uint32_t idle = 0;

	if (!__atomic_compare_exchange_n(&p->busy, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (!__atomic_load_n(&p->confirmed, __ATOMIC_ACQUIRE)) {
		register_area(p, sites, clock_mono_ns(), PM_FL_REG_AREA);
		__atomic_store_n(&p->confirmed, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
}

/*
 * Not every site holder has joined (yet, or again): the trap lane, which
 * every recorder reads, and the area offered again: at once when a site
 * was taken since the last offer (or that offer is long past), else at most
 * every reg_wait_ns, waiting longer each time nobody comes.
 */
static __attribute__((noinline, cold)) void unattached(struct pm_proc *p, uint32_t sites)
{
	uint64_t now = clock_mono_ns();

	if ((sites & ~p->sites_seen) || now - p->reg_ns > 2 * REGISTER_RETRY_MAX) {
		p->reg_wait_ns = REGISTER_RETRY_NS;
		register_area(p, sites, now, PM_FL_REG_AREA);
	} else if (now - p->reg_ns >= p->reg_wait_ns) {
		if (p->reg_wait_ns < REGISTER_RETRY_MAX)
			p->reg_wait_ns *= 2;
		register_area(p, sites, now, PM_FL_REG_AREA);
	}
}

/*
 * What pm_fast_emit left for after the trap: the area made and offered,
 * confirmed, or offered again.  An offer wakes every recorder at once (the
 * BPF side forces the wakeup, so that they join while the process starts),
 * and a recorder runs at a higher priority than the program: woken from
 * this CPU it preempts this thread, which may then wait milliseconds for a
 * CPU again behind the other runnable threads.  Made before the trap, that
 * wait fell between the application's call and the trap's time: the
 * marker was stamped milliseconds late (the first "frame" of
 * t-report-markers.sh 4 ms shorter than the program timed it).  After the
 * trap, the marker has its time and the wait is the program's, as any
 * preemption.
 */
void pm_fast_then(uint32_t then, uint64_t semas)
{
	uint32_t sites = PM_SEMA_SITES(semas);
	struct pm_proc *p = proc;

	switch (then) {
	case PM_THEN_SETUP:
		setup(sites, false);
		break;
	case PM_THEN_CONFIRM:
		if (p)
			confirm(p, sites);
		break;
	case PM_THEN_OFFER:
		if (p)
			unattached(p, sites);
		break;
	default:
		break;
	}
}

/* --- slots -------------------------------------------------------------------- */

/* smallest tail of a slot among the readers in bits (UINT64_MAX: none) */
static uint64_t min_tail(const struct pm_fl_slot *sl, uint32_t bits)
{
	uint64_t min = UINT64_MAX;

	for (int c = 0; c < PM_NR_SITES; c++) {
		uint64_t t;

		if (!(bits & (1u << c)))
			continue;
		t = __atomic_load_n(&sl->tail[c], __ATOMIC_ACQUIRE);
		if (t < min)
			min = t;
	}
	return min;
}

static bool drained(const struct pm_fl_hdr *a, const struct pm_fl_slot *sl)
{
	uint64_t t = min_tail(sl, __atomic_load_n(&a->readers, __ATOMIC_ACQUIRE));

	return t == UINT64_MAX || t == __atomic_load_n(&sl->head, __ATOMIC_ACQUIRE);
}

/* a thread with a slot exits: its slot is free again once drained */
static void retire(void *v)
{
	struct pm_proc *p = __atomic_load_n(&proc, __ATOMIC_ACQUIRE);
	uint32_t idx = (uint32_t)(uintptr_t)v - 1, owned = PM_FL_SLOT_OWNED;

	if (!p || !p->area || (tls.key >> KEY_SLOT_BITS) != p->gen ||
	    (tls.key & ((1u << KEY_SLOT_BITS) - 1)) != idx || idx >= p->nr_slots)
		return;
	__atomic_compare_exchange_n(&slot_at(p, idx)->state, &owned, PM_FL_SLOT_RETIRED, false,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	tls.key = 0;
}

/*
 * This thread's first marker since the area was made: own a free slot, or
 * share one when all are taken (records name their thread either way).
 */
static __attribute__((noinline, cold)) uint64_t claim_slot(struct pm_proc *p)
{
	uint32_t tid = (uint32_t)gettid(), n = p->nr_slots, idx = UINT32_MAX;
	uint32_t start = __atomic_load_n(&p->hint, __ATOMIC_RELAXED);

	/*
	 * A vfork() child runs on its parent's memory and thread state: what it
	 * cached here would name the parent's thread after it.  It takes the
	 * trap lane, which knows who it is.
	 */
	if ((uint32_t)getpid() != p->pid)
		return 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (start + i) % n;
		struct pm_fl_slot *sl = slot_at(p, j);
		uint32_t st = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE);

		if (st != PM_FL_SLOT_FREE && !(st == PM_FL_SLOT_RETIRED && drained(p->area, sl)))
			continue;
		if (__atomic_compare_exchange_n(&sl->state, &st, PM_FL_SLOT_OWNED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			uint32_t used = __atomic_load_n(&p->area->slots_used, __ATOMIC_RELAXED);

			idx = j;
			sl->tid = tid;
			while (used < j + 1 &&
			       !__atomic_compare_exchange_n(&p->area->slots_used, &used, j + 1, true,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				;
			__atomic_store_n(&p->hint, j + 1, __ATOMIC_RELAXED);
			if (cfg.have_key)
				pthread_setspecific(cfg.retire_key, (void *)(uintptr_t)(j + 1));
			break;
		}
	}
	if (idx == UINT32_MAX)
		idx = tid % n;
	tls.tid = tid;
	tls.key = p->gen << KEY_SLOT_BITS | idx;
	return tls.key;
}

/* --- the payload ---------------------------------------------------------- */

static inline uintptr_t stack_pointer(void)
{
	uintptr_t sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

static inline uintptr_t thread_pointer(void)
{
	uintptr_t tp;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

/*
 * Memory certainly mapped: the live part of this thread's stack (glibc puts
 * a thread's TCB at the top of its stack block; the main thread's stack
 * ends at __libc_stack_end), or a segment of the executable.
 */
static bool surely_mapped(uintptr_t src, size_t n)
{
	uintptr_t sp = stack_pointer(), top = thread_pointer(), end = (uintptr_t)__libc_stack_end;

	if (sp < top && top - sp <= STACK_MAX && src >= sp && src + n <= top)
		return true;
	if (sp < end && end - sp <= STACK_MAX && src >= sp && src + n <= end)
		return true;
	for (size_t i = 0; i < cfg.nseg; i++)
		if (src >= cfg.seg[i].lo && src + n <= cfg.seg[i].hi)
			return true;
	return false;
}

/* memcpy, without the start-up cost of rep movs for the usual few dozen bytes */
static inline void copy_small(void *dst, const void *src, uint32_t n)
{
	char *d = dst;
	const char *s = src;

	if (n > 256) {
		memcpy(dst, src, n);
		return;
	}
	for (; n >= 16; n -= 16, d += 16, s += 16)
		__builtin_memcpy(d, s, 16);
	if (n >= 8) {
		__builtin_memcpy(d, s, 8);
		d += 8;
		s += 8;
		n -= 8;
	}
	while (n--)
		*d++ = *s++;
}

/* A fault inside a transaction aborts it instead of raising SIGSEGV. */
static __attribute__((target("rtm"), noinline)) bool rtm_copy(void *dst, const void *src, size_t n)
{
	if (_xbegin() == _XBEGIN_STARTED) {
		memcpy(dst, src, n);
		_xend();
		return true;
	}
	return false;
}

static bool copy_payload(const struct pm_proc *p, void *dst, const struct pm_marker_in *m, uint32_t n)
{
	uintptr_t src = (uintptr_t)m->data;
	struct iovec l = { dst, n }, r = { (void *)src, n };

	if (m->own || surely_mapped(src, n)) {
		copy_small(dst, m->data, n);
		return true;
	}
	if (src < 65536 || src + n < src || src + n > 0x800000000000ull)
		return false;
	if (cfg.rtm && rtm_copy(dst, m->data, n))
		return true;
	/* ourselves, through the kernel: fails cleanly on an unmapped buffer */
	return process_vm_readv((pid_t)p->pid, &l, 1, &r, 1, 0) == (ssize_t)n;
}

/* --- writing a record ---------------------------------------------------- */

/*
 * Is there room up to byte position need?  Refreshes the cached limit from
 * the readers' tails.  A reader is never let go here, however long it has
 * been silent: what its ring holds past its tail is unread, and a recorder
 * that comes back (perfmarkd restarted, however slowly: its pinned state
 * and its consumer token outlive it) reads on from that tail.  (A rule
 * that let a reader silent for 5 s go here, at a full ring, would have
 * written over what it had not read; reader_silent sends the markers to
 * the trap lane long before a ring fills.)  Nothing waits for it either: a
 * silent reader sends markers to the trap lane (reader_silent), a full ring
 * too (PM_TRAP_RING_FULL), so the program never stalls on a recorder.
 */
static __attribute__((noinline)) bool room(struct pm_proc *p, struct pm_fl_slot *sl, uint64_t need,
					   uint32_t readers)
{
	uint64_t min, head = __atomic_load_n(&sl->head, __ATOMIC_RELAXED);

	min = min_tail(sl, readers);
	if (min == UINT64_MAX)
		return false;
	if (min > head)          /* a confused consumer: never run past our own head */
		min = head;
	__atomic_store_n(&sl->limit, min + p->ring_size, __ATOMIC_RELAXED);
	return need <= min + p->ring_size;
}

/*
 * Has a reader stopped reading?  A recorder's pump stamps its heartbeat at
 * least every few milliseconds; one silent for SILENT_READER_NS has died
 * (perfmarkd killed, say) or hangs.  Markers then take the trap lane: its
 * BPF ring is pinned with the session and outlives the recorder, whereas
 * what this ring holds is lost to the silent one if the process exits
 * before a recorder comes back.  One silent reader is enough: the others
 * may live on (another session's recorder, system-wide) and keep reading
 * the ring, but what they read is theirs only, never the dead one's; the
 * trap lane reaches every recorder, the live ones too.  The ring is kept
 * as it is: a recorder that comes back (perfmarkd restarted) reads on from
 * its tails and the markers return to the ring.  So what a dead recorder
 * leaves unread is at most what was written in the SILENT_READER_NS before
 * the process noticed.
 */
static __attribute__((noinline)) bool reader_silent(const struct pm_fl_hdr *a, uint32_t readers,
						    uint64_t now)
{
	for (int c = 0; c < PM_NR_SITES; c++) {
		uint64_t hb;

		if (!(readers & (1u << c)))
			continue;
		hb = __atomic_load_n(&a->consumer[c].heartbeat_ns, __ATOMIC_RELAXED);
		if (hb < now && now - hb > SILENT_READER_NS)
			return true;
	}
	return false;
}

static int write_rec(struct pm_proc *p, uint32_t idx, const struct pm_marker_in *m, uint32_t readers)
{
	struct pm_fl_slot *sl = slot_at(p, idx);
	char *ring = (char *)sl + PM_FL_CTL_SIZE;
	uint32_t rs = p->ring_size, n = m->size, flags = 0, rlen;
	uint64_t now = clock_mono_ns(), pos, off, total;
	struct pm_fl_rec *r;
	int cpu;

	if (unlikely(now - tls.checked_ns > SILENT_CHECK_NS)) {
		tls.checked_ns = now;
		tls.silent = reader_silent(p->area, readers, now);
	}
	if (unlikely(tls.silent))
		return PM_TRAP_SILENT;
	if (n > PM_FL_MAX_PAYLOAD) {
		n = PM_FL_MAX_PAYLOAD;
		flags |= PM_FL_F_TRUNCATED;
	}
	rlen = pm_fl_rec_bytes(n);
	pos = __atomic_load_n(&sl->head, __ATOMIC_RELAXED);
	for (;;) {
		off = pos & (rs - 1);
		total = off + rlen > rs ? rs - off + rlen : rlen;
		if (unlikely(pos + total > __atomic_load_n(&sl->limit, __ATOMIC_RELAXED)) &&
		    !room(p, sl, pos + total, readers)) {
			__atomic_fetch_add(&sl->lost, 1, __ATOMIC_RELAXED);
			return PM_TRAP_RING_FULL;
		}
		if (__atomic_compare_exchange_n(&sl->head, &pos, pos + total, true,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	if (total != rlen) {     /* a filler up to the ring's end, then ours at 0 */
		__atomic_store_n((uint64_t *)(void *)(ring + off),
				 (uint64_t)pm_fl_tag(pos) << 32 | PM_FL_F_PAD | (uint32_t)(rs - off),
				 __ATOMIC_RELEASE);
		pos += rs - off;
		off = 0;
	}
	r = (struct pm_fl_rec *)(void *)(ring + off);
	/*
	 * Ask for the lines the next markers will write now: the ring was read
	 * by the recorder on another CPU since we last wrote there, and a store
	 * that misses would hold up the next compare-and-swap.
	 */
	__builtin_prefetch(ring + ((off + rlen + 128) & (rs - 1)), 1, 3);
	__builtin_prefetch(ring + ((off + rlen + 192) & (rs - 1)), 1, 3);
	r->time = now;
	r->ip = m->ip;
	r->type = m->type;
	r->tid = tls.tid;
	cpu = sched_getcpu();
	r->cpu = cpu < 0 || cpu > 0xffff ? 0xffff : (uint16_t)cpu;
	r->size = (uint16_t)n;
	r->orig_size = m->size;
	if (n && !copy_payload(p, r->data, m, n)) {
		flags |= PM_FL_F_FAULT;
		r->size = 0;
	}
	__atomic_store_n((uint64_t *)(void *)r, (uint64_t)pm_fl_tag(pos) << 32 | flags | rlen,
			 __ATOMIC_RELEASE);
	return 0;
}

int pm_fast_emit(const struct pm_marker_in *m, uint64_t semas, uint64_t trapall, uint32_t *then)
{
	uint32_t sites = PM_SEMA_SITES(semas), joined, readers;
	struct pm_proc *p = proc;
	uint64_t key;

	/* a recorder without a site of its own reads the trap lane only */
	if (cfg.off)
		return PM_TRAP_OFF;
	if (trapall || !sites)
		return PM_TRAP_TRAPALL;
	/* the work that offers the area waits for the trap: pm_fast_then */
	if (unlikely(!p || !__atomic_load_n(&p->area, __ATOMIC_ACQUIRE))) {
		*then = PM_THEN_SETUP;
		return PM_TRAP_NO_AREA;
	}
	if (unlikely(!__atomic_load_n(&p->confirmed, __ATOMIC_ACQUIRE))) {
		/*
		 * A vfork() child runs on its parent's memory: an offer from it
		 * would name the child's pid for the parent's area (a second
		 * reader of the same rings).  It takes the trap lane; the parent
		 * confirms.
		 */
		if ((uint32_t)getpid() != p->pid)
			return PM_TRAP_NO_SLOT;
		*then = PM_THEN_CONFIRM;
		return PM_TRAP_NO_AREA;
	}
	/*
	 * Every site holder must have joined: one that has not yet reads only
	 * the trap lane and would miss what the ring takes.
	 */
	joined = __atomic_load_n(&p->area->joined, __ATOMIC_ACQUIRE);
	if (unlikely(sites & ~joined)) {
		*then = PM_THEN_OFFER;
		return PM_TRAP_NOT_JOINED;
	}
	readers = __atomic_load_n(&p->area->readers, __ATOMIC_ACQUIRE) & sites;
	if (unlikely(!readers))
		return 0;               /* every recorder declined this process */
	key = tls.key;
	if (unlikely(key >> KEY_SLOT_BITS != p->gen) && !(key = claim_slot(p)))
		return PM_TRAP_NO_SLOT;
	return write_rec(p, (uint32_t)(key & ((1u << KEY_SLOT_BITS) - 1)), m, readers);
}

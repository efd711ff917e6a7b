/* prog-markers: marker workloads for the tests/t-markers-*.sh scripts.
 *
 *   prog-markers mix N        two threads emit N markers each (even sequence
 *                             numbers as perf_printf "thr=T seq=S", odd ones as
 *                             perfmark_emit type TYPE_SEQ, payload
 *                             {u32 magic, u32 thr, u32 seq}); typed markers of
 *                             sizes 0 1 7 8 9 4095 4096 5000 (type
 *                             TYPE_SIZE_BASE + size, byte i = (i*31 + size) & 255);
 *                             a forked child emits "fork seq=S" and an exec'd
 *                             child ("prog-markers child M") "exec seq=S",
 *                             S = 0..M-1 with M = N / 4.
 *   prog-markers child M      the exec'd child of mix.
 *   prog-markers phases MS    marker "A", phase_one() spins MS ms, "B",
 *                             phase_two() spins MS ms, "C".
 *   prog-markers loop SEC TAG perf_printf "loop tag=TAG n=K" every 5 ms for SEC s
 *                             ("pid P" first, "at 20" after 20 markers).
 *   prog-markers faults       unmapped / NULL / partly unmapped pointers, size
 *                             0, markers from SIGALRM and SIGUSR1 handlers.
 *   prog-markers burst N SIZE N typed markers (TYPE_BURST, SIZE bytes) back to back.
 *   prog-markers idle N       N perf_printf + perfmark_emit calls, timed; when
 *                             untraced, also calls with invalid pointers that
 *                             must not be read.
 *   prog-markers jit MS       copies a small add loop into an anonymous executable
 *                             page, names it with perfmark_jit_code(...,
 *                             "jitted_loop") and spins in it MS ms.
 *   prog-markers jitmany N    N JIT code markers ("jit_I") back to back, then exit.
 *   prog-markers longname LEN MS  a range named "long" + 'x' * (LEN - 4) around
 *                             phase_one() spinning MS ms, then a counter of
 *                             that name (names past the payload limit: cut).
 *
 * Every mode prints what it did on stdout, one fact per line ("pid P",
 * "emit size=S rc=R", "expect TYPE HEX", "count NAME N", ...), so the test
 * can compare the recording with what the program says it emitted.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfmark.h"

#define TYPE_SEQ        (PERFMARK_TYPE_APP_FIRST + 1)
#define TYPE_SIZE_BASE  (PERFMARK_TYPE_APP_FIRST + 10000)   /* + payload size */
#define TYPE_FAULT      (PERFMARK_TYPE_APP_FIRST + 2)       /* (void *)1, 16 */
#define TYPE_NULLSZ     (PERFMARK_TYPE_APP_FIRST + 3)       /* NULL, 16: -EINVAL */
#define TYPE_NULL0      (PERFMARK_TYPE_APP_FIRST + 4)       /* NULL, 0 */
#define TYPE_EMPTY      (PERFMARK_TYPE_APP_FIRST + 5)       /* valid pointer, 0 */
#define TYPE_PARTIAL    (PERFMARK_TYPE_APP_FIRST + 6)       /* 8 mapped + 8 unmapped */
#define TYPE_SIGALRM    (PERFMARK_TYPE_APP_FIRST + 7)
#define TYPE_SIGUSR1    (PERFMARK_TYPE_APP_FIRST + 8)
#define TYPE_MAINLOOP   (PERFMARK_TYPE_APP_FIRST + 9)
#define TYPE_BURST      (PERFMARK_TYPE_APP_FIRST + 20)
#define SEQ_MAGIC       0x5e9a0000u

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* this thread's CPU time: a spin of so much gets as many samples on a loaded machine */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void hexline(const char *what, uint32_t type, const uint8_t *p, size_t n)
{
	printf("%s %" PRIu32 " ", what, type);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("%s\n", n ? "" : "-");
}

/* ---- mix ---------------------------------------------------------------- */

struct seq_payload {
	uint32_t magic, thr, seq;
};

static long nmark;
static int bad_rc;

static void *thread_main(void *arg)
{
	uint32_t thr = (uint32_t)(uintptr_t)arg;
	struct seq_payload p = { SEQ_MAGIC, thr, 0 };
	int rc;

	for (long s = 0; s < nmark; s++) {
		if (s % 2 == 0) {
			rc = perf_printf("thr=%u seq=%ld", thr, s);
		} else {
			p.seq = (uint32_t)s;
			rc = perfmark_emit(TYPE_SEQ, &p, sizeof(p));
		}
		if (rc)
			__atomic_add_fetch(&bad_rc, 1, __ATOMIC_RELAXED);
	}
	printf("thread %u tid %ld emitted %ld\n", thr, (long)syscall(SYS_gettid), nmark);
	return NULL;
}

static void emit_seq_strings(const char *who, long m)
{
	for (long s = 0; s < m; s++)
		if (perf_printf("%s seq=%ld", who, s))
			bad_rc++;
}

static int mode_mix(const char *self, long n)
{
	static const uint32_t sizes[] = { 0, 1, 7, 8, 9, 4095, 4096, 5000 };
	static uint8_t buf[5000];
	pthread_t th[2];
	long m = n / 4;
	pid_t pid;
	int st;

	nmark = n;
	printf("pid %d enabled %d\n", (int)getpid(), (int)perfmark_enabled());
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t sz = sizes[k], rec = sz > PERFMARK_MAX_PAYLOAD ? PERFMARK_MAX_PAYLOAD : sz;
		int rc;

		for (uint32_t i = 0; i < sz; i++)
			buf[i] = (uint8_t)(i * 31 + sz);
		rc = perfmark_emit(TYPE_SIZE_BASE + sz, buf, sz);
		printf("emit size=%u rc=%d\n", sz, rc);
		hexline("expect", TYPE_SIZE_BASE + sz, buf, rec);
	}
	printf("E2BIG %d\n", -E2BIG);
	fflush(stdout);

	for (uintptr_t t = 0; t < 2; t++)
		if (pthread_create(&th[t], NULL, thread_main, (void *)t)) {
			perror("pthread_create");
			return 1;
		}
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	fflush(stdout);

	pid = fork();
	if (pid == 0) {
		emit_seq_strings("fork", m);
		printf("fork child %d emitted %ld bad_rc %d\n", (int)getpid(), m, bad_rc);
		fflush(stdout);
		_exit(bad_rc ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	printf("fork status %d\n", st);
	fflush(stdout);

	pid = fork();
	if (pid == 0) {
		char arg[32];

		snprintf(arg, sizeof(arg), "%ld", m);
		execl(self, self, "child", arg, (char *)NULL);
		perror("execl");
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("exec status %d\n", st);
	printf("bad_rc %d\n", bad_rc);
	printf("done\n");
	return 0;
}

static int mode_child(long m)
{
	emit_seq_strings("exec", m);
	printf("exec child %d emitted %ld bad_rc %d\n", (int)getpid(), m, bad_rc);
	return bad_rc ? 1 : 0;
}

/* ---- phases ------------------------------------------------------------- */

static volatile uint64_t sink;

__attribute__((noinline)) void phase_one(double ms)
{
	double end = now() + ms / 1000;
	uint64_t x = 1;

	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while (now() < end);
	sink += x;
}

__attribute__((noinline)) void phase_two(double ms)
{
	double end = now() + ms / 1000;
	uint64_t x = 3;

	do {
		for (int i = 0; i < 20000; i++)
			x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ull;
	} while (now() < end);
	sink += x;
}

static int mode_phases(double ms)
{
	int rc = 0;

	rc |= perf_printf("phase A");
	phase_one(ms);
	rc |= perf_printf("phase B");
	phase_two(ms);
	rc |= perf_printf("phase C");
	printf("phases rc %d\n", rc);
	return 0;
}

static int mode_longname(size_t len, double ms)
{
	char *name = malloc(len + 1);

	if (!name || len < 4)
		return 1;
	memcpy(name, "long", 4);
	memset(name + 4, 'x', len - 4);
	name[len] = '\0';
	printf("pid %d\n", (int)getpid());
	perfmark_range_begin(name);
	phase_one(ms);
	perfmark_range_end(name);
	perfmark_counter(name, 7);
	free(name);
	return 0;
}

/* ---- loop --------------------------------------------------------------- */

static int mode_loop(double secs, const char *tag)
{
	double end = now() + secs;
	struct timespec d = { 0, 5 * 1000 * 1000 };
	long k = 0;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	do {
		perf_printf("loop tag=%s n=%ld", tag, k++);
		if (k == 20) {
			printf("at 20\n");
			fflush(stdout);
		}
		nanosleep(&d, NULL);
	} while (now() < end);
	printf("loop %s emitted %ld enabled %d\n", tag, k, (int)perfmark_enabled());
	return 0;
}

/* ---- faults and signals ------------------------------------------------- */

static volatile sig_atomic_t n_alrm, n_usr1, bad_sig_rc;

/* a marker from a signal handler: { magic, how many came before } */
static void emit_from_handler(int type, uint32_t magic, volatile sig_atomic_t *n)
{
	uint32_t v[2] = { magic, (uint32_t)*n };
	int saved = errno;

	if (perfmark_emit(type, v, sizeof(v)))
		bad_sig_rc = 1;
	(*n)++;
	errno = saved;
}

static void on_alrm(int sig) { emit_from_handler(TYPE_SIGALRM, 0xa1a1a1a1u, &n_alrm); }
static void on_usr1(int sig) { emit_from_handler(TYPE_SIGUSR1, 0x05a105a1u, &n_usr1); }

static int mode_faults(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	uint8_t ok[16] = "0123456789abcde";
	uint64_t main_n = 0;
	uint8_t *two;
	double end;
	int rc;

	rc = perfmark_emit(TYPE_FAULT, (void *)1, 16);
	printf("fault rc %d\n", rc);
	rc = perfmark_emit(TYPE_NULLSZ, NULL, 16);
	printf("nullsz rc %d\n", rc);
	rc = perfmark_emit(TYPE_NULL0, NULL, 0);
	printf("null0 rc %d\n", rc);
	rc = perfmark_emit(TYPE_EMPTY, ok, 0);
	printf("empty rc %d\n", rc);
	rc = perf_printf("%s", "");
	printf("emptystr rc %d\n", rc);

	two = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (two == MAP_FAILED)
		return 1;
	munmap(two + pg, pg);
	memset(two, 0x5a, pg);
	rc = perfmark_emit(TYPE_PARTIAL, two + pg - 8, 16);
	printf("partial rc %d\n", rc);
	fflush(stdout);

	sa.sa_handler = on_alrm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	/*
	 * SIGALRM every 0.5 ms while the main flow emits markers itself, back to
	 * back (most signals land inside a marker): 60 ms and at least 100
	 * signals, about a million markers through the fast lane
	 */
	setitimer(ITIMER_REAL, &it, NULL);
	end = now() + 0.06;
	/* at least 100 signals: on a busy machine timer signals coalesce */
	for (double t, last = end + 2; (t = now()) < end || (n_alrm < 100 && t < last);) {
		if (perfmark_emit(TYPE_MAINLOOP, &main_n, sizeof(main_n)))
			bad_sig_rc = 1;
		main_n++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 200; i++)
		kill(getpid(), SIGUSR1);

	printf("count sigalrm %d\n", (int)n_alrm);
	printf("count sigusr1 %d\n", (int)n_usr1);
	printf("count mainloop %" PRIu64 "\n", main_n);
	printf("sig rc %d\n", (int)bad_sig_rc);
	printf("done\n");
	return 0;
}

/* ---- burst -------------------------------------------------------------- */

static int mode_burst(long n, uint32_t size)
{
	static uint8_t buf[PERFMARK_MAX_PAYLOAD];
	long bad = 0;

	if (size > sizeof(buf))
		size = sizeof(buf);
	memset(buf, 0xb5, size);
	for (long i = 0; i < n; i++) {
		memcpy(buf, &i, size < sizeof(i) ? size : sizeof(i));
		if (perfmark_emit(TYPE_BURST, buf, size))
			bad++;
	}
	printf("burst emitted %ld bad_rc %ld enabled %d\n", n, bad, (int)perfmark_enabled());
	return 0;
}

/* ---- idle (untraced) ---------------------------------------------------- */

static int mode_idle(long n)
{
	uint64_t v = 42;
	double t0, t1, t2;
	int rc = 0;

	t0 = now();
	for (long i = 0; i < n; i++) {
		rc |= perf_printf("idle %ld %s", i, "never formatted");
		__asm__ volatile("" ::: "memory");
	}
	t1 = now();
	for (long i = 0; i < n; i++) {
		rc |= perfmark_emit(TYPE_MAINLOOP, &v, sizeof(v));
		__asm__ volatile("" ::: "memory");
	}
	t2 = now();
	printf("enabled %d rc %d\n", (int)perfmark_enabled(), rc);
	if (!perfmark_enabled()) {
		/* untraced, nothing is formatted or read: these must not crash */
		const char *bad = (const char *)(uintptr_t)8;

		rc = perf_printf("%s", bad);
		rc |= perfmark_emit(TYPE_MAINLOOP, bad, 64);
		printf("unread args rc %d\n", rc);
	}
	printf("perf_printf_ns %.3f\n", (t1 - t0) * 1e9 / n);
	printf("perfmark_emit_ns %.3f\n", (t2 - t1) * 1e9 / n);
	return 0;
}

/* ---- jit ---------------------------------------------------------------- */

/*
 * uint64_t f(uint64_t n): xor eax,eax; 1: add rax,3; dec rdi; jnz 1b; ret
 */
static const uint8_t jit_code[] = {
	0x31, 0xc0,                     /* xor    %eax,%eax */
	0x48, 0x83, 0xc0, 0x03,         /* add    $0x3,%rax */
	0x48, 0xff, 0xcf,               /* dec    %rdi */
	0x75, 0xf7,                     /* jne    -9 (the add) */
	0xc3,                           /* ret */
};

static int mode_jit(double ms)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t (*fn)(uint64_t);
	uint8_t *mem;
	double end;
	uint64_t acc = 0;

	mem = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(mem, 0xcc, pg);
	/* put the code off the page start, so the map entry's start matters */
	memcpy(mem + 256, jit_code, sizeof(jit_code));
	fn = (uint64_t (*)(uint64_t))(void *)(mem + 256);
	perfmark_jit_code(mem + 256, sizeof(jit_code), "jitted_loop");
	printf("pid %d jit %p size %zu\n", (int)getpid(), (void *)(mem + 256), sizeof(jit_code));
	fflush(stdout);
	if (fn(10) != 30) {
		printf("jit code is wrong\n");
		return 1;
	}
	end = cpu_now() + ms / 1000;
	do
		acc += fn(2000000);
	while (cpu_now() < end);
	printf("jit done %" PRIu64 "\n", acc);
	return 0;
}

/*
 * N JIT code markers, each naming its own 16-byte range of one anonymous
 * page ("jit_I"), as fast as it can, then exit at once: the recorder must
 * still write every line of /tmp/perf-PID.map (issue 18 case 9).
 */
static int mode_jitmany(long n)
{
	uint8_t *mem = mmap(NULL, 1 << 20, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char name[32];

	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("pid %d jit %p\n", (int)getpid(), (void *)mem);
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "jit_%ld", i);
		perfmark_jit_code(mem + (i % 65536) * 16, 16, name);
	}
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	if (!strcmp(argv[1], "mix") && argc == 3) {
		static char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0)
			return 1;
		self[n] = '\0';
		return mode_mix(self, atol(argv[2]));
	}
	if (!strcmp(argv[1], "child") && argc == 3)
		return mode_child(atol(argv[2]));
	if (!strcmp(argv[1], "phases") && argc == 3)
		return mode_phases(atof(argv[2]));
	if (!strcmp(argv[1], "loop") && argc == 4)
		return mode_loop(atof(argv[2]), argv[3]);
	if (!strcmp(argv[1], "faults") && argc == 2)
		return mode_faults();
	if (!strcmp(argv[1], "burst") && argc == 4)
		return mode_burst(atol(argv[2]), (uint32_t)atol(argv[3]));
	if (!strcmp(argv[1], "idle") && argc == 3)
		return mode_idle(atol(argv[2]));
	if (!strcmp(argv[1], "jit") && argc == 3)
		return mode_jit(atof(argv[2]));
	if (!strcmp(argv[1], "jitmany") && argc == 3)
		return mode_jitmany(atol(argv[2]));
	if (!strcmp(argv[1], "longname") && argc == 4)
		return mode_longname((size_t)atol(argv[2]), atof(argv[3]));
usage:
	fprintf(stderr, "usage: prog-markers mix N | child M | phases MS | loop SEC TAG | "
		"faults | burst N SIZE | idle N | jit MS | jitmany N | longname LEN MS\n");
	return 2;
}

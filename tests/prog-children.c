/* prog-children: markers from every kind of child, and the fast lane's
 * guarantees, for tests/t-markers-children.sh and t-markers-fastlane.sh.
 *
 *   prog-children all N      one after another, each emitting N markers:
 *                            a raw clone(SIGCHLD) child, a _Fork() child, a
 *                            vfork() child, a posix_spawn()ed copy of this
 *                            program, a raw clone() thread sharing this
 *                            thread's TLS (while this thread emits too), and
 *                            a fork() child of a PR_SET_MDWE process.
 *                            Prints "child KIND status S" (S: the wait status,
 *                            0 when it exited 0) and "kind KIND K" per kind.
 *   prog-children emit N K   emit N markers of kind K (what posix_spawn runs)
 *   prog-children exit N     N markers once the fast lane is attached, then
 *                            _exit(0) at once: nothing flushes
 *   prog-children exec N     the same, then execve("/bin/true")
 *   prog-children loop SEC   a marker every millisecond for SEC seconds
 *                            (kind 9), printing "pid P" first, "at 100"
 *                            after its 100th marker, "attached at K" when it
 *                            sees a recorder join, and at the end "loop
 *                            emitted N fast 0|1"
 *   prog-children loop-attached SEC   the same, for SEC seconds from the
 *                            moment it sees a recorder join (at most 120 s)
 *   prog-children split N FILE  N markers (kind 10), one each 100 us; at
 *                            N*3/10 prints "at K"; at N*7/10 waits until
 *                            FILE exists (a test splits the recording in
 *                            between, while markers flow), then the rest;
 *                            "split emitted N" at the end
 *
 * Every marker is perfmark_emit(TYPE_CHILD + K, {u32 magic, u32 seq}, 8)
 * with seq 0..N-1 in order, so a test can check each kind's count and order.
 * "fast K" lines say whether the fast lane was attached in that process when
 * it finished (the area's consumer bits, read from this process's own
 * memory), so a test knows which lane it exercised.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "perfmark.h"
#include "prog-fastlane.h"

#define TYPE_CHILD (PERFMARK_TYPE_APP_FIRST + 300)
#define MAGIC      0xc41dc41du

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

extern char **environ;
static const char *self;

static void emit_kind(int kind, long n)
{
	for (long i = 0; i < n; i++) {
		uint32_t v[2] = { MAGIC, (uint32_t)i };

		perfmark_emit(TYPE_CHILD + kind, v, sizeof(v));
	}
}

static int fast_attached(void)
{
	const struct pm_fl_hdr *h = own_area();

	return h && h->magic == PM_FL_MAGIC && __atomic_load_n(&h->readers, __ATOMIC_ACQUIRE) != 0;
}

/* a first marker makes the area; then up to 3 s for a recorder to join it */
static void wait_fast(void)
{
	struct timespec d = { 0, 2 * 1000 * 1000 };

	perfmark_emit(TYPE_CHILD + 99, NULL, 0);
	for (int i = 0; i < 1500 && !fast_attached(); i++)
		nanosleep(&d, NULL);
	perfmark_emit(TYPE_CHILD + 99, NULL, 0);   /* this thread's slot, claimed */
}

/* ---- children ------------------------------------------------------------ */

static long nmark;

static int child_body(int kind)
{
	wait_fast();
	emit_kind(kind, nmark);
	printf("fast %d %d\n", kind, fast_attached());
	fflush(stdout);
	return 0;
}

static void report(const char *what, pid_t pid)
{
	int st = -1;

	if (pid > 0 && waitpid(pid, &st, 0) != pid)
		st = -1;
	printf("child %s status %d\n", what, pid > 0 ? st : -1);
	fflush(stdout);
}

static void raw_clone_child(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		_exit(child_body(1));
	report("clone", pid);
}

static void fork_child(void)
{
	pid_t pid = _Fork();

	if (pid == 0)
		_exit(child_body(2));
	report("_Fork", pid);
}

static void vfork_child(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		/* shares this process's memory and this thread's ring: no waiting */
		emit_kind(3, nmark);
		_exit(0);
	}
	report("vfork", pid);
}

static void spawn_child(void)
{
	char n[32], *argv[] = { (char *)self, "emit", n, "4", NULL };
	pid_t pid = -1;

	snprintf(n, sizeof(n), "%ld", nmark);
	if (posix_spawn(&pid, self, NULL, NULL, argv, environ))
		pid = -1;
	report("posix_spawn", pid);
}

/* a thread made by clone() alone: no new TLS, so it shares ours */
static volatile int thread_done;

static int raw_thread(void *arg)
{
	(void)arg;
	emit_kind(5, nmark);
	__atomic_store_n(&thread_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &thread_done, FUTEX_WAKE, 1, NULL, NULL, 0);
	syscall(SYS_exit, 0);
	return 0;
}

static void raw_clone_thread(void)
{
	size_t sz = 1 << 20;
	char *stack = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
	long tid;

	if (stack == MAP_FAILED) {
		report("thread", -1);
		return;
	}
	wait_fast();
	tid = clone(raw_thread, stack + sz, flags, NULL);
	/* both emit into the same ring at once: kind 6 from here */
	emit_kind(6, nmark);
	while (tid > 0 && !__atomic_load_n(&thread_done, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &thread_done, FUTEX_WAIT, 0, NULL, NULL, 0);
	printf("child thread status %d\n", tid > 0 ? 0 : -1);
	fflush(stdout);
}

static void mdwe_child(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* MemoryDenyWriteExecute: no page may become writable and executable */
		if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0))
			_exit(3);
		pid = fork();
		if (pid == 0)
			_exit(child_body(7));
		if (pid < 0 || waitpid(pid, &pid, 0) < 0)
			_exit(4);
		_exit(WIFEXITED(pid) ? WEXITSTATUS(pid) : 5);
	}
	report("mdwe", pid);
}

static int mode_all(long n)
{
	nmark = n;
	printf("pid %d enabled %d\n", (int)getpid(), (int)perfmark_enabled());
	fflush(stdout);
	wait_fast();
	raw_clone_child();
	fork_child();
	vfork_child();
	spawn_child();
	raw_clone_thread();
	mdwe_child();
	printf("fast 0 %d\n", fast_attached());
	printf("done\n");
	return 0;
}

/* ---- the fast lane's guarantees --------------------------------------------- */

static int mode_exit(long n, bool exec)
{
	wait_fast();
	printf("fast 8 %d\n", fast_attached());
	fflush(stdout);
	emit_kind(8, n);
	if (exec) {
		char *argv[] = { "true", NULL };

		execve("/bin/true", argv, environ);
		return 127;
	}
	_exit(0);
}

/* after_attach: SEC from the moment it sees a recorder join (at most 120 s in all) */
static int mode_loop(double secs, bool after_attach)
{
	struct timespec d = { 0, 1000 * 1000 }, t0, t;
	double cap = after_attach ? 120 : secs;
	int seen = 0;
	long i = 0;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t v[2] = { MAGIC, (uint32_t)i++ };

		perfmark_emit(TYPE_CHILD + 9, v, sizeof(v));
		if (i == 100)
			printf("at 100\n");
		if (!seen && (i & 15) == 0 && fast_attached()) {
			printf("attached at %ld\n", i);
			seen = 1;
			if (after_attach) {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				cap = secs;
			}
		}
		nanosleep(&d, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < cap);
	printf("loop emitted %ld fast %d\n", i, seen);
	return 0;
}

static int mode_split(long n, const char *file)
{
	struct timespec d = { 0, 100 * 1000 }, w = { 0, 5 * 1000 * 1000 };
	long i;

	for (i = 0; i < n; i++) {
		uint32_t v[2] = { MAGIC, (uint32_t)i };

		if (i == n * 3 / 10)
			printf("at %ld\n", i);
		if (i == n * 7 / 10)
			while (access(file, F_OK))
				nanosleep(&w, NULL);
		perfmark_emit(TYPE_CHILD + 10, v, sizeof(v));
		nanosleep(&d, NULL);
	}
	printf("split emitted %ld\n", i);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	self = argv[0];
	if (argc == 3 && !strcmp(argv[1], "all"))
		return mode_all(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "emit")) {
		nmark = atol(argv[2]);
		return child_body(atoi(argv[3]));
	}
	if (argc == 3 && !strcmp(argv[1], "exit"))
		return mode_exit(atol(argv[2]), false);
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return mode_exit(atol(argv[2]), true);
	if (argc == 3 && !strcmp(argv[1], "loop"))
		return mode_loop(atof(argv[2]), false);
	if (argc == 3 && !strcmp(argv[1], "loop-attached"))
		return mode_loop(atof(argv[2]), true);
	if (argc == 4 && !strcmp(argv[1], "split"))
		return mode_split(atol(argv[2]), argv[3]);
	fprintf(stderr, "usage: prog-children all N | emit N KIND | exit N | exec N | loop SEC | loop-attached SEC | "
		"split N FILE\n");
	return 2;
}

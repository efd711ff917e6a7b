// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Under systemd's watchdog: where the loop is stuck, said before the
 * watchdog kills the daemon with nothing said.  A thread looks at the loop
 * every quarter of the watchdog period (the daemon wakes that often anyway
 * to ping it); a turn that has gone on for half the period is logged once,
 * with where the loop's thread is in the kernel: its system call, wait
 * channel and kernel stack (/proc/self/task/TID: root's, as the daemon is),
 * and how much of the last quarter period it ran and how much it waited
 * for a CPU (schedstat): a loop that is not stuck but starved says so.
 * The loop publishes its turns with two stores a turn, no system call.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "perfmarkd.h"

static struct {
	_Atomic uint64_t turn;          /* the turn running, 0 between turns (waiting in epoll) */
	_Atomic uint64_t since;         /* when it began */
	pid_t tid;                      /* the loop's thread */
	uint64_t period_ns;
} S;

void stall__turn(uint64_t turn, uint64_t t0)
{
	atomic_store_explicit(&S.since, t0, memory_order_relaxed);
	atomic_store_explicit(&S.turn, turn, memory_order_release);
}

void stall__idle(void)
{
	atomic_store_explicit(&S.turn, 0, memory_order_release);
}

/* the first line of /proc/self/task/TID/NAME, or its lines joined by sep; "?" when unreadable */
static void task_file(const char *name, char *buf, size_t len, const char *sep)
{
	char path[64], line[160];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)S.tid, name);
	snprintf(buf, len, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	buf[0] = '\0';
	while (fgets(line, sizeof(line), f) && n + 1 < len) {
		char *s = line, *e;

		if (!strncmp(s, "[<", 2) && (e = strstr(s, "] ")))   /* "[<0>] fn+0x.." */
			s = e + 2;
		s[strcspn(s, "\n")] = '\0';
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? sep : "", s);
		if (!sep)
			break;
	}
	fclose(f);
	if (!buf[0])
		snprintf(buf, len, "?");
}

/* the loop thread's time on a CPU and waiting for one, ns since it began (false: unreadable) */
static bool sched_times(uint64_t *run, uint64_t *wait)
{
	char buf[96];
	unsigned long long r, w;

	task_file("schedstat", buf, sizeof(buf), NULL);
	if (sscanf(buf, "%llu %llu", &r, &w) != 2)
		return false;
	*run = r;
	*wait = w;
	return true;
}

/* the loop thread's schedstat as the stall thread last saw it */
struct sched_window {
	uint64_t at, run, wait;
	bool ok;
};

static void report(uint64_t took_ns, const struct sched_window *prev)
{
	char sys[64], wchan[64], stack[512], cpu[128] = "";
	uint64_t run, wait, now = clock_mono_ns();

	task_file("syscall", sys, sizeof(sys), NULL);
	sys[strcspn(sys, " ")] = '\0';          /* the number only: the arguments are addresses */
	task_file("wchan", wchan, sizeof(wchan), NULL);
	task_file("stack", stack, sizeof(stack), " < ");
	if (prev->ok && sched_times(&run, &wait) && run >= prev->run && wait >= prev->wait)
		snprintf(cpu, sizeof(cpu), "; of the last %llu ms it ran %llu ms and waited for a CPU %llu ms",
			 (unsigned long long)((now - prev->at) / 1000000),
			 (unsigned long long)((run - prev->run) / 1000000),
			 (unsigned long long)((wait - prev->wait) / 1000000));
	logmsg("a turn of the loop has taken %llu ms so far: in system call %s, waiting in %s; kernel stack: %s%s",
	       (unsigned long long)(took_ns / 1000000), sys, wchan, stack, cpu);
}

static void *stall_main(void *arg)
{
	uint64_t reported = 0;
	struct sched_window prev = { 0 };
	struct timespec q = {
		.tv_sec = (time_t)(S.period_ns / 4 / 1000000000ull),
		.tv_nsec = (long)(S.period_ns / 4 % 1000000000ull),
	};

	(void)arg;
	for (;;) {
		uint64_t turn, since;

		nanosleep(&q, NULL);
		turn = atomic_load_explicit(&S.turn, memory_order_acquire);
		since = atomic_load_explicit(&S.since, memory_order_relaxed);
		if (turn && turn != reported && clock_mono_ns() - since > S.period_ns / 2) {
			report(clock_mono_ns() - since, &prev);
			reported = turn;
		}
		prev.at = clock_mono_ns();
		prev.ok = sched_times(&prev.run, &prev.wait);
	}
	return NULL;
}

void stall__watch(uint64_t period_ns)
{
	pthread_attr_t at;
	pthread_t th;

	if (!period_ns || S.period_ns)
		return;
	S.period_ns = period_ns;
	S.tid = (pid_t)syscall(SYS_gettid);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pthread_create(&th, &at, stall_main, NULL))
		S.period_ns = 0;
	pthread_attr_destroy(&at);
}

/* prog-offcpu: ranges whose time off CPU is known, for t-offcpu-*.sh.
 *
 *   prog-offcpu [ROUNDS]    default 5
 *
 * The main thread ("pm-offcpu") runs ROUNDS times, each range on it:
 *     range "cpu"   { burn_cpu():     10 ms of its own CPU time }
 *     range "sleep" { sleep_waiter(): nanosleep 10 ms }
 *     range "pipe"  { pipe_reader():  read() of a pipe that thread "pm-writer"
 *                                     writes 20 ms after the range begins }
 *     range "lock"  { lock_waiter():  pthread_mutex_lock of a mutex that thread
 *                                     "pm-locker" holds for 15 ms }
 *     range "crowd" { crowd_spin():   it and two "pm-crowd" threads spin 30 ms,
 *                                     on two CPUs: it and one on the first,
 *                                     the other alone on the second }
 *
 * The truth, measured by the thread itself around each range: its wall time
 * (CLOCK_MONOTONIC), its CPU time (CLOCK_THREAD_CPUTIME_ID), and the time it
 * waited on a runqueue (run_delay, /proc/thread-self/schedstat); blocked is
 * what is left.  At the end, one line per range name:
 *     range NAME count N wall_ns W cpu_ns C runq_ns R blocked_ns B
 * and "tid TID" of the main thread first.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfmark.h"

enum { R_CPU, R_SLEEP, R_PIPE, R_LOCK, R_CROWD, R_NUM };
static const char *const names[R_NUM] = { "cpu", "sleep", "pipe", "lock", "crowd" };
static uint64_t t_count[R_NUM], t_wall[R_NUM], t_cpu[R_NUM], t_runq[R_NUM];

static int go_writer[2], data_pipe[2], go_locker[2], locked_ack[2];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t crowd_start;
static volatile uint64_t sink;
static int crowd_rounds;
static cpu_set_t two_cpus;
static cpu_set_t crowd_cpu[2];   /* crowd: main and one thread on the first, the other on the second */

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* this thread's time waiting on a runqueue: schedstat's second field */
static uint64_t run_delay(void)
{
	char buf[128] = "";
	unsigned long long run = 0, delay = 0;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = '\0';
		close(fd);
	}
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		delay = 0;
	return delay;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void spin_wall(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + ns, x = sink;

	do {
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ull + 1;
	} while (clock_ns(CLOCK_MONOTONIC) < end);
	sink = x;
}

__attribute__((noinline)) void burn_cpu(void)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + 10000000, x = sink;

	do {
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ull + 1;
	} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	sink = x;
}

__attribute__((noinline)) void sleep_waiter(void)
{
	sleep_ms(10);
}

__attribute__((noinline)) void pipe_reader(void)
{
	char c;

	if (write(go_writer[1], "g", 1) != 1 || read(data_pipe[0], &c, 1) != 1)
		exit(2);
}

__attribute__((noinline)) void lock_waiter(void)
{
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
}

/*
 * Which of three spinners on two CPUs waits depends on where the scheduler
 * put them: one alone on a CPU never does, and in 30 ms the balancer may
 * not move it (a CI run found main alone, 1.9 % of the range waiting).  So
 * main shares the first CPU with one of them: it waits about half.
 */
__attribute__((noinline)) void crowd_spin(void)
{
	sched_setaffinity(0, sizeof(crowd_cpu[0]), &crowd_cpu[0]);
	pthread_barrier_wait(&crowd_start);
	spin_wall(30000000);
	sched_setaffinity(0, sizeof(two_cpus), &two_cpus);
}

static void *writer(void *arg)
{
	char c;

	while (read(go_writer[0], &c, 1) == 1) {
		sleep_ms(20);
		if (write(data_pipe[1], "d", 1) != 1)
			exit(2);
	}
	return NULL;
}

static void *locker(void *arg)
{
	char c;

	while (read(go_locker[0], &c, 1) == 1) {
		pthread_mutex_lock(&held);
		if (write(locked_ack[1], "l", 1) != 1)
			exit(2);
		sleep_ms(15);
		pthread_mutex_unlock(&held);
	}
	return NULL;
}

/*
 * As many rounds as main's: no flag to stop at, which a crowd thread kept
 * off its CPU past main's next 30 ms (a loaded machine) would read set
 * before it spun, and leave main and the other at a barrier for three.
 */
static void *crowd(void *arg)
{
	const cpu_set_t *cpu = &crowd_cpu[(uintptr_t)arg];

	sched_setaffinity(0, sizeof(*cpu), cpu);
	for (int i = 0; i < crowd_rounds; i++) {
		pthread_barrier_wait(&crowd_start);
		spin_wall(30000000);
	}
	return NULL;
}

static void range(int r, void (*fn)(void))
{
	uint64_t w0, c0, q0;

	q0 = run_delay();
	w0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	perfmark_range_begin(names[r]);
	fn();
	perfmark_range_end(names[r]);
	t_cpu[r] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	t_wall[r] += clock_ns(CLOCK_MONOTONIC) - w0;
	t_runq[r] += run_delay() - q0;
	t_count[r]++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, i, n = 0;
	pthread_t tw, tl, tc[2];
	char c;

	/* two CPUs for the crowd: the first two this process may use */
	cpu_set_t all;
	CPU_ZERO(&two_cpus);
	sched_getaffinity(0, sizeof(all), &all);
	for (i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &all)) {
			CPU_SET(i, &two_cpus);
			CPU_ZERO(&crowd_cpu[n]);
			CPU_SET(i, &crowd_cpu[n]);
			n++;
		}
	if (n < 2)   /* one CPU: all three on it */
		crowd_cpu[1] = crowd_cpu[0];
	if (pipe(go_writer) || pipe(data_pipe) || pipe(go_locker) || pipe(locked_ack))
		return 2;
	pthread_barrier_init(&crowd_start, NULL, 3);
	crowd_rounds = rounds;
	if (pthread_create(&tw, NULL, writer, NULL) || pthread_create(&tl, NULL, locker, NULL) ||
	    pthread_create(&tc[0], NULL, crowd, (void *)0) || pthread_create(&tc[1], NULL, crowd, (void *)1))
		return 2;
	pthread_setname_np(tw, "pm-writer");
	pthread_setname_np(tl, "pm-locker");
	pthread_setname_np(tc[0], "pm-crowd");
	pthread_setname_np(tc[1], "pm-crowd");
	pthread_setname_np(pthread_self(), "pm-offcpu");
	sched_setaffinity(0, sizeof(two_cpus), &two_cpus);
	for (i = 0; i < rounds; i++) {
		range(R_CPU, burn_cpu);
		range(R_SLEEP, sleep_waiter);
		range(R_PIPE, pipe_reader);
		/* the locker holds the mutex before the range begins */
		if (write(go_locker[1], "g", 1) != 1 || read(locked_ack[0], &c, 1) != 1)
			return 2;
		range(R_LOCK, lock_waiter);
		range(R_CROWD, crowd_spin);
	}
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	for (i = 0; i < R_NUM; i++)
		printf("range %s count %llu wall_ns %llu cpu_ns %llu runq_ns %llu blocked_ns %llu\n",
		       names[i], (unsigned long long)t_count[i], (unsigned long long)t_wall[i],
		       (unsigned long long)t_cpu[i], (unsigned long long)t_runq[i],
		       (unsigned long long)(t_wall[i] > t_cpu[i] + t_runq[i] ?
					    t_wall[i] - t_cpu[i] - t_runq[i] : 0));
	return 0;
}

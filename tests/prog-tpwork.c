// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Workloads with a known number of tracepoint hits (t-trace-*.sh):
 *
 *   prog-tpwork sleep N           N nanosleeps of 200 us: at least N switches
 *                                 out of this task with prev_state S
 *   prog-tpwork signals A B       A SIGUSR1 then B SIGUSR2 sent to itself
 *                                 (ignored): exactly A + B signal_generate hits
 *   prog-tpwork crash N [GO]      N children, one after the other, each dies
 *                                 of a SIGSEGV in crash_here() (frame
 *                                 pointers: its stack names it); with GO, a
 *                                 file, each waits for it to exist first
 *                                 (the first half is crashed before, the
 *                                 second after a daemon restart)
 * Prints what it did: "sleeps N", "signals A B", "crashed N" (and with GO,
 * "half N" before it waits).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void crash_here(volatile int *p)
{
	*p = 1;
}

__attribute__((noinline)) static void crash_child(void)
{
	crash_here(NULL);
	_exit(3);
}

static void wait_file(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (access(path, F_OK))
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "sleep")) {
		int n = atoi(argv[2]);
		struct timespec ts = { 0, 200 * 1000 };

		for (int i = 0; i < n; i++)
			nanosleep(&ts, NULL);
		printf("sleeps %d\n", n);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "signals")) {
		int a = atoi(argv[2]), b = atoi(argv[3]);

		signal(SIGUSR1, SIG_IGN);
		signal(SIGUSR2, SIG_IGN);
		for (int i = 0; i < a; i++)
			kill(getpid(), SIGUSR1);
		for (int i = 0; i < b; i++)
			kill(getpid(), SIGUSR2);
		printf("signals %d %d\n", a, b);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "crash")) {
		int n = atoi(argv[2]), crashed = 0;

		for (int i = 0; i < n; i++) {
			int st = 0;
			pid_t p;

			if (argc >= 4 && i == n / 2) {
				printf("half %d\n", crashed);
				fflush(stdout);
				wait_file(argv[3]);
			}
			p = fork();
			if (p < 0)
				return 2;
			if (!p)
				crash_child();
			if (waitpid(p, &st, 0) == p && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)
				crashed++;
		}
		printf("crashed %d\n", crashed);
		fflush(stdout);
		return crashed == n ? 0 : 1;
	}
	fprintf(stderr, "usage: prog-tpwork sleep N | signals A B | crash N [GO]\n");
	return 2;
}

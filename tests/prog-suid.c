// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * prog-suid MODE ARG SECONDS: a program a hostile group member runs, for
 * tests/t-hostile-*.sh (built by the test itself, made setuid root there).
 *
 *   secret FILE   read FILE (root-only: works when setuid root) and emit its
 *                 first line as a marker, again and again
 *   text STRING   emit STRING as a marker
 *   nodump STRING prctl(PR_SET_DUMPABLE, 0), then as text
 *   jit PREP      make /tmp/perf-PID.map per PREP first (fifo: a FIFO,
 *                 link:PATH a symlink to PATH, none: nothing), then emit
 *                 JIT code markers (perfmark_jit_code) instead of strings
 *
 * Between markers it spends its time in system calls, so samples have
 * kernel stacks.  Prints "pid N" first.
 */
#include <fcntl.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char text[256] = "";
	double end;
	int zero;

	if (argc != 4)
		return 2;
	if (!strcmp(argv[1], "secret")) {
		FILE *f = fopen(argv[2], "r");

		if (!f || !fgets(text, sizeof(text), f)) {
			perror(argv[2]);
			return 1;
		}
		fclose(f);
		text[strcspn(text, "\n")] = '\0';
	} else if (!strcmp(argv[1], "jit")) {
		char map[64];

		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
		if (!strcmp(argv[2], "fifo") && mkfifo(map, 0644)) {
			perror(map);
			return 1;
		}
		if (!strncmp(argv[2], "link:", 5) && symlink(argv[2] + 5, map)) {
			perror(map);
			return 1;
		}
	} else {
		snprintf(text, sizeof(text), "%s", argv[2]);
		if (!strcmp(argv[1], "nodump"))
			prctl(PR_SET_DUMPABLE, 0);
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	zero = open("/dev/zero", O_RDONLY);
	end = now() + atof(argv[3]);
	while (now() < end) {
		char buf[65536];

		if (!strcmp(argv[1], "jit"))
			perfmark_jit_code((const void *)main, 64, "pm8_jit_code");
		else
			perf_printf("%s", text);
		for (int i = 0; i < 50; i++)
			if (read(zero, buf, sizeof(buf)) < 0)
				return 1;
	}
	return 0;
}

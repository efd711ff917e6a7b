/* prog-forkexec: spins in parent_work() for a moment, forks; the child spins
 * in child_before_exec() and then execs prog-spin (from the same directory)
 * for SECONDS; the parent waits and exits with the child's status.  Times are
 * the spinning thread's CPU time, not wall time: as many samples of each
 * phase on a loaded machine as on an idle one.
 *
 *   prog-forkexec [SECONDS]   default 2
 *
 * Prints "parent PID" and "child PID" on stdout.  Expected: samples in
 * spin_loop carry the child's pid and comm "prog-spin"; samples in
 * parent_work carry the parent's pid and comm "prog-forkexec". */
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* this thread's CPU time */
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define SPIN(secs) do { \
	double end_ = now() + (secs); \
	uint64_t x_ = 1; \
	do { \
		for (int i_ = 0; i_ < 100000; i_++) \
			x_ = x_ * 6364136223846793005ull + 1442695040888963407ull; \
		sink = x_; \
	} while (now() < end_); \
} while (0)

/* Each spins in its own body, so a sample's leaf names the phase. */
__attribute__((noinline)) void parent_work(double secs) { SPIN(secs); }
__attribute__((noinline)) void child_before_exec(double secs) { SPIN(secs); }

int main(int argc, char **argv)
{
	const char *secs = argc > 1 ? argv[1] : "2";
	char self[PATH_MAX], spin_path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	if (n < 0) {
		perror("prog-forkexec: /proc/self/exe");
		return 1;
	}
	self[n] = 0;
	snprintf(spin_path, sizeof(spin_path), "%s/prog-spin", dirname(self));

	printf("parent %d\n", (int)getpid());
	fflush(stdout);
	parent_work(0.3);
	pid = fork();
	if (pid < 0) {
		perror("prog-forkexec: fork");
		return 1;
	}
	if (pid == 0) {
		printf("child %d\n", (int)getpid());
		fflush(stdout);
		child_before_exec(0.2);
		execl(spin_path, "prog-spin", secs, (char *)NULL);
		perror("prog-forkexec: exec prog-spin");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("prog-forkexec: waitpid");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

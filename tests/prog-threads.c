/* prog-threads: three worker threads, each spinning in its own function and
 * named with pthread_setname_np:
 *
 *   thread "pm-alpha" runs thread_alpha(), "pm-beta" thread_beta(),
 *   "pm-gamma" thread_gamma().
 *
 *   prog-threads [SECONDS]    CPU time per thread, default 2 (not wall time:
 *                             as many samples on a loaded machine)
 *
 * Prints one line per thread on stdout, "NAME TID FUNCTION", before the work
 * starts, so a test can check each sample's tid against its function. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double secs = 2.0;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* this thread's CPU time */
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define SPIN(x) do { \
	for (int i_ = 0; i_ < 100000; i_++) \
		x = x * 6364136223846793005ull + 1442695040888963407ull; \
} while (0)

static volatile uint64_t sink;

__attribute__((noinline)) void thread_alpha(double end)
{
	uint64_t x = 1;
	do SPIN(x); while (now() < end);
	sink += x;
}

__attribute__((noinline)) void thread_beta(double end)
{
	uint64_t x = 2;
	do SPIN(x); while (now() < end);
	sink += x;
}

__attribute__((noinline)) void thread_gamma(double end)
{
	uint64_t x = 3;
	do SPIN(x); while (now() < end);
	sink += x;
}

struct worker {
	const char *name, *fn_name;
	void (*fn)(double);
};

static const struct worker workers[] = {
	{ "pm-alpha", "thread_alpha", thread_alpha },
	{ "pm-beta", "thread_beta", thread_beta },
	{ "pm-gamma", "thread_gamma", thread_gamma },
};
#define NWORKERS (sizeof(workers) / sizeof(workers[0]))

static void *run(void *arg)
{
	const struct worker *w = arg;

	pthread_setname_np(pthread_self(), w->name);
	pthread_mutex_lock(&out_lock);
	printf("%s %ld %s\n", w->name, (long)syscall(SYS_gettid), w->fn_name);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	pthread_barrier_wait(&start);
	w->fn(now() + secs);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NWORKERS];

	if (argc > 1)
		secs = atof(argv[1]);
	pthread_barrier_init(&start, NULL, NWORKERS);
	for (size_t i = 0; i < NWORKERS; i++)
		if (pthread_create(&th[i], NULL, run, (void *)&workers[i]) != 0) {
			fprintf(stderr, "prog-threads: pthread_create failed\n");
			return 1;
		}
	for (size_t i = 0; i < NWORKERS; i++)
		pthread_join(th[i], NULL);
	return 0;
}

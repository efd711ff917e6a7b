// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Work too long for the loop, each piece in a thread of its own: taking a
 * large ring over at start-up, writing a ring's snapshot.  The loop goes on
 * serving every other request meanwhile (issue 18 case 14: a 512 MiB
 * ring's snapshot kept every client waiting 12.8 s on a loaded machine).
 *
 * A job's work() runs in its thread and touches only what its owner gave
 * it; its done() runs back on the loop thread (an eventfd wakes the loop),
 * where the owner takes the result.  Jobs are few (a snapshot per
 * connection, a takeover per session), so a thread each, detached.  The
 * daemon's signals are blocked before any thread starts: they all reach
 * the signalfd.  At exit, every job is waited for and done.
 *
 * A job runs at the nice value the daemon was started with, not at the
 * loop's (main.c raises the loop's): a client's snapshot is not to take
 * CPU from the programs it traces.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "perfmarkd.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *done;            /* finished, done() not run yet */
	size_t running;              /* started, done() not run yet */
	int efd;
	int nice;                    /* the daemon's own, from before the loop's was raised */
} J = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .efd = -1 };

static void finished(struct job *j)
{
	uint64_t one = 1;

	pthread_mutex_lock(&J.lock);
	j->next = J.done;
	J.done = j;
	pthread_cond_broadcast(&J.cond);
	pthread_mutex_unlock(&J.lock);
	(void)!write(J.efd, &one, sizeof(one));
}

static void *job_main(void *arg)
{
	struct job *j = arg;

	(void)setpriority(PRIO_PROCESS, 0, J.nice);   /* this thread only (Linux) */
	j->work(j);
	finished(j);
	return NULL;
}

/* the finished jobs' done(), oldest first */
static void run_done(void)
{
	struct job *list, *rev = NULL;

	pthread_mutex_lock(&J.lock);
	list = J.done;
	J.done = NULL;
	pthread_mutex_unlock(&J.lock);
	while (list) {
		struct job *j = list;

		list = j->next;
		j->next = rev;
		rev = j;
	}
	while (rev) {
		struct job *j = rev;

		rev = j->next;
		J.running--;
		j->done(j);
	}
}

static void on_done(struct watch *w, uint32_t ev)
{
	uint64_t n;

	(void)!read(J.efd, &n, sizeof(n));
	run_done();
}

static struct watch done_watch = { .fn = on_done };

int jobs__init(void)
{
	errno = 0;
	J.nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		J.nice = 0;
	J.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (J.efd < 0)
		return -errno;
	return watch__add(&done_watch, J.efd, EPOLLIN);
}

void job__start(struct job *j, void (*work)(struct job *j), void (*done)(struct job *j))
{
	pthread_attr_t at;
	pthread_t th;
	int e;

	j->work = work;
	j->done = done;
	j->next = NULL;
	J.running++;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&th, &at, job_main, j);
	pthread_attr_destroy(&at);
	if (e) {                     /* no thread: the work on the loop, as it was */
		logmsg("no thread for a job (%s): working on the loop", strerror(e));
		job_main(j);
	}
}

size_t jobs__running(void)
{
	return J.running;
}

void jobs__wait_all(void)
{
	while (J.running) {
		pthread_mutex_lock(&J.lock);
		while (!J.done)
			pthread_cond_wait(&J.cond, &J.lock);
		pthread_mutex_unlock(&J.lock);
		run_done();
	}
}

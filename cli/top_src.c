// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where perfmark top's samples come from (top.h).  Both sources give a
 * pipe-mode perf.data stream on a pipe, replayed (replay.h) by one reader
 * thread into the model, so top reads records exactly as report and
 * script do, sideband, markers and all:
 *
 *   local    the session engine in this process, its records going to a
 *            perfdata sink in pipe mode on the pipe (session__set_output),
 *            drained by the loop as `perfmark record` drains;
 *   session  perfmarkd's live reader of a named session: the pipe's write
 *            end passed with an `attach` request, as `session attach` does.
 *            The stream starts with what the session held before: its
 *            sideband names the processes; its samples, older than the
 *            attach, are not counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "jsonf.h"
#include "perfmark.h"
#include "perfread.h"
#include "proto.h"
#include "replay.h"
#include "session.h"
#include "top.h"

#define PIPE_BYTES (1 << 20)
#define JOIN_WAIT_S 2

struct top_src {
	struct top_model *m;
	struct session *s;             /* local */
	int wfd;                       /* local: the sink's end of the pipe */
	int rfd;                       /* the reader thread's end */
	int sock;                      /* session: the connection the attach lives on */
	int evfd;                      /* the reader thread says the stream ended */
	struct replay *rp;             /* the reader thread's */
	pthread_t th;
	bool th_on;
	atomic_bool ended;
	atomic_bool stopping;          /* the loop quits: the reader drops what is left */
	char why[256];                 /* why it ended, as the loop learnt it */
	char stream_why[256];          /* ... as the reader thread did (before ended is set) */
	char notice[256];
	char event[64];
};

/* ---- the reader thread ---------------------------------------------------------------- */

static int on_sample(void *ctx, const struct perfread_sample *s)
{
	struct top_src *t = ctx;

	if (atomic_load_explicit(&t->stopping, memory_order_relaxed))
		return -ECANCELED;
	return top_model__sample(t->m, replay__symbolizer(t->rp), replay__reader(t->rp), s);
}

static int on_marker(void *ctx, const struct perfread_sample *s, const struct replay_marker *rm)
{
	struct top_src *t = ctx;

	if (rm->m.state != MARKER_OK || rm->m.type != PERFMARK_TYPE_RANGE_END || !rm->m.text ||
	    rm->pair.id == MARKER_NO_RANGE)
		return 0;
	return top_model__range_end(t->m, rm->m.text, rm->m.text_len, s->time, rm->pair.duration);
}

static int on_lost(void *ctx, const struct perf_event_header *rec, uint64_t lost)
{
	top_model__lost(((struct top_src *)ctx)->m, lost);
	return 0;
}

static int on_sideband(void *ctx, const struct perf_event_header *rec)
{
	struct top_src *t = ctx;

	if (atomic_load_explicit(&t->stopping, memory_order_relaxed))
		return -ECANCELED;
	top_model__sideband(t->m, replay__symbolizer(t->rp), rec);
	return 0;
}

static const struct replay_ops ops = {
	.sample = on_sample, .marker = on_marker, .lost = on_lost, .sideband = on_sideband,
};

static void *reader_main(void *arg)
{
	struct top_src *t = arg;
	uint64_t one = 1;
	int e;

	e = replay__open(&t->rp, t->rfd, NULL);
	if (!e)
		e = replay__run(t->rp, &ops, t);
	if (e)
		snprintf(t->stream_why, sizeof(t->stream_why), "the stream failed: %s",
			 replay__error(t->rp));
	else
		snprintf(t->stream_why, sizeof(t->stream_why), "the stream ended");
	atomic_store(&t->ended, true);
	(void)!write(t->evfd, &one, sizeof(one));
	return NULL;
}

static int start_reader(struct top_src *t, char *err, size_t errlen)
{
	int e;

	t->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->evfd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return -errno;
	}
	e = pthread_create(&t->th, NULL, reader_main, t);
	if (e) {
		snprintf(err, errlen, "cannot start the reader thread: %s", strerror(e));
		return -e;
	}
	t->th_on = true;
	return 0;
}

static struct top_src *src_new(struct top_model *m, int *p, char *err, size_t errlen)
{
	struct top_src *t = calloc(1, sizeof(*t));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->m = m;
	t->wfd = t->rfd = t->sock = t->evfd = -1;
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		free(t);
		return NULL;
	}
	fcntl(p[1], F_SETPIPE_SZ, PIPE_BYTES);   /* fewer wakeups; the default works too */
	t->rfd = p[0];
	return t;
}

/* ---- in-process --------------------------------------------------------------------- */

static void on_notice(void *ctx, const char *msg)
{
	struct top_src *t = ctx;

	snprintf(t->notice, sizeof(t->notice), "%s", msg);
}

int top_src__local(struct top_src **out, const struct recspec *spec, int argc, char **argv,
		   struct top_model *m, char *err, size_t errlen)
{
	struct session_opts so = {
		.spec = *spec, .uid_filter = (uint32_t)-1, .argc = argc, .argv = argv,
		.notice = on_notice, .out_fd = -1,
	};
	struct top_src *t;
	int p[2], e;

	t = src_new(m, p, err, errlen);
	*out = t;
	if (!t)
		return -ENOMEM;
	t->wfd = p[1];
	so.notice_ctx = t;
	e = session__new(&t->s, &so, err, errlen);
	if (e)
		return e;
	session__set_output(t->s, t->wfd, true);
	/* the reader first: the header and the synthesized sideband fill the pipe */
	e = start_reader(t, err, errlen);
	if (e)
		return e;
	e = session__start(t->s, err, errlen);
	if (e)
		return e;
	snprintf(t->event, sizeof(t->event), "%s", session__event_name(t->s, 0));
	return 0;
}

/* ---- a session of perfmarkd --------------------------------------------------------- */

int top_src__session(struct top_src **out, const char *name, struct top_model *m,
		     char *err, size_t errlen)
{
	struct json_object *rep;
	struct top_src *t;
	int p[2], e;

	t = src_new(m, p, err, errlen);
	*out = t;
	if (!t)
		return -ENOMEM;
	t->sock = client_connect(5000);
	if (t->sock < 0) {
		snprintf(err, errlen, "cannot reach perfmarkd at %s: %s", client_socket(),
			 strerror(-t->sock));
		close(p[1]);
		return t->sock;
	}
	e = start_reader(t, err, errlen);
	if (e) {
		close(p[1]);
		return e;
	}
	rep = client_ok(client_call(t->sock, client_request("attach", name), &p[1], 1));
	close(p[1]);   /* the daemon has its copy: the stream ends when it closes it */
	if (!rep) {
		err[0] = '\0';   /* said already */
		return -EINVAL;
	}
	json_object_put(rep);
	client_untimed(t->sock);
	return 0;
}

/* ---- the loop's side --------------------------------------------------------------------- */

size_t top_src__fds(const struct top_src *t, int *fds, size_t max)
{
	size_t n = 0;

	if (t->s)
		n = (size_t)session__fds(t->s, fds, max > 2 ? max - 2 : 0);
	if (t->sock >= 0 && n < max)
		fds[n++] = t->sock;
	if (t->evfd >= 0 && n < max)
		fds[n++] = t->evfd;
	return n;
}

/* The daemon speaks on an attached connection only to end it: why. */
static int daemon_said(struct top_src *t)
{
	struct json_object *rep = NULL;
	int fds[PROTO_MAX_FDS];
	size_t nr = PROTO_MAX_FDS;
	int e = proto_recv(t->sock, &rep, fds, &nr);

	while (nr)
		close(fds[--nr]);
	if (e)
		snprintf(t->why, sizeof(t->why), "perfmarkd closed the connection");
	else if (!jsonf_get_bool(rep, "ok"))
		snprintf(t->why, sizeof(t->why), "%s", jsonf_get_str(rep, "error") ?
			 jsonf_get_str(rep, "error") : "perfmarkd ended the stream");
	else
		snprintf(t->why, sizeof(t->why), "the session ended");
	json_object_put(rep);
	close(t->sock);
	t->sock = -1;
	return 1;
}

int top_src__step(struct top_src *t, int ready_fd)
{
	int e;

	if (atomic_load(&t->ended))
		return 1;
	if (ready_fd >= 0 && ready_fd == t->sock)
		return daemon_said(t);
	if (t->s && ready_fd != t->evfd) {
		e = session__drain(t->s);
		if (e) {
			snprintf(t->why, sizeof(t->why), "recording stopped: %s", strerror(-e));
			return 1;
		}
	}
	return 0;
}

const char *top_src__why(const struct top_src *t)
{
	if (t->why[0])
		return t->why;
	return atomic_load(&t->ended) ? t->stream_why : "the stream ended";
}

const char *top_src__event(const struct top_src *t)
{
	return t->event[0] ? t->event : NULL;
}

const char *top_src__notice(const struct top_src *t)
{
	return t->notice[0] ? t->notice : NULL;
}

/*
 * The reader ends at its next record (stopping), or when the last write end
 * closes.  Bounded: a reader still blocked then is left to the process's
 * exit (false: the model is still in use).
 */
static bool join_reader(struct top_src *t)
{
	struct timespec ts;

	if (!t->th_on)
		return true;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += JOIN_WAIT_S;
	if (pthread_timedjoin_np(t->th, NULL, &ts)) {
		pthread_detach(t->th);
		return false;
	}
	t->th_on = false;
	return true;
}

bool top_src__free(struct top_src *t)
{
	if (!t)
		return true;
	atomic_store(&t->stopping, true);
	/*
	 * No final drain: what is still in flight is not shown, and the
	 * reader, stopping, may no longer empty the pipe a drain writes into.
	 */
	session__free(t->s);
	if (t->wfd >= 0)
		close(t->wfd);
	if (t->sock >= 0)
		close(t->sock);
	if (!join_reader(t))
		return false;    /* its pipe, replay and t stay theirs */
	replay__free(t->rp);
	if (t->rfd >= 0)
		close(t->rfd);
	if (t->evfd >= 0)
		close(t->evfd);
	free(t);
	return true;
}

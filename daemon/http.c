// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmarkd as a scrape target (issue 23): `--http ADDR:PORT` serves
 *
 *   GET /metrics                 Prometheus text exposition (metrics.c)
 *   GET /debug/pprof/profile     ?seconds=N (1..HTTP_MAX_SECONDS, default 30,
 *                                as Parca and Alloy send) &session=NAME
 *                                (default: the one exposed session): a
 *                                gzip'd profile.proto (lib/analyze/pprof.c)
 *
 * Read-only: no request creates, stops or changes anything.  Only the
 * sessions root exposes (--http-sessions; default root's own) are seen;
 * any other name is "not found", whether it exists or not.
 *
 * Threads: libmicrohttpd (no HTTP parsing here) runs its own, one per
 * connection (at most HTTP_MAX_CONNS).  They never touch the daemon's
 * state: a request becomes a job queued for the loop (an eventfd wakes
 * it), which does the short part there (render the metrics text, write
 * a ring snapshot into a memfd) and hands back the result; the long part
 * (reading the snapshot, symbols, pprof encoding, gzip, sending) stays in
 * the request's thread.  Requests in flight are capped per kind
 * (HTTP_MAX_METRICS, HTTP_MAX_PPROF): one more gets 503 at once, so a
 * flood never queues work on the loop.  A loop that does not answer in
 * HTTP_LOOP_WAIT_S gives 503 (the job is dropped by whoever finishes last).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "clock.h"
#include "perfmarkd.h"
#include "pprof.h"
#include "profile.h"

static struct {
	struct MHD_Daemon *mhd;
	int efd, lfd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct http_job *queue;
	bool stopping;
} H = { .efd = -1, .lfd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

struct http_counters http_counters;

/* --- the loop's side ------------------------------------------------------- */

static void on_jobs(struct watch *w, uint32_t ev)
{
	struct http_job *j, *next;
	uint64_t n;

	(void)!read(H.efd, &n, sizeof(n));
	pthread_mutex_lock(&H.lock);
	j = H.queue;
	H.queue = NULL;
	pthread_mutex_unlock(&H.lock);
	for (; j; j = next) {
		next = j->next;
		http__serve(j);   /* even when its request gave up: short, and freed below */
		pthread_mutex_lock(&H.lock);
		j->done = true;
		if (j->abandoned) {
			pthread_mutex_unlock(&H.lock);
			http_job__free(j);
			continue;
		}
		pthread_cond_broadcast(&H.cond);
		pthread_mutex_unlock(&H.lock);
	}
}

static struct watch jobs_watch = { .fn = on_jobs };

void http_job__free(struct http_job *j)
{
	free(j->body);
	if (j->fd >= 0)
		close(j->fd);
	free(j);
}

/* --- a request's thread ---------------------------------------------------- */

/* Queue j for the loop and wait: true when it was served (else j is the loop's to free). */
static bool run_on_loop(struct http_job *j)
{
	struct timespec dl;
	uint64_t one = 1;
	bool done;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += HTTP_LOOP_WAIT_S;
	pthread_mutex_lock(&H.lock);
	j->done = false;
	j->next = H.queue;
	H.queue = j;
	pthread_mutex_unlock(&H.lock);
	(void)!write(H.efd, &one, sizeof(one));
	pthread_mutex_lock(&H.lock);
	while (!j->done && !H.stopping)
		if (pthread_cond_timedwait(&H.cond, &H.lock, &dl) == ETIMEDOUT)
			break;
	done = j->done;
	if (!done)
		j->abandoned = true;
	pthread_mutex_unlock(&H.lock);
	return done;
}

/* Sleep s seconds unless the daemon stops first (false then). */
static bool wait_seconds(unsigned s)
{
	struct timespec dl;
	bool stopping;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += s;
	pthread_mutex_lock(&H.lock);
	while (!H.stopping && pthread_cond_timedwait(&H.cond, &H.lock, &dl) != ETIMEDOUT)
		;
	stopping = H.stopping;
	pthread_mutex_unlock(&H.lock);
	return !stopping;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *ctype,
			     char *body, size_t len, bool gzip)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (gzip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (code == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	atomic_fetch_add(&http_counters.by_class[code / 100 < 6 ? code / 100 : 5], 1);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned code, const char *msg)
{
	char *b = NULL;

	if (asprintf(&b, "%s\n", msg) < 0)
		return MHD_NO;
	return reply(conn, code, "text/plain; charset=utf-8", b, strlen(b), false);
}

static enum MHD_Result busy(struct MHD_Connection *conn, atomic_int *inflight)
{
	atomic_fetch_sub(inflight, 1);
	atomic_fetch_add(&http_counters.refused_busy, 1);
	return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "busy: too many requests in flight");
}

static struct http_job *job_new(enum http_job_kind kind)
{
	struct http_job *j = calloc(1, sizeof(*j));

	if (j) {
		j->kind = kind;
		j->fd = -1;
	}
	return j;
}

/* Serve what the loop made, or its error; j is freed unless the loop still has it. */
static enum MHD_Result finish(struct MHD_Connection *conn, struct http_job *j, bool served)
{
	enum MHD_Result r;
	char *body;

	if (!served)
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "the daemon did not answer in time");
	if (j->status != MHD_HTTP_OK) {
		r = reply_text(conn, j->status, j->err);
	} else {
		body = j->body;
		j->body = NULL;
		r = reply(conn, MHD_HTTP_OK, j->ctype, body, j->len, j->gzip);
	}
	http_job__free(j);
	return r;
}

/* The text gzip'd in place when the client takes it (Prometheus does): a tenth of the bytes */
static void gzip_body(struct MHD_Connection *conn, struct http_job *j)
{
	const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	z_stream z = { 0 };
	uLong cap;
	Bytef *out;

	if (!ae || !strstr(ae, "gzip") || j->status != MHD_HTTP_OK || !j->len)
		return;
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return;
	cap = deflateBound(&z, (uLong)j->len) + 32;
	out = malloc(cap);
	z.next_in = (Bytef *)j->body;
	z.avail_in = (uInt)j->len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (out && deflate(&z, Z_FINISH) == Z_STREAM_END) {
		free(j->body);
		j->body = (char *)out;
		j->len = z.total_out;
		j->gzip = true;
		out = NULL;
	}
	free(out);
	deflateEnd(&z);
}

static enum MHD_Result get_metrics(struct MHD_Connection *conn)
{
	struct http_job *j;

	if (atomic_fetch_add(&http_counters.metrics_inflight, 1) >= HTTP_MAX_METRICS)
		return busy(conn, &http_counters.metrics_inflight);
	j = job_new(HTTP_JOB_METRICS);
	bool served = j && run_on_loop(j);

	if (served)
		gzip_body(conn, j);
	enum MHD_Result r = j ? finish(conn, j, served) : MHD_NO;

	atomic_fetch_sub(&http_counters.metrics_inflight, 1);
	return r;
}

/* seconds: digits only, 1..HTTP_MAX_SECONDS; 0 when bad */
static unsigned parse_seconds(const char *v)
{
	unsigned long n = 0;

	if (!v)
		return HTTP_DEFAULT_SECONDS;
	if (!*v || strlen(v) > 6 || strspn(v, "0123456789") != strlen(v))
		return 0;
	n = strtoul(v, NULL, 10);
	return n >= 1 && n <= HTTP_MAX_SECONDS ? (unsigned)n : 0;
}

/* The snapshot (a perf.data in j->fd) as gzip'd profile.proto, into j->body. */
static void encode_pprof(struct http_job *j)
{
	size_t taken = 0;
	struct pprof_opts po = { .since = j->since, .taken = &taken };
	struct profile_opts lo = { .keep_addrs = true };   /* pprof's stacks by address */
	struct profile *p = NULL;
	char err[256] = "";
	size_t len = 0;
	FILE *f;
	int e;

	lseek(j->fd, 0, SEEK_SET);
	e = profile__load(&p, j->fd, &lo, err, sizeof(err));
	if (e == -ENODATA || (e && strstr(err, "no samples"))) {
		j->status = MHD_HTTP_NOT_FOUND;
		snprintf(j->err, sizeof(j->err), "no samples in the last %u s", j->seconds);
		return;
	}
	if (e) {
		j->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		snprintf(j->err, sizeof(j->err), "cannot read the snapshot: %.200s", err);
		return;
	}
	f = open_memstream(&j->body, &len);
	e = f ? pprof__write(p, &po, f) : -ENOMEM;
	if (f && fclose(f) && !e)
		e = -ENOMEM;
	profile__free(p);
	if (!e && !taken) {
		/* the snapshot's samples are all older than the window */
		free(j->body);
		j->body = NULL;
		j->status = MHD_HTTP_NOT_FOUND;
		snprintf(j->err, sizeof(j->err), "no samples in the last %u s", j->seconds);
		return;
	}
	j->len = len;
	j->ctype = "application/octet-stream";
	if (e) {
		j->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		snprintf(j->err, sizeof(j->err), "pprof: %s", strerror(-e));
	}
}

static enum MHD_Result get_pprof(struct MHD_Connection *conn)
{
	const char *name = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "session");
	const char *secs = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
	unsigned seconds = parse_seconds(secs);
	struct http_job *j;
	bool served;

	if (!seconds)
		return reply_text(conn, MHD_HTTP_BAD_REQUEST, "seconds must be 1 to " HTTP_MAX_SECONDS_S);
	if (name && (!*name || strlen(name) > PROTO_NAME_MAX))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "no such session");
	if (atomic_fetch_add(&http_counters.pprof_inflight, 1) >= HTTP_MAX_PPROF)
		return busy(conn, &http_counters.pprof_inflight);
	j = job_new(HTTP_JOB_PPROF);
	if (!j) {
		atomic_fetch_sub(&http_counters.pprof_inflight, 1);
		return MHD_NO;
	}
	j->seconds = seconds;
	if (name)
		snprintf(j->session, sizeof(j->session), "%s", name);
	served = run_on_loop(j);
	if (served && j->status == HTTP_STATUS_WAIT) {
		/* no ring: the next N seconds, then what the session's file holds since */
		served = wait_seconds(seconds) && run_on_loop(j);
		if (served && j->status == HTTP_STATUS_WAIT)
			j->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	if (served && j->status == MHD_HTTP_OK)
		encode_pprof(j);
	enum MHD_Result r = finish(conn, j, served);

	atomic_fetch_sub(&http_counters.pprof_inflight, 1);
	return r;
}

/* --- connections still sending headers ----------------------------------- */

/*
 * libmicrohttpd's timeout closes a connection that sends nothing for
 * HTTP_IDLE_S; one that sends a header byte every few seconds is never
 * idle, and HTTP_MAX_CONNS of them held every slot.  So every connection
 * is in this table while it waits for a request's headers (from its
 * start, or from the end of its last request): a new connection cuts the
 * ones that waited more than HTTP_HEADERS_S, and at the limit the oldest
 * one waiting, so that one more can always come in (libmicrohttpd is
 * allowed one more than HTTP_MAX_CONNS).  A scraper sends its headers at
 * once; a request being served (a pprof profile of minutes) is never cut.
 * Cut: shutdown() of its socket, under the lock that the CLOSED
 * notification takes before libmicrohttpd closes the descriptor, so it
 * is never another's.
 */
static struct conn_slot {
	struct MHD_Connection *conn;   /* NULL: free */
	int fd;
	ino_t ino;                     /* its socket's: a cut checks it is still that one */
	bool waiting;                  /* for a request's headers */
	uint64_t since_ns;
} slots[HTTP_MAX_CONNS + 1];

static void cut(struct conn_slot *s)
{
	struct stat st;

	if (!fstat(s->fd, &st) && st.st_ino == s->ino)
		shutdown(s->fd, SHUT_RDWR);
	s->waiting = false;            /* once */
	atomic_fetch_add(&http_counters.cut_slow, 1);
}

/* a new connection in slot me: the slow ones cut, and the oldest waiting one at the limit */
static void cut_slow(const struct conn_slot *me, uint64_t now)
{
	struct conn_slot *oldest = NULL;
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		struct conn_slot *s = &slots[i];

		if (!s->conn)
			continue;
		n++;
		if (s == me || !s->waiting)
			continue;
		if (now - s->since_ns > HTTP_HEADERS_S * 1000000000ull)
			cut(s);
		else if (!oldest || s->since_ns < oldest->since_ns)
			oldest = s;
	}
	if (n > HTTP_MAX_CONNS && oldest)
		cut(oldest);
}

static struct conn_slot *slot_of(struct MHD_Connection *conn)
{
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		if (slots[i].conn == conn)
			return &slots[i];
	return NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **sock_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct conn_slot *s;
	struct stat st;
	uint64_t now = clock_mono_ns();

	(void)cls;
	(void)sock_ctx;
	pthread_mutex_lock(&H.lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		s = slot_of(NULL);
		if (s && ci && !fstat(ci->connect_fd, &st)) {
			*s = (struct conn_slot){ .conn = conn, .fd = ci->connect_fd, .ino = st.st_ino,
						 .waiting = true, .since_ns = now };
			cut_slow(s, now);
		}
	} else if ((s = slot_of(conn))) {
		s->conn = NULL;
	}
	pthread_mutex_unlock(&H.lock);
}

/* waiting: the connection's request begins (false) or ended (true) */
static void set_waiting(struct MHD_Connection *conn, bool waiting)
{
	struct conn_slot *s;

	pthread_mutex_lock(&H.lock);
	s = slot_of(conn);
	if (s) {
		s->waiting = waiting;
		s->since_ns = clock_mono_ns();
	}
	pthread_mutex_unlock(&H.lock);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)con_cls;
	(void)toe;
	set_waiting(conn, true);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	static int first;

	/* the first call has the headers: refuse other methods before any body */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET only");
	if (!*con_cls) {
		*con_cls = &first;
		set_waiting(conn, false);   /* its headers are in */
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return reply_text(conn, MHD_HTTP_BAD_REQUEST, "no request body expected");
	}
	if (!strcmp(url, "/metrics"))
		return get_metrics(conn);
	if (!strcmp(url, "/debug/pprof/profile"))
		return get_pprof(conn);
	return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found: /metrics, /debug/pprof/profile");
}

/* ADDR:PORT ([V6]:PORT; PORT alone: loopback) bound and listening; -errno */
static int listen_on(const char *spec)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE }, *ai = NULL;
	char host[128], *port;
	int fd, one = 1, e;

	if (strlen(spec) >= sizeof(host) - 16)
		return -EINVAL;
	if (*spec && strspn(spec, "0123456789") == strlen(spec))
		snprintf(host, sizeof(host), "127.0.0.1:%s", spec);
	else
		snprintf(host, sizeof(host), "%s", spec);
	port = strrchr(host, ':');
	if (!port || port == host)
		return -EINVAL;
	*port++ = '\0';
	if (host[0] == '[' && port[-2] == ']') {
		port[-2] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	e = fd < 0 ? -errno : 0;
	if (!e && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		   bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)))
		e = -errno;
	freeaddrinfo(ai);
	if (e) {
		if (fd >= 0)
			close(fd);
		return e;
	}
	return fd;
}

static void log_port(int fd, const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (!getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	logmsg("http: serving /metrics and /debug/pprof/profile on %s port %u (--http %s)", a, port, spec);
}

int http__start(const char *spec)
{
	int e;

	H.lfd = listen_on(spec);
	if (H.lfd < 0) {
		logmsg("--http %s: %s", spec, H.lfd == -EINVAL ? "not [ADDR:]PORT (numeric, e.g. 127.0.0.1:9464)"
								   : strerror(-H.lfd));
		return H.lfd;
	}
	H.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e = H.efd < 0 ? -errno : watch__add(&jobs_watch, H.efd, EPOLLIN);
	if (e) {
		logmsg("http: eventfd: %s", strerror(-e));
		return e;
	}
	H.mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
				 MHD_USE_POLL,
				 0, NULL, NULL, on_request, NULL,
				 MHD_OPTION_LISTEN_SOCKET, H.lfd,
				 MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNS + 1,
				 MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
				 MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
				 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_S,
				 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
				 MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1u << 20),
				 MHD_OPTION_END);
	if (!H.mhd) {
		logmsg("http: cannot start libmicrohttpd on %s", spec);
		return -EIO;
	}
	log_port(H.lfd, spec);
	return 0;
}

void http__stop(void)
{
	if (!H.mhd)
		return;
	pthread_mutex_lock(&H.lock);
	H.stopping = true;
	pthread_cond_broadcast(&H.cond);
	pthread_mutex_unlock(&H.lock);
	/* the queued jobs: nobody serves them now (their threads gave up on stopping) */
	on_jobs(&jobs_watch, 0);
	MHD_stop_daemon(H.mhd);
	H.mhd = NULL;
	watch__del(H.efd);
	close(H.efd);
	close(H.lfd);
	H.efd = H.lfd = -1;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark record: write perf.data, through perfmarkd when its socket
 * answers (an anonymous session owned by this connection, writing into the
 * output this process opened and passed over), otherwise with the session
 * engine in-process.  Both paths share option parsing, output rules, the
 * command's start and the messages: the output is the same either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "recopts.h"
#include "evspec.h"
#include "proto.h"
#include "session.h"

#define DEFAULT_SOCKET "/run/perfmark/perfmarkd.sock"
#define DAEMON_ANSWER_MS 1000

struct record {
	struct session_opts so;
	const char *output;
	double duration;
	bool verbose;
	char **cmd;
	int cmd_argc;
	pid_t child;
	int go_fd, exec_err_fd;
	bool created_output;
	char notices[4][256];
	size_t nr_notices;
};

/* Notices wait until recording starts: a failing command prints one line. */
static void on_notice(void *ctx, const char *msg)
{
	struct record *r = ctx;

	if (r->nr_notices < sizeof(r->notices) / sizeof(r->notices[0]))
		snprintf(r->notices[r->nr_notices++], sizeof(r->notices[0]), "%s", msg);
}

static void flush_notices(struct record *r)
{
	size_t i;

	for (i = 0; i < r->nr_notices; i++)
		pm_notice("%s", r->notices[i]);
	r->nr_notices = 0;
}

static void usage_hint(void)
{
	fprintf(stderr, "usage: perfmark record [-e EVENT[,EVENT...]] [-F HZ | -c PERIOD] [-g]\n"
		"                       [-a | -p PID[,PID...] | -- CMD [ARG...]]\n"
		"                       [--no-markers] [-z[LEVEL]] [-o FILE|-] [--duration SECONDS]\n");
}

/* execvp's search, done up front so a missing CMD is reported before anything starts */
static bool find_in_path(const char *cmd)
{
	char buf[PATH_MAX];
	const char *path, *p, *end;

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		/* an empty PATH entry means the current directory */
		if (end == p)
			snprintf(buf, sizeof(buf), "./%s", cmd);
		else
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, cmd);
		if (access(buf, X_OK) == 0) {
			struct stat sb;

			if (!stat(buf, &sb) && S_ISREG(sb.st_mode))
				return true;
		}
		if (!*end)
			return false;
	}
}

static int parse(struct record *r, int argc, char **argv)
{
	static const struct option opts[] = {
		RECOPTS_LONG,
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'D' },
		{ "ringbuf", required_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct recopts ro;
	char err[256] = "";
	int c, t;

	recopts_init(&ro);
	r->output = "perf.data";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+" RECOPTS_SHORT "o:vh", opts, NULL)) != -1) {
		t = recopts_take(&ro, c, optarg);
		if (t < 0)
			return 1;
		if (t)
			continue;
		switch (c) {
		case 'o':
			r->output = optarg;
			break;
		case 'D': {
			char *end;

			r->duration = strtod(optarg, &end);
			if (*end || !(r->duration > 0))
				return pm_err("bad duration '%s'", optarg);
			break;
		}
		case 'R': {
			uint64_t sz;

			if (evspec_parse_size(optarg, &sz, err, sizeof(err)))
				return pm_err("%s", err);
			if (sz < 4096 || (sz & (sz - 1)))
				return pm_err("ring buffer size must be a power of two >= 4096");
			ro.so.ringbuf_size = sz;
			break;
		}
		case 'v':
			r->verbose = true;
			break;
		case 'h':
			usage_hint();
			exit(0);
		default:
			usage_hint();
			return 1;
		}
	}
	if (recopts_check(&ro))
		return 1;
	r->so = ro.so;
	r->cmd = argv + optind;
	r->cmd_argc = argc - optind;
	if ((ro.have_a ? 1 : 0) + (r->so.nr_pids ? 1 : 0) + (r->cmd_argc ? 1 : 0) > 1)
		return pm_err("give only one of -a, -p PID and -- CMD");
	if (r->so.nr_pids || r->cmd_argc)
		r->so.target = SESSION_TARGET_PIDS;
	else
		r->so.target = SESSION_TARGET_ALL;   /* as perf: no target means system-wide */
	/* system-wide or -p without --duration runs until SIGINT/SIGTERM */
	return 0;
}

static int check_targets(struct record *r)
{
	size_t i;

	for (i = 0; i < r->so.nr_pids; i++)
		if (kill(r->so.pids[i], 0) && errno == ESRCH)
			return pm_err("no such process: %d", r->so.pids[i]);
	if (r->cmd_argc && !find_in_path(r->cmd[0]))
		return pm_err("%s: command not found", r->cmd[0]);
	return 0;
}

static int open_output(struct record *r, int *fd)
{
	char old[PATH_MAX];
	struct stat sb;

	if (!strcmp(r->output, "-")) {
		if (isatty(1))
			return pm_err("refusing to write a perf.data stream to a terminal (use -o FILE or a pipe)");
		r->so.pipe = true;
		*fd = 1;
		return 0;
	}
	/* keep the previous recording as FILE.old, as perf does */
	if (!stat(r->output, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		snprintf(old, sizeof(old), "%s.old", r->output);
		if (access(r->output, W_OK) == 0)
			rename(r->output, old);
	}
	*fd = open(r->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (*fd < 0)
		return pm_err("%s: %s", r->output, strerror(errno));
	r->created_output = true;
	if (!fstat(*fd, &sb) && S_ISFIFO(sb.st_mode))
		r->so.pipe = true;
	return 0;
}

/* Fork CMD stopped on a pipe: it execs once everything is attached. */
static int spawn(struct record *r, const sigset_t *oldmask)
{
	int go[2], ee[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(ee, O_CLOEXEC))
		return pm_err("pipe: %s", strerror(errno));
	r->child = fork();
	if (r->child < 0)
		return pm_err("fork: %s", strerror(errno));
	if (r->child == 0) {
		char c;
		int e;

		close(go[1]);
		close(ee[0]);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (r->so.pipe) {
			/* the stream owns stdout; the command writes to stderr instead */
			dup2(2, 1);
		}
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(r->cmd[0], r->cmd);
		e = errno;
		if (write(ee[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ee[1]);
	r->go_fd = go[1];
	r->exec_err_fd = ee[0];
	return 0;
}

/*
 * The loop both hosts run while recording: a drain timer, the signals,
 * the command's pidfd and --duration, plus the host's own fds.
 */
struct rec_loop {
	int ep, tfd, sfd, pfd;
	struct timespec start;
	bool child_done, stopping;
	int status;
};

/* Block the stopping signals into a signalfd (before CMD is forked). */
static void loop_signals(struct rec_loop *l, sigset_t *oldmask)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, oldmask);
	signal(SIGPIPE, SIG_IGN);
	l->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void loop_watch(struct rec_loop *l, const int *fds, int nfds)
{
	struct itimerspec its = {
		.it_interval = { 0, SESSION_DRAIN_MS * 1000000L },
		.it_value = { 0, SESSION_DRAIN_MS * 1000000L },
	};
	struct epoll_event ev = { .events = EPOLLIN };
	int watch[8] = { l->tfd, l->sfd, l->pfd }, n = 3, i;

	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->tfd = watch[0] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	timerfd_settime(l->tfd, 0, &its, NULL);
	for (i = 0; i < nfds && n < 8; i++)
		watch[n++] = fds[i];
	for (i = 0; i < n; i++) {
		if (watch[i] < 0)
			continue;
		ev.data.fd = watch[i];
		epoll_ctl(l->ep, EPOLL_CTL_ADD, watch[i], &ev);
	}
	clock_gettime(CLOCK_MONOTONIC, &l->start);
}

/*
 * One wait: handles the timer (*tick), signals, the command's exit and
 * --duration; the host's fds that are ready go to ready[].
 */
static int loop_wait(const struct record *r, struct rec_loop *l, bool *tick, int *ready, int max)
{
	struct epoll_event evs[8];
	struct timespec now;
	int n, i, nr = 0;

	*tick = false;
	n = epoll_wait(l->ep, evs, 8, -1);
	if (n < 0 && errno != EINTR) {
		l->stopping = true;
		return 0;
	}
	for (i = 0; i < n; i++) {
		int fd = evs[i].data.fd;

		if (fd == l->tfd) {
			uint64_t ticks;

			(void)!read(l->tfd, &ticks, sizeof(ticks));
			*tick = true;
		} else if (fd == l->sfd) {
			struct signalfd_siginfo si;

			while (read(l->sfd, &si, sizeof(si)) == sizeof(si))
				if (r->child > 0 && si.ssi_signo != SIGINT)
					kill(r->child, si.ssi_signo);
			/* SIGINT: the terminal sent it to the command too */
			if (r->child <= 0 || l->child_done || !r->cmd_argc)
				l->stopping = true;
		} else if (fd == l->pfd) {
			if (waitpid(r->child, &l->status, WNOHANG) == r->child) {
				l->child_done = true;
				l->stopping = true;
			}
		} else if (nr < max) {
			ready[nr++] = fd;
		}
	}
	if (r->duration > 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - l->start.tv_sec) + (now.tv_nsec - l->start.tv_nsec) / 1e9 >= r->duration)
			l->stopping = true;
	}
	return nr;
}

static void loop_close(struct rec_loop *l)
{
	int fds[] = { l->ep, l->tfd, l->sfd, l->pfd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void status_stats(const struct session_stats *st, bool final)
{
	fprintf(stderr, "\r[ perfmark: %llu samples, %llu markers, %llu lost, %.3f MB ]%s",
		(unsigned long long)st->samples, (unsigned long long)st->markers,
		(unsigned long long)(st->lost_samples + st->lost_markers),
		st->bytes / 1e6, final ? "\n" : "");
}

static void status_line(const struct session *s, bool final)
{
	struct session_stats st;

	session__stats(s, &st);
	status_stats(&st, final);
}

/* via: " via perfmarkd" (with -v), else "" */
static void summary_stats(const struct record *r, const struct session_stats *st, const char *via)
{
	char comp[64] = "";

	if (r->so.zstd_level && st->bytes)
		snprintf(comp, sizeof(comp), ", compressed %.1fx", (double)st->raw_bytes / st->bytes);
	fprintf(stderr, "[ perfmark record: Wrote %.3f MB %s (%llu samples, %llu markers, "
		"%llu lost samples, %llu lost markers%s)%s ]\n",
		st->bytes / 1e6, r->so.pipe ? "(pipe)" : r->output,
		(unsigned long long)st->samples, (unsigned long long)st->markers,
		(unsigned long long)st->lost_samples, (unsigned long long)st->lost_markers, comp, via);
}

static void summary(const struct record *r, const struct session *s)
{
	struct session_stats st;

	session__stats(s, &st);
	summary_stats(r, &st, "");
}

/*
 * The output failed (a reader that went away: EPIPE) while CMD still runs:
 * end it as perf does, with SIGTERM, and reap it, so no orphan goes on
 * burning CPU unrecorded.  Bounded: SIGKILL after 2 s.
 */
static void stop_child(struct record *r, int pfd)
{
	struct pollfd p = { .fd = pfd, .events = POLLIN };

	kill(r->child, SIGTERM);
	if (pfd < 0 || poll(&p, 1, 2000) <= 0)
		kill(r->child, SIGKILL);
	waitpid(r->child, NULL, 0);
}

static int write_error(const struct record *r, int e)
{
	if (e == -EPIPE)
		return pm_err("output closed by its reader (broken pipe), recording stopped");
	return pm_err("%s: %s; the file holds everything up to the last flush",
		      r->so.pipe ? "output" : r->output, strerror(-e));
}

/* CMD's status as record's: stopped early (signal, --duration), it goes on unrecorded */
static int exit_status(const struct record *r, bool child_done, int status)
{
	if (!r->cmd_argc || !child_done)
		return 0;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 0;
}

/* Let CMD exec; 0, or 1 after the error (CMD reaped). */
static int release_child(struct record *r)
{
	int xe;

	/* the child execs when this byte arrives (or the pipe closes: it exits) */
	(void)!write(r->go_fd, "g", 1);
	close(r->go_fd);
	r->go_fd = -1;
	/* the error pipe closes on a successful exec */
	if (read(r->exec_err_fd, &xe, sizeof(xe)) == sizeof(xe)) {
		waitpid(r->child, NULL, 0);
		close(r->exec_err_fd);
		r->exec_err_fd = -1;
		return pm_err("%s: %s", r->cmd[0], strerror(xe));
	}
	close(r->exec_err_fd);
	r->exec_err_fd = -1;
	return 0;
}

/* --- through perfmarkd -------------------------------------------------------- */

static const char *daemon_socket(void)
{
	const char *p = getenv("PERFMARK_SOCKET");

	return p && p[0] ? p : DEFAULT_SOCKET;
}

static struct json_object *daemon_req(const char *cmd)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "cmd", json_object_new_string(cmd));
	return o;
}

/* One frame from the daemon; NULL after the error line. */
static struct json_object *daemon_recv(int sock)
{
	struct json_object *rep = NULL;
	int fds[PROTO_MAX_FDS];
	size_t nr = PROTO_MAX_FDS, i;
	int e = proto_recv(sock, &rep, fds, &nr);

	for (i = 0; i < nr; i++)
		close(fds[i]);
	if (e) {
		pm_err("perfmarkd at %s: %s", daemon_socket(),
		       e == -ECONNRESET ? "connection closed, recording stopped" : strerror(-e));
		return NULL;
	}
	return rep;
}

static bool jbool(struct json_object *o, const char *k)
{
	struct json_object *x;

	return json_object_object_get_ex(o, k, &x) && json_object_get_boolean(x);
}

static long long jint(struct json_object *o, const char *k)
{
	struct json_object *x;

	return json_object_object_get_ex(o, k, &x) ? (long long)json_object_get_int64(x) : 0;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *x;

	return json_object_object_get_ex(o, k, &x) && json_object_is_type(x, json_type_string) ?
	       json_object_get_string(x) : NULL;
}

/* Send req (consumed) and wait for its reply (ok or not); NULL after the error line. */
static struct json_object *daemon_call(int sock, struct json_object *req, const int *fds, size_t nfds)
{
	int e = proto_send(sock, req, fds, nfds);

	json_object_put(req);
	if (e) {
		pm_err("cannot talk to perfmarkd at %s: %s", daemon_socket(), strerror(-e));
		return NULL;
	}
	return daemon_recv(sock);
}

/* a refusal: the daemon's own words */
static int daemon_refused(struct json_object *rep)
{
	const char *m = jstr(rep, "error");

	pm_err("%s", m ? m : "perfmarkd refused the request");
	json_object_put(rep);
	return 1;
}

static void take_notices(struct record *r, struct json_object *rep)
{
	struct json_object *a;
	size_t i;

	if (!json_object_object_get_ex(rep, "notices", &a) || !json_object_is_type(a, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(a); i++)
		on_notice(r, json_object_get_string(json_object_array_get_idx(a, i)));
}

static void take_stats(struct json_object *rep, struct session_stats *st)
{
	struct json_object *o;

	memset(st, 0, sizeof(*st));
	if (!json_object_object_get_ex(rep, "stats", &o))
		return;
	st->samples = (uint64_t)jint(o, "samples");
	st->markers = (uint64_t)jint(o, "markers");
	st->lost_samples = (uint64_t)jint(o, "lost_samples");
	st->lost_markers = (uint64_t)jint(o, "lost_markers");
	st->bytes = (uint64_t)jint(o, "bytes");
	st->raw_bytes = (uint64_t)jint(o, "raw_bytes");
}

/*
 * Connect and ping, within about a second.  The socket, -1 to record
 * in-process (no daemon there, PERFMARK_NO_DAEMON, or one that does not
 * answer), or -2 after an error line (the daemon refused us).
 */
static int daemon_connect(const struct record *r)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { DAEMON_ANSWER_MS / 1000, (DAEMON_ANSWER_MS % 1000) * 1000 };
	const char *nd = getenv("PERFMARK_NO_DAEMON"), *path = daemon_socket();
	struct json_object *rep = NULL;
	int fds[PROTO_MAX_FDS];
	size_t nr = PROTO_MAX_FDS, i;
	int fd, e;

	if (nd && nd[0] && strcmp(nd, "0"))
		return -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = errno;
		close(fd);
		if (e == EACCES || e == EPERM) {
			pm_err("cannot reach perfmarkd at %s: %s (PERFMARK_NO_DAEMON=1 records in-process)",
			       path, strerror(e));
			return -2;
		}
		if (e == EAGAIN || e == ETIMEDOUT)
			pm_notice("perfmarkd at %s does not answer, recording in-process", path);
		else if (r->verbose && e != ENOENT && e != ECONNREFUSED)
			pm_notice("cannot reach perfmarkd at %s (%s), recording in-process", path, strerror(e));
		return -1;
	}
	{
		struct json_object *req = daemon_req("ping");

		e = proto_send(fd, req, NULL, 0);
		json_object_put(req);
	}
	if (!e)
		e = proto_recv(fd, &rep, fds, &nr);
	for (i = 0; !e && i < nr; i++)
		close(fds[i]);
	if (e) {
		close(fd);
		if (e == -EAGAIN || e == -EWOULDBLOCK || e == -ETIMEDOUT)
			pm_notice("perfmarkd at %s does not answer, recording in-process", path);
		else if (r->verbose)
			pm_notice("perfmarkd at %s: %s, recording in-process", path, strerror(-e));
		return -1;
	}
	if (!jbool(rep, "ok")) {
		close(fd);
		daemon_refused(rep);
		return -2;
	}
	if (!jbool(rep, "record")) {
		/* an older perfmarkd: named sessions only */
		json_object_put(rep);
		close(fd);
		if (r->verbose)
			pm_notice("perfmarkd at %s cannot record for clients, recording in-process", path);
		return -1;
	}
	json_object_put(rep);
	/* from here on the daemon takes its time (loading BPF programs) */
	tv.tv_sec = tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * The output failed (errno from the daemon); prints as in-process.  A
 * reader gone (EPIPE) ends CMD too.
 */
static int daemon_write_failed(struct record *r, struct json_object *rep, bool child_done, int pfd)
{
	int e = (int)jint(rep, "errno");

	if (!e)
		return daemon_refused(rep);
	json_object_put(rep);
	if (isatty(2) && !r->so.pipe)
		fputc('\n', stderr);
	write_error(r, -e);
	if (r->child > 0 && !child_done && e == EPIPE)
		stop_child(r, pfd);
	return 1;
}

static int record_daemon(struct record *r, int sock, int argc, char **argv)
{
	struct json_object *req, *rep, *a;
	struct session_stats st;
	struct rec_loop l = { .ep = -1, .tfd = -1, .sfd = -1, .pfd = -1 };
	sigset_t oldmask;
	int out = -1, ret = 1, i;
	bool tty = isatty(2), stats_asked = false;

	/* open everything before the output exists: a failure leaves nothing behind */
	req = daemon_req("record");
	json_object_object_add(req, "opts", proto_record_opts_to_json(&r->so));
	a = json_object_new_array();
	for (i = 0; i < argc; i++)
		json_object_array_add(a, json_object_new_string(argv[i]));
	json_object_object_add(req, "argv", a);
	rep = daemon_call(sock, req, NULL, 0);
	if (!rep)
		goto out;
	if (!jbool(rep, "ok")) {
		daemon_refused(rep);
		goto out;
	}
	take_notices(r, rep);
	json_object_put(rep);
	if (open_output(r, &out))
		goto out;

	loop_signals(&l, &oldmask);
	if (r->cmd_argc) {
		if (spawn(r, &oldmask))
			goto fail_unlink;
		l.pfd = syscall(SYS_pidfd_open, r->child, 0);
	}
	req = daemon_req("record-start");
	json_object_object_add(req, "pipe", json_object_new_boolean(r->so.pipe));
	if (r->child > 0)
		json_object_object_add(req, "pid", json_object_new_int(r->child));
	rep = daemon_call(sock, req, &out, 1);
	if (!rep || !jbool(rep, "ok")) {
		if (rep)
			daemon_refused(rep);
		if (r->child > 0)
			kill(r->child, SIGKILL), waitpid(r->child, NULL, 0);
		goto fail_unlink;
	}
	take_notices(r, rep);
	json_object_put(rep);
	if (r->cmd_argc && release_child(r))
		goto fail_unlink;
	flush_notices(r);

	loop_watch(&l, &sock, 1);
	while (!l.stopping) {
		int ready[1];
		bool tick;

		if (loop_wait(r, &l, &tick, ready, 1)) {
			rep = daemon_recv(sock);
			if (!rep)
				goto out;
			if (!jbool(rep, "ok")) {
				ret = daemon_write_failed(r, rep, l.child_done, l.pfd);
				goto out;
			}
			if (tty && !r->so.pipe) {
				take_stats(rep, &st);
				status_stats(&st, false);
			}
			stats_asked = false;
			json_object_put(rep);
		}
		if (tick && tty && !r->so.pipe && !stats_asked) {
			req = daemon_req("record-stats");
			i = proto_send(sock, req, NULL, 0);
			json_object_put(req);
			stats_asked = !i;
		}
	}
	/* the daemon drains the rest, finishes the file and says how it went */
	req = daemon_req("record-stop");
	i = proto_send(sock, req, NULL, 0);
	json_object_put(req);
	if (i) {
		pm_err("cannot talk to perfmarkd at %s: %s", daemon_socket(), strerror(-i));
		goto out;
	}
	for (;;) {
		const char *re;

		rep = daemon_recv(sock);
		if (!rep)
			goto out;
		if (!jbool(rep, "ok")) {
			ret = daemon_write_failed(r, rep, l.child_done, l.pfd);
			goto out;
		}
		re = jstr(rep, "re");
		if (re && !strcmp(re, "record-stop"))
			break;
		json_object_put(rep);
	}
	take_stats(rep, &st);
	json_object_put(rep);
	if (tty && !r->so.pipe)
		status_stats(&st, true);
	summary_stats(r, &st, r->verbose ? " via perfmarkd" : "");
	ret = exit_status(r, l.child_done, l.status);
	goto out;

fail_unlink:
	if (r->created_output)
		unlink(r->output);
	ret = 1;
out:
	close(sock);
	if (out > 1)
		close(out);
	loop_close(&l);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record r = { .go_fd = -1, .exec_err_fd = -1 };
	struct session *s = NULL;
	struct rec_loop l = { .ep = -1, .tfd = -1, .sfd = -1, .pfd = -1 };
	sigset_t oldmask;
	int out = -1, ret = 1, e, sock;
	bool tty = isatty(2);
	char err[256];
	int fds[4], nfds;

	if (parse(&r, argc, argv))
		return 1;
	if (check_targets(&r))
		return 1;
	if (!r.verbose)
		setenv("PERFMARK_QUIET", "1", 0);
	else
		setenv("PERFMARK_DEBUG", "1", 0);
	sock = daemon_connect(&r);
	if (sock == -2)
		return 1;
	if (sock >= 0)
		return record_daemon(&r, sock, argc, argv);
	r.so.notice = on_notice;
	r.so.notice_ctx = &r;
	r.so.argc = argc;
	r.so.argv = argv;
	/* open everything before the output exists: a failure leaves nothing behind */
	e = session__new(&s, &r.so, err, sizeof(err));
	if (e)
		return pm_err("%s", err);
	if (open_output(&r, &out))
		goto out;
	session__set_output(s, out, r.so.pipe);

	loop_signals(&l, &oldmask);
	if (r.cmd_argc) {
		if (spawn(&r, &oldmask))
			goto fail_unlink;
		session__add_cmd(s, r.child);
		l.pfd = syscall(SYS_pidfd_open, r.child, 0);
	}
	e = session__start(s, err, sizeof(err));
	if (e) {
		pm_err("%s", err);
		if (r.child > 0)
			kill(r.child, SIGKILL), waitpid(r.child, NULL, 0);
		goto fail_unlink;
	}
	if (r.cmd_argc && release_child(&r))
		goto fail_unlink;
	flush_notices(&r);

	nfds = session__fds(s, fds, 4);
	loop_watch(&l, fds, nfds);
	while (!l.stopping) {
		int ready[4];
		bool tick;

		/* the timer, or the ring filling up: drain */
		if (!loop_wait(&r, &l, &tick, ready, 4) && !tick)
			continue;
		e = session__drain(s);
		if (e) {
			if (tty)
				fputc('\n', stderr);
			write_error(&r, e);
			if (r.child > 0 && !l.child_done && e == -EPIPE)
				stop_child(&r, l.pfd);
			session__stop(s);
			goto out_err;
		}
		if (tty && !r.so.pipe)
			status_line(s, false);
	}
	e = session__stop(s);
	if (tty && !r.so.pipe)
		status_line(s, true);
	if (e) {
		write_error(&r, e);
		goto out_err;
	}
	summary(&r, s);
	ret = exit_status(&r, l.child_done, l.status);
	goto out;

fail_unlink:
	if (r.created_output)
		unlink(r.output);
	ret = 1;
	goto out;
out_err:
	ret = 1;
out:
	session__free(s);
	if (out > 1)
		close(out);
	loop_close(&l);
	return ret;
}

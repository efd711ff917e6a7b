// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark session keep / take: a recording and a named session change
 * hands (issue 20, the persistent-events seed's DETACH and ATTACH).
 *
 *   keep NAME --from PID   the `perfmark record` running as PID (through
 *                          perfmarkd) becomes the named session NAME: its
 *                          file ends now, the session goes on from the same
 *                          collection, into a ring or files.
 *   take NAME -o FILE|-    stream the session (its ring first, then live, as
 *                          attach) and delete it when this process goes,
 *                          however it goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "jsonf.h"
#include "proto.h"
#include "session_verbs.h"

/* how long a taker waits, after its signal, for perfmarkd to write the rest and delete */
#define TAKE_END_MS 30000

struct keep_opts {
	long from;
	uint64_t ring;
	const char *out;
};

static int set_from(void *ctx, const struct opt *o, const char *arg)
{
	struct keep_opts *k = ctx;
	char *end;

	errno = 0;
	k->from = strtol(arg, &end, 10);
	if (!*arg || *end || errno || k->from <= 0 || k->from > INT32_MAX)
		return pm_err("bad --from '%s' (the pid of a running 'perfmark record')", arg);
	return 0;
}

static int set_keep_ring(void *ctx, const struct opt *o, const char *arg)
{
	struct keep_opts *k = ctx;

	return session_parse_ring(arg, &k->ring);
}

static const struct opt keep_table[] = {
	{ .name = "from", .arg = "PID",
	  .help = "the 'perfmark record' process whose recording to keep (it must record through perfmarkd)",
	  .set = set_from, .required = true },
	{ .name = "ring", .arg = "SIZE",
	  .help = "keep the newest SIZE bytes in memory, as 'session create --ring' (at least 64K)",
	  .def = "64M", .set = set_keep_ring, .alt = 10 },
	{ .flag = 'o', .name = "output", .arg = "DIR",
	  .help = "write perf.data files into DIR instead of a ring (a directory of the recording's owner)",
	  .set = opt_set_str, .off = offsetof(struct keep_opts, out), .alt = 10 },
	{ 0 },
};

const struct opts_cmd session_keep_cmd = {
	.name = "session keep",
	.args = "NAME",
	.about = "Turn a running 'perfmark record' into the named session NAME: its file ends "
		 "now and is complete; the session goes on from the same collection, with no gap "
		 "and nothing twice, into a ring or files, and survives perfmarkd's restarts.  "
		 "The recording's owner or root may.  Sending SIGUSR2 to the record process does "
		 "the same (see 'perfmark record --keep-as').",
	.tables = { keep_table },
};

int session_do_keep(int argc, char **argv)
{
	struct keep_opts k = { 0 };
	void *ctx[] = { &k };
	struct json_object *req, *rep;
	char dir[PATH_MAX];
	const char *name;
	int e, dfd = -1;

	e = opts_parse(&session_keep_cmd, ctx, argc, argv);
	if (e)
		return e == OPTS_HELP ? 0 : 1;
	if (session_args(&session_keep_cmd, argc, argv, &name))
		return 1;
	if (!k.from)
		return pm_err("--from PID is needed: the 'perfmark record' process to keep");
	if (k.ring && k.out)
		return pm_err("give only one of --ring and --output");
	if (k.out) {
		dfd = session_out_dir(k.out, dir);
		if (dfd < 0)
			return 1;
	}
	req = client_request("keep", name);
	json_object_object_add(req, "from", json_object_new_int((int)k.from));
	if (k.ring)
		json_object_object_add(req, "ring", json_object_new_int64((int64_t)k.ring));
	if (k.out)
		json_object_object_add(req, "dir", json_object_new_string(dir));
	rep = session_send(req, dfd);
	if (!rep)
		return 1;
	printf("session %s: kept from the recording of process %ld, whose file ends here\n", name,
	       k.from);
	json_object_put(rep);
	return 0;
}

const struct opts_cmd session_take_cmd = {
	.name = "session take", .args = "NAME",
	.about = "Stream a session as pipe-mode perf.data, as attach does (what its ring holds "
		 "first, then live), and delete the session when this command ends: at SIGINT or "
		 "SIGTERM (the stream then holds everything up to that moment), when the session "
		 "ends, or when this process is killed.",
	.tables = { session_out_table },
};

/*
 * Until the stream ends: the daemon's messages (the session ended: 0; the
 * output failed: 1), or a signal.  At a signal this end stops writing to
 * the socket: perfmarkd writes what it read up to then, deletes the session
 * and closes, and only then does take return (the file is complete).
 */
static int take_loop(int sock, int sfd)
{
	struct pollfd p[2] = { { .fd = sock, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
	bool ending = false;
	int ret = 0;

	for (;;) {
		int n = poll(p, ending || sfd < 0 ? 1 : 2, ending ? TAKE_END_MS : -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pm_err("poll: %s", strerror(errno));
		if (n == 0)
			return pm_err("perfmarkd did not end the stream within %d s", TAKE_END_MS / 1000);
		if (!ending && sfd >= 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			shutdown(sock, SHUT_WR);
			ending = true;
			continue;
		}
		if (p[0].revents) {
			struct json_object *rep = NULL;
			int fds[PROTO_MAX_FDS];
			size_t nr = PROTO_MAX_FDS;

			if (proto_recv(sock, &rep, fds, &nr))
				return ret;     /* closed: the session is gone */
			while (nr)
				close(fds[--nr]);
			if (!jsonf_get_bool(rep, "ok"))
				ret = client_refused(rep);
			else
				json_object_put(rep);
		}
	}
}

int session_do_take(int argc, char **argv)
{
	struct json_object *rep;
	struct outfile o = { .fd = -1 };
	sigset_t mask;
	int sock, ret, sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	ret = session_start_out(&session_take_cmd, argc, argv, "take", &o, &sock, &rep);
	session_let_go_out(&o);
	json_object_put(rep);
	if (!ret) {
		client_untimed(sock);
		ret = take_loop(sock, sfd);
	}
	if (sock >= 0)
		close(sock);
	if (sfd >= 0)
		close(sfd);
	return ret < 0 ? 0 : ret;     /* -1: --help */
}

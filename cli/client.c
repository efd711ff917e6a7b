// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "jsonf.h"
#include "proto.h"

const char *client_socket(void)
{
	const char *p = getenv("PERFMARK_SOCKET");

	return p && p[0] ? p : PROTO_SOCKET_DEFAULT;
}

static void set_timeouts(int sock, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

int client_connect(int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = client_socket();
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (timeout_ms)
		set_timeouts(fd, timeout_ms);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

void client_untimed(int sock)
{
	set_timeouts(sock, 0);
}

struct json_object *client_request(const char *cmd, const char *name)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "cmd", json_object_new_string(cmd));
	if (name)
		json_object_object_add(o, "name", json_object_new_string(name));
	return o;
}

struct json_object *client_recv(int sock)
{
	struct json_object *rep = NULL;
	int fds[PROTO_MAX_FDS];
	size_t nr = PROTO_MAX_FDS, i;
	int e = proto_recv(sock, &rep, fds, &nr);

	for (i = 0; i < nr; i++)
		close(fds[i]);
	if (e) {
		pm_err("no reply from perfmarkd at %s: %s", client_socket(),
		       e == -ECONNRESET ? "connection closed" : strerror(-e));
		return NULL;
	}
	return rep;
}

/*
 * A daemon that refuses a connection (an outsider, a limit reached) sends
 * one error and closes at once: the request may then fail with EPIPE while
 * the refusal waits to be read.
 */
struct json_object *client_refusal(int sock)
{
	struct json_object *rep = NULL;
	int fds[PROTO_MAX_FDS];
	size_t nr = PROTO_MAX_FDS, i;

	if (proto_recv(sock, &rep, fds, &nr))
		return NULL;
	for (i = 0; i < nr; i++)
		close(fds[i]);
	return rep;
}

struct json_object *client_call(int sock, struct json_object *req, const int *fds, size_t nfds)
{
	struct json_object *rep;
	int e = proto_send(sock, req, fds, nfds);

	json_object_put(req);
	if (e) {
		rep = client_refusal(sock);
		if (rep)
			return rep;
		pm_err("cannot talk to perfmarkd at %s: %s", client_socket(), strerror(-e));
		return NULL;
	}
	return client_recv(sock);
}

int client_refused(struct json_object *rep)
{
	const char *m = jsonf_get_str(rep, "error");

	pm_err("%s", m ? m : "perfmarkd refused the request");
	json_object_put(rep);
	return 1;
}

struct json_object *client_ok(struct json_object *rep)
{
	if (rep && !jsonf_get_bool(rep, "ok")) {
		client_refused(rep);
		return NULL;
	}
	return rep;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Talking to perfmarkd from the command line: the socket, one request and
 * its reply, and the daemon's refusals printed in its own words.  Used by
 * `perfmark session` and by record's daemon back end.
 */
#ifndef PERFMARK_CLI_CLIENT_H
#define PERFMARK_CLI_CLIENT_H

#include <stddef.h>

struct json_object;

/* $PERFMARK_SOCKET, else PROTO_SOCKET_DEFAULT */
const char *client_socket(void);
/*
 * Connect to client_socket(); timeout_ms bounds connecting and every send
 * and receive until client_untimed() (0: no bound).  The fd, or -errno
 * (nothing printed).
 */
int client_connect(int timeout_ms);
void client_untimed(int sock);
/* {"v":PROTO_VERSION,"cmd":cmd[,"name":name]} */
struct json_object *client_request(const char *cmd, const char *name);
/* Send req (consumed) with fds, then one reply.  NULL after one error line. */
struct json_object *client_call(int sock, struct json_object *req, const int *fds, size_t nfds);
/* After a failed send: the daemon's refusal waiting to be read, or NULL (nothing printed) */
struct json_object *client_refusal(int sock);
/* One frame from the daemon.  NULL after one error line. */
struct json_object *client_recv(int sock);
/* Print the daemon's error (a refusal), put rep; returns 1. */
int client_refused(struct json_object *rep);
/* rep when it says ok, else NULL after client_refused(rep). */
struct json_object *client_ok(struct json_object *rep);

#endif

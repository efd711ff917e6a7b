/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmarkd control protocol.
 *
 * A frame is a u32 little-endian length followed by that many bytes of one
 * JSON object.  Requests: {"v":2,"cmd":"create"|"list"|"show"|"snapshot"|
 * "attach"|"stop"|"start"|"delete", "name":NAME, ...}; replies:
 * {"v":2,"ok":true,...} or {"v":2,"ok":false,"error":"one line"}.
 * create carries the session's document as "def" (sessdef.h); show and
 * list answer with such documents.  Version 1 (perfmark 0.1) wrote the
 * recording options flat (still read); clients ping with the oldest
 * version and read the daemon's from the reply.
 * File descriptors (snapshot/attach output, --output directory) travel with
 * SCM_RIGHTS on the first byte of the request frame.
 *
 * `perfmark record` runs an anonymous session owned by its connection (never
 * stored, pinned or listed; it ends when the connection does):
 *   {"cmd":"record","opts":{recspec},"argv":[...]}  load and open (no output yet)
 *     -> {"ok":true,"re":"record","notices":[...]}
 *   {"cmd":"record-start","pipe":B[,"pid":P]} + the output fd [+ CMD's executable,
 *     open for reading, when P is a command held before its exec]
 *     -> {"ok":true,"re":"record-start","notices":[...]}   (recording)
 *   {"cmd":"record-stats"} -> {"ok":true,"re":"record-stats","stats":{...}}
 *   {"cmd":"record-stop"}  final drain, file finished, stream pumped out
 *     -> {"ok":true,"re":"record-stop","stats":{...}}
 * While it records the daemon may send, unasked,
 *   {"ok":false,"event":"failed","errno":E,"error":"..."}  (output failed)
 *   {"ok":true,"event":"kept","name":NAME,"stats":{...}}    (see keep)
 * and errors of record-start/-stop carry "errno" when the output failed.
 *
 * A recording becomes a named session while it runs (issue 20, seed 003):
 *   {"cmd":"keep","name":NAME[,"from":PID][,"ring":BYTES|,"dir":ABSDIR + its fd]}
 *     the recording of the connection of process PID (without "from": of
 *     this connection), kept by its owner or root: its file ends there and
 *     is finished, the session goes on from the same collection.  The
 *     recording's connection hears the "kept" event (and a record-stop
 *     after it is answered with it); the asker gets {"ok":true,"session":{...}}
 *     (the recording's own connection: the event is its answer).  Errors
 *     carry "re":"keep".
 *   {"cmd":"take","name":NAME} + the output fd: as attach (the ring's
 *     contents first, then live); the session is deleted when this
 *     connection ends, however it ends.
 *
 * Everything returns 0 / a count, or a negative errno.
 */
#ifndef PERFMARK_PROTO_H
#define PERFMARK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define PROTO_SOCKET_DEFAULT "/run/perfmark/perfmarkd.sock"
#define PROTO_VERSION 2
#define PROTO_VERSION_MIN 1            /* the oldest requests a daemon reads */
#define PROTO_MAX_MSG (64 * 1024)      /* whole frame body */
#define PROTO_MAX_FDS 2
#define PROTO_NAME_MAX 64

/*
 * The commands, one row each: the id, the daemon's handler (handle_<fn> in
 * daemon/clients.c, which it must define), the name on the wire, flags, and
 * the keys its request may carry beyond "v" and "cmd" ("name" comes with
 * PROTO_NAMED), comma-separated.  A request with any other key is refused
 * naming it: an older perfmarkd never drops what a newer client asked for.
 * A new command is a row here and its handler.
 *   PROTO_NAMED  the request names a session ("name", checked)
 *   PROTO_NEW    ... one that need not exist yet (create)
 *   PROTO_DOC    its first key holds the command's document, an object,
 *                required (create's "def", record's "opts")
 */
#define PROTO_NAMED 1u
#define PROTO_NEW   2u
#define PROTO_DOC   4u
#define PROTO_COMMANDS(X) \
	X(CREATE,       create,       "create",       PROTO_NAMED | PROTO_NEW | PROTO_DOC, "def") \
	X(LIST,         list,         "list",         0,                  "") \
	X(SHOW,         show,         "show",         PROTO_NAMED,        "") \
	X(SNAPSHOT,     snapshot,     "snapshot",     PROTO_NAMED,        "") \
	X(ATTACH,       attach,       "attach",       PROTO_NAMED,        "") \
	X(STOP,         stop,         "stop",         PROTO_NAMED,        "") \
	X(START,        start,        "start",        PROTO_NAMED,        "") \
	X(DELETE,       delete,       "delete",       PROTO_NAMED,        "") \
	X(PING,         ping,         "ping",         0,                  "") \
	X(RECORD,       record,       "record",       PROTO_DOC,          "opts,argv") \
	X(RECORD_START, record_start, "record-start", 0,                  "pipe,pid") \
	X(RECORD_STATS, record_stats, "record-stats", 0,                  "") \
	X(RECORD_STOP,  record_stop,  "record-stop",  0,                  "") \
	X(KEEP,         keep,         "keep",         PROTO_NAMED | PROTO_NEW, "from,ring,dir") \
	X(TAKE,         take,         "take",         PROTO_NAMED,        "")

enum proto_cmd {
#define PROTO_CMD_ENUM(id, fn, name, flags, keys) PROTO_CMD_##id,
	PROTO_COMMANDS(PROTO_CMD_ENUM)
#undef PROTO_CMD_ENUM
	PROTO_NR_CMDS
};

struct proto_cmd_info {
	const char *name;
	unsigned flags;
	const char *keys;
};

/* the row of cmd (cmd < PROTO_NR_CMDS) */
const struct proto_cmd_info *proto_cmd_info(enum proto_cmd cmd);

struct proto_request {
	enum proto_cmd cmd;
	int version;                         /* the client's */
	char name[PROTO_NAME_MAX + 1];       /* "" without PROTO_NAMED */
	struct json_object *def;             /* PROTO_DOC: the document, borrowed
					      * from the message */
};

/* [A-Za-z0-9_.-]{1,64}, not starting with '.' */
bool proto_name_valid(const char *name);

#define PROTO_ARGV_MAX 256          /* record: argv entries kept */
#define PROTO_ARG_MAX  4096         /* ... bytes of each */
/*
 * record's "argv" (the command line for the CMDLINE feature): at most
 * PROTO_ARGV_MAX strings of at most PROTO_ARG_MAX bytes, non-strings as "",
 * into a new NULL-terminated array (proto_argv_free).  0 or -ENOMEM.
 */
int proto_record_argv(struct json_object *msg, char ***argv, int *argc);
void proto_argv_free(char **argv);
/*
 * keep's options: "from" (0: none), "ring" (0: none) and "dir" ("": none;
 * absolute, for the record: the directory itself comes as an fd).  Only
 * one of ring and dir.  0, or -EINVAL with err.
 */
int proto_keep_opts(struct json_object *msg, int *from, uint64_t *ring, char *dir, size_t dirlen,
		    char *err, size_t errlen);
/* record-start's options: "pipe" (bool) and "pid" (0: none).  0, or -EINVAL with err. */
int proto_record_start_opts(struct json_object *msg, bool *pipe, int *pid, char *err, size_t errlen);

/*
 * Split one frame off buf: 1 with *msg (a JSON object, caller puts it) and
 * *used bytes consumed; 0 when more bytes are needed; -EMSGSIZE for a frame
 * over PROTO_MAX_MSG, -EBADMSG for a body that is not one JSON object (then
 * *used still skips the frame).  err gets a one-line reason.
 */
int proto_parse_frame(const void *buf, size_t len, size_t *used,
		      struct json_object **msg, char *err, size_t errlen);
/*
 * Check a request object: version, command, its keys, name, document (and
 * the keys of that: create's session definition, record's recording
 * options).  0 or -EINVAL with err naming what is wrong.
 */
int proto_request_parse(struct json_object *msg, struct proto_request *req,
			char *err, size_t errlen);

/* Encode msg as a frame into a malloc'ed buffer.  -EMSGSIZE when too big. */
int proto_encode(struct json_object *msg, char **out, size_t *outlen);

/* Blocking helpers for clients: one whole frame, with up to PROTO_MAX_FDS fds. */
int proto_send(int sock, struct json_object *msg, const int *fds, size_t nfds);
/* *nfds in: room in fds; out: fds received (the caller owns them) */
int proto_recv(int sock, struct json_object **msg, int *fds, size_t *nfds);

/*
 * A daemon-side connection: non-blocking input buffer with the fds that
 * came with it, and an output queue.
 */
struct proto_conn;

int proto_conn__new(struct proto_conn **out, int fd);
int proto_conn__fd(const struct proto_conn *c);
/* Read what is there: >0 bytes, 0 at EOF, -EAGAIN, or -errno. */
int proto_conn__read(struct proto_conn *c);
/*
 * Next complete request: 1 with *msg and the fds that arrived with it
 * (moved to fds, *nfds set), 0 when none is complete, or the errors of
 * proto_parse_frame (-EMSGSIZE: the connection cannot be resynchronised).
 */
int proto_conn__next(struct proto_conn *c, struct json_object **msg,
		     int *fds, size_t *nfds, char *err, size_t errlen);
/* Queue a reply; proto_conn__flush writes: 0 all out, -EAGAIN pending, -errno. */
int proto_conn__queue(struct proto_conn *c, struct json_object *msg);
int proto_conn__flush(struct proto_conn *c);
bool proto_conn__pending(const struct proto_conn *c);
/* Closes the socket and any fds still held. */
void proto_conn__free(struct proto_conn *c);

#endif

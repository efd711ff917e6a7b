// SPDX-License-Identifier: LGPL-2.1-or-later
/* perfmarkd control protocol: framing, validation, SCM_RIGHTS. */
#include <errno.h>
#include <limits.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jsonf.h"
#include "proto.h"

static const struct proto_cmd_info cmds[PROTO_NR_CMDS] = {
#define PROTO_CMD_ROW(id, fn, name, flags, keys) [PROTO_CMD_##id] = { name, flags, keys },
	PROTO_COMMANDS(PROTO_CMD_ROW)
#undef PROTO_CMD_ROW
};

const struct proto_cmd_info *proto_cmd_info(enum proto_cmd cmd)
{
	return &cmds[cmd];
}

bool proto_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0] || name[0] == '.')
		return false;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (i >= PROTO_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int proto_parse_frame(const void *buf, size_t len, size_t *used,
		      struct json_object **msg, char *err, size_t errlen)
{
	const unsigned char *p = buf;
	struct json_tokener *tok;
	struct json_object *o;
	uint32_t n;

	*used = 0;
	*msg = NULL;
	if (len < 4)
		return 0;
	n = get_le32(p);
	if (n > PROTO_MAX_MSG || n == 0) {
		snprintf(err, errlen, "bad message length %u (1..%u bytes)", n, PROTO_MAX_MSG);
		return -EMSGSIZE;
	}
	if (len - 4 < n)
		return 0;
	*used = 4 + (size_t)n;
	if (memchr(p + 4, '\0', n)) {
		snprintf(err, errlen, "malformed message: NUL byte in JSON");
		return -EBADMSG;
	}
	tok = json_tokener_new_ex(32);
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, (const char *)p + 4, (int)n);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)n || !json_object_is_type(o, json_type_object)) {
		/* trailing whitespace is fine */
		bool ws_only = o && json_object_is_type(o, json_type_object) &&
			       json_tokener_get_error(tok) == json_tokener_success;

		for (int i = tok->char_offset; ws_only && i < (int)n; i++)
			if (!strchr(" \t\r\n", p[4 + i]))
				ws_only = false;
		if (!ws_only) {
			json_object_put(o);
			json_tokener_free(tok);
			snprintf(err, errlen, "malformed message: not one JSON object");
			return -EBADMSG;
		}
	}
	json_tokener_free(tok);
	*msg = o;
	return 1;
}

int proto_request_parse(struct json_object *msg, struct proto_request *req,
			char *err, size_t errlen)
{
	const struct proto_cmd_info *ci;
	struct json_object *v, *c, *n;
	const char *cmd, *name;
	char known[128], key[32];
	size_t i;

	memset(req, 0, sizeof(*req));
	if (!json_object_object_get_ex(msg, "v", &v) || !json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "malformed request: no protocol version");
		return -EINVAL;
	}
	if (json_object_get_int64(v) < PROTO_VERSION_MIN || json_object_get_int64(v) > PROTO_VERSION) {
		snprintf(err, errlen, "unsupported protocol version %lld (this daemon speaks %d to %d)",
			 (long long)json_object_get_int64(v), PROTO_VERSION_MIN, PROTO_VERSION);
		return -EINVAL;
	}
	req->version = (int)json_object_get_int64(v);
	if (!json_object_object_get_ex(msg, "cmd", &c) || !json_object_is_type(c, json_type_string)) {
		snprintf(err, errlen, "malformed request: no command");
		return -EINVAL;
	}
	cmd = json_object_get_string(c);
	for (i = 0; i < PROTO_NR_CMDS; i++)
		if (!strcmp(cmd, cmds[i].name))
			break;
	if (i == PROTO_NR_CMDS) {
		snprintf(err, errlen, "unknown command '%.32s'", cmd);
		return -EINVAL;
	}
	req->cmd = (enum proto_cmd)i;
	ci = &cmds[i];
	snprintf(known, sizeof(known), "v,cmd%s%s%s", ci->flags & PROTO_NAMED ? ",name" : "",
		 ci->keys[0] ? "," : "", ci->keys);
	if (jsonf_known_keys(msg, known, "request key", err, errlen)) {
		size_t n = strlen(err);

		snprintf(err + n, errlen - n, " (in '%s')", ci->name);
		return -EINVAL;
	}
	if (ci->flags & PROTO_DOC) {
		/* the first of its keys: "def", "opts" */
		size_t n = strcspn(ci->keys, ",");

		snprintf(key, sizeof(key), "%.*s", (int)n, ci->keys);
		if (!json_object_object_get_ex(msg, key, &req->def) ||
		    !json_object_is_type(req->def, json_type_object)) {
			snprintf(err, errlen, "%s: no %s", ci->name,
				 req->cmd == PROTO_CMD_CREATE ? "session definition" : "options");
			return -EINVAL;
		}
	}
	if (!(ci->flags & PROTO_NAMED))
		return 0;
	if (!json_object_object_get_ex(msg, "name", &n) || !json_object_is_type(n, json_type_string)) {
		snprintf(err, errlen, "%s: a session name is required", cmd);
		return -EINVAL;
	}
	name = json_object_get_string(n);
	if (!proto_name_valid(name)) {
		snprintf(err, errlen, "invalid session name '%.70s' (use [A-Za-z0-9_.-], 1-64 characters, not starting with '.')",
			 name);
		return -EINVAL;
	}
	snprintf(req->name, sizeof(req->name), "%s", name);
	return 0;
}

int proto_encode(struct json_object *msg, char **out, size_t *outlen)
{
	const char *s = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
	size_t n = strlen(s);
	char *b;

	if (n > PROTO_MAX_MSG)
		return -EMSGSIZE;
	b = malloc(n + 4);
	if (!b)
		return -ENOMEM;
	b[0] = n & 0xff;
	b[1] = (n >> 8) & 0xff;
	b[2] = (n >> 16) & 0xff;
	b[3] = (n >> 24) & 0xff;
	memcpy(b + 4, s, n);
	*out = b;
	*outlen = n + 4;
	return 0;
}

int proto_send(int sock, struct json_object *msg, const int *fds, size_t nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * PROTO_MAX_FDS)];
		struct cmsghdr align;
	} cu;
	size_t len, off = 0;
	char *frame;
	int e;

	if (nfds > PROTO_MAX_FDS)
		return -EINVAL;
	e = proto_encode(msg, &frame, &len);
	if (e)
		return e;
	while (off < len) {
		struct iovec iov = { frame + off, len - off };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (off == 0 && nfds) {
			struct cmsghdr *cm;

			memset(&cu, 0, sizeof(cu));
			mh.msg_control = cu.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
			memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
		}
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			free(frame);
			return e;
		}
		off += (size_t)n;
	}
	free(frame);
	return 0;
}

/* recvmsg collecting SCM_RIGHTS fds; extra fds beyond room are closed */
static ssize_t recv_fds(int sock, void *buf, size_t len, int flags, int *fds, size_t *nfds, size_t room)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} cu;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cu.buf, .msg_controllen = sizeof(cu.buf) };
	struct cmsghdr *cm;
	ssize_t n;

	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k, cnt;
		int fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < cnt; k++) {
			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (*nfds < room)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

int proto_recv(int sock, struct json_object **msg, int *fds, size_t *nfds)
{
	size_t room = *nfds, have = 0, need = 4, used;
	char err[128];
	char *buf = malloc(PROTO_MAX_MSG + 4);
	int e;

	*nfds = 0;
	*msg = NULL;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (have >= 4) {
			e = proto_parse_frame(buf, have, &used, msg, err, sizeof(err));
			if (e) {
				free(buf);
				return e < 0 ? e : 0;
			}
			need = 4 + (size_t)get_le32((unsigned char *)buf);
		}
		n = recv_fds(sock, buf + have, need - have, 0, fds, nfds, room);
		if (n == -EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return (int)n;
		}
		if (n == 0) {
			free(buf);
			return -ECONNRESET;
		}
		have += (size_t)n;
	}
}

/* --- daemon side ---------------------------------------------------------- */

struct proto_conn {
	int fd;
	char *in;
	size_t in_len;
	int fds[PROTO_MAX_FDS];
	size_t nfds;
	char *out;
	size_t out_len, out_off;
};

int proto_conn__new(struct proto_conn **out, int fd)
{
	struct proto_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->in = malloc(PROTO_MAX_MSG + 4);
	if (!c->in) {
		free(c);
		return -ENOMEM;
	}
	c->fd = fd;
	*out = c;
	return 0;
}

int proto_conn__fd(const struct proto_conn *c)
{
	return c->fd;
}

int proto_conn__read(struct proto_conn *c)
{
	size_t room = PROTO_MAX_MSG + 4 - c->in_len;
	ssize_t n;

	if (!room)
		return -EAGAIN;   /* a whole frame is there: take it first */
	n = recv_fds(c->fd, c->in + c->in_len, room, MSG_DONTWAIT, c->fds, &c->nfds, PROTO_MAX_FDS);
	if (n < 0)
		return (int)n == -EWOULDBLOCK ? -EAGAIN : (int)n;
	c->in_len += (size_t)n;
	return (int)n;
}

int proto_conn__next(struct proto_conn *c, struct json_object **msg,
		     int *fds, size_t *nfds, char *err, size_t errlen)
{
	size_t used;
	int r = proto_parse_frame(c->in, c->in_len, &used, msg, err, errlen);

	*nfds = 0;
	if (r == 0 || r == -EMSGSIZE)
		return r;
	memmove(c->in, c->in + used, c->in_len - used);
	c->in_len -= used;
	/* the fds belong to this request (they came with its first byte) */
	memcpy(fds, c->fds, c->nfds * sizeof(int));
	*nfds = c->nfds;
	c->nfds = 0;
	return r;
}

int proto_conn__queue(struct proto_conn *c, struct json_object *msg)
{
	char *frame, *nb;
	size_t len;
	int e = proto_encode(msg, &frame, &len);

	if (e)
		return e;
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
	}
	if (c->out_len - c->out_off > 4 * PROTO_MAX_MSG) {
		free(frame);
		return -ENOBUFS;   /* a client that never reads its replies */
	}
	nb = realloc(c->out, c->out_len + len);
	if (!nb) {
		free(frame);
		return -ENOMEM;
	}
	memcpy(nb + c->out_len, frame, len);
	c->out = nb;
	c->out_len += len;
	free(frame);
	return 0;
}

int proto_conn__flush(struct proto_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		c->out_off += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	return 0;
}

bool proto_conn__pending(const struct proto_conn *c)
{
	return c->out_off < c->out_len;
}

void proto_conn__free(struct proto_conn *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	if (c->fd >= 0)
		close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
}

int proto_record_argv(struct json_object *msg, char ***argv, int *argc)
{
	struct json_object *arr;
	size_t n = 0, i;

	*argv = NULL;
	*argc = 0;
	if (json_object_object_get_ex(msg, "argv", &arr) && json_object_is_type(arr, json_type_array))
		n = json_object_array_length(arr);
	if (n > PROTO_ARGV_MAX)
		n = PROTO_ARGV_MAX;
	*argv = calloc(n + 1, sizeof(**argv));
	if (!*argv)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(arr, i);

		(*argv)[i] = strndup(json_object_is_type(x, json_type_string) ?
				     json_object_get_string(x) : "", PROTO_ARG_MAX);
		if (!(*argv)[i]) {
			proto_argv_free(*argv);
			*argv = NULL;
			return -ENOMEM;
		}
		*argc = (int)i + 1;
	}
	return 0;
}

void proto_argv_free(char **argv)
{
	size_t i;

	for (i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int proto_record_start_opts(struct json_object *msg, bool *pipe, int *pid, char *err, size_t errlen)
{
	struct json_object *x;

	*pipe = json_object_object_get_ex(msg, "pipe", &x) && json_object_get_boolean(x);
	*pid = 0;
	if (!json_object_object_get_ex(msg, "pid", &x))
		return 0;
	if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) <= 0 ||
	    json_object_get_int64(x) > INT32_MAX) {
		snprintf(err, errlen, "record-start: bad pid");
		return -EINVAL;
	}
	*pid = (int)json_object_get_int64(x);
	return 0;
}

int proto_keep_opts(struct json_object *msg, int *from, uint64_t *ring, char *dir, size_t dirlen,
		    char *err, size_t errlen)
{
	struct json_object *x;
	const char *d;

	*from = 0;
	*ring = 0;
	dir[0] = '\0';
	if (json_object_object_get_ex(msg, "from", &x)) {
		if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) <= 0 ||
		    json_object_get_int64(x) > INT32_MAX) {
			snprintf(err, errlen, "keep: bad pid in \"from\"");
			return -EINVAL;
		}
		*from = (int)json_object_get_int64(x);
	}
	if (json_object_object_get_ex(msg, "ring", &x)) {
		if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) <= 0) {
			snprintf(err, errlen, "keep: bad ring size");
			return -EINVAL;
		}
		*ring = (uint64_t)json_object_get_int64(x);
	}
	if (json_object_object_get_ex(msg, "dir", &x)) {
		d = json_object_get_string(x);
		if (!json_object_is_type(x, json_type_string) || d[0] != '/' ||
		    strlen(d) >= dirlen || strlen(d) >= PATH_MAX) {
			snprintf(err, errlen, "keep: the output directory must be an absolute path");
			return -EINVAL;
		}
		snprintf(dir, dirlen, "%s", d);
	}
	if (*ring && dir[0]) {
		snprintf(err, errlen, "keep: give only one of a ring and an output directory");
		return -EINVAL;
	}
	return 0;
}

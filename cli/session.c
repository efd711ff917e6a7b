// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark session: the perfmarkd client.  Output files and directories are
 * opened here, with the caller's rights, and passed to the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "recopts.h"
#include "evspec.h"
#include "proto.h"

#define DEFAULT_SOCKET "/run/perfmark/perfmarkd.sock"

static const char *socket_path(void)
{
	const char *p = getenv("PERFMARK_SOCKET");

	return p && p[0] ? p : DEFAULT_SOCKET;
}

static int connect_daemon(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = socket_path();
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return pm_err("cannot reach perfmarkd at %s: path too long", path), -1;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		pm_err("cannot reach perfmarkd at %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static struct json_object *request(const char *cmd, const char *name)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
	json_object_object_add(o, "cmd", json_object_new_string(cmd));
	if (name)
		json_object_object_add(o, "name", json_object_new_string(name));
	return o;
}

/* Send req (consumed) with fds, read the reply.  NULL after printing the error. */
static struct json_object *call(int sock, struct json_object *req, const int *fds, size_t nfds)
{
	struct json_object *rep = NULL, *ok, *err;
	int rfds[PROTO_MAX_FDS];
	size_t nr = PROTO_MAX_FDS, i;
	int e;

	e = proto_send(sock, req, fds, nfds);
	json_object_put(req);
	if (e) {
		pm_err("cannot talk to perfmarkd at %s: %s", socket_path(), strerror(-e));
		return NULL;
	}
	e = proto_recv(sock, &rep, rfds, &nr);
	for (i = 0; i < nr; i++)
		close(rfds[i]);
	if (e) {
		pm_err("no reply from perfmarkd at %s: %s", socket_path(),
		       e == -ECONNRESET ? "connection closed" : strerror(-e));
		return NULL;
	}
	if (!json_object_object_get_ex(rep, "ok", &ok) || !json_object_get_boolean(ok)) {
		if (json_object_object_get_ex(rep, "error", &err))
			pm_err("%s", json_object_get_string(err));
		else
			pm_err("perfmarkd refused the request");
		json_object_put(rep);
		return NULL;
	}
	return rep;
}

static bool name_ok(const char *name)
{
	if (proto_name_valid(name))
		return true;
	pm_err("invalid session name '%s' (use [A-Za-z0-9_.-], 1-64 characters, not starting with '.')",
	       name);
	return false;
}

/* --rotate: perf's --switch-output spelling: 10s/5m/2h/1d is time, 64M/1G/4096 size */
static int parse_rotate(const char *s, uint64_t *size, uint64_t *secs)
{
	size_t n = strlen(s);
	char err[128];
	char *end;

	if (n > 1 && strchr("smhd", s[n - 1])) {
		unsigned long long v = strtoull(s, &end, 10);
		unsigned long long mul = s[n - 1] == 's' ? 1 : s[n - 1] == 'm' ? 60 :
					 s[n - 1] == 'h' ? 3600 : 86400;

		if (end != s + n - 1 || !v)
			return pm_err("bad --rotate '%s' (e.g. 64M, 1G, 30s, 10m, 1h)", s);
		*secs = v * mul;
		return 0;
	}
	if (evspec_parse_size(s, size, err, sizeof(err)) || !*size)
		return pm_err("bad --rotate '%s' (e.g. 64M, 1G, 30s, 10m, 1h)", s);
	return 0;
}

static void create_usage(void)
{
	fprintf(stderr, "usage: perfmark session create NAME [-e EVENT[,EVENT...]] [-F HZ | -c PERIOD] [-g]\n"
		"                       [-a | -p PID[,PID...]] [--no-markers] [-z[LEVEL]]\n"
		"                       [--ring SIZE | --output DIR [--rotate SIZE|TIME] [--keep N]]\n");
}

static int do_create(int argc, char **argv)
{
	static const struct option opts[] = {
		RECOPTS_LONG,
		{ "ring", required_argument, NULL, 'R' },
		{ "output", required_argument, NULL, 'o' },
		{ "rotate", required_argument, NULL, 'r' },
		{ "keep", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct recopts ro;
	int c, n, t, sock, dfd = -1;
	uint64_t ring = 0, rsize = 0, rsecs = 0, keep = 0;
	const char *name, *out = NULL;
	char err[256], dir[PATH_MAX];
	struct json_object *def, *req, *rep, *arr;

	if (argc < 2 || argv[1][0] == '-') {
		create_usage();
		return 1;
	}
	name = argv[1];
	if (!name_ok(name))
		return 1;
	recopts_init(&ro);
	optind = 1;
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, RECOPTS_SHORT "o:h", opts, NULL)) != -1) {
		t = recopts_take(&ro, c, optarg);
		if (t < 0)
			return 1;
		if (t)
			continue;
		switch (c) {
		case 'R':
			if (evspec_parse_size(optarg, &ring, err, sizeof(err)))
				return pm_err("%s", err);
			if (ring < (64u << 10))
				return pm_err("ring size must be at least 64K");
			break;
		case 'o':
			out = optarg;
			break;
		case 'r':
			if (parse_rotate(optarg, &rsize, &rsecs))
				return 1;
			break;
		case 'k': {
			char *end;

			keep = strtoull(optarg, &end, 10);
			if (*end || !keep || keep > 100000)
				return pm_err("bad --keep '%s' (1-100000)", optarg);
			break;
		}
		case 'h':
			create_usage();
			return 0;
		default:
			create_usage();
			return 1;
		}
	}
	if (optind < argc)
		return pm_err("unexpected argument '%s' (sessions take -a or -p, not a command)", argv[optind]);
	if (recopts_check(&ro))
		return 1;
	if (ro.have_a && ro.so.nr_pids)
		return pm_err("give only one of -a and -p PID");
	if (ring && out)
		return pm_err("give only one of --ring and --output");
	if ((rsize || rsecs || keep) && !out)
		return pm_err("--rotate and --keep need --output DIR");
	if (out) {
		dfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return pm_err("%s: %s", out, strerror(errno));
		if (!realpath(out, dir)) {
			close(dfd);
			return pm_err("%s: %s", out, strerror(errno));
		}
	}
	def = json_object_new_object();
	arr = json_object_new_array();
	for (n = 0; n < (int)ro.so.nr_events; n++)
		json_object_array_add(arr, json_object_new_string(ro.so.events[n].name));
	json_object_object_add(def, "events", arr);
	if (ro.so.period)
		json_object_object_add(def, "period", json_object_new_int64((int64_t)ro.so.period));
	else
		json_object_object_add(def, "freq", json_object_new_int64((int64_t)ro.so.freq));
	json_object_object_add(def, "callchain", json_object_new_boolean(ro.so.callchain));
	json_object_object_add(def, "markers", json_object_new_boolean(ro.so.markers));
	json_object_object_add(def, "zstd", json_object_new_int(ro.so.zstd_level));
	json_object_object_add(def, "target", json_object_new_string(ro.so.nr_pids ? "pids" : "all"));
	if (ro.so.nr_pids) {
		arr = json_object_new_array();
		for (n = 0; n < (int)ro.so.nr_pids; n++)
			json_object_array_add(arr, json_object_new_int(ro.so.pids[n]));
		json_object_object_add(def, "pids", arr);
	}
	if (out) {
		json_object_object_add(def, "sink", json_object_new_string("file"));
		json_object_object_add(def, "dir", json_object_new_string(dir));
		if (rsize)
			json_object_object_add(def, "rotate_size", json_object_new_int64((int64_t)rsize));
		if (rsecs)
			json_object_object_add(def, "rotate_secs", json_object_new_int64((int64_t)rsecs));
		if (keep)
			json_object_object_add(def, "keep", json_object_new_int64((int64_t)keep));
	} else {
		json_object_object_add(def, "sink", json_object_new_string("ring"));
		if (ring)
			json_object_object_add(def, "ring_size", json_object_new_int64((int64_t)ring));
	}
	sock = connect_daemon();
	if (sock < 0) {
		json_object_put(def);
		if (dfd >= 0)
			close(dfd);
		return 1;
	}
	req = request("create", name);
	json_object_object_add(req, "def", def);
	rep = call(sock, req, &dfd, dfd >= 0 ? 1 : 0);
	if (dfd >= 0)
		close(dfd);
	close(sock);
	if (!rep)
		return 1;
	json_object_put(rep);
	return 0;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *x;

	return json_object_object_get_ex(o, k, &x) ? json_object_get_string(x) : "";
}

static long long jint(struct json_object *o, const char *k)
{
	struct json_object *x;

	return json_object_object_get_ex(o, k, &x) ? (long long)json_object_get_int64(x) : 0;
}

static void human(char *buf, size_t len, long long v)
{
	if (v >= 10ll << 30)
		snprintf(buf, len, "%lldG", v >> 30);
	else if (v >= 10ll << 20)
		snprintf(buf, len, "%lldM", v >> 20);
	else if (v >= 10ll << 10)
		snprintf(buf, len, "%lldK", v >> 10);
	else
		snprintf(buf, len, "%lld", v);
}

static int simple(const char *cmd, int argc, char **argv, struct json_object **out)
{
	struct json_object *rep;
	int sock;

	if (argc != 2 || argv[1][0] == '-')
		return pm_err("usage: perfmark session %s NAME", cmd);
	if (!name_ok(argv[1]))
		return 1;
	sock = connect_daemon();
	if (sock < 0)
		return 1;
	rep = call(sock, request(cmd, argv[1]), NULL, 0);
	close(sock);
	if (!rep)
		return 1;
	if (out)
		*out = rep;
	else
		json_object_put(rep);
	return 0;
}

static int do_stop(int argc, char **argv) { return simple("stop", argc, argv, NULL); }
static int do_start(int argc, char **argv) { return simple("start", argc, argv, NULL); }
static int do_delete(int argc, char **argv) { return simple("delete", argc, argv, NULL); }

static bool want_json(int *argc, char **argv)
{
	int i, j;
	bool json = false;

	for (i = j = 0; i < *argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			argv[j++] = argv[i];
	}
	*argc = j;
	return json;
}

static int do_list(int argc, char **argv)
{
	bool json = want_json(&argc, argv);
	struct json_object *rep, *arr, *s;
	size_t i;
	int sock;

	if (argc != 1)
		return pm_err("usage: perfmark session list [--json]");
	sock = connect_daemon();
	if (sock < 0)
		return 1;
	rep = call(sock, request("list", NULL), NULL, 0);
	close(sock);
	if (!rep)
		return 1;
	json_object_object_get_ex(rep, "sessions", &arr);
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN));
	} else {
		printf("%-24s %-8s %6s %-5s %10s %10s %8s %8s\n", "NAME", "STATE", "OWNER", "SINK",
		       "SAMPLES", "MARKERS", "LOST", "BYTES");
		for (i = 0; arr && i < json_object_array_length(arr); i++) {
			char b[32];

			s = json_object_array_get_idx(arr, i);
			struct json_object *sk;

			json_object_object_get_ex(s, "sink", &sk);
			human(b, sizeof(b), jint(s, "bytes"));
			printf("%-24s %-8s %6lld %-5s %10lld %10lld %8lld %8s\n", jstr(s, "name"),
			       jstr(s, "state"), jint(s, "owner"), jstr(sk, "type"), jint(s, "samples"),
			       jint(s, "markers"), jint(s, "lost"), b);
		}
	}
	json_object_put(rep);
	return 0;
}

static int do_show(int argc, char **argv)
{
	bool json = want_json(&argc, argv);
	struct json_object *rep = NULL, *s, *sk, *x;
	char b[32];

	if (simple("show", argc, argv, &rep))
		return 1;
	json_object_object_get_ex(rep, "session", &s);
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN));
		json_object_put(rep);
		return 0;
	}
	json_object_object_get_ex(s, "sink", &sk);
	printf("name:     %s\n", jstr(s, "name"));
	printf("state:    %s", jstr(s, "state"));
	if (json_object_object_get_ex(s, "message", &x))
		printf(" (%s)", json_object_get_string(x));
	printf("\nevents:   ");
	json_object_object_get_ex(s, "events", &x);
	for (size_t i = 0; x && i < json_object_array_length(x); i++)
		printf("%s%s", i ? "," : "", json_object_get_string(json_object_array_get_idx(x, i)));
	if (jint(s, "period"))
		printf(" (period %lld)", jint(s, "period"));
	else
		printf(" (%lld Hz)", jint(s, "freq"));
	json_object_object_get_ex(s, "target", &x);
	printf("\ntarget:   %s\n", json_object_is_type(x, json_type_string) ? "all (system-wide)" :
	       json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN));
	printf("owner:    uid %lld\n", jint(s, "owner"));
	printf("samples:  %lld\n", jint(s, "samples"));
	printf("markers:  %lld\n", jint(s, "markers"));
	printf("lost:     %lld\n", jint(s, "lost"));
	printf("bytes:    %lld\n", jint(s, "bytes"));
	if (!strcmp(jstr(sk, "type"), "ring")) {
		human(b, sizeof(b), jint(sk, "size"));
		printf("sink:     ring %s, used %lld bytes (%.1f%%), evicted %lld records\n", b,
		       jint(sk, "used"), jint(sk, "size") ? 100.0 * jint(sk, "used") / jint(sk, "size") : 0.0,
		       jint(sk, "evicted"));
	} else {
		printf("sink:     files in %s, %lld written, current %s (%lld bytes)", jstr(sk, "dir"),
		       jint(sk, "files"), jstr(sk, "current"), jint(sk, "current_bytes"));
		if (jint(sk, "rotate_size"))
			printf(", rotate at %lld bytes", jint(sk, "rotate_size"));
		if (jint(sk, "rotate_secs"))
			printf(", rotate every %lld s", jint(sk, "rotate_secs"));
		if (jint(sk, "keep"))
			printf(", keep %lld", jint(sk, "keep"));
		printf("\n");
	}
	printf("readers:  %lld (%lld records dropped for slow readers)\n", jint(s, "readers"),
	       jint(s, "reader_lost"));
	json_object_put(rep);
	return 0;
}

/* -o FILE|- for snapshot and attach: the fd to pass */
static int open_out(int argc, char **argv, const char *cmd, const char **name, int *fd)
{
	const char *out = NULL;
	int i;

	*name = NULL;
	for (i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			out = argv[++i];
		else if (!strncmp(argv[i], "-o", 2) && argv[i][2])
			out = argv[i] + 2;
		else if (argv[i][0] != '-' && !*name)
			*name = argv[i];
		else
			return pm_err("usage: perfmark session %s NAME -o FILE|-", cmd);
	}
	if (!*name || !out)
		return pm_err("usage: perfmark session %s NAME -o FILE|-", cmd);
	if (!name_ok(*name))
		return 1;
	if (!strcmp(out, "-")) {
		if (isatty(1))
			return pm_err("refusing to write a perf.data stream to a terminal (use -o FILE or a pipe)");
		*fd = 1;
		return 0;
	}
	*fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (*fd < 0)
		return pm_err("%s: %s", out, strerror(errno));
	return 0;
}

static int do_snapshot(int argc, char **argv)
{
	struct json_object *rep;
	const char *name;
	int fd = -1, sock;

	if (open_out(argc, argv, "snapshot", &name, &fd))
		return 1;
	sock = connect_daemon();
	if (sock < 0)
		return 1;
	rep = call(sock, request("snapshot", name), &fd, 1);
	close(sock);
	if (fd > 1)
		close(fd);
	if (!rep)
		return 1;
	json_object_put(rep);
	return 0;
}

static int do_attach(int argc, char **argv)
{
	struct json_object *rep;
	const char *name;
	int fd = -1, sock, dn;
	char b[256];

	if (open_out(argc, argv, "attach", &name, &fd))
		return 1;
	sock = connect_daemon();
	if (sock < 0)
		return 1;
	rep = call(sock, request("attach", name), &fd, 1);
	/* only the daemon writes the stream: the reader sees its end when it ends */
	if (fd > 1) {
		close(fd);
	} else {
		dn = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (dn >= 0) {
			dup2(dn, 1);
			close(dn);
		}
	}
	if (!rep) {
		close(sock);
		return 1;
	}
	json_object_put(rep);
	/* stay until the daemon ends the stream (reader gone, session stopped) or a signal */
	while (read(sock, b, sizeof(b)) > 0)
		;
	close(sock);
	return 0;
}

static const struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} subcmds[] = {
	{ "create", do_create },
	{ "list", do_list },
	{ "show", do_show },
	{ "snapshot", do_snapshot },
	{ "attach", do_attach },
	{ "stop", do_stop },
	{ "start", do_start },
	{ "delete", do_delete },
	{ NULL, NULL },
};

int cmd_session(int argc, char **argv)
{
	const struct subcmd *s;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		fprintf(stderr, "usage: perfmark session create|list|show|snapshot|attach|stop|start|delete ...\n");
		return 1;
	}
	for (s = subcmds; s->name; s++)
		if (!strcmp(argv[1], s->name))
			return s->fn(argc - 1, argv + 1);
	return pm_err("unknown session command '%s' (create, list, show, snapshot, attach, stop, start, delete)",
		      argv[1]);
}

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

#include "collector.h"
#include "client.h"
#include "commands.h"
#include "outfile.h"
#include "recopts.h"
#include "evspec.h"
#include "jsonf.h"
#include "proto.h"
#include "sessdef.h"

/* connect, or NULL after one error line */
static int connect_daemon(void)
{
	int fd = client_connect(0);

	if (fd < 0)
		pm_err("cannot reach perfmarkd at %s: %s", client_socket(), strerror(-fd));
	return fd;
}

/* Send req (consumed) with fds; the reply when it says ok, else NULL after the error. */
static struct json_object *call(int sock, struct json_object *req, const int *fds, size_t nfds)
{
	return client_ok(client_call(sock, req, fds, nfds));
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

static void create_usage(FILE *f)
{
	fprintf(f, "usage: perfmark session create NAME [-e EVENT[,EVENT...]] [-F HZ | -c PERIOD]\n"
		"                       [-g | --call-graph fp|dwarf[,SIZE]|ehframe]\n"
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
		{ 0 },
	};
	struct recopts ro;
	struct sessdef sd;
	int c, sock, dfd = -1;
	uint64_t ring = 0, rsize = 0, rsecs = 0, keep = 0;
	const char *name, *out = NULL;
	char err[256], dir[PATH_MAX];
	struct json_object *def, *req, *rep;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		create_usage(stdout);
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-') {
		create_usage(stderr);
		return 1;
	}
	name = argv[1];
	if (!name_ok(name))
		return 1;
	recopts_init(&ro);
	optind = 1;
	argc--;
	argv++;
	while ((c = recopts_next(&ro, argc, argv, RECOPTS_SHORT "o:h", opts)) != -1) {
		switch (c) {
		case RECOPTS_BAD:
			return 1;
		case 'R':
			if (evspec_parse_size(optarg, &ring, err, sizeof(err)))
				return pm_err("%s", err);
			if (ring < SESSDEF_RING_MIN)
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
			if (*end || !keep || keep > SESSDEF_KEEP_MAX)
				return pm_err("bad --keep '%s' (1-100000)", optarg);
			break;
		}
		case 'h':
			create_usage(stdout);
			return 0;
		default:
			create_usage(stderr);
			return 1;
		}
	}
	if (optind < argc)
		return pm_err("unexpected argument '%s' (sessions take -a or -p, not a command)", argv[optind]);
	if (recopts_check(&ro))
		return 1;
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
	sessdef_init(&sd);
	sd.spec = ro.spec;
	if (out) {
		sd.sink = SESSDEF_SINK_FILE;
		snprintf(sd.dir, sizeof(sd.dir), "%s", dir);
		sd.rotate_size = rsize;
		sd.rotate_secs = rsecs;
		sd.keep = (uint32_t)keep;
	} else if (ring) {
		sd.ring_size = ring;
	}
	def = sessdef_to_json(&sd, false);
	sock = connect_daemon();
	if (sock < 0) {
		json_object_put(def);
		if (dfd >= 0)
			close(dfd);
		return 1;
	}
	req = client_request("create", name);
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

/* a string of a reply, "" when absent */
static const char *jstr(struct json_object *o, const char *k)
{
	const char *s = jsonf_get_str(o, k);

	return s ? s : "";
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
	rep = call(sock, client_request(cmd, argv[1]), NULL, 0);
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
	rep = call(sock, client_request("list", NULL), NULL, 0);
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
			human(b, sizeof(b), jsonf_get_int(s, "bytes"));
			printf("%-24s %-8s %6lld %-5s %10lld %10lld %8lld %8s\n", jstr(s, "name"),
			       jstr(s, "state"), jsonf_get_int(s, "owner"), jstr(sk, "type"), jsonf_get_int(s, "samples"),
			       jsonf_get_int(s, "markers"), jsonf_get_int(s, "lost"), b);
		}
	}
	json_object_put(rep);
	return 0;
}

/* events, rate, call graph and target, read back through the one schema */
static void print_spec(struct json_object *s)
{
	struct sessdef d;
	char err[256], cg[32];
	size_t i;

	if (sessdef_from_json(s, &d, true, err, sizeof(err))) {
		printf("? (%s)\n", err);
		return;
	}
	for (i = 0; i < (d.nr_resolved ? d.nr_resolved : d.spec.nr_events ? d.spec.nr_events : 1); i++)
		printf("%s%s", i ? "," : "", d.nr_resolved ? d.resolved[i] : recspec_event_name(&d.spec, i));
	if (d.spec.period)
		printf(" (period %llu", (unsigned long long)d.spec.period);
	else
		printf(" (%llu Hz", (unsigned long long)d.spec.freq);
	if (d.spec.call_graph != RECSPEC_CG_NONE)
		printf(", call graph %s", recspec_call_graph_name(&d.spec, cg, sizeof(cg)));
	printf(")\ntarget:   ");
	if (d.spec.target == RECSPEC_TARGET_ALL)
		printf("all (system-wide)");
	for (i = 0; i < d.spec.nr_pids; i++)
		printf("%s%d", i ? "," : "pids ", d.spec.pids[i]);
	printf("\n");
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
	print_spec(s);
	printf("owner:    uid %lld\n", jsonf_get_int(s, "owner"));
	printf("samples:  %lld\n", jsonf_get_int(s, "samples"));
	printf("markers:  %lld\n", jsonf_get_int(s, "markers"));
	printf("lost:     %lld\n", jsonf_get_int(s, "lost"));
	printf("late:     %lld (%lld older than what perf had already sorted)\n",
	       jsonf_get_int(s, "late"), jsonf_get_int(s, "late_unordered"));
	printf("window:   %lld bytes held, %lld records written early (it was full)\n",
	       jsonf_get_int(s, "window_bytes"), jsonf_get_int(s, "overflow"));
	printf("clamped:  %lld marker times outside what the recorder saw; %lld fast-lane areas "
	       "given up (nonsense in their rings)\n", jsonf_get_int(s, "clamped"),
	       jsonf_get_int(s, "fastlane_corrupt"));
	printf("jit map:  %lld lines written, %lld not (process gone, owner unknown), %lld refused\n",
	       jsonf_get_int(s, "jit_lines"), jsonf_get_int(s, "jit_missed"),
	       jsonf_get_int(s, "jit_refused"));
	printf("bytes:    %lld\n", jsonf_get_int(s, "bytes"));
	if (!strcmp(jstr(sk, "type"), "ring")) {
		human(b, sizeof(b), jsonf_get_int(sk, "size"));
		printf("sink:     ring %s, used %lld bytes (%.1f%%), evicted %lld records", b,
		       jsonf_get_int(sk, "used"), jsonf_get_int(sk, "size") ? 100.0 * jsonf_get_int(sk, "used") / jsonf_get_int(sk, "size") : 0.0,
		       jsonf_get_int(sk, "evicted"));
		if (jsonf_get_int(sk, "torn"))
			printf(", %lld torn by a crash", jsonf_get_int(sk, "torn"));
		printf("\n");
	} else {
		printf("sink:     files in %s, %lld written, current %s (%lld bytes)", jstr(sk, "dir"),
		       jsonf_get_int(sk, "files"), jstr(sk, "current"), jsonf_get_int(sk, "current_bytes"));
		if (jsonf_get_int(sk, "rotate_size"))
			printf(", rotate at %lld bytes", jsonf_get_int(sk, "rotate_size"));
		if (jsonf_get_int(sk, "rotate_secs"))
			printf(", rotate every %lld s", jsonf_get_int(sk, "rotate_secs"));
		if (jsonf_get_int(sk, "keep"))
			printf(", keep %lld", jsonf_get_int(sk, "keep"));
		printf("\n");
	}
	printf("readers:  %lld (%lld records dropped for slow readers)\n", jsonf_get_int(s, "readers"),
	       jsonf_get_int(s, "reader_lost"));
	if (json_object_object_get_ex(s, "unwind", &x)) {
		struct collector_unwind_stats us;
		char line[512];

		collector_unwind_stats_from_json(x, &us);
		collector_unwind_stats_text(&us, line, sizeof(line));
		printf("unwind:   %s\n", line);
	}
	json_object_put(rep);
	return 0;
}

/* -o FILE|- for snapshot and attach: the fd to pass */
/* NAME and -o FILE|- of snapshot and attach */
static int parse_out(int argc, char **argv, const char *cmd, const char **name, const char **out)
{
	int i;

	*name = *out = NULL;
	for (i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			*out = argv[++i];
		else if (!strncmp(argv[i], "-o", 2) && argv[i][2])
			*out = argv[i] + 2;
		else if (argv[i][0] != '-' && !*name)
			*name = argv[i];
		else
			return pm_err("usage: perfmark session %s NAME -o FILE|-", cmd);
	}
	if (!*name || !*out)
		return pm_err("usage: perfmark session %s NAME -o FILE|-", cmd);
	return name_ok(*name) ? 0 : 1;
}

/*
 * The daemon first (reachable?), then the output, through a temporary that
 * takes its place only once the daemon accepted (outfile.h): a failed
 * snapshot or attach leaves FILE as it was.
 */
static int start_out(int argc, char **argv, const char *cmd, struct outfile *o, int *sock,
		     struct json_object **rep)
{
	const char *name, *out;

	*sock = -1;
	*rep = NULL;
	if (parse_out(argc, argv, cmd, &name, &out))
		return 1;
	*sock = connect_daemon();
	if (*sock < 0 || outfile__open_atomic(o, out))
		return 1;
	*rep = call(*sock, client_request(cmd, name), &o->fd, 1);
	if (!*rep) {
		outfile__discard(o);
		return 1;
	}
	return outfile__commit(o);
}

static int do_snapshot(int argc, char **argv)
{
	struct json_object *rep;
	struct outfile o = { .fd = -1 };
	int sock, ret = start_out(argc, argv, "snapshot", &o, &sock, &rep);

	if (sock >= 0)
		close(sock);
	if (o.fd > 1)
		close(o.fd);
	json_object_put(rep);
	return ret;
}

/*
 * Stay until the daemon ends the stream: its last message says why (the
 * session ended: 0; the output failed: its error, 1).  Nothing else writes
 * the stream, so the reader sees its end when the daemon's copy closes.
 */
static int do_attach(int argc, char **argv)
{
	struct json_object *rep;
	struct outfile o = { .fd = -1 };
	int sock, ret = start_out(argc, argv, "attach", &o, &sock, &rep), dn;

	if (o.fd > 1) {
		close(o.fd);
	} else if (o.fd == 1 && (dn = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
		dup2(dn, 1);
		close(dn);
	}
	json_object_put(rep);
	if (ret) {
		if (sock >= 0)
			close(sock);
		return ret;
	}
	client_untimed(sock);
	for (;;) {
		int fds[PROTO_MAX_FDS];
		size_t nr = PROTO_MAX_FDS;

		rep = NULL;
		if (proto_recv(sock, &rep, fds, &nr))
			break;               /* closed: the end */
		while (nr)
			close(fds[--nr]);
		if (!jsonf_get_bool(rep, "ok")) {
			ret = client_refused(rep);
			break;
		}
		json_object_put(rep);
	}
	close(sock);
	return ret;
}

static const struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;            /* for --help (create prints its own) */
} subcmds[] = {
	{ "create", do_create, NULL },
	{ "list", do_list, "[--json]" },
	{ "show", do_show, "NAME [--json]" },
	{ "snapshot", do_snapshot, "NAME -o FILE|-" },
	{ "attach", do_attach, "NAME -o FILE|-" },
	{ "stop", do_stop, "NAME" },
	{ "start", do_start, "NAME" },
	{ "delete", do_delete, "NAME" },
	{ NULL, NULL, NULL },
};

static bool is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

static void session_usage(FILE *f)
{
	fprintf(f, "usage: perfmark session create NAME [record options] [--ring SIZE | --output DIR [--rotate SIZE|TIME] [--keep N]]\n"
		   "       perfmark session list [--json]\n"
		   "       perfmark session show NAME [--json]\n"
		   "       perfmark session snapshot NAME -o FILE|-\n"
		   "       perfmark session attach NAME -o FILE|-\n"
		   "       perfmark session stop|start|delete NAME\n"
		   "Named sessions run in perfmarkd with no client attached; each command takes --help.\n");
}

int cmd_session(int argc, char **argv)
{
	const struct subcmd *s;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		session_usage(stderr);
		return 1;
	}
	if (is_help(argv[1]) || !strcmp(argv[1], "help")) {
		session_usage(stdout);
		return 0;
	}
	for (s = subcmds; s->name; s++) {
		if (strcmp(argv[1], s->name))
			continue;
		if (argc > 2 && is_help(argv[2]) && s->args) {
			printf("usage: perfmark session %s %s\n", s->name, s->args);
			return 0;
		}
		return s->fn(argc - 1, argv + 1);
	}
	return pm_err("unknown session command '%s' (create, list, show, snapshot, attach, stop, start, delete)",
		      argv[1]);
}

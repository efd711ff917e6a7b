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
#include <stddef.h>
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
#include "escape.h"
#include "opts.h"
#include "outfile.h"
#include "recopts.h"
#include "evspec.h"
#include "jsonf.h"
#include "proto.h"
#include "sessdef.h"
#include "session_verbs.h"

/* connect, or NULL after one error line */
int session_connect(void)
{
	int fd = client_connect(0);

	if (fd < 0)
		pm_err("cannot reach perfmarkd at %s: %s", client_socket(), strerror(-fd));
	return fd;
}

/* Send req (consumed) with fds; the reply when it says ok, else NULL after the error. */
struct json_object *session_call(int sock, struct json_object *req, const int *fds, size_t nfds)
{
	return client_ok(client_call(sock, req, fds, nfds));
}

bool session_name_ok(const char *name)
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

struct create_opts {
	uint64_t ring, rsize, rsecs, keep;
	const char *out;
	const char *count;
};

int session_parse_ring(const char *arg, uint64_t *ring)
{
	char err[256];

	if (evspec_parse_size(arg, ring, err, sizeof(err)))
		return pm_err("%s", err);
	if (*ring < SESSDEF_RING_MIN)
		return pm_err("ring size must be at least 64K");
	return 0;
}

static int set_ring(void *ctx, const struct opt *o, const char *arg)
{
	struct create_opts *c = ctx;

	return session_parse_ring(arg, &c->ring);
}

static int set_rotate(void *ctx, const struct opt *o, const char *arg)
{
	struct create_opts *c = ctx;

	return parse_rotate(arg, &c->rsize, &c->rsecs);
}

static int set_keep(void *ctx, const struct opt *o, const char *arg)
{
	struct create_opts *c = ctx;
	char *end;

	c->keep = strtoull(arg, &end, 10);
	if (!*arg || *end || !c->keep || c->keep > SESSDEF_KEEP_MAX)
		return pm_err("bad --keep '%s' (1-100000)", arg);
	return 0;
}

/* create's own rows; the recording options are recopts_table */
static const struct opt create_table[] = {
	{ .name = "ring", .arg = "SIZE",
	  .help = "keep the newest SIZE bytes of perf.data in memory (a flight recorder; at least 64K); "
	    "not --ringbuf, the BPF ring of the recording options",
	  .def = "64M", .set = set_ring, .alt = 10 },
	{ .flag = 'o', .name = "output", .arg = "DIR",
	  .help = "write perf.data files into DIR instead of a ring", .set = opt_set_str,
	  .off = offsetof(struct create_opts, out), .alt = 10 },
	{ .name = "rotate", .arg = "SIZE|TIME",
	  .help = "with --output: a new file every SIZE bytes (64M, 1G) or TIME (30s, 10m, 1h, 1d)",
	  .def = "one file", .set = set_rotate },
	{ .name = "keep", .arg = "N",
	  .help = "with --output: delete all but the newest N files (1-100000)",
	  .def = "all are kept", .set = set_keep },
	{ .name = "counters", .arg = "EVENTS",
	  .help = "count these events on the session's targets, as 'perfmark stat -e' (at most 8; "
	    "totals and rates in 'session show')", .set = opt_set_str,
	  .off = offsetof(struct create_opts, count) },
	{ 0 },
};

static const struct opts_cmd create_cmd = {
	.name = "session create",
	.args = "NAME",
	.about = "Create a named session in perfmarkd and start it: it records with no "
		 "client attached, into a ring in memory (--ring) or into files (--output).",
	.tables = { recopts_table, create_table },
};

static int do_create(int argc, char **argv)
{
	struct create_opts co = { 0 };
	struct recopts ro;
	void *ctx[] = { &ro, &co };
	struct sessdef sd;
	int e, dfd = -1;
	const char *name;
	char dir[PATH_MAX];
	struct json_object *req, *rep;

	recopts_init(&ro);
	e = opts_parse(&create_cmd, ctx, argc, argv);
	if (e)
		return e == OPTS_HELP ? 0 : 1;
	if (optind + 1 < argc)
		return pm_err("unexpected argument '%s' (sessions take -a or -p, not a command)",
			      argv[optind + 1]);
	if (session_args(&create_cmd, argc, argv, &name))
		return 1;
	if (recopts_check(&ro))
		return 1;
	if (co.ring && co.out)
		return pm_err("give only one of --ring and --output");
	if ((co.rsize || co.rsecs || co.keep) && !co.out)
		return pm_err("--rotate and --keep need --output DIR");
	sessdef_init(&sd);
	sd.spec = ro.spec;
	if (co.count && session_parse_count(co.count, &sd))
		return 1;
	if (co.out) {
		dfd = session_out_dir(co.out, dir);
		if (dfd < 0)
			return 1;
		sd.sink = SESSDEF_SINK_FILE;
		snprintf(sd.dir, sizeof(sd.dir), "%s", dir);
		sd.rotate_size = co.rsize;
		sd.rotate_secs = co.rsecs;
		sd.keep = (uint32_t)co.keep;
	} else if (co.ring) {
		sd.ring_size = co.ring;
	}
	req = client_request("create", name);
	json_object_object_add(req, "def", sessdef_to_json(&sd, false));
	rep = session_send(req, dfd);
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

static const struct opt json_table[] = {
	{ .name = "json", .help = "print the daemon's JSON document instead of a table",
	  .set = opt_set_true, .off = offsetof(struct verb_opts, json) },
	{ 0 },
};

const struct opt session_out_table[] = {
	{ .flag = 'o', .name = "output", .arg = "FILE|-",
	  .help = "where the perf.data goes (- is stdout); FILE is replaced only once perfmarkd accepted",
	  .set = opt_set_str, .off = offsetof(struct verb_opts, out), .required = true },
	{ 0 },
};

static const struct opts_cmd list_cmd = {
	.name = "session list",
	.about = "List the named sessions this user may see, with their counts.",
	.tables = { json_table },
};
static const struct opts_cmd show_cmd = {
	.name = "session show", .args = "NAME",
	.about = "Show one session: its definition, state, counts and sink.",
	.tables = { json_table },
};
static const struct opts_cmd snapshot_cmd = {
	.name = "session snapshot", .args = "NAME",
	.about = "Write what a ring session holds now as one complete perf.data.",
	.tables = { session_out_table },
};
static const struct opts_cmd attach_cmd = {
	.name = "session attach", .args = "NAME",
	.about = "Stream a session as pipe-mode perf.data until it ends.",
	.tables = { session_out_table },
};
static const struct opts_cmd stop_cmd = {
	.name = "session stop", .args = "NAME",
	.about = "Stop collecting; the session and what it holds stay.",
};
static const struct opts_cmd start_cmd = {
	.name = "session start", .args = "NAME",
	.about = "Start a stopped session again.",
};
static const struct opts_cmd delete_cmd = {
	.name = "session delete", .args = "NAME",
	.about = "Stop a session and forget it (files it wrote into its --output DIR stay).",
};

/*
 * A verb's options, then its NAME when c has one: 0, 1 after an error
 * line, OPTS_HELP after --help.
 */
int session_verb_args(const struct opts_cmd *c, struct verb_opts *v, int argc, char **argv)
{
	void *ctx[] = { v };
	int e = opts_parse(c, ctx, argc, argv);

	return e ? e : session_args(c, argc, argv, &v->name);
}

int session_args(const struct opts_cmd *c, int argc, char **argv, const char **name)
{
	if (c->args) {
		if (optind >= argc)
			return pm_err("a session NAME is needed (try 'perfmark %s --help')", c->name);
		*name = argv[optind++];
		if (!session_name_ok(*name))
			return 1;
	}
	if (optind < argc)
		return pm_err("unexpected argument '%s' (try 'perfmark %s --help')", argv[optind],
			      c->name);
	return 0;
}

/*
 * -o DIR: opened here, as the user, and handed to the daemon.  A DIR that
 * is not there yet is made (its parent must be), as LTTng makes its output.
 */
int session_out_dir(const char *out, char dir[PATH_MAX])
{
	int dfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0 && errno == ENOENT && (!mkdir(out, 0777) || errno == EEXIST))
		dfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !realpath(out, dir)) {
		pm_err("%s: %s", out, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	return dfd;
}

struct json_object *session_send(struct json_object *req, int dfd)
{
	struct json_object *rep = NULL;
	int sock = session_connect();

	if (sock >= 0) {
		rep = session_call(sock, req, &dfd, dfd >= 0 ? 1 : 0);
		close(sock);
	} else {
		json_object_put(req);
	}
	if (dfd >= 0)
		close(dfd);
	return rep;
}

/* one request naming v's session: the reply into *out (or dropped); 0 or 1 */
static int simple(const char *cmd, const struct verb_opts *v, struct json_object **out)
{
	struct json_object *rep;

	rep = session_send(client_request(cmd, v->name), -1);
	if (!rep)
		return 1;
	if (out)
		*out = rep;
	else
		json_object_put(rep);
	return 0;
}

static int simple_verb(const struct opts_cmd *c, const char *cmd, int argc, char **argv)
{
	struct verb_opts v = { 0 };
	int e = session_verb_args(c, &v, argc, argv);

	if (e)
		return e == OPTS_HELP ? 0 : 1;
	return simple(cmd, &v, NULL);
}

static int do_stop(int argc, char **argv) { return simple_verb(&stop_cmd, "stop", argc, argv); }
static int do_start(int argc, char **argv) { return simple_verb(&start_cmd, "start", argc, argv); }
static int do_delete(int argc, char **argv) { return simple_verb(&delete_cmd, "delete", argc, argv); }

static int do_list(int argc, char **argv)
{
	struct verb_opts v = { 0 };
	struct json_object *rep, *arr, *s;
	size_t i;
	int e = session_verb_args(&list_cmd, &v, argc, argv);

	if (e)
		return e == OPTS_HELP ? 0 : 1;
	rep = session_send(client_request("list", NULL), -1);
	if (!rep)
		return 1;
	json_object_object_get_ex(rep, "sessions", &arr);
	if (v.json) {
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
	for (i = 0; i < (d.nr_resolved ? d.nr_resolved : d.spec.nr_events ? d.spec.nr_events : 1); i++) {
		printf("%s", i ? "," : "");
		escape_term(stdout, d.nr_resolved ? d.resolved[i] : recspec_event_name(&d.spec, i),
			    strlen(d.nr_resolved ? d.resolved[i] : recspec_event_name(&d.spec, i)), 0);
	}
	/* the rate is the sampling events': tracepoints record every hit */
	if (d.spec.nr_events && !recspec_nr_sampling(&d.spec))
		printf(" (every hit");
	else if (d.spec.period)
		printf(" (period %llu", (unsigned long long)d.spec.period);
	else
		printf(" (%llu Hz", (unsigned long long)d.spec.freq);
	if (d.spec.call_graph != RECSPEC_CG_NONE)
		printf(", call graph %s", recspec_call_graph_name(&d.spec, cg, sizeof(cg)));
	if (d.spec.max_stack != RECSPEC_MAX_STACK)
		printf(", max stack %u", d.spec.max_stack);
	if (d.spec.off_cpu)
		printf(", off-cpu (intervals under %llu ns summed)",
		       (unsigned long long)d.spec.off_cpu_min_ns);
	printf(")\n");
	for (i = 0; i < d.spec.nr_events; i++) {
		const char *f = recspec_filter(&d.spec, i);

		if (!f)
			continue;
		printf("filter:   %s: ", d.spec.events[i].name);
		escape_term(stdout, f, strlen(f), 0);
		printf("\n");
	}
	printf("target:   ");
	if (d.spec.target == RECSPEC_TARGET_ALL)
		printf("all (system-wide)");
	for (i = 0; i < d.spec.nr_pids; i++)
		printf("%s%d", i ? "," : "pids ", d.spec.pids[i]);
	printf("\n");
}

static int do_show(int argc, char **argv)
{
	struct verb_opts v = { 0 };
	struct json_object *rep = NULL, *s, *sk, *x;
	int e = session_verb_args(&show_cmd, &v, argc, argv);
	char b[32];

	if (e)
		return e == OPTS_HELP ? 0 : 1;
	if (simple("show", &v, &rep))
		return 1;
	json_object_object_get_ex(rep, "session", &s);
	if (v.json) {
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
	if (json_object_object_get_ex(s, "offcpu", &x))
		printf("off-cpu:  %lld samples, %lld of them summing %lld shorter intervals; "
		       "%lld intervals lost\n", jsonf_get_int(s, "offcpu"),
		       jsonf_get_int(s, "offcpu_sums"), jsonf_get_int(s, "offcpu_summed"),
		       jsonf_get_int(s, "offcpu_lost"));
	if (jsonf_get_int(s, "offcpu_unseen") > 0)
		printf("          %lld intervals ended by a switch no program saw (timed from the "
		       "scheduler's arrival time)\n", jsonf_get_int(s, "offcpu_unseen"));
	if (jsonf_get_int(s, "offcpu_nowaker") > 0)
		printf("          %lld intervals blocked whose wakeup no program saw (no waker "
		       "named)\n", jsonf_get_int(s, "offcpu_nowaker"));
	printf("late:     %lld (%lld older than what perf had already sorted)\n",
	       jsonf_get_int(s, "late"), jsonf_get_int(s, "late_unordered"));
	printf("window:   %lld bytes held, %lld records written early (it was full)\n",
	       jsonf_get_int(s, "window_bytes"), jsonf_get_int(s, "overflow"));
	printf("clamped:  %lld marker times outside what the recorder saw; %lld fast-lane areas "
	       "given up (nonsense in their rings)\n", jsonf_get_int(s, "clamped"),
	       jsonf_get_int(s, "fastlane_corrupt"));
	if (jsonf_get_int(s, "repeats") > 0)
		printf("repeats:  %lld markers read again after a restart, already kept before it: "
		       "dropped\n", jsonf_get_int(s, "repeats"));
	if (json_object_object_get_ex(s, "lanes", &x)) {
		uint64_t fast, trap[COLLECTOR_TRAP_WHYS];
		char line[512];

		collector_lanes_from_json(x, &fast, trap);
		collector_lanes_text(fast, trap, line, sizeof(line));
		printf("lanes:    %s\n", line);
	}
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
	session_show_counts(s);
	if (json_object_object_get_ex(s, "unwind", &x)) {
		struct collector_unwind_stats us;
		char line[1024];

		collector_unwind_stats_from_json(x, &us);
		collector_unwind_stats_text(&us, line, sizeof(line));
		printf("unwind:   %s\n", line);
	}
	if (json_object_object_get_ex(s, "aggregated", &x)) {
		struct collector_agg_stats as;
		char line[256];

		collector_agg_stats_from_json(x, &as);
		collector_agg_stats_text(&as, line, sizeof(line));
		printf("aggregate: %s\n", line);
	}
	json_object_put(rep);
	return 0;
}

/*
 * The daemon first (reachable?), then the output, through a temporary that
 * takes its place only once the daemon accepted (outfile.h): a failed
 * snapshot or attach leaves FILE as it was.  0, 1 after the error, -1
 * after --help.
 */
int session_start_out(const struct opts_cmd *c, int argc, char **argv, const char *cmd,
		      struct outfile *o, int *sock, struct json_object **rep)
{
	struct verb_opts v = { 0 };
	int e;

	*sock = -1;
	*rep = NULL;
	e = session_verb_args(c, &v, argc, argv);
	if (e)
		return e == OPTS_HELP ? -1 : 1;
	if (!v.out)
		return pm_err("-o FILE|- is needed (try 'perfmark %s --help')", c->name);
	*sock = session_connect();
	if (*sock < 0 || outfile__open_atomic(o, v.out))
		return 1;
	*rep = session_call(*sock, client_request(cmd, v.name), &o->fd, 1);
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
	int sock, ret = session_start_out(&snapshot_cmd, argc, argv, "snapshot", &o, &sock, &rep);

	if (sock >= 0)
		close(sock);
	if (o.fd > 1)
		close(o.fd);
	json_object_put(rep);
	return ret < 0 ? 0 : ret;     /* -1: --help */
}

void session_let_go_out(struct outfile *o)
{
	int dn;

	if (o->fd > 1) {
		close(o->fd);
	} else if (o->fd == 1 && (dn = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
		dup2(dn, 1);
		close(dn);
	}
	o->fd = -1;
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
	int sock, ret = session_start_out(&attach_cmd, argc, argv, "attach", &o, &sock, &rep);

	session_let_go_out(&o);
	json_object_put(rep);
	if (ret) {
		if (sock >= 0)
			close(sock);
		return ret < 0 ? 0 : ret;     /* -1: --help */
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

/* the verbs: their options, usage and --help come from each one's table */
static const struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const struct opts_cmd *opts;
} subcmds[] = {
	{ "create", do_create, &create_cmd },
	{ "list", do_list, &list_cmd },
	{ "show", do_show, &show_cmd },
	{ "snapshot", do_snapshot, &snapshot_cmd },
	{ "attach", do_attach, &attach_cmd },
	{ "keep", session_do_keep, &session_keep_cmd },
	{ "take", session_do_take, &session_take_cmd },
	{ "stop", do_stop, &stop_cmd },
	{ "start", do_start, &start_cmd },
	{ "delete", do_delete, &delete_cmd },
	{ NULL, NULL, NULL },
};

const struct opts_cmd session_cmd = {
	.name = "session",
	.args = "VERB [NAME] [OPTIONS]",
	.brief = "named sessions in perfmarkd: create, list, show, snapshot, attach, keep, take, stop, start, delete",
};

static void session_usage(FILE *f)
{
	const struct subcmd *s;

	for (s = subcmds; s->name; s++)
		opts_synopsis(s->opts, f, s == subcmds ? "usage: " : "       ");
	fprintf(f, "\nNamed sessions run in perfmarkd with no client attached.  Each verb's "
		"--help lists its options\n(create takes the recording options of "
		"'perfmark record --help').\n");
}

int cmd_session(int argc, char **argv)
{
	const struct subcmd *s;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		session_usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		session_usage(stdout);
		return 0;
	}
	for (s = subcmds; s->name; s++)
		if (!strcmp(argv[1], s->name))
			return s->fn(argc - 1, argv + 1);
	return pm_err("unknown session command '%s' (create, list, show, snapshot, attach, keep, take, stop, start, delete)",
		      argv[1]);
}

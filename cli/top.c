// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark top: the hottest functions now, refreshed every interval, from a
 * recording in this process or from a named session of perfmarkd (see
 * top.h for the parts).  One epoll loop: the drain timer, the signals
 * (signalfd: SIGINT, SIGTERM, SIGHUP end it; SIGWINCH redraws), the keys,
 * and the source's fds.  The terminal is given back on every way out.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "opts.h"
#include "proto.h"
#include "recopts.h"
#include "session.h"
#include "top.h"

#define TEXT_ROWS 50
#define MAX_FDS 8

struct top_cli {
	const char *session;
	const char *sort;
	bool stdio;
	double delay;
	long frames;
	/* the run */
	struct recopts ro;
	struct top_model *m;
	struct top_src *src;
	struct top_term *term;
	struct top_query q;
	struct top_view *v;
	size_t cursor;
	int ep, tfd, sfd;
	bool ended, quit;
	int status;
	char ended_why[256];
	struct timespec last;
	long shown;
};

static int set_delay(void *ctx, const struct opt *o, const char *arg)
{
	struct top_cli *c = ctx;
	char *end;

	c->delay = strtod(arg, &end);
	if (!*arg || *end || !(c->delay >= 0.1 && c->delay <= 3600))
		return pm_err("bad delay '%s' (seconds, 0.1-3600)", arg);
	return 0;
}

static int set_frames(void *ctx, const struct opt *o, const char *arg)
{
	struct top_cli *c = ctx;
	char *end;

	c->frames = strtol(arg, &end, 10);
	if (!*arg || *end || c->frames < 1)
		return pm_err("bad --frames '%s' (a count from 1)", arg);
	return 0;
}

static const struct opt top_table[] = {
	{ .name = "session", .arg = "NAME",
	  .help = "show the live stream of perfmarkd's session NAME (no recording options then, "
	    "but -e to choose the event and -g to count callers)",
	  .set = opt_set_str, .off = offsetof(struct top_cli, session), .alt = 3 },
	{ .flag = 'd', .name = "delay", .arg = "SECONDS",
	  .help = "refresh every SECONDS", .def = "1", .set = set_delay },
	{ .name = "sort", .arg = "self|total",
	  .help = "order by the samples in the function itself, or with its callees too (-g); "
	    "the s key switches", .def = "self", .set = opt_set_str,
	  .off = offsetof(struct top_cli, sort) },
	{ .name = "stdio",
	  .help = "print a plain-text frame every interval instead of the full-screen view "
	    "(what top does when stdout is not a terminal)",
	  .set = opt_set_true, .off = offsetof(struct top_cli, stdio) },
	{ .name = "frames", .arg = "N", .help = "stop after N frames",
	  .def = "until q, Ctrl-C, SIGTERM or a closed terminal", .set = set_frames },
	{ 0 },
};

const struct opts_cmd top_cmd = {
	.name = "top",
	.brief = "a live view of the hottest functions and ranges",
	.about = "Show the functions that take the most samples now, per command and shared "
		 "object, refreshed every second, and with markers each range's rate, p50 and "
		 "p99; from a recording in this process (the whole system, or -p PID) or from "
		 "a named session of perfmarkd (--session).  Keys: q quits, s switches self/total, "
		 "c and d zoom into the command or shared object of the selected row (again: out), "
		 "u zooms out, j/k or the arrows move.  When stdout is not a terminal, one "
		 "plain-text frame is printed per interval.",
	.tables = { recopts_table, top_table },
};

/* with --session: the session records as it was created; only -e and -g mean something */
static int session_conflicts(const struct recopts *ro)
{
	struct recspec def;

	recspec_init(&def);
	if (ro->have_freq || ro->have_period || ro->have_a || ro->have_markers || ro->spec.nr_pids ||
	    ro->spec.zstd_level || ro->spec.ringbuf_size != def.ringbuf_size || ro->spec.nr_filters ||
	    (ro->spec.call_graph != def.call_graph && ro->spec.call_graph != RECSPEC_CG_FP) ||
	    ro->spec.nr_events > 1)
		return pm_err("--session shows what the session records: only -e EVENT and -g go "
			      "with it");
	return 0;
}

static int parse(struct top_cli *c, int argc, char **argv)
{
	void *ctx[] = { &c->ro, c };
	int e;

	recopts_init(&c->ro);
	c->delay = 1;
	e = opts_parse(&top_cmd, ctx, argc, argv);
	if (e == OPTS_HELP)
		exit(0);
	if (e)
		return 1;
	if (optind < argc)
		return pm_err("unexpected argument '%s' (top takes no command; try -p PID)", argv[optind]);
	if (c->sort && strcmp(c->sort, "self") && strcmp(c->sort, "total"))
		return pm_err("bad --sort '%s' (self or total)", c->sort);
	c->q.sort = c->sort && !strcmp(c->sort, "total") ? TOP_SORT_TOTAL : TOP_SORT_SELF;
	c->q.comm = c->q.dso = TABLE_NONE;
	if (c->session) {
		if (!proto_name_valid(c->session))
			return pm_err("invalid session name '%s' (use [A-Za-z0-9_.-], 1-64 characters, "
				      "not starting with '.')", c->session);
		return session_conflicts(&c->ro);
	}
	if (recopts_check(&c->ro))
		return 1;
	for (size_t i = 0; i < c->ro.spec.nr_pids; i++)
		if (kill(c->ro.spec.pids[i], 0) && errno == ESRCH)
			return pm_err("no such process: %d", c->ro.spec.pids[i]);
	/* as perf top: no target is the whole system */
	return 0;
}

static void signals(struct top_cli *c)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGTSTP);      /* no stop with the terminal taken over */
	sigprocmask(SIG_BLOCK, &mask, NULL);   /* before the reader thread: it inherits the mask */
	signal(SIGPIPE, SIG_IGN);
	c->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int open_source(struct top_cli *c, int argc, char **argv)
{
	struct top_model_opts mo = { .children = c->ro.spec.call_graph != RECSPEC_CG_NONE };
	char err[320] = "";
	int e;

	if (c->session) {
		if (c->ro.spec.nr_events)
			mo.event = c->ro.spec.events[0].name;
		mo.since = session__clock();
	}
	if (top_model__new(&c->m, &mo))
		return pm_err("out of memory");
	if (c->session)
		e = top_src__session(&c->src, c->session, c->m, err, sizeof(err));
	else
		e = top_src__local(&c->src, &c->ro.spec, argc, argv, c->m, err, sizeof(err));
	if (e)
		return err[0] ? pm_err("%s", err) : 1;
	return 0;
}

static void watch(struct top_cli *c, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd >= 0)
		epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void loop_open(struct top_cli *c, bool keys)
{
	struct itimerspec its = {
		.it_interval = { 0, SESSION_DRAIN_MS * 1000000L },
		.it_value = { 0, SESSION_DRAIN_MS * 1000000L },
	};
	int fds[MAX_FDS];
	size_t n, i;

	c->ep = epoll_create1(EPOLL_CLOEXEC);
	c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	timerfd_settime(c->tfd, 0, &its, NULL);
	watch(c, c->tfd);
	watch(c, c->sfd);
	if (keys)
		watch(c, 0);
	n = top_src__fds(c->src, fds, MAX_FDS);
	for (i = 0; i < n; i++)
		watch(c, fds[i]);
	clock_gettime(CLOCK_MONOTONIC, &c->last);
}

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) + (now.tv_nsec - t->tv_nsec) / 1e9;
}

static void status_text(const struct top_cli *c, char *buf, size_t len)
{
	const char *notice = top_src__notice(c->src);

	if (c->ended)
		snprintf(buf, len, "%s; q quits", c->ended_why);
	else
		snprintf(buf, len, "sort: %s | q quit, s sort, c/d zoom command/DSO of the "
			 "selected row, u unzoom, j/k move%s%s", c->q.sort == TOP_SORT_TOTAL ?
			 "total" : "self", notice ? " | " : "", notice ? notice : "");
}

/* A frame: on the terminal, or printed.  0, or -EIO when the terminal is gone. */
static int show(struct top_cli *c)
{
	char status[512];
	int rows, cols, e = 0;

	status_text(c, status, sizeof(status));
	if (c->term) {
		top_term__size(c->term, &rows, &cols);
		c->q.max_rows = rows > 6 ? (size_t)rows - 5 : 1;
		if (c->v->nr_ranges)
			c->q.max_rows -= c->q.max_rows > c->v->nr_ranges + 2 ? c->v->nr_ranges + 2 : 0;
		top_model__view(c->m, &c->q, c->v);
		e = top_term__draw(c->term, c->v, status, &c->cursor);
	} else {
		c->q.max_rows = TEXT_ROWS;
		top_model__view(c->m, &c->q, c->v);
		top_print_frame(stdout, c->v, c->ended ? c->ended_why : top_src__notice(c->src), 0);
		if (ferror(stdout))
			e = -EIO;
	}
	return e;
}

/* a key: what it changes is redrawn at once */
static void on_key(struct top_cli *c, enum top_key k)
{
	const struct top_row *r = c->cursor < c->v->nr_rows ? &c->v->rows[c->cursor] : NULL;

	switch (k) {
	case TOP_KEY_QUIT:
	case TOP_KEY_GONE:
		c->quit = true;
		return;
	case TOP_KEY_SORT:
		c->q.sort = c->q.sort == TOP_SORT_SELF ? TOP_SORT_TOTAL : TOP_SORT_SELF;
		break;
	case TOP_KEY_COMM:
		c->q.comm = c->q.comm != TABLE_NONE || !r ? TABLE_NONE : r->comm;
		c->cursor = 0;
		break;
	case TOP_KEY_DSO:
		c->q.dso = c->q.dso != TABLE_NONE || !r ? TABLE_NONE : r->dso;
		c->cursor = 0;
		break;
	case TOP_KEY_UNZOOM:
		c->q.comm = c->q.dso = TABLE_NONE;
		break;
	case TOP_KEY_UP:
		c->cursor -= c->cursor > 0;
		break;
	case TOP_KEY_DOWN:
		c->cursor++;
		break;
	default:
		return;
	}
	if (show(c))
		c->quit = true;
}

static void on_signals(struct top_cli *c)
{
	struct signalfd_siginfo si;

	while (read(c->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGWINCH && c->term)
			show(c);
		else if (si.ssi_signo != SIGWINCH && si.ssi_signo != SIGTSTP)
			c->quit = true;
	}
}

/* the source ended (a session stopped, the recording failed): said, and kept on screen */
static void source_ended(struct top_cli *c)
{
	int fds[MAX_FDS];
	size_t n = top_src__fds(c->src, fds, MAX_FDS), i;

	for (i = 0; i < n; i++)      /* they may stay readable: no busy loop */
		epoll_ctl(c->ep, EPOLL_CTL_DEL, fds[i], NULL);
	c->ended = true;
	snprintf(c->ended_why, sizeof(c->ended_why), "%s", top_src__why(c->src));
	if (!c->term) {
		show(c);
		c->status = strcmp(c->ended_why, "the session ended") ? 1 : 0;
		if (c->status)
			pm_err("%s", c->ended_why);
		c->quit = true;
		return;
	}
	if (show(c))
		c->quit = true;
}

static void on_fd(struct top_cli *c, int fd, bool tick)
{
	enum top_key keys[16];
	size_t n, i;

	if (fd == c->sfd) {
		on_signals(c);
	} else if (fd == 0 && c->term) {
		n = top_term__keys(c->term, keys, 16);
		for (i = 0; i < n && !c->quit; i++)
			on_key(c, keys[i]);
	} else if (!c->ended && top_src__step(c->src, tick ? -1 : fd)) {
		source_ended(c);
	}
}

static void run(struct top_cli *c)
{
	while (!c->quit) {
		struct epoll_event evs[MAX_FDS];
		int n = epoll_wait(c->ep, evs, MAX_FDS, -1), i;

		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n && !c->quit; i++) {
			int fd = evs[i].data.fd;

			if (fd == c->tfd) {
				uint64_t ticks;

				(void)!read(c->tfd, &ticks, sizeof(ticks));
			}
			if (fd == 0 && (evs[i].events & (EPOLLHUP | EPOLLERR)) && !(evs[i].events & EPOLLIN))
				c->quit = true;    /* the terminal is gone */
			else
				on_fd(c, fd, fd == c->tfd);
		}
		if (c->quit || c->ended || since(&c->last) < c->delay)
			continue;
		top_model__tick(c->m, since(&c->last));
		clock_gettime(CLOCK_MONOTONIC, &c->last);
		if (show(c))
			break;
		if (c->frames && ++c->shown >= c->frames)
			break;
	}
}

int cmd_top(int argc, char **argv)
{
	struct top_cli c = { .ep = -1, .tfd = -1, .sfd = -1 };
	bool full;

	if (parse(&c, argc, argv))
		return 1;
	full = !c.stdio && isatty(1);
	c.v = calloc(1, sizeof(*c.v));
	if (!c.v)
		return pm_err("out of memory");
	signals(&c);
	if (open_source(&c, argc, argv)) {
		c.status = 1;
		goto out;
	}
	if (full && top_term__open(&c.term)) {
		c.status = pm_err("out of memory");
		goto out;
	}
	loop_open(&c, full && isatty(0));
	if (c.term)
		show(&c);     /* at once: the frame, empty until samples come */
	run(&c);
out:
	top_term__close(c.term);    /* first: the terminal back before anything is freed */
	free(c.term);
	if (top_src__free(c.src))
		top_model__free(c.m);
	free(c.v);
	if (c.ep >= 0)
		close(c.ep);
	if (c.tfd >= 0)
		close(c.tfd);
	if (c.sfd >= 0)
		close(c.sfd);
	return c.status;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark record: write perf.data, through perfmarkd when its socket
 * answers (an anonymous session owned by this connection, writing into the
 * output this process opened and passed over), otherwise with the session
 * engine in-process.  One driver runs both back ends (record_backend.h): option
 * parsing, output rules, the command's start, the loop and the messages
 * are the same either way, and so is the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
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
#include "opts.h"
#include "proto.h"
#include "recopts.h"
#include "record_backend.h"

static void flush_notices(struct record *r)
{
	size_t i;

	pm_warnings();
	for (i = 0; i < r->nr_notices; i++)
		pm_notice("%s", r->notices[i]);
	r->nr_notices = 0;
}

/*
 * execvp's search, done up front so a missing CMD is reported before
 * anything starts; the file found goes to found (the recorder looks for
 * libperfmark probes in it before CMD runs: a static link).
 */
static bool find_in_path(const char *cmd, char *found, size_t len)
{
	const char *path, *p, *end;
	struct stat sb;

	if (!cmd)   /* never; says so to gcc -O2 with the sanitizers (-Wformat-truncation) */
		return false;
	if (strchr(cmd, '/')) {
		size_t n = strnlen(cmd, len - 1);

		memcpy(found, cmd, n);      /* not snprintf: the sanitizer build's -Werror=format-truncation */
		found[n] = '\0';
		return access(cmd, X_OK) == 0;
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		/* an empty PATH entry means the current directory */
		if (end == p)
			snprintf(found, len, "./%s", cmd);
		else
			snprintf(found, len, "%.*s/%s", (int)(end - p), p, cmd);
		if (access(found, X_OK) == 0 && !stat(found, &sb) && S_ISREG(sb.st_mode))
			return true;
		if (!*end)
			return false;
	}
}

static int set_duration(void *ctx, const struct opt *o, const char *arg)
{
	struct record *r = ctx;
	char *end;

	r->duration = strtod(arg, &end);
	if (!*arg || *end || !(r->duration > 0))
		return pm_err("bad duration '%s'", arg);
	return 0;
}

static int set_keep_as(void *ctx, const struct opt *o, const char *arg)
{
	struct record *r = ctx;

	if (!proto_name_valid(arg))
		return pm_err("invalid session name '%s' for --keep-as (use [A-Za-z0-9_.-], 1-64 "
			      "characters, not starting with '.')", arg);
	r->keep_as = arg;
	return 0;
}

/* record's own rows; the recording options are recopts_table */
static const struct opt record_table[] = {
	{ .flag = 'o', .name = "output", .arg = "FILE|-",
	  .help = "where perf.data goes; - writes pipe mode to stdout", .def = "perf.data",
	  .set = opt_set_str, .off = offsetof(struct record, output) },
	{ .name = "duration", .arg = "SECONDS",
	  .help = "stop after this long (CMD goes on unrecorded)",
	  .def = "until CMD exits, or SIGINT", .set = set_duration },
	{ .name = "keep-as", .arg = "NAME",
	  .help = "the name SIGUSR2 keeps the recording under: through perfmarkd, the file ends "
	    "and the recording goes on as that named session (as 'perfmark session keep')",
	  .def = "rec-YYYYmmdd-HHMMSS-PID", .set = set_keep_as },
	{ .flag = 'v', .name = "verbose",
	  .help = "say more: whether perfmarkd recorded, and the unwinder's and the fast lane's "
	    "counts; -vv adds libbpf's debug messages",
	  .set = opt_set_count, .off = offsetof(struct record, verbose) },
	{ 0 },
};

const struct opts_cmd record_cmd = {
	.name = "record",
	.brief = "record samples and markers into perf.data",
	.trail = "[-- CMD [ARG...]]",
	.about = "Record samples and markers into perf.data: of CMD and its children, of "
		 "-p PID, or of the whole system (-a, or no target).  Goes through perfmarkd "
		 "when its socket answers, else records in this process; the file is the same.",
	.in_order = true,
	.tables = { recopts_table, record_table },
};

static int parse(struct record *r, int argc, char **argv)
{
	struct recopts ro;
	void *ctx[] = { &ro, r };
	int e;

	recopts_init(&ro);
	r->output = "perf.data";
	e = opts_parse(&record_cmd, ctx, argc, argv);
	if (e == OPTS_HELP)
		exit(0);
	if (e)
		return 1;
	r->cmd = argv + optind;
	r->cmd_argc = argc - optind;
	if ((ro.have_a ? 1 : 0) + (ro.spec.nr_pids ? 1 : 0) + (r->cmd_argc ? 1 : 0) > 1)
		return pm_err("give only one of -a, -p PID and -- CMD");
	if (recopts_check(&ro))
		return 1;
	r->so.spec = ro.spec;
	/* as perf: no target means system-wide */
	if (r->cmd_argc)
		r->so.spec.target = RECSPEC_TARGET_PIDS;
	/* system-wide or -p without --duration runs until SIGINT/SIGTERM */
	return 0;
}

static int check_targets(struct record *r)
{
	size_t i;

	for (i = 0; i < r->so.spec.nr_pids; i++)
		if (kill(r->so.spec.pids[i], 0) && errno == ESRCH)
			return pm_err("no such process: %d", r->so.spec.pids[i]);
	if (r->cmd_argc && !find_in_path(r->cmd[0], r->cmd_path, sizeof(r->cmd_path)))
		return pm_err("%s: command not found", r->cmd[0]);
	return 0;
}

static int open_output(struct record *r)
{
	if (outfile__open(&r->out, r->output, true))
		return 1;
	r->so.pipe = r->out.pipe;
	return 0;
}

/* Fork CMD held (heldcmd.h): it execs once everything is attached. */
static int spawn(struct record *r, const sigset_t *oldmask)
{
	/* a stream on stdout owns it; the command writes to stderr instead */
	int e = heldcmd__fork(&r->held, r->cmd, oldmask, r->so.pipe);

	r->child = r->held.pid;
	return e;
}

/*
 * The loop both hosts run while recording: a drain timer, the signals,
 * the command's pidfd and --duration, plus the host's own fds.
 */
struct rec_loop {
	int ep, tfd, sfd, pfd;
	struct timespec start;
	bool child_done, stopping;
	bool keep;                    /* SIGUSR2: keep the recording as a named session */
	int status;
};

/* SIGUSR2 was blocked when perfmark started (CMD inherits it so) */
static bool usr2_was_blocked;

/*
 * SIGUSR2 blocked from the start: one sent while the recording is being set
 * up waits for the loop (a keep), rather than killing perfmark record.
 */
static void hold_usr2(void)
{
	sigset_t m, old;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m, &old);
	usr2_was_blocked = sigismember(&old, SIGUSR2);
}

/* Block the stopping signals into a signalfd (before CMD is forked). */
static void loop_signals(struct rec_loop *l, sigset_t *oldmask)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, oldmask);
	if (!usr2_was_blocked)     /* blocked by hold_usr2, not by whoever started us */
		sigdelset(oldmask, SIGUSR2);
	signal(SIGPIPE, SIG_IGN);
	l->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void loop_add(struct rec_loop *l, const int *fds, int nfds)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int i;

	for (i = 0; i < nfds; i++) {
		if (fds[i] < 0)
			continue;
		ev.data.fd = fds[i];
		epoll_ctl(l->ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
}

static void loop_watch(struct rec_loop *l, const int *fds, int nfds)
{
	struct itimerspec its = {
		.it_interval = { 0, SESSION_DRAIN_MS * 1000000L },
		.it_value = { 0, SESSION_DRAIN_MS * 1000000L },
	};
	int own[3];

	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	timerfd_settime(l->tfd, 0, &its, NULL);
	own[0] = l->tfd;
	own[1] = l->sfd;
	own[2] = l->pfd;
	loop_add(l, own, 3);
	loop_add(l, fds, nfds);
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

			bool stop = false;

			while (read(l->sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGUSR2) {   /* ours: keep, not for the command */
					l->keep = true;
					continue;
				}
				stop = true;
				if (r->child > 0 && si.ssi_signo != SIGINT)
					kill(r->child, si.ssi_signo);
			}
			/* SIGINT: the terminal sent it to the command too */
			if (stop && (r->child <= 0 || l->child_done || !r->cmd_argc))
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

/* via: " via perfmarkd" (with -v), else "" */
static void summary_stats(const struct record *r, const struct session_stats *st, const char *via)
{
	char comp[64] = "";

	if (r->so.spec.zstd_level && st->bytes)
		snprintf(comp, sizeof(comp), ", compressed %.1fx", (double)st->raw_bytes / st->bytes);
	fprintf(stderr, "[ perfmark record: Wrote %.3f MB %s (%llu samples, %llu markers, "
		"%llu lost samples, %llu lost markers%s)%s ]\n",
		st->bytes / 1e6, r->so.pipe ? "(pipe)" : r->output,
		(unsigned long long)st->samples, (unsigned long long)st->markers,
		(unsigned long long)st->lost_samples, (unsigned long long)st->lost_markers, comp, via);
	if (r->so.spec.off_cpu)
		fprintf(stderr, "[ perfmark record: %llu off-cpu samples, %llu of them summing "
			"%llu intervals under %llu ns, %llu intervals lost ]\n",
			(unsigned long long)st->offcpu, (unsigned long long)st->offcpu_sums,
			(unsigned long long)st->offcpu_summed,
			(unsigned long long)r->so.spec.off_cpu_min_ns,
			(unsigned long long)st->offcpu_lost);
	/* ended by a switch the kernel ran no program for: timed from the scheduler's own record */
	if (r->so.spec.off_cpu && st->offcpu_unseen)
		fprintf(stderr, "[ perfmark record: %llu off-cpu intervals ended by a switch the switch "
			"program did not see: ended at the scheduler's arrival time, no kernel stack ]\n",
			(unsigned long long)st->offcpu_unseen);
	/* woken without a sched_waking reaching the program: no waker named (waker_flags 0) */
	if (r->so.spec.off_cpu && st->offcpu_nowaker)
		fprintf(stderr, "[ perfmark record: %llu off-cpu intervals blocked whose wakeup the "
			"waking program did not see: no waker named ]\n",
			(unsigned long long)st->offcpu_nowaker);
	/* every interval the programs wrote or summed is in the file (test: t-offcpu-record) */
	if (r->verbose && r->so.spec.off_cpu)
		fprintf(stderr, "[ perfmark record: off-cpu: %llu intervals written or summed by the "
			"switch programs, %llu in the samples written ]\n", (unsigned long long)st->offcpu_bpf,
			(unsigned long long)(st->offcpu - st->offcpu_sums + st->offcpu_summed));
	/* what the recorder did to what it was given: nothing of it is silent */
	if (r->verbose)
		fprintf(stderr, "[ perfmark record: %llu marker times clamped into what the recorder "
			"saw; %llu fast-lane areas given up (their rings made no sense), %llu fast-lane "
			"offers lost (their areas read after a wait); reorder "
			"window: %llu records written early (window full), %llu late (%llu unordered) ]\n",
			(unsigned long long)st->clamped, (unsigned long long)st->fl_corrupt,
			(unsigned long long)st->offers_lost,
			(unsigned long long)st->overflow, (unsigned long long)st->late,
			(unsigned long long)st->late_unordered);
	if (r->verbose && (st->jit_lines || st->jit_missed || st->jit_refused))
		fprintf(stderr, "[ perfmark record: /tmp/perf-PID.map: %llu lines written, %llu not "
			"(the process had gone, its owner unknown), %llu refused (not plainly one "
			"user's, or not a safe file) ]\n", (unsigned long long)st->jit_lines,
			(unsigned long long)st->jit_missed, (unsigned long long)st->jit_refused);
	if (r->verbose && st->markers) {
		char line[512];

		collector_lanes_text(st->fast_markers, st->trap_markers, line, sizeof(line));
		fprintf(stderr, "[ perfmark record: %s ]\n", line);
	}
	/* the sampling program's own cost, as the kernel measures it (bpf_stats on) */
	if (r->verbose && st->sampler_runs)
		fprintf(stderr, "[ perfmark record: sampler: %llu runs, %.0f ns a run (kernel.bpf_stats_enabled; "
			"every CPU's samples, the filtered ones too) ]\n", (unsigned long long)st->sampler_runs,
			(double)st->sampler_ns / st->sampler_runs);
	if (r->verbose && st->unwind.cap) {
		char line[1024];

		collector_unwind_stats_text(&st->unwind, line, sizeof(line));
		fprintf(stderr, "[ perfmark record: unwound %s ]\n", line);
	}
	if (r->verbose && st->agg.seconds) {
		char line[256];

		collector_agg_stats_text(&st->agg, line, sizeof(line));
		fprintf(stderr, "[ perfmark record: aggregated %s ]\n", line);
	}
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

/* The output failed: said as in-process recording says it; a reader gone ends CMD. */
static int output_failed(struct record *r, int e, const struct rec_loop *l)
{
	if (r->status)
		fputc('\n', stderr);
	write_error(r, e);
	if (r->child > 0 && !l->child_done && e == -EPIPE)
		stop_child(r, l->pfd);
	return 1;
}

/* "12:00:01.234", local time */
static void wall(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, len, "%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03ld", ts.tv_nsec / 1000000);
}

/*
 * perfmarkd went away in the middle (killed, restarted): the recording
 * goes on in this process, in the same file after the daemon's last
 * complete round; where that cannot be (a pipe, no rights to load BPF),
 * nothing more is recorded, but CMD is still waited for and its status
 * returned.  One line says which, and since when data is missing.
 */
static const struct record_backend *take_over(struct record *r, struct rec_loop *l,
					      const struct record_backend *b)
{
	char gone[32], back[32], err[256] = "", what[PATH_MAX + 32];
	struct timespec t0, t1;
	int fds[4], nfds, e;

	b->close(r);
	wall(gone, sizeof(gone));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (r->status)
		fputc('\n', stderr);
	snprintf(what, sizeof(what), "%s", r->out.pipe ? "the stream" : r->output);
	if (r->out.pipe) {
		pm_err("perfmarkd went away at %s: the stream ends with what it wrote; nothing is recorded from then on%s",
		       gone, r->cmd_argc ? " (waiting for the command)" : "");
		return &record_none;
	}
	r->resume = true;
	r->so.notice = NULL;
	e = session__new(&r->s, &r->so, err, sizeof(err));
	if (!e) {
		fflush(stderr);
		e = record_local.start(r);      /* its own error line, if any, says why */
		if (e) {
			record_local.close(r);
			snprintf(err, sizeof(err), "%s", e < 0 ? strerror(-e) : "see above");
		}
	}
	if (e) {
		pm_err("perfmarkd went away at %s: %s holds what it wrote until then and nothing after (cannot record in-process: %s)%s",
		       gone, what, err, r->cmd_argc ? "; waiting for the command" : "");
		return &record_none;
	}
	wall(back, sizeof(back));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pm_notice("perfmarkd went away at %s; recording goes on in this process in %s since %s: nothing recorded for %.2f s in between",
		  gone, what, back, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	record_local.fds(r, fds, &nfds, 4);
	loop_add(l, fds, nfds);
	return &record_local;
}

/* SIGUSR2: ask the back end to keep the recording as a named session */
static int ask_keep(struct record *r, const struct record_backend *b)
{
	char name[PROTO_NAME_MAX + 1];
	struct tm tm;
	time_t now;

	if (!b->keep) {
		pm_notice("SIGUSR2: only a recording through perfmarkd can be kept as a session "
			  "(this one runs in-process); it goes on");
		return 0;
	}
	if (r->keep_as) {
		snprintf(name, sizeof(name), "%s", r->keep_as);
	} else {
		now = time(NULL);
		localtime_r(&now, &tm);
		strftime(name, sizeof(name), "rec-%Y%m%d-%H%M%S", &tm);
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "-%d", (int)getpid());
	}
	return b->keep(r, name);
}

/* The recording went on as a named session: its file ended; said once. */
static void say_kept(struct record *r, const struct session_stats *st, bool waiting)
{
	if (r->status)
		status_stats(st, true);
	summary_stats(r, st, r->verbose ? record_daemon.via : "");
	if (r->kept_err)
		pm_err("%s: %s; the file holds everything up to the last flush",
		       r->so.pipe ? "output" : r->output, strerror(-r->kept_err));
	pm_notice("the recording goes on as session '%s' in perfmarkd ('perfmark session show %s'); "
		  "%s ends here%s", r->kept, r->kept, r->so.pipe ? "the stream" : r->output,
		  waiting ? "; waiting for the command" : "");
}

static int drive(struct record *r, const struct record_backend *b)
{
	struct rec_loop l = { .ep = -1, .tfd = -1, .sfd = -1, .pfd = -1 };
	struct session_stats st = { 0 };
	int fds[4], nfds, e, ret = 1;
	sigset_t oldmask;

	/*
	 * The stopping signals are blocked before anything starts a thread (the
	 * fast lane's pump): a thread that did not block them would take a
	 * SIGINT or SIGTERM and die of it, and the recording with it, unfinished.
	 */
	loop_signals(&l, &oldmask);
	/* open everything before the output exists: a failure leaves nothing behind */
	if (b->open(r))
		goto out;
	if (open_output(r))
		goto out;
	r->status = isatty(2) && !r->so.pipe;
	if (r->cmd_argc) {
		if (spawn(r, &oldmask))
			goto fail_unlink;
		l.pfd = syscall(SYS_pidfd_open, r->child, 0);
	}
	e = b->start(r);
	if (e) {
		if (e < 0)
			write_error(r, e);
		if (r->child > 0)
			kill(r->child, SIGKILL), waitpid(r->child, NULL, 0);
		goto fail_unlink;
	}
	/*
	 * Said before the command runs: it shares this stderr (in pipe mode its
	 * stdout too), and a notice written while it writes would land inside
	 * its output (t-markers-mix once read its own expected payload broken
	 * by "cycles is not supported here" on a loaded machine).
	 */
	flush_notices(r);
	if (r->cmd_argc && heldcmd__release(&r->held, r->cmd[0]))
		goto fail_unlink;
	flush_notices(r);

	b->fds(r, fds, &nfds, 4);
	loop_watch(&l, fds, nfds);
	while (!l.stopping) {
		int ready[4];
		bool tick, fresh = false;

		e = loop_wait(r, &l, &tick, ready, 4);
		e = b->step(r, tick, e > 0, &st, &fresh);
		if (!e && l.keep) {
			l.keep = false;
			e = ask_keep(r, b);
		}
		if (e == RECORD_KEPT) {
			say_kept(r, &st, r->cmd_argc && !l.child_done);
			b->close(r);
			b = &record_none;
			if (!r->cmd_argc || l.child_done)
				break;
			continue;
		}
		if (e == RECORD_GONE) {
			b = take_over(r, &l, b);
			continue;
		}
		if (e) {
			ret = e < 0 ? output_failed(r, e, &l) : 1;
			goto out;
		}
		if (fresh && r->status)
			status_stats(&st, false);
	}
	if (r->kept[0]) {              /* the file ended when the recording was kept */
		ret = exit_status(r, l.child_done, l.status);
		goto out;
	}
	e = b->stop(r, &st);
	if (e == RECORD_KEPT) {         /* kept just before the stop: the file ended then */
		say_kept(r, &st, false);
		ret = exit_status(r, l.child_done, l.status);
		goto out;
	}
	if (e == RECORD_GONE) {         /* gone while finishing: finish here */
		b = take_over(r, &l, b);
		e = b->stop(r, &st);
	}
	if (e) {
		ret = e < 0 ? output_failed(r, e, &l) : 1;
		goto out;
	}
	if (r->status)
		status_stats(&st, true);
	summary_stats(r, &st, r->verbose ? b->via : "");
	ret = exit_status(r, l.child_done, l.status);
	goto out;

fail_unlink:
	outfile__discard(&r->out);
	ret = 1;
out:
	b->close(r);
	if (r->out.fd > 1)
		close(r->out.fd);
	loop_close(&l);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record r = {
		.held = HELDCMD_INIT, .sock = -1, .so.uid_filter = (uint32_t)-1,
		.out.fd = -1, .argc = argc, .argv = argv,
	};
	int e;

	hold_usr2();
	if (parse(&r, argc, argv))
		return 1;
	if (check_targets(&r))
		return 1;
	if (r.verbose)
		setenv("PERFMARK_DEBUG", "1", 0);   /* the fast lane's statistics */
	pm_verbose = r.verbose > 1;                 /* libbpf's debug messages */
	e = record_daemon_connect(&r);
	if (e > 0)
		return 1;
	return drive(&r, e == 0 ? &record_daemon : &record_local);
}

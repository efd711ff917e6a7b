// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark stat: count events as perf stat does, on a command (and its
 * children, from its exec on), on processes (-p), or system-wide (-a),
 * the totals at the end or every -I MS.  It runs in this process with the
 * caller's own rights: no daemon, no BPF; perf_event_open decides (the
 * kernel's perf_event_paranoid) what the caller may count.  Like perf
 * stat it prints on stderr (the command's stdout stays its own), or into
 * -o FILE, and exits with the command's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "counting.h"
#include "evspec.h"
#include "opts.h"
#include "heldcmd.h"
#include "stat.h"

#define INTERVAL_MIN_MS 10
#define INTERVAL_MAX_MS 3600000

/* perf stat's default events; those this machine cannot count are left out */
static const char default_events[] =
	"task-clock,context-switches,cpu-migrations,page-faults,"
	"cycles,instructions,branches,branch-misses";

struct stat_cmd {
	const char *events;
	bool all_cpus, json;
	const char *pids;
	const char *interval;
	const char *sep;
	const char *output;
};

static const struct opt stat_table[] = {
	{ .flag = 'e', .name = "event", .arg = "EVENT[,EVENT...]",
	  .help = "what to count: named events (task-clock, page-faults, ...) with :u/:k, "
		  "tracepoints SUBSYS:NAME (globs: 'sched:sched_process_*'), raw rHEX and "
		  "PMU/TERMS/ where the CPU has a PMU",
	  .def = "perf stat's set: task-clock, context-switches, cpu-migrations, page-faults "
		 "(and cycles, instructions, branches, branch-misses with a PMU)",
	  .set = opt_set_str, .off = offsetof(struct stat_cmd, events) },
	{ .flag = 'a', .name = "all-cpus", .help = "count every CPU, every process (for CMD's "
		  "run, or until interrupted)", .set = opt_set_true,
	  .off = offsetof(struct stat_cmd, all_cpus), .alt = 1 },
	{ .flag = 'p', .name = "pid", .arg = "PID[,PID...]",
	  .help = "count these processes' threads (for CMD's run, or until they exit or stat is "
		  "interrupted)", .set = opt_set_str, .off = offsetof(struct stat_cmd, pids), .alt = 1 },
	{ .flag = 'I', .name = "interval-print", .arg = "MS",
	  .help = "print the counts of each MS milliseconds (10 or more) instead of the totals",
	  .set = opt_set_str, .off = offsetof(struct stat_cmd, interval) },
	{ .flag = 'x', .name = "field-separator", .arg = "SEP",
	  .help = "CSV as perf's, the fields value, unit, event, run-time, percent, metric-value "
		  "and metric-unit",
	  .set = opt_set_str, .off = offsetof(struct stat_cmd, sep), .alt = 2 },
	{ .name = "json", .help = "one JSON object per event (and interval), with perf's keys",
	  .set = opt_set_true, .off = offsetof(struct stat_cmd, json), .alt = 2 },
	{ .flag = 'o', .name = "output", .arg = "FILE", .help = "write the counts into FILE",
	  .def = "stderr, as perf stat", .set = opt_set_str, .off = offsetof(struct stat_cmd, output) },
	{ 0 },
};

const struct opts_cmd stat_cmd = {
	.name = "stat",
	.trail = "[-- CMD [ARG...]]",
	.brief = "count events (perf stat): a command, processes or every CPU",
	.about = "Counts events with perf's counters, as perf stat does, and prints the totals "
		 "(or each interval's) in perf stat's layout, CSV or JSON. With CMD it counts "
		 "CMD and its children and exits with CMD's status; with -a or -p, CMD only says "
		 "for how long.",
	.in_order = true,
	.tables = { stat_table },
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CMD, forked and held on a pipe until the counters are open */
struct child {
	struct heldcmd h;     /* -- CMD, held until the counters are enabled */
	int status;
	struct rusage ru;
	bool done;
};

/* let CMD exec: 0, or 1 after the error line (CMD reaped) */
static int release(struct child *ch, const char *name)
{
	int e = heldcmd__release(&ch->h, name);

	ch->done = e != 0;
	return e;
}

static void reap(struct child *ch)
{
	if (ch->h.pid > 0 && !ch->done && wait4(ch->h.pid, &ch->status, WNOHANG, &ch->ru) == ch->h.pid)
		ch->done = true;
}

static int parse_interval(const char *s, unsigned *ms)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < INTERVAL_MIN_MS || v > INTERVAL_MAX_MS)
		return pm_err("bad interval '%.32s' (milliseconds, %d to %d)", s, INTERVAL_MIN_MS,
			      INTERVAL_MAX_MS);
	*ms = (unsigned)v;
	return 0;
}

/* " 'ls -l'", "system wide", "process id '12'" as perf says it */
static void target_text(const struct stat_cmd *o, char **cmd, int ncmd, char *buf, size_t len)
{
	size_t at;
	int i;

	if (o->all_cpus) {
		snprintf(buf, len, "'system wide'");
	} else if (o->pids) {
		snprintf(buf, len, "process id '%.64s'", o->pids);
	} else {
		at = (size_t)snprintf(buf, len, "'");
		for (i = 0; i < ncmd && at + 2 < len; i++)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " " : "", cmd[i]);
		if (at + 2 >= len)
			at = len - 5, snprintf(buf + at, len - at, "...");
		at = strlen(buf);
		snprintf(buf + at, len - at, "'");
	}
}

struct run {
	struct stat_cmd *o;
	struct counting *c;
	struct stat_out out;
	struct stat_events ev;
	bool *supported;
	struct counting_value *prev, *cur;
	uint64_t t0, last;
	unsigned interval_ms;
};

/*
 * Print the share since the last one; the last share (final) only when
 * something counted in it.  0 or 1 after the error line.
 */
static int interval(struct run *r, uint64_t t, bool final)
{
	bool any = false;
	size_t i;
	int e = counting__read(r->c, r->cur);

	if (e)
		return pm_err("cannot read the counters: %s", strerror(-e));
	for (i = 0; i < r->ev.n; i++) {
		struct counting_value d = counting_delta(&r->cur[i], &r->prev[i]);

		r->prev[i] = r->cur[i];
		r->cur[i] = d;
		any |= d.enabled > 0;
	}
	if (final && !any)
		return 0;
	stat_print_counts(&r->out, &r->ev, r->cur, t - r->last, (int64_t)(t - r->t0));
	r->last = t;
	return 0;
}

/* watch until CMD ends, the -p processes end, or a signal: 0 or 1 */
static int watch(struct run *r, struct child *ch, int sfd, const pid_t *pids, size_t npids)
{
	struct pollfd pfd[2 + COUNTING_MAX_PIDS];
	int tfd = -1, alive = 0, ret = 0;
	size_t i, n = 0;

	pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	if (r->interval_ms) {
		struct itimerspec its = { .it_interval = { r->interval_ms / 1000,
							   (long)(r->interval_ms % 1000) * 1000000 } };

		its.it_value = its.it_interval;
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL))
			return pm_err("timerfd: %s", strerror(errno));
		pfd[n++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
	}
	/* without CMD, -p counts until its processes are gone */
	for (i = 0; ch->h.pid <= 0 && i < npids; i++) {
		int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);

		if (fd >= 0) {
			pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
			alive++;
		}
	}
	while (!ret) {
		if (ch->h.pid > 0 ? ch->done : npids && !alive)
			break;
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = pm_err("poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					continue;
				/*
				 * With CMD, stat ends with it: a terminal's ^C reaches
				 * CMD itself, a kill(1) of stat is passed on.  Without
				 * CMD, stop.
				 */
				if (ch->h.pid <= 0 || ch->done)
					goto out;
				if (si.ssi_code != SI_KERNEL)
					kill(ch->h.pid, (int)si.ssi_signo);
			}
			reap(ch);
		}
		if (tfd >= 0 && pfd[1].revents) {
			uint64_t ticks;

			if (read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks))
				ret = interval(r, now_ns(), false);
		}
		for (i = tfd >= 0 ? 2 : 1; i < n; i++) {
			if (pfd[i].fd >= 0 && pfd[i].revents) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				alive--;
			}
		}
	}
out:
	for (i = 1; i < n; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	return ret;
}

static int exit_status(const struct child *ch)
{
	if (ch->h.pid <= 0 || !ch->done)
		return 0;
	if (WIFEXITED(ch->status))
		return WEXITSTATUS(ch->status);
	if (WIFSIGNALED(ch->status))
		return 128 + WTERMSIG(ch->status);
	return 0;
}

static int64_t tv_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_cmd o = { 0 };
	void *ctx[] = { &o };
	struct run r = { .o = &o };
	struct child ch = { .h = HELDCMD_INIT };
	struct evspec *events = NULL;
	struct counting_opts co = { 0 };
	pid_t pids[COUNTING_MAX_PIDS];
	int ipids[COUNTING_MAX_PIDS];
	char err[512] = "", target[256];
	sigset_t mask, oldmask;
	int sfd = -1, ret = 1, n, e;
	char **cmd;
	int ncmd;
	size_t i;
	uint64_t end;

	e = opts_parse(&stat_cmd, ctx, argc, argv);
	if (e)
		return e == OPTS_HELP ? 0 : 1;
	cmd = argv + optind;
	ncmd = argc - optind;
	if (!ncmd && !o.all_cpus && !o.pids)
		return pm_err("give a command to count (-- CMD), -a or -p PID");
	if (o.sep && o.json)
		return pm_err("give -x SEP or --json, not both");
	if (o.sep && (!*o.sep || strpbrk(o.sep, "\n\r")))
		return pm_err("bad field separator (-x): one line's text, not empty");
	if (o.interval && parse_interval(o.interval, &r.interval_ms))
		return 1;
	if (o.pids) {
		n = evspec_parse_pids(o.pids, ipids, COUNTING_MAX_PIDS, err, sizeof(err));
		if (n < 0)
			return pm_err("%s", err);
		for (i = 0; i < (size_t)n; i++)
			pids[i] = ipids[i];
		co.pids = pids;
		co.nr_pids = (size_t)n;
	}
	events = calloc(EVSPEC_MAX, sizeof(*events));
	if (!events)
		return pm_err("out of memory");
	n = evspec_parse(o.events ? o.events : default_events, EVSPEC_COUNTING, events, EVSPEC_MAX,
			 err, sizeof(err));
	if (n < 0) {
		pm_err("%s", err);
		goto out;
	}
	co.events = events;
	co.nr_events = (size_t)n;
	co.drop_unsupported = !o.events;
	co.target = o.all_cpus ? COUNTING_CPUS : o.pids ? COUNTING_THREADS : COUNTING_TASK;

	/* the signals that stop counting, taken before CMD is forked */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		pm_err("signalfd: %s", strerror(errno));
		goto out;
	}
	if (ncmd && heldcmd__fork(&ch.h, cmd, &oldmask, false))
		goto out;
	if (co.target == COUNTING_TASK) {
		pids[0] = ch.h.pid;
		co.pids = pids;
		co.nr_pids = 1;
	}
	e = counting__open(&r.c, &co, err, sizeof(err));
	if (e) {
		pm_err("%s", err);
		goto out;
	}
	r.ev.n = counting__nr_events(r.c);
	r.supported = calloc(r.ev.n, sizeof(*r.supported));
	r.prev = calloc(r.ev.n, sizeof(*r.prev));
	r.cur = calloc(r.ev.n, sizeof(*r.cur));
	if (!r.supported || !r.prev || !r.cur) {
		pm_err("out of memory");
		goto out;
	}
	for (i = 0; i < r.ev.n; i++)
		r.supported[i] = counting__supported(r.c, i);
	r.ev.ev = counting__event(r.c, 0);
	r.ev.supported = r.supported;
	r.out = (struct stat_out){ .f = stderr, .sep = o.sep, .json = o.json };
	if (o.output && !(r.out.f = fopen(o.output, "we"))) {
		r.out.f = NULL;
		pm_err("cannot write %s: %s", o.output, strerror(errno));
		goto out;
	}

	if (co.target != COUNTING_TASK && (e = counting__enable(r.c))) {
		pm_err("cannot start the counters: %s", strerror(-e));
		goto out;
	}
	r.t0 = r.last = now_ns();
	if (ch.h.pid > 0 && release(&ch, cmd[0]))
		goto out;
	if (watch(&r, &ch, sfd, pids, co.target == COUNTING_THREADS ? co.nr_pids : 0))
		goto out;
	end = now_ns();
	counting__disable(r.c);
	if (ch.h.pid > 0 && !ch.done && wait4(ch.h.pid, &ch.status, 0, &ch.ru) == ch.h.pid)
		ch.done = true;

	if (r.interval_ms) {
		if (end > r.last && interval(&r, end, true))
			goto out;
	} else {
		e = counting__read(r.c, r.cur);
		if (e) {
			pm_err("cannot read the counters: %s", strerror(-e));
			goto out;
		}
		target_text(&o, cmd, ncmd, target, sizeof(target));
		stat_print_head(&r.out, target);
		stat_print_counts(&r.out, &r.ev, r.cur, end - r.t0, -1);
		stat_print_tail(&r.out, end - r.t0, ch.h.pid > 0 ? tv_ns(&ch.ru.ru_utime) : -1,
				ch.h.pid > 0 ? tv_ns(&ch.ru.ru_stime) : -1);
	}
	if (r.out.f != stderr && fclose(r.out.f)) {
		r.out.f = NULL;
		pm_err("cannot write %s: %s", o.output, strerror(errno));
		goto out;
	}
	r.out.f = NULL;
	ret = exit_status(&ch);
out:
	if (ch.h.pid > 0 && !ch.done) {
		kill(ch.h.pid, SIGKILL);
		waitpid(ch.h.pid, NULL, 0);
	}
	heldcmd__close(&ch.h);
	if (r.out.f && r.out.f != stderr)
		fclose(r.out.f);
	if (sfd >= 0)
		close(sfd);
	counting__close(r.c);
	free(r.supported);
	free(r.prev);
	free(r.cur);
	free(events);
	return ret;
}

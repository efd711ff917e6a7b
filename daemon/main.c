// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmarkd: named recording sessions that outlive their clients.
 *
 * Start-up: options, daemonizing (unless --foreground or under systemd),
 * the event loop with its signalfd and tick, the state directory, the
 * control socket (or systemd's), bpffs, then the stored sessions.  The
 * parts are listed in perfmarkd.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "collector.h"
#include "fastlane.h"
#include "perfmarkd.h"
#include "proto.h"

/* libbpf's warnings go to the log; its debug messages nowhere */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int sfd = -1;

static void on_signal(struct watch *w, uint32_t ev)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			loop__exit();
}

static struct watch signal_watch = { .fn = on_signal };

/* --- start-up -------------------------------------------------------------- */

static void ensure_bpffs(void)
{
	struct statfs sf;

	if (strncmp(D.pin_root, "/sys/fs/bpf", 11))
		return;
	if (!statfs("/sys/fs/bpf", &sf) && sf.f_type == BPF_FS_MAGIC)
		return;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
		logmsg("cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
}

static int mkdir_parent(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	p = strrchr(buf, '/');
	if (!p || p == buf)
		return 0;
	*p = '\0';
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int listen_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct group *gr;
	struct stat sb;
	int fd, e;

	if (strlen(D.socket_path) >= sizeof(sa.sun_path)) {
		logmsg("socket path too long: %s", D.socket_path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, D.socket_path, strlen(D.socket_path));
	mkdir_parent(D.socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (!lstat(D.socket_path, &sb)) {
		int t = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (S_ISSOCK(sb.st_mode) && t >= 0 && connect(t, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(t);
			close(fd);
			logmsg("another perfmarkd is already listening on %s", D.socket_path);
			return -EADDRINUSE;
		}
		if (t >= 0)
			close(t);
		if (S_ISSOCK(sb.st_mode))
			unlink(D.socket_path);
	}
	{
		mode_t old = umask(0117);

		e = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		umask(old);
	}
	if (e || listen(fd, 64)) {
		e = -errno;
		logmsg("cannot listen on %s: %s", D.socket_path, strerror(-e));
		close(fd);
		return e;
	}
	gr = getgrnam(GROUP_NAME);
	if (gr && chown(D.socket_path, 0, gr->gr_gid))
		logmsg("cannot give %s to group %s: %s", D.socket_path, GROUP_NAME, strerror(errno));
	chmod(D.socket_path, 0660);
	return fd;
}

/*
 * With autogroups (CONFIG_SCHED_AUTOGROUP, and no cpu cgroup of its own),
 * the scheduler shares the CPU between sessions first and between a
 * session's threads second: systemd starts perfmarkd in a session of its
 * own, and a thread's nice value counts only inside it.  A session of CPU
 * hogs and 300 traced processes kept the daemon's session, nice -10
 * threads and all, off the CPU for 10 s at a time (schedstat: 8 ms run,
 * 9968 ms waited; the scheduler's debug file showed the two groups).  The
 * session's own nice value is raised as the threads' are: best effort
 * (CAP_SYS_NICE; no file without autogroups).  Only a session the daemon
 * leads (systemd's, or its own after daemonize): one started in the
 * foreground from a shell shares that shell's session, and raising it
 * raised every process of it (make check STRESS=1: the first test daemon
 * put the harness's CPU hogs and all later tests at nice -10, and they
 * kept a container's nice 0 init off the CPU for minutes).
 */
static void raise_autogroup(void)
{
	char v[16];
	int fd, n;

	if (getsid(0) != getpid())
		return;
	fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = snprintf(v, sizeof(v), "%d", COLLECTOR_NICE);
	(void)!write(fd, v, (size_t)n);
	close(fd);
}

/*
 * Fork into the background; the parent exits 0 once the child says it is
 * ready (through ready_fd), 1 when it dies first.  Returns the child's end.
 */
static int daemonize(void)
{
	int ready_pipe[2];
	pid_t pid;
	char b;

	if (pipe2(ready_pipe, O_CLOEXEC))
		exit(1);
	pid = fork();
	if (pid < 0)
		exit(1);
	if (pid > 0) {
		close(ready_pipe[1]);
		exit(read(ready_pipe[0], &b, 1) == 1 ? 0 : 1);
	}
	close(ready_pipe[0]);
	setsid();
	return ready_pipe[1];
}

/*
 * --linger: how long a collector whose last recording ended is kept (BPF
 * loaded and verified, uprobes on, events disabled) for the next recording
 * of the same events, rate, call graph, markers and ring size
 * (lib/collect/collector_idle.c).  Meanwhile libperfmark's probes stay on,
 * so processes nobody records pay for their markers as they do while any
 * recording runs: a few seconds, not minutes.
 */
#define LINGER_S 10

/* NAME,NAME,...: no empty name, none longer than a session's */
static bool http_sessions_ok(const char *s)
{
	while (*s) {
		size_t l = strcspn(s, ",");

		if (!l || l > PROTO_NAME_MAX)
			return false;
		s += l;
		if (*s == ',' && !*++s)
			return false;
	}
	return true;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: perfmarkd [--foreground] [--socket PATH] [--state-dir DIR] [--pin-dir DIR]\n"
		   "                 [--ring-dir DIR] [--idle-timeout SECONDS] [--linger SECONDS]\n"
		   "                 [--http ADDR:PORT [--http-sessions NAME,...]]\n");
}

/* --help: the usage, then every option with its default (perfmarkd(8) says more) */
static void help(void)
{
	usage(stdout);
	printf("\nThe perfmark daemon: keeps named recording sessions for the members of group\n"
	       "perfmark, with or without a client attached, across its own restarts.\n\n"
	       "options:\n"
	       "  -f, --foreground            stay in the foreground, log to stderr (default:\n"
	       "                              detach once ready, unless systemd started it)\n"
	       "  -s, --socket PATH           the control socket (default: %s)\n"
	       "  -S, --state-dir DIR         where session definitions are kept\n"
	       "                              (default: /var/lib/perfmark)\n"
	       "  -P, --pin-dir DIR           where sessions' BPF objects are pinned, on a bpffs\n"
	       "                              (default: /sys/fs/bpf/perfmark)\n"
	       "  -R, --ring-dir DIR|none     where ring sessions keep their rings (default: rings\n"
	       "                              beside the socket; none: in the daemon's memory only)\n"
	       "  -I, --idle-timeout SECONDS  close a connection idle this long (0: never)\n"
	       "                              (default: %u)\n"
	       "  -L, --linger SECONDS        keep an ended recording's programs loaded this long\n"
	       "                              for the next one (0-3600; default: %u)\n"
	       "      --http ADDR:PORT        serve GET /metrics and /debug/pprof/profile,\n"
	       "                              read-only, unauthenticated (default: off)\n"
	       "      --http-sessions NAME,...\n"
	       "                              the sessions HTTP exposes (default: root's own)\n"
	       "  -h, --help                  print this help and exit\n"
	       "  -V, --version               print the version and exit\n",
	       PROTO_SOCKET_DEFAULT, idle_timeout_s, (unsigned)LINGER_S);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "pin-dir", required_argument, NULL, 'P' },
		{ "ring-dir", required_argument, NULL, 'R' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "linger", required_argument, NULL, 'L' },
		{ "http", required_argument, NULL, 'H' },
		{ "http-sessions", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	unsigned linger_s = LINGER_S;
	bool foreground = false, activated;
	const char *http = NULL;
	int ready_fd = -1;
	sigset_t mask;
	int c, e;

	D.socket_path = PROTO_SOCKET_DEFAULT;
	D.state_dir = "/var/lib/perfmark";
	D.pin_root = "/sys/fs/bpf/perfmark";
	while ((c = getopt_long(argc, argv, "fs:S:P:R:I:L:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'f': foreground = true; break;
		case 's': D.socket_path = optarg; break;
		case 'S': D.state_dir = optarg; break;
		case 'P': D.pin_root = optarg; break;
		case 'R': D.ring_dir = optarg; break;
		case 'I': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || v > 86400) {
				logmsg("bad --idle-timeout '%s' (seconds, 0: never)", optarg);
				return 1;
			}
			idle_timeout_s = (unsigned)v;
			break;
		}
		case 'L': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || v > 3600) {
				logmsg("bad --linger '%s' (seconds, 0 to 3600)", optarg);
				return 1;
			}
			linger_s = (unsigned)v;
			break;
		}
		case 'H': http = optarg; break;
		case 'E':
			if (!http_sessions_ok(optarg)) {
				logmsg("bad --http-sessions '%s' (NAME,... of at most %d bytes each)", optarg,
				       PROTO_NAME_MAX);
				return 1;
			}
			http_sessions = optarg;
			break;
		case 'h': help(); return 0;
		case 'V': printf("perfmarkd %s\n", PERFMARK_VERSION); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind < argc || (http_sessions && !http)) {
		usage(stderr);
		return 1;
	}
	D.http = http != NULL;
	if (geteuid() != 0) {
		logmsg("must run as root (it loads BPF programs)");
		return 1;
	}
	/* an anonymous recording's BPF programs and probes, kept for the next one */
	collector__set_linger(linger_s * 1000000000ull);
	libbpf_set_print(print_libbpf);
	ensure_bpffs();
	/* before anything that a running daemon would feel */
	if (instance__lock())
		return 1;
	if (!foreground && !getenv("NOTIFY_SOCKET"))
		ready_fd = daemonize();
	sd_watchdog_setup();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	e = sfd < 0 ? -errno : loop__init(&runs__tick);
	if (!e)
		e = jobs__init();
	if (e) {
		logmsg("cannot set up the event loop: %s", strerror(-e));
		return 1;
	}
	e = store__open(&D.store, D.state_dir);
	if (e) {
		logmsg("cannot open state directory %s: %s", D.state_dir, strerror(-e));
		return 1;
	}
	D.lfd = sd_activated_fd();
	activated = D.lfd >= 0;
	if (D.lfd < 0)
		D.lfd = listen_socket();
	if (D.lfd < 0)
		return 1;
	watch__add(&clients__listen_watch, D.lfd, EPOLLIN);
	watch__add(&signal_watch, sfd, EPOLLIN);
	if (instance__ring_dir())
		return 1;
	/* a bad --http fails before any session restarts */
	if (http && http__start(http))
		return 1;
	/*
	 * The loop answers systemd's watchdog and the clients, and starts the
	 * drains: it runs at the collector's priority, as the threads that move
	 * records do (COLLECTOR_NICE; needs CAP_SYS_NICE, kept in the unit).  At
	 * nice 0 beside 300 traced processes and two CPU hogs it waited 30 s
	 * for a CPU and systemd's watchdog killed it (make check STRESS=1).
	 * After http__start: the HTTP server's threads keep the nice value the
	 * daemon was started with, as do jobs (jobs.c); the stall thread, made
	 * here, shares the loop's.  And the daemon's scheduling group as a whole
	 * (raise_autogroup): a thread's nice value counts only inside it.
	 */
	collector__boost_thread();
	raise_autogroup();
	stall__watch(sd_watchdog_usec() * 1000);
	/* the rings and fast-lane areas are taken over from the loop: READY=1 comes first */
	sessions__restore();
	runs__update_tick();
	logmsg("listening on %s (%zu session%s)", activated ? "the socket-activated fd 3" : D.socket_path,
	       D.nr_sessions, D.nr_sessions == 1 ? "" : "s");
	sd_notify_msg("READY=1\nSTATUS=serving");
	if (ready_fd >= 0) {
		(void)!write(ready_fd, "r", 1);
		close(ready_fd);
		if (!freopen("/dev/null", "r", stdin))
			return 1;
	}

	e = loop__run();
	if (e)
		logmsg("epoll_wait: %s", strerror(-e));
	sd_notify_msg("STOPPING=1");
	logmsg("exiting; running sessions stay pinned and keep collecting");
	http__stop();
	sessions__keep_taken();    /* a taker cut off by the exit did not go: its session stays */
	clients__close_all();
	jobs__wait_all();   /* takeovers finish, snapshots nobody waits for end */
	sessions__free_all();
	loop__free();
	store__free(D.store);
	if (!activated)
		unlink(D.socket_path);
	close(D.lfd);
	close(sfd);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What perfmarkd says to systemd and takes from it, without libsystemd:
 * sd_notify datagrams (READY, STOPPING, WATCHDOG), the watchdog period,
 * the socket-activated listening fd, and the fd store, where the fast
 * lane keeps the rings of the processes it reads (lib/collect/fastlane.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fastlane.h"
#include "perfmarkd.h"

static uint64_t watchdog_usec, last_ping;

/*
 * RULE: a message to systemd never blocks the daemon.  $NOTIFY_SOCKET is a
 * datagram socket: when systemd reads it slower than the daemon writes
 * (net.unix.max_dgram_qlen is 10 here; the fast lane stores a ring per
 * traced process, hundreds in a burst; a busy PID 1), a blocking send waits
 * for systemd, the loop with it, and the watchdog then kills the daemon.  So
 * sends do not wait: a message systemd has no room for is queued, in order,
 * with a copy of its fd, and sent again at each tick (every message after
 * it waits behind it).  A watchdog ping is not queued: the next tick pings
 * again.  The queue holds NOTIFY_QUEUE_MAX; beyond, a message is dropped and
 * counted (a ring then not kept is read as long as the daemon runs).
 */
#define NOTIFY_QUEUE_MAX 8192

struct queued {
	char *msg;
	int fd;                 /* a copy, or -1 */
};

static struct {
	pthread_mutex_t lock;   /* the fast lane's pump stores rings too */
	int sfd;                /* our end, non-blocking; -1 until the first message */
	struct queued *q;
	size_t head, n, cap;
	uint64_t queued, dropped;
	bool said;              /* logged that systemd is behind, since it last caught up */
} N = { .lock = PTHREAD_MUTEX_INITIALIZER, .sfd = -1 };

/* msg to $NOTIFY_SOCKET, with fd attached when it is >= 0: 0, -EAGAIN (no room), or another -errno */
static int send_now(const char *msg, int fd)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = strlen(msg) };
	struct msghdr mh = { .msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1 };

	if (!path || !path[0] || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	mh.msg_namelen = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (N.sfd < 0)
		N.sfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (N.sfd < 0)
		return -errno;
	if (sendmsg(N.sfd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return 0;
}

/* what is queued, in order, until systemd has no room (lock held) */
static void flush_locked(void)
{
	while (N.n) {
		struct queued *m = &N.q[N.head];

		if (send_now(m->msg, m->fd) == -EAGAIN)
			return;
		free(m->msg);
		if (m->fd >= 0)
			close(m->fd);
		N.head = (N.head + 1) % N.cap;
		N.n--;
	}
	if (N.said && N.queued) {
		logmsg("systemd reads its notify socket again: %llu messages were queued, %llu dropped",
		       (unsigned long long)N.queued, (unsigned long long)N.dropped);
		N.said = false;
	}
}

static int enqueue_locked(const char *msg, int fd)
{
	struct queued m = { .msg = strdup(msg), .fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1 };

	if (N.n == N.cap && N.cap < NOTIFY_QUEUE_MAX) {
		size_t cap = N.cap ? 2 * N.cap : 64;
		struct queued *q = calloc(cap, sizeof(*q));

		if (q) {
			for (size_t i = 0; i < N.n; i++)
				q[i] = N.q[(N.head + i) % N.cap];
			free(N.q);
			N.q = q;
			N.head = 0;
			N.cap = cap;
		}
	}
	if (!m.msg || (fd >= 0 && m.fd < 0) || N.n == N.cap) {
		free(m.msg);
		if (m.fd >= 0)
			close(m.fd);
		N.dropped++;
		return -ENOBUFS;
	}
	N.q[(N.head + N.n) % N.cap] = m;
	N.n++;
	N.queued++;
	return 0;
}

/* msg to $NOTIFY_SOCKET (fd attached when >= 0), now or queued; ping: not queued */
static int notify(const char *msg, int fd, bool ping)
{
	int e;

	if (!getenv("NOTIFY_SOCKET"))
		return -EINVAL;
	pthread_mutex_lock(&N.lock);
	flush_locked();
	e = N.n ? -EAGAIN : send_now(msg, fd);
	if (e == -EAGAIN && !N.said) {
		logmsg("systemd is not reading its notify socket fast enough: messages queued "
		       "(the daemon goes on)");
		N.said = true;
	}
	if (e == -EAGAIN && !ping)
		e = enqueue_locked(msg, fd);
	pthread_mutex_unlock(&N.lock);
	return e;
}

void sd_notify_msg(const char *msg)
{
	if (!notify(msg, -1, false) && !strncmp(msg, "READY=1", 7))
		last_ping = clock_mono_ns();
}

/*
 * The fd store (FileDescriptorStoreMax= in the unit): fd stored under name,
 * or (fd < 0) what is stored under name dropped.  systemd keeps the fds
 * while the service runs or restarts, and hands them back in $LISTEN_FDS.
 */
static void sd_fdstore(int fd, const char *name)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s\nFDNAME=%s", fd >= 0 ? "FDSTORE=1" : "FDSTOREREMOVE=1", name);
	notify(msg, fd, false);
}

/* after daemonizing: $WATCHDOG_PID names the process that serves */
void sd_watchdog_setup(void)
{
	const char *u = getenv("WATCHDOG_USEC"), *p = getenv("WATCHDOG_PID");

	if (!u)
		return;
	if (p && (pid_t)strtol(p, NULL, 10) != getpid())
		return;
	watchdog_usec = strtoull(u, NULL, 10);
}

uint64_t sd_watchdog_usec(void)
{
	return watchdog_usec;
}

void sd_watchdog_tick(void)
{
	uint64_t now;

	if (__atomic_load_n(&N.n, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&N.lock);
		flush_locked();
		pthread_mutex_unlock(&N.lock);
	}
	if (!watchdog_usec)
		return;
	now = clock_mono_ns();
	if (now - last_ping >= watchdog_usec * 1000 / 2 - 1000000) {
		if (!notify("WATCHDOG=1", -1, true))
			last_ping = now;
	}
}

/*
 * What systemd passed ($LISTEN_PID, $LISTEN_FDS, $LISTEN_FDNAMES): the
 * listening socket of socket activation, returned (-1: none), and the fast
 * lane's rings from the fd store (named FASTLANE_KEPT_PREFIX...), handed to
 * its keeper.  Under systemd ($NOTIFY_SOCKET) the keeper stores every ring
 * from now on, within the caps of limits.c; fastlane_keeper_done() once the sessions are back.
 */
int sd_activated_fd(void)
{
	const char *p = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	char *names = getenv("LISTEN_FDNAMES"), *save = NULL, *name;
	int nfds = 0, lfd = -1, nkept = 0, *kept = NULL;
	char **kept_names = NULL;

	if (p && n && (pid_t)strtol(p, NULL, 10) == getpid())
		nfds = (int)strtol(n, NULL, 10);
	if (nfds < 0 || nfds > 65536)
		nfds = 0;
	names = names ? strdup(names) : NULL;
	if (nfds) {
		kept = calloc((size_t)nfds, sizeof(*kept));
		kept_names = calloc((size_t)nfds, sizeof(*kept_names));
	}
	name = names ? strtok_r(names, ":", &save) : NULL;
	for (int fd = 3; fd < 3 + nfds; fd++, name = name ? strtok_r(NULL, ":", &save) : NULL) {
		struct stat sb;
		int fl;

		fcntl(fd, F_SETFD, FD_CLOEXEC);
		if (name && !strncmp(name, FASTLANE_KEPT_PREFIX, strlen(FASTLANE_KEPT_PREFIX)) &&
		    kept && kept_names) {
			kept[nkept] = fd;
			kept_names[nkept++] = name;
		} else if (lfd < 0 && !fstat(fd, &sb) && S_ISSOCK(sb.st_mode) &&
			   (fl = fcntl(fd, F_GETFL)) >= 0) {
			fcntl(fd, F_SETFL, fl | O_NONBLOCK);
			lfd = fd;
		} else {
			/* nothing of ours (a later version's?): out of the store too */
			if (name && getenv("NOTIFY_SOCKET") && (fstat(fd, &sb) || !S_ISSOCK(sb.st_mode)))
				sd_fdstore(-1, name);
			close(fd);
		}
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (getenv("NOTIFY_SOCKET"))
		fastlane_keeper(&(const struct fastlane_store){
			.put = sd_fdstore, .admit = limits__keep_ring, .release = limits__unkeep_ring,
		}, kept, kept_names, (size_t)nkept);
	else
		for (int i = 0; i < nkept; i++)
			close(kept[i]);
	free(kept);
	free(kept_names);
	free(names);
	return lfd;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What perfmarkd says to systemd and takes from it, without libsystemd:
 * sd_notify datagrams (READY, STOPPING, WATCHDOG), the watchdog period,
 * and the socket-activated listening fd.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "perfmarkd.h"

static uint64_t watchdog_usec, last_ping;

void sd_notify_msg(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || !path[0] || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)!sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
	if (!strncmp(msg, "READY=1", 7))
		last_ping = clock_mono_ns();
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

	if (!watchdog_usec)
		return;
	now = clock_mono_ns();
	if (now - last_ping >= watchdog_usec * 1000 / 2 - 1000000) {
		sd_notify_msg("WATCHDOG=1");
		last_ping = now;
	}
}

/* socket activation: $LISTEN_PID/$LISTEN_FDS */
int sd_activated_fd(void)
{
	const char *p = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int fl;

	if (!p || !n || (pid_t)strtol(p, NULL, 10) != getpid() || strtol(n, NULL, 10) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	fl = fcntl(3, F_GETFL);
	if (fl < 0)
		return -1;
	fcntl(3, F_SETFL, fl | O_NONBLOCK);
	fcntl(3, F_SETFD, FD_CLOEXEC);
	return 3;
}

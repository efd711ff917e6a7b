// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One perfmarkd per state: a second daemon started on the same state
 * directory or the same pins is refused before it touches anything (it
 * would restore the same sessions, sweep the first one's pins as unknown,
 * and write into the same rings).  The lock is flock(2) on the directories
 * themselves, so it goes with the process however it ends.
 *
 * The ring directory holds the rings of ring sessions (lib/write/pring.c):
 * RING_DIR/NAME.ring, root's, 0700.  Default: "rings" beside the control
 * socket, /run/perfmark/rings (tmpfs: memory that outlives the daemon,
 * never written to disk).  "none": rings in the daemon's memory only,
 * lost with it (bench/bench-ring.sh compares the two).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "perfmarkd.h"

static int lock_dir(const char *path, const char *what)
{
	char pidfile[PATH_MAX], buf[32] = "";
	int fd, pf;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	snprintf(pidfile, sizeof(pidfile), "%s/.perfmarkd.pid", path);
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno == EWOULDBLOCK ? -EBUSY : -errno;

		pf = open(pidfile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (pf >= 0) {
			ssize_t n = read(pf, buf, sizeof(buf) - 1);

			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			close(pf);
		}
		if (e == -EBUSY && buf[0])
			logmsg("another perfmarkd (pid %s) is running with %s %s: not starting",
			       buf, what, path);
		else if (e == -EBUSY)
			logmsg("another perfmarkd is running with %s %s: not starting", what, path);
		else
			logmsg("cannot lock %s %s: %s", what, path, strerror(-e));
		close(fd);
		return e;
	}
	/* kept open: the lock lives as long as this process */
	pf = open(pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (pf >= 0) {
		dprintf(pf, "%d\n", (int)getpid());
		close(pf);
	}
	return 0;
}

int instance__lock(void)
{
	int e;

	if (mkdir(D.state_dir, 0700) && errno != EEXIST) {
		e = -errno;
		logmsg("cannot create state directory %s: %s", D.state_dir, strerror(-e));
		return e;
	}
	e = lock_dir(D.state_dir, "state directory");
	if (!e && mkdir(D.pin_root, 0700) && errno != EEXIST && errno != ENOENT)
		logmsg("cannot create the pin directory %s: %s", D.pin_root, strerror(errno));
	if (!e)
		e = lock_dir(D.pin_root, "pin directory");
	return e;
}

int instance__ring_dir(void)
{
	static char def[PATH_MAX];
	struct stat sb;
	int e, fd;

	if (D.ring_dir && !strcmp(D.ring_dir, "none")) {
		D.ring_dfd = -1;
		logmsg("rings in memory only (--ring-dir none): they do not outlive this daemon");
		return 0;
	}
	if (!D.ring_dir) {
		const char *slash = strrchr(D.socket_path, '/');
		int n = slash ? (int)(slash - D.socket_path) : 1;

		snprintf(def, sizeof(def), "%.*s/rings", n, slash ? D.socket_path : ".");
		D.ring_dir = def;
	}
	e = fsutil_mkdir_p(D.ring_dir, 0755, 0700);
	fd = e ? e : open(D.ring_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = fd == e ? e : -errno;
		logmsg("cannot open the ring directory %s: %s", D.ring_dir, strerror(-e));
		return e;
	}
	/* only root may have put anything there */
	if (fstat(fd, &sb) || sb.st_uid != 0 || (sb.st_mode & 022)) {
		logmsg("ring directory %s must be root's and not writable by others", D.ring_dir);
		close(fd);
		return -EPERM;
	}
	D.ring_dfd = fd;
	return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writing to a descriptor a client passed over the control socket.
 *
 * RULE (issue 8 cases 2 and 8): perfmarkd runs as root and writes only where
 * the client itself could.  A passed descriptor is used as it is:
 *   - checked, never reopened: fdout_check() wants it open for writing
 *     (F_GETFL: O_WRONLY or O_RDWR; not O_PATH, not O_RDONLY) and a regular
 *     file, FIFO, socket or memory device (/dev/null).  Reopening /proc/self/fd/N opened it again with
 *     root's rights: an O_PATH descriptor of a root-only FIFO got a member's
 *     perf.data stream written into it;
 *   - its flags never changed: O_NONBLOCK lives in the open file description
 *     the client shares with its shell (`snapshot -o -` left stdout
 *     non-blocking for the next writer), and a flag the client can clear
 *     again cannot be what keeps the daemon from blocking;
 *   - pipes and sockets are written with RWF_NOWAIT, per call: a full pipe is
 *     -EAGAIN (wait for EPOLLOUT), never a blocked daemon.
 */
#ifndef PERFMARK_FDOUT_H
#define PERFMARK_FDOUT_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * 0 when fd may be written for a client, with *nowait set for a pipe or
 * socket; -EBADF (not open for writing) or -EINVAL (another kind of file).
 */
int fdout_check(int fd, bool *nowait);
/* Bytes written (short is fine), -EAGAIN when a pipe or socket is full, -errno. */
ssize_t fdout_write(int fd, bool nowait, const void *buf, size_t len);
/* Copy [*off, end) of src (a memfd) to fd: 0 all out, -EAGAIN, -errno; *off advances. */
int fdout_copy(int fd, bool nowait, int src, off_t *off, off_t end);

#endif

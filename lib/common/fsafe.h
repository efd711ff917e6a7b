/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a path that the input names.
 *
 * RULE (issue 8 cases 3, 6): a path taken from data someone else wrote (a
 * file name in an MMAP record, /tmp/perf-PID.map for a pid in a perf.data
 * file) is opened only when it is a regular file, and never in a way that
 * can block or have side effects: the type is checked before the open (a
 * device is never opened at all), the open is O_NONBLOCK|O_NOCTTY (a FIFO
 * swapped in meanwhile returns at once), and fstat must show the same
 * regular file afterwards, not on a pseudo filesystem (/proc/kcore is
 * "regular" and endless).  A FIFO named in an MMAP record used to hang
 * `perfmark script` in open().
 */
#ifndef PERFMARK_FSAFE_H
#define PERFMARK_FSAFE_H

/* A read-only fd on the regular file at path (O_CLOEXEC), or -errno (-EINVAL: not regular). */
int fsafe_open_regular(const char *path);

#endif

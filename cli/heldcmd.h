/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A command forked stopped before its exec: what record and stat run.  It
 * waits on a pipe for the go, so that it execs only once everything that
 * watches it is in place, and tells an exec error back on another pipe
 * (close-on-exec: the pipe closes when the exec succeeds).
 */
#ifndef PERFMARK_HELDCMD_H
#define PERFMARK_HELDCMD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct heldcmd {
	pid_t pid;
	int go, exec_err;     /* -1 once used */
};
#define HELDCMD_INIT { .pid = -1, .go = -1, .exec_err = -1 }

/*
 * Fork argv, held.  The child gets oldmask as its signal mask;
 * stdout_to_stderr: the command's stdout is perfmark's stderr (a stream
 * owns stdout).  0, or 1 after the error line.
 */
int heldcmd__fork(struct heldcmd *h, char *const *argv, const sigset_t *oldmask, bool stdout_to_stderr);
/* let it exec: 0, or 1 after "perfmark: cannot run 'CMD': ..." (the child reaped) */
int heldcmd__release(struct heldcmd *h, const char *name);
/* the pipes closed (a held child that never got the go exits 127) */
void heldcmd__close(struct heldcmd *h);

#endif

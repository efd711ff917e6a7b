// SPDX-License-Identifier: GPL-2.0-or-later
/* A command forked stopped before its exec (heldcmd.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "heldcmd.h"

static void child(int go, int ee, char *const *argv, const sigset_t *oldmask, bool stdout_to_stderr)
{
	char b;
	int e;

	sigprocmask(SIG_SETMASK, oldmask, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (stdout_to_stderr)
		dup2(2, 1);
	/* the go byte, or the pipe closed: perfmark gave up */
	if (read(go, &b, 1) != 1)
		_exit(127);
	execvp(argv[0], argv);
	e = errno;
	if (write(ee, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int heldcmd__fork(struct heldcmd *h, char *const *argv, const sigset_t *oldmask, bool stdout_to_stderr)
{
	int go[2], ee[2];

	if (pipe2(go, O_CLOEXEC))
		return pm_err("pipe: %s", strerror(errno));
	if (pipe2(ee, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return pm_err("pipe: %s", strerror(errno));
	}
	h->pid = fork();
	if (h->pid == 0) {
		close(go[1]);
		close(ee[0]);
		child(go[0], ee[1], argv, oldmask, stdout_to_stderr);
	}
	close(go[0]);
	close(ee[1]);
	if (h->pid < 0) {
		close(go[1]);
		close(ee[0]);
		return pm_err("fork: %s", strerror(errno));
	}
	h->go = go[1];
	h->exec_err = ee[0];
	return 0;
}

int heldcmd__release(struct heldcmd *h, const char *name)
{
	int e;

	if (write(h->go, "g", 1) != 1) {
		e = errno;
		heldcmd__close(h);
		waitpid(h->pid, NULL, 0);
		return pm_err("cannot start '%s': %s", name, strerror(e));
	}
	close(h->go);
	h->go = -1;
	if (read(h->exec_err, &e, sizeof(e)) == sizeof(e)) {
		heldcmd__close(h);
		waitpid(h->pid, NULL, 0);
		return pm_err("cannot run '%s': %s", name, strerror(e));
	}
	heldcmd__close(h);
	return 0;
}

void heldcmd__close(struct heldcmd *h)
{
	if (h->go >= 0)
		close(h->go);
	if (h->exec_err >= 0)
		close(h->exec_err);
	h->go = h->exec_err = -1;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Who may do what: a connection is allowed when its peer is root or in group
 * "perfmark"; a member sees and manages only its own sessions and records
 * only its own processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmarkd.h"
#include "synth.h"

bool in_group(pid_t pid, gid_t pgid, gid_t want)
{
	char path[64], line[4096];
	bool found = pgid == want;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return found;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)g == want)
				found = true;
		}
	}
	fclose(f);
	return found;
}

bool may_see(const struct client *c, const struct dsess *d)
{
	return c->root || d->def.owner == c->cred.uid;
}

/* the rule of issue 8 case 4 (synth_task_owner): real, effective, saved uid, dumpable */
static bool pid_owned_by(int pid, uid_t uid)
{
	uint32_t owner;
	pid_t tgid;

	return !synth_task_owner(pid, &owner, &tgid) && owner == uid;
}

const char *pid_check(const struct client *c, int pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (access(path, F_OK))
		snprintf(buf, len, "no such process: %d", pid);
	else if (!c->root && !pid_owned_by(pid, c->cred.uid))
		snprintf(buf, len, "process %d is not yours: permission denied", pid);
	else
		return NULL;
	return buf;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Taking a ring file over in a job, off the daemon's loop, and the
 * requests that wait for a busy session (sessions-int.h, perfmarkd.h).
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmarkd.h"
#include "proto.h"
#include "sessions-int.h"

/* --- taking a ring over, off the loop ------------------------------------------ */

/*
 * At start-up a ring session's ring file is taken over by a job: its every
 * record is walked (pring.c recovery), seconds for a large ring on a busy
 * machine.  Meanwhile the session is "starting", its requests but `show`
 * wait (clients.c), and the others are served.  The pinned BPF side and
 * the processes' fast-lane rings keep what comes meanwhile, as while no
 * daemon ran.  A stopped ring (kept for snapshots) is opened the same way.
 */
struct takeover {
	struct job job;
	struct dsess *d;
	enum tk_mode mode;
	struct client *c;             /* TK_START: NULL once the connection went */
	struct client_hook hook;
	struct sink_spec k;
	struct sink *sink;
	struct sink_recovery rec;
	int e;
};

/*
 * PERFMARK_TEST_HOLD=PREFIX (tests only): a job of session NAME waits while
 * the file PREFIX.NAME exists, so a test can look at the daemon meanwhile.
 */
void sessions__test_hold(const char *name)
{
	const char *p = getenv("PERFMARK_TEST_HOLD");
	char path[PATH_MAX];

	if (!p || !*p || snprintf(path, sizeof(path), "%s.%s", p, name) >= (int)sizeof(path))
		return;
	while (!access(path, F_OK))
		usleep(10000);
}

static void takeover_work(struct job *j)
{
	struct takeover *tk = container_of(j, struct takeover, job);

	sessions__test_hold(tk->d->def.name);
	tk->e = sink__new(&tk->sink, &tk->k.ko, &tk->rec);
}

static void takeover_orphan(struct client_hook *h, struct client *c)
{
	container_of(h, struct takeover, hook)->c = NULL;
}

static void takeover_done(struct job *j)
{
	struct takeover *tk = container_of(j, struct takeover, job);
	struct json_object *o = NULL;
	struct dsess *d = tk->d;
	char err[256] = "";
	int e = tk->e;

	d->tk = NULL;
	if (tk->mode == TK_STOPPED) {
		d->sink = tk->sink;
		if (!e)
			log_recovery(d, &tk->rec);
	} else {
		if (e) {
			sink_failed(&tk->k.ko, e, err, sizeof(err));
			session_undo(d);
		} else {
			d->sink = tk->sink;
			e = session_go(d, &tk->rec, err, sizeof(err));
		}
		if (e && tk->mode == TK_RESTORE)
			restore_failed(d, e, err);
		if (e && tk->mode == TK_START)
			o = reply_err("cannot start session '%s': %s", d->def.name,
				      err[0] ? err : strerror(-e));
		if (!e || tk->mode == TK_RESTORE)
			save_def(d);
	}
	if (tk->c)
		client_reply_later_done(tk->c, &tk->hook, o ? o : reply_ok());
	else if (o)
		json_object_put(o);
	free(tk);
	sessions__unbusy(d);
}

/* sessions-int.h */
int takeover_start(struct dsess *d, enum tk_mode mode, struct client *c)
{
	struct takeover *tk = calloc(1, sizeof(*tk));
	char err[256];

	if (!tk)
		return -ENOMEM;
	tk->d = d;
	tk->mode = mode;
	if (mode != TK_STOPPED) {
		if (sink_spec(d, d->run.s, &tk->k, err, sizeof(err))) {
			free(tk);
			return -EINVAL;
		}
	} else {
		tk->k.ko = (struct sink_opts){ .kind = SINK_RING, .ring_dir_fd = D.ring_dfd,
					       .ring_size = d->def.ring_size };
		ring_name(d, tk->k.rname, sizeof(tk->k.rname));
		tk->k.ko.ring_name = tk->k.rname;
	}
	sink__free(d->sink);
	d->sink = NULL;
	d->tk = tk;
	if (c) {
		tk->c = c;
		client_reply_later(c, &tk->hook, takeover_orphan);
	}
	job__start(&tk->job, takeover_work, takeover_done);
	return 0;
}

bool sessions__busy_for(const struct dsess *d, int cmd)
{
	if (d->tk)
		return cmd != PROTO_CMD_SHOW;
	return d->busy && (cmd == PROTO_CMD_START || cmd == PROTO_CMD_DELETE);
}

void sessions__unbusy(struct dsess *d)
{
	if (d->tk || d->busy)
		return;
	if (d->delete_pending)    /* the requests that waited find it gone (by name) */
		json_object_put(cmd_delete(d));
	clients__unpark(d);       /* d only compared, never read */
}


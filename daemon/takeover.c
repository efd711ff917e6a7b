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

#include "fastlane.h"
#include "perfmarkd.h"
#include "proto.h"
#include "sessions-int.h"
#include "testhold.h"

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
	test_hold_wait(name, false);
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
	if (d->tk || d->adopting)
		return cmd != PROTO_CMD_SHOW;
	return d->busy && (cmd == PROTO_CMD_START || cmd == PROTO_CMD_DELETE);
}

void sessions__unbusy(struct dsess *d)
{
	if (d->tk || d->adopting || d->busy)
		return;
	if (d->delete_pending)    /* the requests that waited find it gone (by name) */
		json_object_put(cmd_delete(d));
	clients__unpark(d);       /* d only compared, never read */
}


/* --- the fast lane's areas taken back, a slice a turn ---------------------- */

/*
 * After a restart the fast lane takes back the areas systemd's fd store
 * kept and those live processes still map (lib/collect/fastlane_keep.c):
 * ADOPT_BUDGET of them (or processes scanned) a turn of the loop, between
 * which it answers its clients and pings the watchdog.  Before (issue 18
 * case 14), all of it came in one call ahead of READY=1: 256 kept areas and
 * a scan of every process's maps on a loaded machine outlasted systemd's
 * start timeout.  Meanwhile the session is "starting": it stages what it
 * reads and writes nothing yet (session.h), its requests but `show` wait.
 */
#define ADOPT_BUDGET 16

static size_t nr_adopting;

/* PERFMARK_TEST_HOLD (tests only): after its first slice, held while PREFIX.NAME.adopt exists */
static bool adopt_held(const struct dsess *d)
{
	char what[PATH_MAX];

	return snprintf(what, sizeof(what), "%s.adopt", d->def.name) < (int)sizeof(what) &&
	       test_hold_armed(what);
}

static void adopt_step(struct defer *p)
{
	struct dsess *d = container_of(p, struct dsess, adopt);
	struct session_adopt_stats st = { 0 };

	if (d->run.s && session__adopting(d->run.s, &st) && st.steps && adopt_held(d)) {
		usleep(10000);          /* the loop serves on, this waits */
		loop__soon(&d->adopt, adopt_step);
		return;
	}
	if (d->run.s && session__adopt_step(d->run.s, ADOPT_BUDGET)) {
		loop__soon(&d->adopt, adopt_step);
		return;
	}
	d->adopting = false;
	logmsg("session '%s': fast lane taken back: %llu kept areas, %llu live, %llu processes scanned in %llu steps",
	       d->def.name, (unsigned long long)st.kept, (unsigned long long)st.rejoined,
	       (unsigned long long)st.procs, (unsigned long long)st.steps);
	if (!--nr_adopting)
		sessions__adopt_done_all();
	sessions__unbusy(d);
}

void sessions__adopt(struct dsess *d)
{
	if (!d->run.s || !session__adopting(d->run.s, NULL))
		return;
	d->adopting = true;
	nr_adopting++;
	loop__soon(&d->adopt, adopt_step);
}

void sessions__adopt_done_all(void)
{
	size_t kept, exited, dropped;

	if (nr_adopting)
		return;
	fastlane_keeper_done(&kept, &exited, &dropped);
	if (kept || dropped)
		logmsg("kept rings from the fd store: %zu taken over (%zu of processes that exited "
		       "while no daemon ran), %zu no session wanted", kept, exited, dropped);
}

/* show's "takeover": the ring (a job) and the fast lane's areas (slices), while and after */
struct json_object *takeover_json(const struct dsess *d)
{
	struct json_object *o = json_object_new_object();
	struct session_adopt_stats st = { 0 };

	if (d->run.s)
		session__adopting(d->run.s, &st);
	json_object_object_add(o, "state", json_object_new_string(d->tk || d->adopting ? "in progress" : "done"));
	json_object_object_add(o, "ring", json_object_new_string(d->tk ? "in progress" : "done"));
	json_object_object_add(o, "fastlane", json_object_new_string(d->adopting ? "in progress" : "done"));
	json_object_object_add(o, "kept_areas", json_object_new_uint64(st.kept));
	json_object_object_add(o, "live_areas", json_object_new_uint64(st.rejoined));
	json_object_object_add(o, "processes_scanned", json_object_new_uint64(st.procs));
	json_object_object_add(o, "steps", json_object_new_uint64(st.steps));
	return o;
}

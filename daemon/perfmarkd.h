/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmarkd's parts, one concern per file:
 *
 *   main.c      options, daemonizing, the listening socket, start-up, shutdown
 *   state.c     the daemon's state (D) and its log
 *   instance.c  one daemon per state directory and pins; the ring directory
 *   loop.c      the epoll loop: watches with their own handlers, the drain
 *               timer, deferred freeing, work in steps
 *   jobs.c      work too long for the loop, in threads: ring takeovers,
 *               snapshots
 *   systemd.c   sd_notify, the watchdog, socket activation, the fd store
 *   run.c       a running recording (named or anonymous): its ring fds, its
 *               drains, and the tick that drains every run
 *   sessions.c  named sessions: build from a definition, drain, stop, fail,
 *               restore at start-up, and the commands that act on them
 *   streams.c   live readers (attach) and snapshot pumps
 *   clients.c   connections: accept, read requests, dispatch to handlers
 *   conn.c      a connection's life: replies, close hooks, its end, idle
 *   auth.c      who may talk, and about which sessions and processes
 *   views.c     the JSON a client sees: sessions, statistics, replies
 *   anon.c      anonymous recordings (`perfmark record` through the daemon)
 *   keep.c      a recording kept as a named session while it runs
 *   limits.c    who may hold how much: per-user limits, idle connections
 *   http.c      --http: libmicrohttpd's threads, requests as jobs for the loop
 *   metrics.c   the loop's side of those jobs: /metrics, pprof snapshots
 *
 * Every fd the loop polls has a struct watch embedded in the object that owns
 * it; its handler finds the object with container_of.  Objects a pending
 * event may still point at are freed only after the batch (loop__defer).
 *
 * Calls between these files go one way, down:
 *   main.c, clients.c -> sessions.c -> streams.c -> conn.c, run.c
 *   clients.c -> anon.c -> conn.c, run.c, limits.c, auth.c
 *   clients.c -> keep.c -> sessions.c, anon.c
 *   conn.c -> views.c, loop.c, state.c;  run.c -> loop.c, systemd.c
 *   systemd.c -> limits.c (the caps of the rings kept in the fd store)
 * What a connection owns (a reader, a pump, a recording) learns that the
 * connection goes through a close hook it hung on it (conn.c), not by a
 * call up from the connection.
 */
#ifndef PERFMARKD_H
#define PERFMARKD_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "proto.h"
#include "counting.h"
#include "session.h"
#include "store.h"

/* limits.c explains these */
#define MAX_SESSIONS 64               /* named sessions of all members together */
#define USER_MAX_SESSIONS 8
#define ROOT_EXTRA_SESSIONS 16        /* root's room beyond the members' */
#define MAX_CLIENTS 64                /* connections of all members together */
#define USER_MAX_CLIENTS 8
#define ROOT_EXTRA_CLIENTS 16
#define MAX_ALL_CLIENTS (MAX_CLIENTS + ROOT_EXTRA_CLIENTS)
#define MAX_ALL_SESSIONS (MAX_SESSIONS + ROOT_EXTRA_SESSIONS)
#define IDLE_TIMEOUT_S 30
#define USER_MEM_MAX (256ull << 20)   /* a member's rings and BPF rings together */
#define RING_MAX_ROOT (1ull << 30)
#define RING_MAX_USER (256ull << 20)
#define ANON_BACKLOG (32ull << 20)    /* an anonymous recording's pipe backlog */
#define KEPT_MAX 4096                 /* kept rings: FileDescriptorStoreMax= in the unit */
#define KEPT_ROOT 512                 /* of those, root's alone */
#define KEPT_PER_UID 256
#define GROUP_NAME "perfmark"

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct json_object;

/* --- loop.c -------------------------------------------------------------- */

struct watch {
	void (*fn)(struct watch *w, uint32_t events);
};

/* Something freed after the current batch of events. */
struct defer {
	struct defer *next;
	void (*fn)(struct defer *d);
};

/* tick: the handler of the loop's periodic timer (see loop__set_tick) */
int loop__init(struct watch *tick);
int watch__add(struct watch *w, int fd, uint32_t events);
void watch__mod(struct watch *w, int fd, uint32_t events);
void watch__del(int fd);
/* counts the loop's turns (a batch of events, then the steps) */
uint64_t loop__turn(void);
/* the longest turn so far (those over 500 ms are logged) */
uint64_t loop__turn_max_ns(void);
/* fn(d) runs after the current batch of events. */
void loop__defer(struct defer *d, void (*fn)(struct defer *d));
/*
 * fn(d) runs at the next turn of the loop, after the events ready then:
 * one step of a long piece of work (it queues itself again for the next).
 */
void loop__soon(struct defer *d, void (*fn)(struct defer *d));
/* d taken off the steps to come: true when it was there */
bool loop__cancel(struct defer *d);
/* Tick every ns (0: never); idle means no wakeups. */
void loop__set_tick(uint64_t ns);
/* Read the tick's expirations (the tick handler calls it). */
void loop__ack_tick(void);
/* Runs until loop__exit(); 0, or -errno when epoll fails. */
int loop__run(void);
/*
 * stall.c: under systemd's watchdog (period_ns), a thread that logs where
 * the loop's thread is stuck once a turn has taken half the period; the
 * loop says when each turn begins and ends.  Called from the loop's thread.
 */
void stall__watch(uint64_t period_ns);
void stall__turn(uint64_t turn, uint64_t t0);
void stall__idle(void);
void loop__exit(void);
void loop__free(void);

/* --- jobs.c --------------------------------------------------------------- */

/* Embedded in what its owner keeps alive until done() has run. */
struct job {
	struct job *next;
	void (*work)(struct job *j);  /* in a thread of its own */
	void (*done)(struct job *j);  /* then on the loop thread */
};

int jobs__init(void);
void job__start(struct job *j, void (*work)(struct job *j), void (*done)(struct job *j));
size_t jobs__running(void);
/* Daemon exit: every job finished and its done() run. */
void jobs__wait_all(void);

/* --- systemd.c ----------------------------------------------------------- */

void sd_notify_msg(const char *msg);
void sd_watchdog_setup(void);
/* $WATCHDOG_USEC for this process; 0 without a watchdog */
uint64_t sd_watchdog_usec(void);
/* Ping the watchdog when half its period has passed. */
void sd_watchdog_tick(void);
/*
 * The socket-activated fd, or -1; the fd store's rings go to the fast
 * lane's keeper (fastlane.h), which keeps rings there from now on.
 */
int sd_activated_fd(void);

/* --- run.c -------------------------------------------------------------- */

struct run;

/* A flush in steps (run__flush_steps), kept by its owner until fn has run. */
struct run_flush {
	struct defer step;
	struct run_flush *next;       /* the run's flushes under way */
	struct run *r;
	uint64_t until;
	int left;                     /* batches it may still read */
	void (*fn)(struct run_flush *f, int err);
};

struct run {
	struct session *s;            /* NULL: not recording (its owner sets it up) */
	int fds[4];                   /* the session's ring fds */
	int nr_fds;
	bool polled;                  /* fds in the loop */
	bool held;                    /* not drained: its owner's output is behind */
	struct watch w;
	struct session_stats st;      /* last known */
	struct run_flush *flushes;    /* under way */
	uint64_t turn;                /* of the loop, at its last drain */
	uint32_t rotate_secs;         /* its files rotate this often (0: not by time): a quiet tick's cap */
	/* the owner, after each drain: err is the session's (0: all went out) */
	void (*drained)(struct run *r, int err);
	struct run *next;
};

void run__init(struct run *r, void (*drained)(struct run *r, int err));
/* session__start r->s, poll its ring fds; the tick drains it from now on */
int run__start(struct run *r, char *err, size_t errlen);
/* from's recording goes on as to's (session keep): polled and drained as to's from now */
void run__move(struct run *from, struct run *to);
/* hold: no drains and no polling until released (an output backlog) */
void run__hold(struct run *r, bool hold);
/* drain (unless held), then tell the owner */
void run__drain(struct run *r);
/* the same, with everything up to until (session__clock()) written */
void run__flush(struct run *r, uint64_t until);
/*
 * run__flush in steps: a batch at each turn of the loop (other clients are
 * served in between), then the rest up to until, then fn(f, err).  When
 * the run ends first, its final drain took everything: fn(f, 0) then.
 */
void run__flush_steps(struct run *r, struct run_flush *f, uint64_t until,
		      void (*fn)(struct run_flush *f, int err));
/* Final drain, or only a drain when the collection stays pinned; r->s freed. */
int run__end(struct run *r, bool keep_pinned);
/* After a failure: r->s freed, nothing drained. */
void run__abort(struct run *r);
void runs__drain_all(void);
/* the loop's tick: drains every run, pings the watchdog; re-armed by runs__update_tick */
extern struct watch runs__tick;
void runs__update_tick(void);
/* the tick back at SESSION_DRAIN_MS: a live reader attached (it stays there while one is) */
void runs__hurry(void);

/* --- sessions.c ---------------------------------------------------------- */

struct dsess {
	struct dsess *next;
	struct sessdef def;
	struct sessdef *saved;        /* def as last stored (sessions.c: save_def), or NULL */
	struct run run;               /* run.s NULL when not collecting */
	struct sink *sink;            /* kept after stop for ring snapshots */
	struct defer dead;
	struct rangehist *ranges;     /* --http: range histograms (metrics.c), or NULL */
	int dir_fd;                   /* file sink output directory */
	char pin[PATH_MAX];
	struct takeover *tk;          /* its ring being taken over (state "starting") */
	/* its fast lane's areas taken back after a restart, a slice a turn (takeover.c) */
	bool adopting;
	struct defer adopt;
	int busy;                     /* snapshots under way: not deleted nor restarted */
	bool delete_pending;          /* its taker went while busy: deleted once free */
	struct client *taker;         /* `session take`: deleted when it goes */
	/* --counters (counts.c): open while it runs; the last values kept after */
	struct counting *counts;
	struct counting_value count_val[SESSDEF_MAX_COUNT];
	bool count_sup[SESSDEF_MAX_COUNT];
	uint64_t count_t0, count_t1;  /* CLOCK_MONOTONIC: counting from, read at */
	bool count_attrs;             /* the sink has the counters' attrs (snapshots hold them) */
};

struct dsess *sessions__find(const char *name);
/*
 * May cmd go on now?  Not while the session's ring is taken over, nor
 * start or delete while snapshots are written: such a request waits
 * (clients.c parks it) until sessions__unbusy() says the session is free.
 */
bool sessions__busy_for(const struct dsess *d, int cmd);
void sessions__unbusy(struct dsess *d);
/* tests only: a job of session name waits while $PERFMARK_TEST_HOLD.NAME exists */
void sessions__test_hold(const char *name);
/*
 * An adopted session (its collection pinned by the daemon before) takes
 * its fast lane's areas back a slice a turn of the loop (takeover.c):
 * "starting" meanwhile, its requests but `show` wait.  Once no session is
 * at it any more, the fd store's areas nobody took are dropped.
 */
void sessions__adopt(struct dsess *d);
void sessions__adopt_done_all(void);
/*
 * A named session around a collection that runs already (keep.c):
 * prepare makes d (not listed) with its sink for the events s writes
 * (*dir_fd taken for a file sink); commit gives it from's recording, once
 * s was handed over to d->sink, and lists and stores it; discard: it never was.
 */
struct dsess *sessions__prepare(const struct sessdef *def, int *dir_fd, const struct session *s,
				char *err, size_t errlen);
void sessions__commit(struct dsess *d, struct run *from);
void sessions__discard(struct dsess *d);
/* Restore the stored sessions, then end pins nobody owns any more. */
void sessions__restore(void);
/* Daemon exit, before the connections close: taken sessions are not deleted. */
void sessions__keep_taken(void);
/* Daemon exit: running sessions stay pinned and keep collecting. */
void sessions__free_all(void);

/* --- http.c, metrics.c ------------------------------------------------- */

#define HTTP_MAX_CONNS 128            /* connections (a thread each) */
#define HTTP_MAX_METRICS 4            /* /metrics requests in flight */
#define HTTP_MAX_PPROF 1              /* pprof requests in flight (lib/analyze is not reentrant) */
#define HTTP_MAX_SECONDS 300
#define HTTP_MAX_SECONDS_S "300"
#define HTTP_DEFAULT_SECONDS 30       /* what Parca and Alloy ask when not told */
#define HTTP_LOOP_WAIT_S 10           /* the loop's answer to a job, at most */
#define HTTP_IDLE_S 15                /* an idle connection is closed */
/*
 * A connection has this long to send a request's headers (from its start,
 * or from the end of its last request): one that sends a byte now and then
 * is never idle, and 128 of them held every slot (slowloris)
 */
#define HTTP_HEADERS_S 10
#define HTTP_STATUS_WAIT 1            /* pprof of a session without a ring: wait, ask again */

enum http_job_kind { HTTP_JOB_METRICS, HTTP_JOB_PPROF };

/* A request's work for the loop; the loop fills status and what follows. */
struct http_job {
	struct http_job *next;
	enum http_job_kind kind;
	char session[PROTO_NAME_MAX + 1];   /* "" when not named */
	unsigned seconds;
	bool done, abandoned;          /* under http.c's lock */
	unsigned status;               /* HTTP status, HTTP_STATUS_WAIT */
	char err[256];                 /* the reply's text when status is not 200 */
	char *body;                    /* 200: the reply (malloc'd) */
	size_t len;
	const char *ctype;
	bool gzip;                     /* body is gzip'd (Content-Encoding) */
	int fd;                        /* pprof: the snapshot (a memfd), or -1 */
	uint64_t since;                /* pprof: samples from (session__clock()) */
};

struct http_counters {
	atomic_ulong by_class[6];      /* responses by status / 100 */
	atomic_ulong refused_busy;
	atomic_ulong cut_slow;         /* connections cut while still sending headers */
	atomic_int metrics_inflight, pprof_inflight;
};
extern struct http_counters http_counters;
extern const char *http_sessions;     /* --http-sessions NAME,...; NULL: root's */

/* Listen on ADDR:PORT and serve from libmicrohttpd's threads; -errno (logged). */
int http__start(const char *spec);
/* Before the sessions go: the threads end, queued jobs are answered. */
void http__stop(void);
void http_job__free(struct http_job *j);
/* metrics.c, on the loop: the job's result */
void http__serve(struct http_job *j);
/* Does HTTP see this session? */
bool http__exposed(const struct dsess *d);

/* --- conn.c -------------------------------------------------------------- */

struct anon;
struct client;

/* What a connection owns is told when it goes: fn runs once, in client_close. */
struct client_hook {
	struct client_hook *next;
	void (*fn)(struct client_hook *h, struct client *c);
};

struct client {
	struct client *next;
	struct proto_conn *c;
	struct ucred cred;
	bool allowed, root, closing, dead;
	uint64_t last_active;         /* CLOCK_MONOTONIC s of the last request */
	struct watch w;
	struct defer gone;
	struct client_hook *hooks;    /* run when the connection goes, in order */
	/* attach and snapshot (streams.c) */
	struct client_hook streams_hook;
	struct dsess *att;
	struct reader *reader;
	struct watch wr;
	bool reader_polled;
	bool reader_final;            /* take: a last flush before the reader goes */
	/* snapshot to a pipe: stream a memfd out */
	int pump_src, pump_dst;
	bool pump_nowait;             /* pump_dst is a pipe or socket (fdout.h) */
	off_t pump_off, pump_len;
	struct watch wp;
	/* replies still to come: a snapshot being written, a ring taken over */
	int waiting;
	/* a request that waits for its busy session (clients.c) */
	struct json_object *parked;
	struct dsess *parked_on;
	int parked_fds[4];
	size_t parked_nfds;
	struct client_hook park_hook;
	/* take (sessions.c): the session deleted when this connection goes */
	struct dsess *take;
	struct client_hook take_hook;
	/* record (anon.c) */
	struct anon *rec;
	uint64_t rec_bytes;           /* ring memory the recording holds (limits.c) */
};

extern unsigned idle_timeout_s;       /* --idle-timeout; 0: never */

/* fn(h, c) when c goes (hooks run in the order added); h lives in the owner */
void client_hook_add(struct client *c, struct client_hook *h,
		     void (*fn)(struct client_hook *h, struct client *c));
/* h taken off before its owner goes */
void client_hook_del(struct client *c, struct client_hook *h);
/*
 * A reply that comes later (a job's): c is busy until client_reply_later_done,
 * and fn(h, c) tells the owner when c goes first.
 */
void client_reply_later(struct client *c, struct client_hook *h,
			void (*fn)(struct client_hook *h, struct client *c));
/* the owner replies o now (c still there), and c is free again */
void client_reply_later_done(struct client *c, struct client_hook *h, struct json_object *o);
/* the same without a reply: another owner (a pump) gives it */
void client_reply_later_drop(struct client *c, struct client_hook *h);
void client_close(struct client *c);
void client_poll(struct client *c);
void send_reply(struct client *c, struct json_object *o);
/* Reply o, then close once it is out. */
void client_end(struct client *c, struct json_object *o);
/* c sent a request */
void client_touch(struct client *c);
/* Arm or disarm the idle sweep after connections came or went. */
void clients__idle_arm(void);
/* Close every connection (daemon exit). */
void clients__close_all(void);

/* --- clients.c ----------------------------------------------------------- */

extern struct watch clients__listen_watch;
/* d is no longer busy: the requests that waited for it go on (the only call up) */
void clients__unpark(struct dsess *d);

/* The request handlers, one per command (clients.c dispatches to them). */
struct proto_request;
struct json_object *cmd_create(struct client *c, const struct proto_request *rq,
			       int *fds, size_t nfds);
struct json_object *cmd_list(struct client *c);
struct json_object *cmd_show(struct dsess *d);
struct json_object *cmd_stop(struct dsess *d);
struct json_object *cmd_start(struct client *c, struct dsess *d);
struct json_object *cmd_delete(struct dsess *d);
struct json_object *cmd_snapshot(struct client *c, struct dsess *d, int *fds, size_t nfds);
struct json_object *cmd_attach(struct client *c, struct dsess *d, int *fds, size_t nfds);
struct json_object *cmd_record(struct client *c, const struct proto_request *rq,
			       struct json_object *msg);
struct json_object *cmd_record_start(struct client *c, struct json_object *msg,
				     int *fds, size_t nfds);
struct json_object *cmd_record_stats(struct client *c);
struct json_object *cmd_record_stop(struct client *c);
struct json_object *cmd_keep(struct client *c, const struct proto_request *rq,
			     struct json_object *msg, int *fds, size_t nfds);
struct json_object *cmd_take(struct client *c, struct dsess *d, int *fds, size_t nfds);

/*
 * keep.c's view of a recording: its run when it may be kept (started, its
 * output fine, not stopping), else NULL with why in err; then, once handed
 * over, anon__kept tells its client (the file ended with final; old_err
 * its error) and leaves the recording to its connection only to pump a
 * pipe's rest.
 */
struct run *anon__keepable(struct client *rc, char *err, size_t errlen);
void anon__kept(struct client *rc, const char *name, const struct session_stats *final,
		int old_err);

/* --- counts.c: a session's counters (--counters) ---------------------------- */

/* a definition's counters allowed to c (else why, in buf) */
const char *counts__check(const struct client *c, const struct sessdef *def, char *buf, size_t len);
/* open and enable d's counters on its targets (none: 0); -errno with err */
int counts__start(struct dsess *d, char *err, size_t errlen);
/* read them a last time and close them (the values stay for show) */
void counts__stop(struct dsess *d);
/* {"seconds":S,"counters":[{event,value,rate,...}]} for show, or NULL without counters */
struct json_object *counts__json(const struct dsess *d);
/*
 * The counters in perf.data, as `perf stat record` writes them (stock perf
 * script prints them): their attrs (ids after the session's), to add to
 * the sink's events; and the records a snapshot ends with: THREAD_MAP,
 * CPU_MAP, STAT_CONFIG, a STAT per counter and the final STAT_ROUND
 * (0 without counters).
 */
#define COUNTS_RECORDS_MAX (40 + 16 + 64 + SESSDEF_MAX_COUNT * 48 + 24)
size_t counts__events(const struct dsess *d, struct perfdata_event *evs, uint64_t *ids, size_t max);
size_t counts__records(const struct dsess *d, char *buf, size_t cap);

/* --- streams.c ----------------------------------------------------------- */

/* A new connection: no reader or pump yet; they end when it goes. */
void streams__init(struct client *c);
/*
 * attach, for `session take`: when the connection goes, its reader gets
 * everything up to that moment first (a regular file: all of it).
 */
struct json_object *streams__take(struct client *c, struct dsess *d, int *fds, size_t nfds);
/* live readers (session attach) attached now, in every session */
unsigned streams__nr_live(void);
/* Write out what the session's readers have pending (after a drain). */
void streams__flush_readers(struct dsess *d);
/* The session ended: its readers' connections end with it. */
void streams__detach_session(struct dsess *d);

/* --- auth.c -------------------------------------------------------------- */

/* is pid (its primary group pgid) in group want? (/proc/PID/status) */
bool in_group(pid_t pid, gid_t pgid, gid_t want);
bool may_see(const struct client *c, const struct dsess *d);
/* NULL when the client may record pid, else a reason in buf */
const char *pid_check(const struct client *c, int pid, char *buf, size_t len);

/* --- limits.c ----------------------------------------------------------- */

struct recspec;
/* NULL when c may connect (c->cred, c->root set), else the reason in buf */
const char *limits__connection(const struct client *c, char *buf, size_t len);
/* NULL when c may create a named session of def, else the reason */
const char *limits__session(const struct client *c, const struct sessdef *def, char *buf,
			    size_t len);
/* NULL when c may record (anonymously) with spec, else the reason */
const char *limits__record(const struct client *c, const struct recspec *spec, char *buf,
			   size_t len);
/* the fd store's caps for the fast lane's rings (struct fastlane_store's admit, release) */
bool limits__keep_ring(uint32_t uid);
void limits__unkeep_ring(uint32_t uid);

/* --- views.c ------------------------------------------------------------- */

struct json_object *reply_ok(void);
struct json_object *reply_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "starting" (its ring being taken over), "running", "stopped" or "error" */
const char *dsess_state(const struct dsess *d);
struct json_object *session_info(const struct dsess *d);
/* takeover.c: {"state":"in progress"|"done","ring":...,"fastlane":...,"kept_areas":N,...} */
struct json_object *takeover_json(const struct dsess *d);
void stats_json(struct json_object *o, const struct session_stats *st);

/* --- instance.c ---------------------------------------------------------- */

/* Lock the state and pin directories: -EBUSY (logged) when another daemon has them. */
int instance__lock(void);
/* Open (create) D.ring_dir, default "rings" beside the socket, into D.ring_dfd. */
int instance__ring_dir(void);

/* --- state.c ------------------------------------------------------------- */

struct daemon {
	const char *socket_path, *state_dir, *pin_root, *ring_dir;
	int ring_dfd;                 /* the ring directory (instance.c) */
	int lfd;                      /* the control socket */
	struct store *store;
	struct dsess *sessions;
	struct client *clients;
	size_t nr_sessions, nr_clients;
	bool http;                    /* --http: sessions keep range histograms */
};

extern struct daemon D;


void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Markers: every copy of libperfmark a target maps (shared library, static
 * link, vendored copy, several versions in one process) is found by its
 * USDT notes, gets system-wide uprobes on its sites, and the fast-lane areas
 * of its processes are read by this collector's fastlane.
 *
 * Which files: at start, the libperfmark.so candidates ($PERFMARK_LIB, the
 * one next to this executable, the installed one), files named by the
 * recorder's own user (collector__watch_file: the CMD of `record -- CMD`),
 * and every executable mapping of the target processes (of all processes
 * for a system-wide session); afterwards each new executable mapping the
 * sideband reports (MMAP2).  A file is opened through /proc/PID/map_files
 * (O_PATH, so even a device is never really opened), never by a path a
 * traced process names, and the uprobe goes on /proc/self/fd/N of that open
 * file: on the very inode that was checked.
 *
 * Where the kernel has uprobe_multi links (Linux 6.6), all the sites of a
 * file go on one link to on_probe, the cookie saying which site each is
 * (collector_uprobe.c says why); else each site has a perf-event link to its
 * own program.
 *
 * Per copy of libperfmark in a file:
 *   perfmark:register  on_register, its semaphore raised: the fast lane's door
 *   perfmark:trap      on_trap: the trap lane
 *   perfmark:uevent    not ours (USDT tools), except in a libperfmark older
 *                      than the fast lane (no trap site), and there only
 *                      when the site is a one-byte nop: a uprobe on a
 *                      five-byte nop is optimised by Linux 6.18 into a call
 *                      to a trampoline page that children made by raw
 *                      clone() lack (their first marker would crash them).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perfmark.h"
#include "perfmark.skel.h"
#include "collector_int.h"
#include "fastlane.h"
#include "fastlane_int.h"
#include "jitmap.h"
#include "usdt.h"

#ifndef PERFMARK_LIBDIR
#define PERFMARK_LIBDIR "/usr/local/lib/x86_64-linux-gnu"
#endif

#define MAX_FILES      65536       /* files looked at, with probes or not */
#define MAX_PENDING    4096        /* new mappings waiting for a look */
#define MAX_PROBES     64          /* perfmark probes in one file */

struct probe_file {
	dev_t dev;
	ino_t ino;
};

struct pending_map {
	uint32_t pid;
	uint64_t start, end;
	dev_t dev;
	ino_t ino;
};

struct probe_link {
	struct bpf_link *l;            /* a perf-event link; NULL: fd alone */
	int fd;                        /* its perf event, a bare uprobe's, or a uprobe_multi link */
	bool multi;                    /* fd is a uprobe_multi link */
};

struct collector_markers {
	struct fastlane *fl;
	struct jitmap *jm;             /* /tmp/perf-PID.map lines */
	struct probe_file *files;
	size_t nr_files, cap_files;
	struct pending_map pend[MAX_PENDING];
	size_t nr_pend;
	struct probe_link *links;      /* uprobes */
	size_t nr_links, cap_links;
	struct marker_lib libs[MAX_MARKER_LIBS];   /* files with probes, for messages */
	size_t nr_libs;
	bool scanned_all;
};

/* --- the files ------------------------------------------------------------- */

static bool seen(struct collector_markers *mk, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < mk->nr_files; i++)
		if (mk->files[i].dev == dev && mk->files[i].ino == ino)
			return true;
	return false;
}

static bool remember(struct collector_markers *mk, dev_t dev, ino_t ino)
{
	if (mk->nr_files == mk->cap_files) {
		size_t cap = mk->cap_files ? mk->cap_files * 2 : 64;
		struct probe_file *nf;

		if (cap > MAX_FILES)
			return false;
		nf = realloc(mk->files, cap * sizeof(*nf));
		if (!nf)
			return false;
		mk->files = nf;
		mk->cap_files = cap;
	}
	mk->files[mk->nr_files].dev = dev;
	mk->files[mk->nr_files++].ino = ino;
	return true;
}

static int keep_link(struct collector *c, struct bpf_link *l, int fd, bool multi)
{
	struct collector_markers *mk = c->mk;

	if (mk->nr_links == mk->cap_links) {
		size_t cap = mk->cap_links ? mk->cap_links * 2 : 16;
		struct probe_link *nl = realloc(mk->links, cap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		mk->links = nl;
		mk->cap_links = cap;
	}
	mk->links[mk->nr_links++] = (struct probe_link){ .l = l, .fd = fd, .multi = multi };
	/* a collection already pinned keeps this probe through a restart too */
	for (size_t i = 0; i < c->nr_pin_dirs; i++)
		collector_markers_pin_one(c, c->pin_dirs[i], mk->nr_links - 1);
	return 0;
}

/* a uprobe on probe p of the file at path; prog NULL: the uprobe alone (its semaphore) */
static int attach_probe(struct collector *c, const char *path, const struct usdt_probe *p,
			struct bpf_program *prog, bool sema, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, o, .bpf_cookie = cookie);
	struct bpf_link *l = NULL;
	int fd, e;

	fd = collector_uprobe_open(path, p->pc_offset, sema ? p->sema_offset : 0);
	if (fd < 0)
		return fd;
	if (prog) {
		l = bpf_program__attach_perf_event_opts(prog, fd, &o);
		if (!l) {
			e = -errno;
			close(fd);
			return e ? e : -EINVAL;
		}
	}
	e = keep_link(c, l, fd, false);
	if (e) {
		if (l)
			bpf_link__destroy(l);
		else
			close(fd);
	}
	return e;
}

/* the sites of one file, for one uprobe_multi link */
struct site_list {
	uint64_t off[MAX_PROBES], ref[MAX_PROBES], ck[MAX_PROBES];
	uint32_t n;
};

/* site p, of kind k (enum pm_probe_kind): on the file's list, or on a link of its own */
static int add_site(struct collector *c, struct site_list *sl, const char *path,
		    const struct usdt_probe *p, enum pm_probe_kind k, bool sema, uint16_t site)
{
	struct bpf_program *progs[] = {
		[PM_PROBE_REGISTER] = c->skel->progs.on_register,
		[PM_PROBE_TRAP] = c->skel->progs.on_trap,
		[PM_PROBE_MARKER] = c->skel->progs.on_marker,
		[PM_PROBE_NONE] = NULL,
	};

	if (!c->umulti)
		return attach_probe(c, path, p, progs[k], sema, site);
	if (sl->n == MAX_PROBES)
		return -E2BIG;
	sl->off[sl->n] = p->pc_offset;
	sl->ref[sl->n] = sema ? p->sema_offset : 0;
	sl->ck[sl->n++] = (uint64_t)k << PM_PROBE_KIND_SHIFT | site;
	return 0;
}

/* the file's sites on one link, if any */
static int link_sites(struct collector *c, const char *path, const struct site_list *sl)
{
	int fd, e;

	if (!sl->n)
		return 0;
	fd = collector_umulti_link(bpf_program__fd(c->skel->progs.on_probe), path, sl->off, sl->ref,
				   sl->ck, sl->n);
	if (fd < 0)
		return fd;
	e = keep_link(c, NULL, fd, true);
	if (e)
		close(fd);
	return e;
}

struct probe_list {
	struct usdt_probe p[MAX_PROBES];
	size_t n, traps;
};

static int collect_probe(void *ctx, const struct usdt_probe *p)
{
	struct probe_list *pl = ctx;

	if (pl->n == MAX_PROBES)
		return 1;
	pl->p[pl->n++] = *p;
	if (!strcmp(p->name, "trap"))
		pl->traps++;
	return 0;
}

/*
 * One copy's register sled (register0..2 then trapall, as perfmark.c lays
 * them out from p[0]): a site of our own for the register program, or
 * trapall raised when none is free.  The file's lock is taken (*locked)
 * and held until its probes are on (the caller unlocks).  Returns probes
 * attached, or -errno.
 */
static int attach_sled(struct collector *c, int rfd, const char *path, const struct usdt_probe *p,
		       const char *name, struct site_list *sl, bool *locked)
{
	uint64_t sema[FASTLANE_SITES];
	int site, e;

	for (int k = 0; k < FASTLANE_SITES; k++)
		sema[k] = p[k].sema_offset;
	e = collector_site_lock(rfd);
	*locked = *locked || !e;
	site = e ? e : collector_site_free(rfd, sema, FASTLANE_SITES);
	if (site >= 0) {
		e = add_site(c, sl, path, &p[site], PM_PROBE_REGISTER, true, (uint16_t)site);
	} else {
		collector_notice(c, "%s: %s: its markers take the trap lane for every recorder", name,
				 site == -1 ? "every register site is taken by other recorders"
					    : "cannot take a register site");
		e = add_site(c, sl, path, &p[FASTLANE_SITES], PM_PROBE_NONE, true, 0);
	}
	return e ? e : 1;
}

static bool is_sled(const struct probe_list *pl, size_t i)
{
	static const char *const names[] = { "register0", "register1", "register2", "trapall" };

	if (i + FASTLANE_SITES >= pl->n)
		return false;
	for (size_t k = 0; k <= FASTLANE_SITES; k++)
		if (strcmp(pl->p[i + k].name, names[k]))
			return false;
	return true;
}

/* a pre-fast-lane libperfmark: its uevent site, if it is safe to probe */
static bool legacy_site_ok(int fd, const struct usdt_probe *p)
{
	unsigned char op;

	return pread(fd, &op, 1, (off_t)p->pc_offset) == 1 && op == 0x90;
}

/*
 * The file open at fd (O_PATH is enough): if it has perfmark probes not
 * attached yet, attach them.  Returns how many probes were attached, or a
 * negative errno.  name: for messages.
 */
static int attach_file(struct collector *c, int fd, const char *name)
{
	struct collector_markers *mk = c->mk;
	struct probe_list pl = { .n = 0 };
	struct site_list sl = { .n = 0 };
	bool locked = false;
	char path[64];
	struct stat sb;
	int rfd, n = 0, e = 0;

	if (!c->skel || fstat(fd, &sb) || !S_ISREG(sb.st_mode))
		return 0;
	if (seen(mk, sb.st_dev, sb.st_ino) || !remember(mk, sb.st_dev, sb.st_ino))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rfd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (rfd < 0)
		return -errno;
	if (usdt_foreach_fd(rfd, "perfmark", collect_probe, &pl) <= 0)
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rfd);
	for (size_t i = 0; i < pl.n && !e; i++) {
		const struct usdt_probe *p = &pl.p[i];

		if (is_sled(&pl, i)) {
			e = attach_sled(c, rfd, path, p, name, &sl, &locked);
			i += FASTLANE_SITES;
			if (e > 0) {
				n += e;
				e = 0;
			}
			continue;
		} else if (!strcmp(p->name, "trap")) {
			e = add_site(c, &sl, path, p, PM_PROBE_TRAP, false, 0);
		} else if (!strcmp(p->name, "uevent") && !pl.traps) {
			if (!legacy_site_ok(rfd, p)) {
				collector_notice(c, "%s: a libperfmark whose probe site the kernel would turn "
						 "into a call that crashes raw-clone children: not recorded "
						 "(relink with libperfmark 0.2 or later)", name);
				continue;
			}
			e = add_site(c, &sl, path, p, PM_PROBE_MARKER, true, 0);
		} else {
			continue;
		}
		if (!e)
			n++;
	}
	if (!e && (e = link_sites(c, path, &sl)))
		n = 0;
	if (locked)
		collector_site_unlock(rfd);
	if (n && mk->nr_libs < MAX_MARKER_LIBS) {
		snprintf(mk->libs[mk->nr_libs].path, sizeof(mk->libs[0].path), "%s", name);
		mk->libs[mk->nr_libs].dev = sb.st_dev;
		mk->libs[mk->nr_libs++].ino = sb.st_ino;
	}
out:
	close(rfd);
	return e ? e : n;
}

/* a file the recorder's own user named (not a traced process) */
static int attach_path(struct collector *c, const char *path)
{
	int fd = open(path, O_PATH | O_CLOEXEC), n;

	if (fd < 0)
		return -errno;
	n = attach_file(c, fd, path);
	close(fd);
	return n;
}

/* [start, end) of pid, expected to be dev/ino (0/0: unknown) */
static void attach_mapping(struct collector *c, uint32_t pid, uint64_t start, uint64_t end,
			   dev_t dev, ino_t ino)
{
	char path[96];
	struct stat sb;
	int fd;

	if ((dev || ino) && seen(c->mk, dev, ino))
		return;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!fstat(fd, &sb) && (!(dev || ino) || (sb.st_dev == dev && sb.st_ino == ino)))
		attach_file(c, fd, path);
	close(fd);
}

/* --- targets ------------------------------------------------------------------ */

/* every executable file mapping of pid */
void collector_markers_scan_pid(struct collector *c, uint32_t pid)
{
	char path[64], line[512];
	FILE *f;

	if (!c->mk || !c->skel)
		return;
	collector_want_forget(c, pid);   /* a target now */
	if (c->mk->fl)
		fastlane__want(c->mk->fl, pid);   /* a process it had joined without reading */
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &off, &maj,
			   &min, &ino) != 7 || perms[2] != 'x' || !ino)
			continue;
		attach_mapping(c, pid, start, end, makedev(maj, min), (ino_t)ino);
	}
	fclose(f);
}

void collector_markers_scan_all(struct collector *c)
{
	struct dirent *de;
	DIR *d;

	if (!c->mk)
		return;
	if (c->mk->fl)
		fastlane__want(c->mk->fl, 0);
	if (c->mk->scanned_all)
		return;
	c->mk->scanned_all = true;
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid)
			continue;
		collector_markers_scan_pid(c, (uint32_t)pid);
	}
	closedir(d);
}

int collector__watch_file(struct collector *c, const char *path)
{
	if (!c->mk)
		return 0;
	return attach_path(c, path);
}

/*
 * A file another user opened and passed: looked at only if that open can
 * read it (not O_PATH, not write-only), so perfmarkd reads nothing through
 * it that its owner could not.  attach_file reopens it for reading by
 * /proc/self/fd, on the very inode, and only if it is a regular file.
 */
int collector__watch_fd(struct collector *c, int fd, const char *name)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	if ((fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (!c->mk)
		return 0;
	return attach_file(c, fd, name);
}

/* --- records ---------------------------------------------------------------- */

bool collector_markers_ring(struct collector *c, const void *data, size_t size)
{
	const struct pm_fastreg *r = data;
	struct pm_fastreg w;

	if (size < sizeof(uint32_t) || r->rec_type != PM_REC_FASTREG)
		return false;
	if (!c->mk || !c->mk->fl || size < sizeof(w))
		return true;
	/*
	 * Wanted now?  The BPF filter said at the offer; a -p target added
	 * since (the uprobes go on before the pids) is wanted all the same.
	 */
	memcpy(&w, r, sizeof(w));
	w.wanted = w.wanted || collector_wants_pid(c, w.pid);
	fastlane__register(c->mk->fl, &w, sizeof(w));
	return true;
}

/*
 * The sideband: an exec lets go of the process's old areas; a new
 * executable file mapping is looked at in the next consume.
 */
void collector_markers_sideband(struct collector *c, const struct perf_event_header *h)
{
	struct collector_markers *mk = c->mk;
	const uint32_t *body = (const void *)(h + 1);

	if (!mk)
		return;
	collector_want_sideband(c, h);
	if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) && mk->fl &&
	    h->size >= sizeof(*h) + 8 + 24) {
		uint64_t time;

		memcpy(&time, (const char *)h + h->size - 24, sizeof(time));
		fastlane__exec(mk->fl, body[0], time);
	} else if (h->type == PERF_RECORD_MMAP2 && h->size >= sizeof(*h) + 64 && c->skel &&
		   mk->nr_pend < MAX_PENDING) {
		const char *b = (const char *)body;
		struct pending_map *pm = &mk->pend[mk->nr_pend];
		uint64_t addr, len, ino;
		uint32_t maj, min, prot;

		memcpy(&addr, b + 8, 8);
		memcpy(&len, b + 16, 8);
		memcpy(&maj, b + 32, 4);
		memcpy(&min, b + 36, 4);
		memcpy(&ino, b + 40, 8);
		memcpy(&prot, b + 56, 4);
		if (!(prot & PROT_EXEC) || b[64] != '/')
			return;
		/* with a build-id (another perf user's event) the union holds no dev/ino */
		pm->dev = h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID ? 0 : makedev(maj, min);
		pm->ino = h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID ? 0 : (ino_t)ino;
		/* a file looked at already first: no syscall for it */
		if (((pm->dev || pm->ino) && seen(mk, pm->dev, pm->ino)) || !collector_wants_pid_cached(c, body[0]))
			return;
		pm->pid = body[0];
		pm->start = addr;
		pm->end = addr + len;
		mk->nr_pend++;
	}
}

bool collector_markers_consume(struct collector *c)
{
	struct collector_markers *mk = c->mk;
	bool more = false;

	if (!mk)
		return false;
	if (mk->fl)
		more = fastlane__consume(mk->fl);
	/* this consume's JIT lines (the BPF ring's were read before): one write per process */
	if (mk->jm)
		jitmap__flush(mk->jm);
	for (size_t i = 0; i < mk->nr_pend; i++)
		attach_mapping(c, mk->pend[i].pid, mk->pend[i].start, mk->pend[i].end,
			       mk->pend[i].dev, mk->pend[i].ino);
	mk->nr_pend = 0;
	return more;
}

void collector_markers_jit(struct collector *c, const struct pm_marker *pm, size_t size)
{
	if (c->mk && c->mk->jm)
		jitmap__add(c->mk->jm, pm, size);
}

void collector__marker_stats(const struct collector *c, struct collector_marker_stats *st)
{
	struct jitmap_stats js = { 0 };

	if (c->mk && c->mk->jm)
		jitmap__stats(c->mk->jm, &js);
	st->jit_lines = js.lines;
	st->jit_missed = js.missed;
	st->jit_refused = js.refused;
	st->fl_corrupt = 0;
	st->fast = 0;
	st->offers_lost = 0;
	if (c->skel && c->skel->bss) {
		st->offers_lost = __atomic_load_n(&c->skel->bss->lost_offers, __ATOMIC_RELAXED);
	} else {
		struct perfmark_bpf__bss bss;
		uint32_t zero = 0;

		if (!bpf_map_lookup_elem(c->bss_fd, &zero, &bss))
			st->offers_lost = bss.lost_offers;
	}
	if (c->mk && c->mk->fl) {
		struct fastlane_stats fs;

		fastlane__stats(c->mk->fl, &fs);
		st->fl_corrupt = fs.corrupt;
		st->fast = fs.markers;
	}
	memset(st->trap, 0, sizeof(st->trap));
	memcpy(st->trap, c->trap_why, sizeof(c->trap_why));
}

/* markers an earlier recorder took from the fast lane and died with */
uint64_t collector_markers_lost(const struct collector *c)
{
	struct fastlane_stats st;

	if (!c->mk || !c->mk->fl)
		return 0;
	fastlane__stats(c->mk->fl, &st);
	return st.lost;
}

int collector_markers_fd(const struct collector *c)
{
	return c->mk && c->mk->fl ? fastlane__fd(c->mk->fl) : -1;
}

/* --- life cycle -------------------------------------------------------------- */

/* a fast-lane record: a marker (fastlane_deliver makes them), never a sample to unwind */
static void on_fast_marker(void *ctx, const void *rec, size_t size)
{
	const struct pm_marker *pm = rec;

	if (size >= sizeof(*pm) && pm->type == PERFMARK_TYPE_JIT_CODE)
		collector_markers_jit(ctx, pm, size);
	collector_dispatch_subs(ctx, rec, size);
}

/*
 * The fast lane, with the consumer token kept in the BPF .bss: pinned with
 * it, so a daemon that adopts the pins is the same consumer of every area
 * (token 0: a new one, written there).
 */
/* jitmap.h: the owner the fast lane learnt when pid registered (it may have gone since) */
static bool jit_owner(void *ctx, uint32_t pid, uint32_t *uid, uint32_t *gid)
{
	struct collector_markers *mk = ctx;

	return mk->fl && fastlane__owner(mk->fl, pid, uid, gid);
}

static int markers_new(struct collector *c, uint64_t token)
{
	int e;

	c->mk = calloc(1, sizeof(*c->mk));
	if (!c->mk)
		return -ENOMEM;
	e = fastlane__new(&c->mk->fl, token, on_fast_marker, c);
	if (!e && c->skel && c->skel->bss)
		c->skel->bss->fl_token = fastlane__token(c->mk->fl);
	if (!e)
		e = jitmap__new(&c->mk->jm, jit_owner, c->mk);
	return e;
}

/* libperfmark.so files: $PERFMARK_LIB (colon separated), next to this executable, installed */
static void attach_candidates(struct collector *c)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *env, *tok, *save = NULL, *slash;
	ssize_t n;

	env = getenv("PERFMARK_LIB");
	if (env && *env) {
		char *dup = strdup(env);

		for (tok = dup ? strtok_r(dup, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save)) {
			int r = attach_path(c, tok);

			if (r < 0)
				collector_notice(c, "%s: %s, markers from it are not recorded", tok,
						 strerror(-r));
		}
		free(dup);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/libperfmark.so.0", exe);
			attach_path(c, path);
			snprintf(path, sizeof(path), "%s/../lib/x86_64-linux-gnu/libperfmark.so.0", exe);
			attach_path(c, path);
		}
	}
	attach_path(c, PERFMARK_LIBDIR "/libperfmark.so.0");
}

int collector_attach_markers(struct collector *c, char *err, size_t errlen)
{
	int e = markers_new(c, 0);

	if (e) {
		snprintf(err, errlen, "cannot start the marker fast lane: %s", strerror(-e));
		return e;
	}
	attach_candidates(c);
	return 0;
}

/*
 * A restarted daemon: its token from the pinned .bss; the areas it read
 * before it went are read on from where it stopped (taken back a slice at
 * a time by collector__adopt_step) (what the processes
 * wrote meanwhile waited in their rings, or took the trap lane once full),
 * those of processes that exited meanwhile too, where the keeper (the fd
 * store) held them.
 */
void collector_markers_adopt(struct collector *c)
{
	struct perfmark_bpf__bss bss;
	uint32_t zero = 0;

	if (!c->spec.markers || c->mk)
		return;
	if (bpf_map_lookup_elem(c->bss_fd, &zero, &bss))
		bss.fl_token = 0;
	/* taken back in slices: collector__adopt_step */
	if (!markers_new(c, bss.fl_token) && bss.fl_token)
		fastlane__adopt_begin(c->mk->fl);
}

bool collector__adopt_step(struct collector *c, unsigned budget)
{
	return c->mk && c->mk->fl && fastlane__adopt_step(c->mk->fl, budget);
}

bool collector__adopting(const struct collector *c, struct collector_adopt_stats *st)
{
	struct fastlane_adopt_stats fs = { 0 };
	bool on = c->mk && c->mk->fl && fastlane__adopting(c->mk->fl, &fs);

	if (st)
		*st = (struct collector_adopt_stats){ .kept = fs.kept, .rejoined = fs.rejoined,
						      .procs = fs.procs, .steps = fs.steps,
						      .redo = fs.redo };
	return on;
}

void collector_markers_free(struct collector *c)
{
	struct collector_markers *mk = c->mk;
	size_t nr_detach = 0;

	if (!mk)
		return;
	jitmap__free(mk->jm);           /* its last lines may need the fast lane's owners */
	fastlane__free(mk->fl);
	struct bpf_link **detach = calloc(mk->nr_links + 1, sizeof(*detach));
	int *fds = calloc(mk->nr_links + 1, sizeof(*fds));
	size_t nr_fds = 0;

	for (size_t i = 0; i < mk->nr_links; i++) {
		struct probe_link *pl = &mk->links[i];

		if (pl->l && c->pinned) {
			/* leave it attached, the pins hold it: close, don't detach */
			int fd = bpf_link__fd(pl->l);

			bpf_link__disconnect(pl->l);
			bpf_link__destroy(pl->l);
			if (fd >= 0)
				close(fd);
			close(pl->fd);
		} else if (pl->l) {
			if (detach)
				detach[nr_detach++] = pl->l;   /* closes the perf event fd too */
			else
				bpf_link__destroy(pl->l);
		} else if (pl->multi && !c->pinned && fds) {
			fds[nr_fds++] = pl->fd;
		} else {
			close(pl->fd);   /* trapall's bare uprobe, or a link the pins hold */
		}
	}
	collector_detach_links(detach, nr_detach, fds, nr_fds);
	free(detach);
	free(fds);
	free(mk->links);
	free(mk->files);
	free(mk);
	c->mk = NULL;
}

/* pin marker probe idx under dir (as marker<idx>) */
int collector_markers_pin_one(struct collector *c, const char *dir, size_t idx)
{
	char name[32];

	const struct probe_link *pl = &c->mk->links[idx];

	if (!pl->l && !pl->multi)
		return 0;               /* a bare uprobe cannot be pinned: trapall ends with us */
	snprintf(name, sizeof(name), "marker%zu", idx);
	return collector_pin_fd(pl->multi ? pl->fd : bpf_link__fd(pl->l), dir, name);
}

int collector_markers_pin(struct collector *c, const char *dir)
{
	int e = 0;

	for (size_t i = 0; c->mk && i < c->mk->nr_links && !e; i++)
		e = collector_markers_pin_one(c, dir, i);
	return e;
}

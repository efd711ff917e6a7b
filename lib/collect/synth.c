/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Synthesized sideband: the records perf would have seen had it been
 * recording when the kernel booted and every running process started.
 *
 *   kernel:  PERF_RECORD_MMAP pid -1 "[kernel.kallsyms]_text" + one per module
 *   process: COMM (leader), MMAP2 per executable mapping, then per other
 *            thread FORK (from the leader) + COMM
 *
 * Every record ends with the sample_id trailer.  Records are built in one
 * scratch buffer and handed to the callback, which must copy what it keeps.
 */
#include "synth.h"

#include <ctype.h>
#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "perfdata.h"
#include "perfmark_wire.h"
#include "grow.h"

#define SYNTH_ALIGN8(x) (((x) + 7) & ~(size_t)7)
#define SYNTH_BUILD_ID_MAX 20
#define SYNTH_KERNEL_MMAP_NAME "[kernel.kallsyms]_text"
#define SYNTH_KERNEL_START_MIN 0xffff800000000000ULL

/* perf's record bodies (the uapi only documents them in comments) */
struct synth_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

struct synth_fork {
	struct perf_event_header header;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct synth_mmap {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	char filename[];
};

struct synth_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

_Static_assert(sizeof(struct synth_mmap2) == 72, "mmap2 layout");
_Static_assert(sizeof(struct synth_fork) == 32, "fork layout");

/* Large enough for any record built here: MMAP2 + PATH_MAX name + trailer. */
#define SYNTH_BUF_SIZE (sizeof(struct synth_mmap2) + PATH_MAX + 8 + PERFDATA_SAMPLE_ID_SIZE)

/* Build-ids already read, keyed by device and inode (synth_all reads libc once). */
struct synth_bid {
	uint32_t maj, min;
	uint64_t ino;
	int len;  /* < 0: unreadable */
	uint8_t id[SYNTH_BUILD_ID_MAX];
};

struct synth_state {
	const struct synth_opts *o;
	synth_cb cb;
	void *ctx;
	uint8_t buf[SYNTH_BUF_SIZE] __attribute__((aligned(8)));
	struct synth_bid *bids;
	size_t nr_bids, cap_bids;
};

static int synth_emit(struct synth_state *st, size_t body, uint32_t type, uint16_t misc,
		      uint32_t pid, uint32_t tid)
{
	struct perf_event_header *h = (struct perf_event_header *)st->buf;
	struct perfdata_sample_id sid = {
		.pid = pid,
		.tid = tid,
		.time = st->o->time,
		.cpu = 0,
		.id = st->o->id,
	};

	perfdata_encode_sample_id(st->buf + body, &sid);
	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)(body + PERFDATA_SAMPLE_ID_SIZE);
	return st->cb(st->ctx, st->buf, body + PERFDATA_SAMPLE_ID_SIZE);
}

/* Copy a NUL-terminated name at dst, zero-padded to 8 bytes; returns padded length. */
static size_t synth_put_name(char *dst, const char *name, size_t max)
{
	size_t len = strlen(name);
	size_t padded;

	if (len > max - 1)
		len = max - 1;
	padded = SYNTH_ALIGN8(len + 1);

	memcpy(dst, name, len);
	memset(dst + len, 0, padded - len);
	return padded;
}

/* ---- build-id ---------------------------------------------------------- */

/* The GNU build-id note, found by libdw (section headers, else PT_NOTE). */
static int synth_elf_build_id(Elf *elf, uint8_t *buf, size_t size)
{
	const void *bid;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &bid);

	if (len <= 0)
		return 0;
	if (len > SYNTH_BUILD_ID_MAX || (size_t)len > size)
		return -E2BIG;
	memcpy(buf, bid, (size_t)len);
	return (int)len;
}

static int synth_fd_build_id(int fd, uint8_t *buf, size_t size)
{
	Elf *elf;
	int r;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF)
		r = -ENOEXEC;
	else
		r = synth_elf_build_id(elf, buf, size);
	elf_end(elf);
	return r;
}

int synth_read_build_id(const char *path, uint8_t *buf, size_t size)
{
	int fd, r;

	if (!path || !buf)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = synth_fd_build_id(fd, buf, size);
	close(fd);
	return r;
}

int synth_open_mapped(pid_t pid, uint64_t start, uint64_t end, uint32_t maj, uint32_t min,
		      uint64_t ino, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct stat sb;
	char mf[96];
	int fd;

	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (!path || path[0] != '/')
		return -ENOENT;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || major(sb.st_dev) != maj ||
	    minor(sb.st_dev) != min || sb.st_ino != ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * The build-id of a mapping: the very file mapped (synth_open_mapped), not
 * whatever its path names now.
 */
static int synth_mapping_build_id(struct synth_state *st, pid_t pid, uint64_t start,
				  uint64_t end, uint32_t maj, uint32_t min, uint64_t ino,
				  const char *path, uint8_t *buf)
{
	struct synth_bid *b;
	int fd, r;

	for (size_t i = 0; i < st->nr_bids; i++) {
		b = &st->bids[i];
		if (b->maj == maj && b->min == min && b->ino == ino) {
			if (b->len > 0)
				memcpy(buf, b->id, (size_t)b->len);
			return b->len;
		}
	}

	fd = synth_open_mapped(pid, start, end, maj, min, ino, path);
	if (fd < 0)
		r = fd;
	else {
		r = synth_fd_build_id(fd, buf, SYNTH_BUILD_ID_MAX);
		close(fd);
	}

	if (ino != 0) {
		if (grow_to(&st->bids, &st->cap_bids, st->nr_bids + 1, sizeof(*st->bids), 32))
			return r;
		b = &st->bids[st->nr_bids++];
		b->maj = maj;
		b->min = min;
		b->ino = ino;
		b->len = r;
		if (r > 0)
			memcpy(b->id, buf, (size_t)r);
	}
	return r;
}

/* ---- kernel ------------------------------------------------------------- */

int synth_kernel_symbol(const char *want, uint64_t *out)
{
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) == 3 &&
		    (type == 't' || type == 'T') && !strchr(line, '[') && !strcmp(name, want)) {
			fclose(f);
			*out = addr;
			return addr ? 0 : -EACCES;
		}
	}
	fclose(f);
	return -ENOENT;
}

/* Address of _text, else of the lowest text symbol. */
static int synth_kernel_start(uint64_t *out)
{
	uint64_t lowest = UINT64_MAX, stext = 0;
	char line[512];
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (strchr(line, '['))   /* module symbol */
			continue;
		if (strcmp(name, "_text") == 0 && addr) {
			fclose(f);
			*out = addr;
			return 0;
		}
		if (strcmp(name, "_stext") == 0 && addr)
			stext = addr;
		if ((type == 't' || type == 'T') && addr && addr < lowest)
			lowest = addr;
	}
	fclose(f);
	if (stext) {
		*out = stext;
		return 0;
	}
	if (lowest == UINT64_MAX)
		return -EACCES;   /* kptr_restrict: every address reads 0 */
	*out = lowest;
	return 0;
}

static int synth_kernel_mmap(struct synth_state *st, const char *name, uint64_t start,
			     uint64_t len, uint64_t pgoff)
{
	struct synth_mmap *m = (struct synth_mmap *)st->buf;
	size_t body;

	memset(m, 0, sizeof(*m));
	m->pid = UINT32_MAX;  /* -1: the kernel */
	m->tid = 0;
	m->addr = start;
	m->len = len;
	m->pgoff = pgoff;
	body = sizeof(*m) + synth_put_name(m->filename, name, PATH_MAX);
	return synth_emit(st, body, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 0, 0);
}

static int synth_modules(struct synth_state *st)
{
	char line[1024];
	FILE *f;
	int r = 0;

	f = fopen("/proc/modules", "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;  /* no module support */
	while (fgets(line, sizeof(line), f)) {
		char name[128], bracketed[132];
		uint64_t size, addr;

		/* name size refcnt deps state address [taint] */
		if (sscanf(line, "%127s %" SCNu64 " %*s %*s %*s %" SCNx64, name, &size, &addr) != 3)
			continue;
		if (addr == 0 || size == 0)
			continue;
		snprintf(bracketed, sizeof(bracketed), "[%s]", name);
		r = synth_kernel_mmap(st, bracketed, addr, size, 0);
		if (r < 0)
			break;
	}
	fclose(f);
	return r;
}

static struct synth_state *synth_state_new(const struct synth_opts *o, synth_cb cb, void *ctx)
{
	struct synth_state *st;

	if (!o || !cb)
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->o = o;
	st->cb = cb;
	st->ctx = ctx;
	return st;
}

static void synth_state_free(struct synth_state *st)
{
	if (!st)
		return;
	free(st->bids);
	free(st);
}

int synth_kernel(const struct synth_opts *o, synth_cb cb, void *ctx)
{
	struct synth_state *st;
	uint64_t start;
	int r;

	if (!o || !cb)
		return -EINVAL;
	r = synth_kernel_start(&start);
	if (r < 0)
		return r;
	st = synth_state_new(o, cb, ctx);
	if (!st)
		return -ENOMEM;
	r = synth_kernel_mmap(st, SYNTH_KERNEL_MMAP_NAME, start, UINT64_MAX - start, start);
	if (r >= 0)
		r = synth_modules(st);
	synth_state_free(st);
	return r < 0 ? r : 0;
}

/* ---- processes ---------------------------------------------------------- */

/* Contents of a small /proc file, trailing newline removed. */
static int synth_read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return (int)n;
}

/*
 * The uid a process is recorded under, and its tgid, from /proc/PID: its uid
 * when real, effective and saved uid agree and it is dumpable (the kernel
 * then gives /proc/PID to that uid, else to root); PM_UID_PRIVILEGED
 * otherwise.  The user-space twin of task_owner_uid() in perfmark.bpf.c.
 */
int synth_task_owner(pid_t pid, uint32_t *uid, pid_t *tgid)
{
	char path[64], line[256];
	unsigned long r = 0, e = 0, sv = 0, v;
	bool have_uid = false, have_tgid = false;
	struct stat sb;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	if (fstat(fileno(f), &sb)) {
		fclose(f);
		return -ESRCH;
	}
	while (fgets(line, sizeof(line), f) && !(have_uid && have_tgid)) {
		if (sscanf(line, "Uid: %lu %lu %lu", &r, &e, &sv) == 3) {
			have_uid = true;
		} else if (sscanf(line, "Tgid: %lu", &v) == 1) {
			*tgid = (pid_t)v;
			have_tgid = true;
		}
	}
	fclose(f);
	if (!have_uid || !have_tgid)
		return -ESRCH;
	*uid = r == e && r == sv && sb.st_uid == r ? (uint32_t)r : PM_UID_PRIVILEGED;
	return 0;
}

bool synth_kernel_visible_to_users(void)
{
	char b[32];
	int paranoid, kptr;

	if (synth_read_small("/proc/sys/kernel/perf_event_paranoid", b, sizeof(b)) <= 0)
		return false;
	paranoid = atoi(b);
	if (synth_read_small("/proc/sys/kernel/kptr_restrict", b, sizeof(b)) <= 0)
		return false;
	kptr = atoi(b);
	return paranoid <= 1 && kptr == 0;
}

static int synth_comm(struct synth_state *st, pid_t pid, pid_t tid)
{
	struct synth_comm *c = (struct synth_comm *)st->buf;
	char path[64], comm[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	r = synth_read_small(path, comm, sizeof(comm));
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	memset(c, 0, sizeof(*c));
	c->pid = (uint32_t)pid;
	c->tid = (uint32_t)tid;
	return synth_emit(st, sizeof(*c) + synth_put_name(c->comm, comm, 16 + 1),
			  PERF_RECORD_COMM, 0, (uint32_t)pid, (uint32_t)tid);
}

static int synth_fork(struct synth_state *st, pid_t pid, pid_t tid)
{
	struct synth_fork *f = (struct synth_fork *)st->buf;

	memset(f, 0, sizeof(*f));
	f->pid = (uint32_t)pid;
	f->ppid = (uint32_t)pid;
	f->tid = (uint32_t)tid;
	f->ptid = (uint32_t)pid;
	f->time = st->o->time;
	return synth_emit(st, sizeof(*f), PERF_RECORD_FORK, 0, (uint32_t)pid, (uint32_t)tid);
}

/* One line of /proc/PID/maps; returns true when it should become an MMAP2. */
struct synth_map_line {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min, prot, flags;
	const char *path;
};

static bool synth_parse_maps_line(char *line, struct synth_map_line *m, bool data)
{
	char perms[8];
	int consumed = 0;
	char *p, *nl;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &m->start, &m->end, perms, &m->pgoff, &m->maj, &m->min, &m->ino,
		   &consumed) < 7 || consumed == 0)
		return false;
	if (strlen(perms) < 4 || (perms[2] != 'x' && !data))
		return false;
	p = line + consumed;
	while (*p == ' ' || *p == '\t')
		p++;
	nl = strchr(p, '\n');
	if (nl)
		*nl = '\0';

	if (perms[2] != 'x' && *p != '/')
		return false;                 /* data: files only */
	if (*p == '\0')
		p = (char *)"//anon";        /* anonymous executable memory: JIT */
	else if (*p == '[' && strcmp(p, "[vdso]") != 0)
		return false;                 /* [vsyscall] and friends */
	m->path = p;

	m->prot = perms[2] == 'x' ? PROT_EXEC : 0;
	if (perms[0] == 'r')
		m->prot |= PROT_READ;
	if (perms[1] == 'w')
		m->prot |= PROT_WRITE;
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	return true;
}

static int synth_mmaps(struct synth_state *st, pid_t pid)
{
	char path[64];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, f) > 0) {
		struct synth_mmap2 *m = (struct synth_mmap2 *)st->buf;
		struct synth_map_line ml;
		uint8_t bid[SYNTH_BUILD_ID_MAX];
		uint16_t misc = PERF_RECORD_MISC_USER;
		int blen = 0;

		if (!synth_parse_maps_line(line, &ml, st->o->data_maps))
			continue;
		if (ml.path[0] == '/' && ml.path[1] != '/')
			blen = synth_mapping_build_id(st, pid, ml.start, ml.end, ml.maj, ml.min,
						      ml.ino, ml.path, bid);

		memset(m, 0, sizeof(*m));
		m->pid = (uint32_t)pid;
		m->tid = (uint32_t)pid;
		m->addr = ml.start;
		m->len = ml.end - ml.start;
		m->pgoff = ml.pgoff;
		if (blen > 0) {
			misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
			m->build_id_size = (uint8_t)blen;
			memcpy(m->build_id, bid, (size_t)blen);
		} else {
			m->maj = ml.maj;
			m->min = ml.min;
			m->ino = ml.ino;
			m->ino_generation = 0;
		}
		m->prot = ml.prot;
		m->flags = ml.flags;
		r = synth_emit(st, sizeof(*m) + synth_put_name(m->filename, ml.path, PATH_MAX),
			       PERF_RECORD_MMAP2, misc, (uint32_t)pid, (uint32_t)pid);
		if (r < 0)
			break;
	}
	free(line);
	fclose(f);
	return r;
}

static int synth_tid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Thread ids of pid other than pid itself, sorted. */
static int synth_threads(pid_t pid, pid_t **out, size_t *nr)
{
	char path[64];
	struct dirent *de;
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (!isdigit((unsigned char)de->d_name[0]) || *end || tid <= 0 || tid == pid)
			continue;
		if (grow_to(&tids, &cap, n + 1, sizeof(*tids), 16)) {
			free(tids);
			closedir(d);
			return -ENOMEM;
		}
		tids[n++] = (pid_t)tid;
	}
	closedir(d);
	if (n)
		qsort(tids, n, sizeof(*tids), synth_tid_cmp);
	*out = tids;
	*nr = n;
	return 0;
}

static int synth_one(struct synth_state *st, pid_t pid)
{
	uint32_t uid = 0;
	pid_t tgid = 0, *tids = NULL;
	size_t nr = 0;
	int r;

	r = synth_task_owner(pid, &uid, &tgid);
	if (r < 0)
		return r;
	if (tgid != pid)
		pid = tgid;   /* a thread id was given: describe its process */
	if (st->o->uid_filter != UINT32_MAX && uid != st->o->uid_filter)
		return 0;

	r = synth_comm(st, pid, pid);
	if (r < 0 || st->o->comm_only)
		return r;
	r = synth_mmaps(st, pid);
	if (r < 0)
		return r;
	r = synth_threads(pid, &tids, &nr);
	if (r < 0)
		return r;
	for (size_t i = 0; i < nr; i++) {
		r = synth_fork(st, pid, tids[i]);
		if (r < 0)
			break;
		r = synth_comm(st, pid, tids[i]);
		if (r == -ESRCH) {   /* the thread exited meanwhile: its FORK is harmless */
			r = 0;
			continue;
		}
		if (r < 0)
			break;
	}
	free(tids);
	return r < 0 ? r : 0;
}

int synth_process(pid_t pid, const struct synth_opts *o, synth_cb cb, void *ctx)
{
	struct synth_state *st;
	int r;

	if (pid <= 0 || !o || !cb)
		return -EINVAL;
	st = synth_state_new(o, cb, ctx);
	if (!st)
		return -ENOMEM;
	r = synth_one(st, pid);
	synth_state_free(st);
	return r;
}

int synth_all(const struct synth_opts *o, synth_cb cb, void *ctx)
{
	struct synth_state *st;
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (!o || !cb)
		return -EINVAL;
	d = opendir("/proc");
	if (!d)
		return -errno;
	st = synth_state_new(o, cb, ctx);
	if (!st) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (!isdigit((unsigned char)de->d_name[0]) || *end || pid <= 0)
			continue;
		r = synth_one(st, (pid_t)pid);
		if (r == -ESRCH || r == -ENOENT || r == -EACCES || r == -EPERM)
			r = 0;   /* vanished, or not ours to read */
		if (r < 0)
			break;
	}
	closedir(d);
	synth_state_free(st);
	return r;
}

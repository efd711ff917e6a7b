/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for lib/collect/synth.c: synthesize ourselves and check the records. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "perfdata.h"
#include "synth.h"
#include "test-util.h"

#define TEST_ID 0x1234567890abcdefULL
#define TEST_TIME 987654321ULL

struct rec {
	size_t len;
	uint8_t *data;
};

struct recs {
	struct rec *v;
	size_t n;
};

static int collect(void *ctx, const void *rec, size_t len)
{
	struct recs *rs = ctx;
	struct rec *v = realloc(rs->v, (rs->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	rs->v = v;
	v[rs->n].len = len;
	v[rs->n].data = malloc(len);
	if (!v[rs->n].data)
		return -ENOMEM;
	memcpy(v[rs->n].data, rec, len);
	rs->n++;
	return 0;
}

static void recs_free(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].data);
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
}

/* Layout as perf reads it, spelled out here independently of synth.c. */
static const struct perf_event_header *hdr(const struct rec *r)
{
	return (const struct perf_event_header *)r->data;
}

static uint32_t u32at(const struct rec *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r->data + off, sizeof(v));
	return v;
}

static uint64_t u64at(const struct rec *r, size_t off)
{
	uint64_t v;

	memcpy(&v, r->data + off, sizeof(v));
	return v;
}

/* Every record: size == len, 8-aligned, trailer {pid,tid,time,cpu,res,id}. */
static void check_common(const struct rec *r)
{
	size_t t;

	assert_int_equal(hdr(r)->size, r->len);
	assert_int_equal(r->len % 8, 0);
	assert_true(r->len >= 8 + 32);
	t = r->len - 32;
	assert_true(u64at(r, t + 8) == TEST_TIME);
	assert_true(u64at(r, t + 24) == TEST_ID);
	assert_int_equal(u32at(r, t + 20), 0);  /* res */
}

/* The NUL-terminated, zero-padded name at off, ending 32 bytes before the end. */
static const char *name_at(const struct rec *r, size_t off)
{
	size_t end = r->len - 32;
	const char *s = (const char *)r->data + off;
	size_t len = strnlen(s, end - off);

	assert_true(len < end - off);         /* NUL inside the field */
	assert_true(end - off - (len + 1) < 8); /* padded to 8, no more */
	for (size_t i = off + len; i < end; i++)
		assert_int_equal(r->data[i], 0);
	return s;
}

static void hexify(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

/* Build-id as `readelf -n` prints it, when binutils is there. */
static bool readelf_build_id(const char *path, char *hex, size_t size)
{
	char cmd[PATH_MAX + 64], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && !found) {
			s += strlen("Build ID: ");
			s[strcspn(s, " \n")] = '\0';
			snprintf(hex, size, "%s", s);
			found = true;
		}
	}
	pclose(p);
	return found;
}

static volatile int thread_stop;
static pthread_mutex_t thread_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t thread_cv = PTHREAD_COND_INITIALIZER;
static pid_t thread_tid;

static void *thread_fn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&thread_mu);
	thread_tid = gettid();
	pthread_cond_signal(&thread_cv);
	while (!thread_stop)
		pthread_cond_wait(&thread_cv, &thread_mu);
	pthread_mutex_unlock(&thread_mu);
	return NULL;
}

static void test_self(void **state)
{
	struct synth_opts o = { .id = TEST_ID, .time = TEST_TIME, .uid_filter = UINT32_MAX };
	struct recs rs = { 0 };
	char exe[PATH_MAX], comm[32] = "";
	uint8_t bid[20];
	int blen;
	ssize_t n;
	FILE *f;
	pthread_t th;
	pid_t pid = getpid();
	uintptr_t fn = (uintptr_t)&test_self;
	bool saw_leader_comm = false, saw_exe = false, saw_vdso = false, saw_libc = false;
	bool saw_thread_fork = false, saw_thread_comm = false, fn_covered = false;
	size_t first_fork = SIZE_MAX, last_mmap = 0;

	(void)state;
	pthread_setname_np(pthread_self(), "synth-main");
	assert_int_equal(pthread_create(&th, NULL, thread_fn, NULL), 0);
	pthread_mutex_lock(&thread_mu);
	while (!thread_tid)
		pthread_cond_wait(&thread_cv, &thread_mu);
	pthread_mutex_unlock(&thread_mu);
	pthread_setname_np(th, "synth-worker");

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	assert_string_equal(comm, "synth-main");

	blen = synth_read_build_id("/proc/self/exe", bid, sizeof(bid));
	assert_true(blen > 0 && blen <= 20);

	assert_int_equal(synth_process(pid, &o, collect, &rs), 0);
	assert_true(rs.n >= 3);
	for (size_t i = 0; i < rs.n; i++) {
		const struct rec *r = &rs.v[i];

		check_common(r);
		/* trailer pid/tid follow the record's thread */
		switch (hdr(r)->type) {
		case PERF_RECORD_COMM: {
			uint32_t rpid = u32at(r, 8), rtid = u32at(r, 12);
			const char *c = name_at(r, 16);

			assert_int_equal(rpid, pid);
			assert_int_equal(hdr(r)->misc, 0);
			if (rtid == (uint32_t)pid) {
				assert_string_equal(c, "synth-main");
				assert_int_equal(i, 0);  /* leader's COMM comes first */
				saw_leader_comm = true;
			} else if (rtid == (uint32_t)thread_tid) {
				assert_string_equal(c, "synth-worker");
				assert_true(first_fork < i);
				saw_thread_comm = true;
			}
			assert_int_equal(u32at(r, r->len - 32), rpid);
			assert_int_equal(u32at(r, r->len - 28), rtid);
			break;
		}
		case PERF_RECORD_FORK:
			assert_int_equal(r->len, 8 + 24 + 32);
			assert_int_equal(u32at(r, 8), pid);   /* pid */
			assert_int_equal(u32at(r, 12), pid);  /* ppid */
			assert_int_equal(u32at(r, 20), pid);  /* ptid */
			assert_true(u64at(r, 24) == TEST_TIME);
			assert_int_not_equal(u32at(r, 16), pid);  /* never for the leader */
			if (u32at(r, 16) == (uint32_t)thread_tid)
				saw_thread_fork = true;
			if (first_fork == SIZE_MAX)
				first_fork = i;
			break;
		case PERF_RECORD_MMAP2: {
			uint64_t addr = u64at(r, 16), len = u64at(r, 24);
			const char *name = name_at(r, 72);
			uint32_t prot = u32at(r, 64), flags = u32at(r, 68);

			assert_int_equal(u32at(r, 8), pid);
			assert_int_equal(u32at(r, 12), pid);
			assert_true(prot & PROT_EXEC);
			assert_true(flags == MAP_PRIVATE || flags == MAP_SHARED);
			assert_true(hdr(r)->misc & PERF_RECORD_MISC_USER);
			last_mmap = i;
			if (strcmp(name, exe) == 0) {
				saw_exe = true;
				assert_true(hdr(r)->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
				assert_int_equal(r->data[40], blen);      /* build_id_size */
				assert_int_equal(r->data[41], 0);
				assert_int_equal(u32at(r, 40) >> 16, 0);  /* reserved */
				assert_memory_equal(r->data + 44, bid, (size_t)blen);
				for (size_t k = 44 + (size_t)blen; k < 64; k++)
					assert_int_equal(r->data[k], 0);
				if (fn >= addr && fn < addr + len)
					fn_covered = true;
			}
			if (strcmp(name, "[vdso]") == 0) {
				saw_vdso = true;
				assert_false(hdr(r)->misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
			}
			if (strstr(name, "/libc.so") || strstr(name, "/libc-"))
				saw_libc = true;
			assert_true(name[0] == '/' || strcmp(name, "[vdso]") == 0 ||
				    strcmp(name, "//anon") == 0);
			break;
		}
		default:
			fail_msg("unexpected record type %u", hdr(r)->type);
		}
	}
	assert_true(saw_leader_comm);
	assert_true(saw_exe);
	assert_true(fn_covered);
	assert_true(saw_vdso);
	assert_true(saw_libc);
	assert_true(saw_thread_fork);
	assert_true(saw_thread_comm);
	assert_true(last_mmap < first_fork);

	/* The build-id agrees with readelf's, when readelf is installed. */
	char want[64], got[64];
	if (readelf_build_id(exe, want, sizeof(want))) {
		hexify(bid, (size_t)blen, got);
		assert_string_equal(got, want);
	}

	pthread_mutex_lock(&thread_mu);
	thread_stop = 1;
	pthread_cond_broadcast(&thread_cv);
	pthread_mutex_unlock(&thread_mu);
	pthread_join(th, NULL);
	recs_free(&rs);
}

static void test_uid_filter(void **state)
{
	struct synth_opts o = { .id = TEST_ID, .time = TEST_TIME, .uid_filter = getuid() + 1 };
	struct recs rs = { 0 };

	(void)state;
	assert_int_equal(synth_process(getpid(), &o, collect, &rs), 0);
	assert_int_equal(rs.n, 0);
	o.uid_filter = getuid();
	assert_int_equal(synth_process(getpid(), &o, collect, &rs), 0);
	assert_true(rs.n > 0);
	recs_free(&rs);
}

static void test_vanished(void **state)
{
	struct synth_opts o = { .id = TEST_ID, .time = TEST_TIME, .uid_filter = UINT32_MAX };
	struct recs rs = { 0 };
	pid_t child;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(synth_process(child, &o, collect, &rs), -ESRCH);
	assert_int_equal(rs.n, 0);
	assert_int_equal(synth_process(0, &o, collect, &rs), -EINVAL);
	assert_int_equal(synth_process(getpid(), NULL, collect, &rs), -EINVAL);
}

static int fail_cb(void *ctx, const void *rec, size_t len)
{
	(void)rec;
	(void)len;
	(*(int *)ctx)++;
	return -ENOSPC;
}

static void test_callback_error(void **state)
{
	struct synth_opts o = { .id = TEST_ID, .time = TEST_TIME, .uid_filter = UINT32_MAX };
	int calls = 0;

	(void)state;
	assert_int_equal(synth_process(getpid(), &o, fail_cb, &calls), -ENOSPC);
	assert_int_equal(calls, 1);
}

static void test_kernel(void **state)
{
	struct synth_opts o = { .id = TEST_ID, .time = TEST_TIME, .uid_filter = UINT32_MAX };
	struct recs rs = { 0 };
	uint64_t text;

	(void)state;
	if (!kallsyms_lookup("_text", &text))
		skip_because("no kernel addresses in /proc/kallsyms (not root, or kptr_restrict)");
	assert_int_equal(synth_kernel(&o, collect, &rs), 0);
	assert_true(rs.n >= 1);
	const struct rec *r = &rs.v[0];
	check_common(r);
	assert_int_equal(hdr(r)->type, PERF_RECORD_MMAP);
	assert_int_equal(hdr(r)->misc, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(u32at(r, 8), UINT32_MAX);
	assert_int_equal(u32at(r, 12), 0);
	assert_true(u64at(r, 16) == text);
	assert_true(u64at(r, 24) == UINT64_MAX - text);
	assert_true(u64at(r, 32) == text);
	assert_string_equal(name_at(r, 40), "[kernel.kallsyms]_text");
	for (size_t i = 1; i < rs.n; i++) {
		const struct rec *m = &rs.v[i];
		const char *name;

		check_common(m);
		assert_int_equal(hdr(m)->type, PERF_RECORD_MMAP);
		assert_int_equal(hdr(m)->misc, PERF_RECORD_MISC_KERNEL);
		assert_int_equal(u32at(m, 8), UINT32_MAX);
		name = name_at(m, 40);
		assert_true(name[0] == '[' && name[strlen(name) - 1] == ']');
		assert_true(u64at(m, 24) > 0);
	}
	recs_free(&rs);
}

static void test_all(void **state)
{
	struct synth_opts o = { .id = TEST_ID, .time = TEST_TIME, .uid_filter = UINT32_MAX };
	struct recs rs = { 0 };
	bool saw_self = false, saw_init = false;

	(void)state;
	assert_int_equal(synth_all(&o, collect, &rs), 0);
	for (size_t i = 0; i < rs.n; i++) {
		check_common(&rs.v[i]);
		if (hdr(&rs.v[i])->type == PERF_RECORD_COMM) {
			if (u32at(&rs.v[i], 8) == (uint32_t)getpid())
				saw_self = true;
			if (u32at(&rs.v[i], 8) == 1)
				saw_init = true;
		}
	}
	assert_true(saw_self);
	assert_true(saw_init);
	recs_free(&rs);
}

static void test_build_id_errors(void **state)
{
	uint8_t bid[20];
	char path[] = "/tmp/test-synth-XXXXXX";
	int fd;

	(void)state;
	assert_int_equal(synth_read_build_id("/nonexistent/file", bid, sizeof(bid)), -ENOENT);
	assert_int_equal(synth_read_build_id(NULL, bid, sizeof(bid)), -EINVAL);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello, not an ELF file\n", 23), 23);
	close(fd);
	assert_true(synth_read_build_id(path, bid, sizeof(bid)) < 0);
	unlink(path);
	/* too small a buffer is an error, not an overflow */
	assert_true(synth_read_build_id("/proc/self/exe", bid, 4) < 0);
}

/*
 * A mapping's file by its path when /proc/PID/map_files does not give it
 * (the mapping or the process gone meanwhile, or no CAP_SYS_ADMIN): the
 * path is the traced process's to change.  A FIFO there is never waited on
 * (perfmarkd, root, blocked in open() before), a symlink never followed, a
 * file with another inode never read.  A range no mapping has makes
 * map_files fail.
 */
static int open_bad_range(const char *path, const struct stat *sb)
{
	return synth_open_mapped(getpid(), 0x1000, 0x2000, major(sb->st_dev), minor(sb->st_dev),
				 sb->st_ino, path);
}

static void test_open_mapped(void **state)
{
	char dir[] = "/tmp/test-synth-map-XXXXXX", file[128], other[128], fifo[128], link[128],
	     dlink[128], via[160];
	struct stat sb, fsb;
	pid_t child;
	int fd, status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/lib.so", dir);
	snprintf(other, sizeof(other), "%s/other.so", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(dlink, sizeof(dlink), "%s/dirlink", dir);
	snprintf(via, sizeof(via), "%s/dirlink/lib.so", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	fd = open(other, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(symlink(dir, dlink), 0);
	assert_int_equal(stat(file, &sb), 0);

	/* the very file, by its path: opened */
	fd = open_bad_range(file, &sb);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &fsb), 0);
	assert_int_equal(fsb.st_ino, sb.st_ino);
	close(fd);
	/* another file now at that path, a symlink to it, a path through a symlink */
	assert_int_equal(open_bad_range(other, &sb), -ESTALE);
	assert_true(open_bad_range(link, &sb) < 0);
	assert_true(open_bad_range(via, &sb) < 0);
	assert_int_equal(synth_open_mapped(getpid(), 0x1000, 0x2000, 0, 0, 0, "relative"), -ENOENT);
	/* a FIFO, no writer: in a child that SIGALRM ends if open() blocks */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		alarm(10);
		_exit(open_bad_range(fifo, &sb) == -ESTALE ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));   /* not killed by SIGALRM: it did not block */
	assert_int_equal(WEXITSTATUS(status), 0);
	/* a mapping of our own through map_files: the file mapped, whatever the path says */
	{
		void *p;
		char line[512];
		unsigned long lo = 0, hi = 0;
		FILE *f;

		fd = open(file, O_RDWR);
		assert_int_equal(ftruncate(fd, 4096), 0);
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		assert_true(p != MAP_FAILED);
		close(fd);
		f = fopen("/proc/self/maps", "r");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, file) && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
				break;
		fclose(f);
		assert_int_equal(lo, (unsigned long)p);
		fd = synth_open_mapped(getpid(), lo, hi, 0, 0, 0, fifo);   /* map_files wins */
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &fsb), 0);
		assert_int_equal(fsb.st_ino, sb.st_ino);
		close(fd);
		munmap(p, 4096);
	}
	unlink(file);
	unlink(other);
	unlink(fifo);
	unlink(link);
	unlink(dlink);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_uid_filter),
		cmocka_unit_test(test_vanished),
		cmocka_unit_test(test_callback_error),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_build_id_errors),
		cmocka_unit_test(test_open_mapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

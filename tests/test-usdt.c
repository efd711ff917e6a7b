/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for lib/collect/usdt.c and libperfmark's probe site, no root needed:
 *  - the perfmark notes in libperfmark.so (uevent, trap, register): provider,
 *    name, arguments, a one-byte nop at each probe's file offset (never a
 *    five-byte nop, which the kernel would optimise into a trampoline call
 *    that crashes raw-clone children), zero semaphores side by side, and
 *    the same addresses at run time (dl_iterate_phdr, dlsym);
 *  - a probe made by <sys/sdt.h> in this very test program, so the parser is
 *    checked against the reference producer too;
 *  - the C API untraced (everything returns 0) and with the semaphore raised
 *    by hand (argument checks, truncation), plus the untraced call cost.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmark.h"
#include "test-util.h"
#include "usdt.h"

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define LIBPATH BUILD_DIR "/libperfmark.so"


/* a USDT probe with a semaphore, written by systemtap's sdt.h */
__attribute__((section(".probes"), used)) volatile unsigned short pmtest_hello_semaphore;

static __attribute__((noinline)) void fire_sdt_probe(int x)
{
	STAP_PROBE1(pmtest, hello, x);
}

static void read_at(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* load base of the first loaded object whose path ends with `suffix` */
struct base_query { const char *suffix; uintptr_t base; int found; };

static int find_base(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct base_query *q = arg;
	size_t n = strlen(info->dlpi_name), m = strlen(q->suffix);

	(void)size;
	if (n >= m && !strcmp(info->dlpi_name + n - m, q->suffix)) {
		q->base = info->dlpi_addr;
		q->found = 1;
		return 1;
	}
	return 0;
}

struct site {
	const char *name, *args;
	bool sema;
};

static const struct site sites[] = {
	{ "uevent", "-4@%edi 8@%rsi -4@%edx", true },
	{ "trap", "-4@%edi 8@%rsi -4@%edx 8@%rcx 8@%r8", false },
	{ "register0", "8@%rdi", true },
	{ "register1", "8@%rdi", true },
	{ "register2", "8@%rdi", true },
	{ "trapall", "8@%rdi", true },
};

static void test_note_in_file(void **state)
{
	struct usdt_probe p, ue;
	unsigned char code, sema[2];

	(void)state;
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
		assert_int_equal(usdt_find(LIBPATH, "perfmark", sites[i].name, &p), 0);
		assert_string_equal(p.name, sites[i].name);
		assert_string_equal(p.args, sites[i].args);
		assert_true(p.pc_vaddr != 0);
		assert_true(p.pc_offset != 0);
		assert_int_equal(p.sema_vaddr != 0, sites[i].sema);
		read_at(LIBPATH, p.pc_offset, &code, 1);
		assert_int_equal(code, 0x90);            /* a one-byte nop: never optimised */
		if (sites[i].sema) {
			read_at(LIBPATH, p.sema_offset, sema, sizeof(sema));
			assert_int_equal(sema[0], 0);
			assert_int_equal(sema[1], 0);
		}
		printf("perfmark:%s pc 0x%llx (file 0x%llx) sema 0x%llx (file 0x%llx)\n", p.name,
		       (unsigned long long)p.pc_vaddr, (unsigned long long)p.pc_offset,
		       (unsigned long long)p.sema_vaddr, (unsigned long long)p.sema_offset);
	}
	/* side by side: an untraced call tests them all with two 64-bit loads */
	assert_int_equal(usdt_find(LIBPATH, "perfmark", "uevent", &ue), 0);
	assert_int_equal(ue.sema_vaddr % 8, 0);
	for (size_t i = 2; i < sizeof(sites) / sizeof(sites[0]); i++) {
		assert_int_equal(usdt_find(LIBPATH, "perfmark", sites[i].name, &p), 0);
		assert_int_equal(p.sema_vaddr, ue.sema_vaddr + 2 * (i - 1));
	}
}

/*
 * The probe site's nop, or the int3 a uprobe put there: a system-wide
 * recorder running beside the tests (another test, another user's session)
 * attaches to every libperfmark mapped, this process's too.
 */
static bool is_site(uintptr_t addr)
{
	unsigned char b = *(unsigned char *)addr;

	return b == 0x90 || b == 0xcc;
}

static void test_note_matches_runtime(void **state)
{
	struct base_query q = { .suffix = "libperfmark.so.0" };
	struct usdt_probe p;

	(void)state;
	dl_iterate_phdr(find_base, &q);
	assert_true(q.found);
	assert_int_equal(usdt_find(LIBPATH, "perfmark", "uevent", &p), 0);
	assert_ptr_equal(dlsym(RTLD_DEFAULT, "perfmark_uevent_semaphore"), (void *)(q.base + p.sema_vaddr));
	assert_true(is_site(q.base + p.pc_vaddr));
	assert_int_equal(usdt_find(LIBPATH, "perfmark", "register0", &p), 0);
	assert_ptr_equal(dlsym(RTLD_DEFAULT, "perfmark_register0_semaphore"),
			 (void *)(q.base + p.sema_vaddr));
	assert_true(is_site(q.base + p.pc_vaddr));
}

static void test_sdt_reference(void **state)
{
	struct base_query q = { .suffix = "" };   /* first object: the executable */
	struct usdt_probe p;
	unsigned char c;

	(void)state;
	fire_sdt_probe(1);
	assert_int_equal(usdt_find("/proc/self/exe", "pmtest", "hello", &p), 0);
	assert_true(strstr(p.args, "@") != NULL);
	read_at("/proc/self/exe", p.pc_offset, &c, 1);
	assert_int_equal(c, 0x90);                 /* sdt.h's probe is a one-byte nop */
	dl_iterate_phdr(find_base, &q);
	assert_true(q.found);
	assert_ptr_equal((void *)(q.base + p.sema_vaddr), (void *)&pmtest_hello_semaphore);
	assert_int_equal(*(unsigned char *)(q.base + p.pc_vaddr), 0x90);
}

static void test_errors(void **state)
{
	struct usdt_probe p;

	(void)state;
	assert_int_equal(usdt_find(LIBPATH, "perfmark", "nosuch", &p), -ENOENT);
	assert_int_equal(usdt_find(LIBPATH, "nosuch", "uevent", &p), -ENOENT);
	assert_int_equal(usdt_find(BUILD_DIR "/does-not-exist.so", "perfmark", "uevent", &p),
			 -ENOENT);
	assert_int_equal(usdt_find(BUILD_DIR "/build.ninja", "perfmark", "uevent", &p), -ENOEXEC);
	assert_int_equal(usdt_find(NULL, "perfmark", "uevent", &p), -EINVAL);
}

static volatile unsigned short *semaphore(void)
{
	void *s = dlsym(RTLD_DEFAULT, "perfmark_uevent_semaphore");

	assert_non_null(s);
	return s;
}

static void test_api_untraced(void **state)
{
	char big[5000];

	(void)state;
	memset(big, 'x', sizeof(big));
	/*
	 * A system-wide recorder elsewhere on the machine finds this library
	 * too (by its notes, as it should): then nothing here is untraced.
	 */
	if (perfmark_enabled())
		skip();
	assert_int_equal(*semaphore(), 0);
	assert_int_equal(perf_printf("hello %d %s", 42, "world"), 0);
	assert_int_equal(perfmark_emit(7, "abc", 4), 0);
	/* untraced calls do not even look at their arguments */
	assert_int_equal(perfmark_emit(7, NULL, 5), 0);
	assert_int_equal(perfmark_emit(7, big, sizeof(big)), 0);
	perfmark_range_begin("r");
	perfmark_range_end("r");
	perfmark_counter("c", -1);
	perfmark_jit_code((void *)test_api_untraced, 16, "f");
}

/*
 * Raise the semaphore ourselves, as the kernel does while a uprobe with
 * ref_ctr_offset is attached.  Nothing is attached, so the probe site is a
 * plain nop: this exercises the traced paths of the library.
 */
static void test_api_traced_paths(void **state)
{
	volatile unsigned short *sema = semaphore();
	bool before = perfmark_enabled();   /* true while another recorder traces us */
	char big[5000], longname[5000];

	(void)state;
	memset(big, 'x', sizeof(big));
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';

	*sema += 1;
	assert_true(perfmark_enabled());
	assert_int_equal(perfmark_emit(7, "abc", 4), 0);
	assert_int_equal(perfmark_emit(7, NULL, 0), 0);
	assert_int_equal(perfmark_emit(7, NULL, 5), -EINVAL);
	assert_int_equal(perfmark_emit(7, big, 4096), 0);
	assert_int_equal(perfmark_emit(7, big, 4097), -E2BIG);
	assert_int_equal(perfmark_emit(7, big, sizeof(big)), -E2BIG);
	assert_int_equal(perf_printf("hello %d %s %.1f", 42, "world", 1.5), 0);
	assert_int_equal(perf_printf("%s", ""), 0);
	assert_int_equal(perf_printf("%.4095s", longname), 0);
	assert_int_equal(perf_printf("%.4096s", longname), -E2BIG);
	assert_int_equal(perf_printf("%s", longname), -E2BIG);
	perfmark_range_begin("work");
	perfmark_range_end("work");
	perfmark_range_begin(NULL);
	perfmark_counter("queue", 12345);
	perfmark_counter(longname, 1);
	perfmark_jit_code((void *)test_api_traced_paths, 64, "jitted");
	perfmark_jit_code(NULL, 0, longname);
	*sema -= 1;
	assert_int_equal(perfmark_enabled(), before);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/*
 * As root with tracefs: a real uprobe with ref_ctr_offset on the uevent
 * site (a tracefs uprobe event, no BPF needed), as bpftrace puts it.  The
 * semaphore must rise, and a forked child must survive emitting markers
 * after the parent's hits (a site the kernel optimised into a trampoline
 * call would crash it: kernel 6.18 does not copy the trampoline into
 * children).
 */
static void test_live_uprobe_and_fork(void **state)
{
	const char *tr = "/sys/kernel/tracing";
	char lib[4096], def[4300], path[256];
	struct usdt_probe p;
	unsigned short base = *semaphore();    /* other USDT users of this library */
	struct stat st;
	int status;
	pid_t pid;

	(void)state;
	if (geteuid() != 0 || stat("/sys/kernel/tracing/uprobe_events", &st)) {
		skip_because("needs root and tracefs at %s", tr);
	}
	assert_non_null(realpath(LIBPATH, lib));
	assert_int_equal(usdt_find(lib, "perfmark", "uevent", &p), 0);
	snprintf(def, sizeof(def), "p:pmtest_%d/uevent %s:0x%llx(0x%llx) type=%%di:u32 size=%%dx:u32\n",
		 (int)getpid(), lib, (unsigned long long)p.pc_offset,
		 (unsigned long long)p.sema_offset);
	if (write_file("/sys/kernel/tracing/uprobe_events", def)) {
		skip_because("cannot define a uprobe event in tracefs");
	}
	snprintf(path, sizeof(path), "%s/events/pmtest_%d/uevent/enable", tr, (int)getpid());
	assert_int_equal(write_file(path, "1"), 0);

	assert_true(perfmark_enabled());
	assert_int_equal(*semaphore(), base + 1);
	for (int i = 0; i < 10; i++)            /* hits: a five-byte nop would be optimised now */
		assert_int_equal(perfmark_emit(65536, &i, sizeof(i)), 0);
	/* fork() (atfork handlers run), raw clone() and _Fork() (they do not) */
	for (int how = 0; how < 3; how++) {
		pid = how == 0 ? fork() : how == 1 ? (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) : _Fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			for (int i = 0; i < 10; i++)
				perfmark_emit(65537, &i, sizeof(i));
			perf_printf("child %d", how);
			_exit(perfmark_enabled() ? 0 : 3);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));       /* a SIGSEGV here is issue 8 case 1 */
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(write_file(path, "0"), 0);
	snprintf(def, sizeof(def), "-:pmtest_%d/uevent\n", (int)getpid());
	assert_int_equal(write_file("/sys/kernel/tracing/uprobe_events", def), 0);
	assert_int_equal(*semaphore(), base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_note_in_file),
		cmocka_unit_test(test_note_matches_runtime),
		cmocka_unit_test(test_sdt_reference),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_api_untraced),
		cmocka_unit_test(test_api_traced_paths),
		cmocka_unit_test(test_live_uprobe_and_fork),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

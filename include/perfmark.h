/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark.h - user-space markers for the perfmark tracer.
 *
 * Link with -lperfmark (pkg-config --cflags --libs perfmark).  Markers land
 * in perf.data on the same timeline as CPU samples: `perf script` shows
 * strings as perfmark:printf samples, `perfmark script` decodes every type.
 *
 *   int  perf_printf(const char *fmt, ...);
 *        A formatted string marker (type PERFMARK_TYPE_STRING).  The text is
 *        formatted into a 4097-byte stack buffer and sent with its NUL; a
 *        longer text is delivered truncated to PERFMARK_MAX_PAYLOAD bytes and
 *        flagged as truncated in the recording.  Returns 0, -E2BIG when the
 *        text was truncated, -EINVAL when the format is invalid.
 *
 *   int  perfmark_emit(uint32_t type, const void *data, uint32_t size);
 *        A typed marker, like prctl(PR_TASK_PERF_UEVENT, type, size, data, 0).
 *        Returns 0; -EINVAL when data is NULL and size is not 0 (nothing is
 *        recorded); -E2BIG when size > PERFMARK_MAX_PAYLOAD (the first
 *        PERFMARK_MAX_PAYLOAD bytes are recorded and flagged as truncated).
 *        Async-signal-safe: takes no lock and allocates nothing.
 *
 *   bool perfmark_enabled(void);
 *        True while a perfmark session listens to this process.  Use it to
 *        skip building expensive payloads.
 *
 *   void perfmark_range_begin(const char *name);          type 1: name + NUL
 *   void perfmark_range_end(const char *name);            type 2: name + NUL
 *   void perfmark_counter(const char *name, int64_t value);
 *        type 3: int64 value (host byte order), then name + NUL
 *   void perfmark_jit_code(const void *addr, uint64_t size, const char *name);
 *        type 4: u64 addr, u64 size, then name + NUL.  Emit it after
 *        generating code and before running it, so post-processing can name
 *        the code.
 *        A NULL name is sent as "".  Names longer than the payload limit are
 *        truncated and flagged.
 *
 * Types: 0-4 are the well-known types above (PERFMARK_TYPE_*), 5-65535 are
 * reserved for perfmark, types from PERFMARK_TYPE_APP_FIRST (65536) up
 * belong to applications.
 *
 * Cost and safety: when no session is tracing, every call is two loads and
 * a branch on the USDT semaphores and returns 0 at once; perf_printf does not
 * format and no argument is read.  When traced, a marker is written into a
 * ring of the calling thread, in memory that the recorder maps too (the fast
 * lane): no trap, no system call, some tens of nanoseconds (bench/).  The
 * first markers of a process, until the recorder has joined its rings, and
 * those a full ring cannot take, take the trap lane instead: a uprobe, about
 * a microsecond.  A full trap lane drops and counts; nothing ever waits for
 * the recorder.  A payload is copied only where that cannot fault: an
 * unmapped pointer is recorded as a marker flagged "fault", without data.
 *
 * Every call but perf_printf is async-signal-safe (no lock, no allocation);
 * perf_printf is not: a format its own formatter declines goes to
 * vsnprintf, which POSIX does not list as async-signal-safe.
 * All calls are safe from any thread and in any child:
 * fork(), vfork(), posix_spawn(), a raw clone() or _Fork() child, a thread
 * made by clone() alone, a process with PR_SET_MDWE.  A child gets rings of
 * its own on its first marker (a thread made by clone() without CLONE_SETTLS
 * shares its creator's, and a vfork() child's markers are recorded as its
 * parent thread's once that thread has marked: they share one thread state).
 * No probe site is one the kernel turns into a call into a trampoline page,
 * which children made without fork()'s atfork handlers lack.
 *
 * How it works: a process offers its rings (one sealed memfd, a ring per
 * thread) to the recorders through one call of its register probes; every
 * recorder with the fast lane holds one of three register sites, and the
 * rings take markers once each of them has joined.  Every call also fires
 * the USDT probe perfmark:uevent (arguments: type, data, size, semaphore
 * perfmark_uevent_semaphore) while a USDT tool such as bpftrace holds it.
 * Recorders find perfmark by these notes in any executable or library.
 *
 * Environment (read once, at load): PERFMARK_RING_KIB, the ring of each
 * thread (default 1024, 16 to 262144); PERFMARK_RING_SLOTS, rings before
 * threads share one (default 64); PERFMARK_FASTLANE=0, the trap lane only.
 */
#ifndef PERFMARK_H
#define PERFMARK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PERFMARK_VERSION_MAJOR 0
#define PERFMARK_VERSION_MINOR 1

/* Largest payload recorded; larger ones are truncated and flagged. */
#define PERFMARK_MAX_PAYLOAD 4096

enum perfmark_type {
	PERFMARK_TYPE_STRING = 0,
	PERFMARK_TYPE_RANGE_BEGIN = 1,
	PERFMARK_TYPE_RANGE_END = 2,
	PERFMARK_TYPE_COUNTER = 3,
	PERFMARK_TYPE_JIT_CODE = 4,
	PERFMARK_TYPE_APP_FIRST = 65536,
};

#if defined(__GNUC__)
# define PERFMARK__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
# define PERFMARK__PRINTF(a, b)
#endif

int perf_printf(const char *fmt, ...) PERFMARK__PRINTF(1, 2);
int perfmark_emit(uint32_t type, const void *data, uint32_t size);
bool perfmark_enabled(void);
void perfmark_range_begin(const char *name);
void perfmark_range_end(const char *name);
void perfmark_counter(const char *name, int64_t value);
void perfmark_jit_code(const void *addr, uint64_t size, const char *name);

#ifdef __cplusplus
}
#endif

#endif

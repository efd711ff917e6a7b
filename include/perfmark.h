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
 * Cost and safety: when no session is tracing, every call is a load and a
 * branch on a semaphore and returns 0 at once; perf_printf does not format
 * and no argument is read.  When traced, a call is one uprobe hit (a 5-byte
 * nop the kernel turns into a call, a few hundred nanoseconds).  All calls
 * are safe from any thread and after fork() (a fork handler repairs the
 * optimised probe site in the child, whose kernel-made trampoline is not
 * inherited on Linux 6.18).
 *
 * How it works: every call ends in one probe site in libperfmark.so, also
 * published as the USDT probe perfmark:uevent (arguments: type, data, size)
 * with the semaphore perfmark_uevent_semaphore, so bpftrace and other USDT
 * tools can attach to it as well.  The tracer attaches to the library by
 * path, which covers every process that maps it.
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

#ifndef PERFMARK_UEVENT_H   /* the tracer's internal header has the same enum */
enum perfmark_type {
	PERFMARK_TYPE_STRING = 0,
	PERFMARK_TYPE_RANGE_BEGIN = 1,
	PERFMARK_TYPE_RANGE_END = 2,
	PERFMARK_TYPE_COUNTER = 3,
	PERFMARK_TYPE_JIT_CODE = 4,
	PERFMARK_TYPE_APP_FIRST = 65536,
};
#endif

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

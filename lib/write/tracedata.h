/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * HEADER_TRACING_DATA: what perf script needs to decode the entries of
 * tracepoint samples, the layout perf 6.1 writes and reads
 * (tools/perf/util/trace-event-info.c, trace-event-read.c), version 0.6:
 *
 *   "\x17\x08\x44tracing" "0.6\0"  u8 big-endian (0)  u8 sizeof(long)  u32 page size
 *   "header_page\0"  u64 size, tracefs events/header_page
 *   "header_event\0" u64 size, tracefs events/header_event
 *   u32 n, n x { u64 size, format }       the recorded events of system ftrace
 *   u32 systems, per system { name "\0", u32 n, n x { u64 size, format } }
 *   u32 size, kallsyms: 0, as perf 6.1 writes it (its reader resolves
 *            addresses from its own symbols, and skips what is there)
 *   u32 size, tracefs printk_formats
 *   u64 size, saved command lines: 0 (perf's own threads name the pids)
 *
 * Built from the mounted tracefs for the events of type
 * PERF_TYPE_TRACEPOINT, by their names ("sys:name"); a format whose ID is
 * not the attr's config (another boot's recording) is left out, and perf
 * then shows that event's samples without fields.
 */
#ifndef PERFMARK_TRACEDATA_H
#define PERFMARK_TRACEDATA_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

#define TRACEDATA_MAX (64u << 20)    /* bytes the reader takes of one */

/*
 * The tracing data of events[0..n) into *out (malloc'd), *len its bytes.
 * 0 with *out NULL when none of them is a tracepoint; -errno.
 */
int tracedata_build(const struct perfdata_event *events, size_t n, uint8_t **out, size_t *len);

#endif

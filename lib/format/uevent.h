/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The payload of a perfmark:uevent sample (PERF_SAMPLE_RAW), as written
 * to perf.data.  Seed 000: a version at a known offset, so readers can skip
 * formats they do not know.
 *
 * The format, not a part of either side: the recorder writes it
 * (lib/engine/encode.c), and the readers read it only through marker.h,
 * beside it.
 *
 *   u16 version   (PERFMARK_UEVENT_VERSION)
 *   u16 flags     (PERFMARK_UEVENT_F_*)
 *   u32 type      (0 string, 1 range begin, 2 range end, 3 counter, 4 jit code,
 *                  5..65535 reserved, >= 65536 application)
 *   u32 size      (payload bytes that follow)
 *   u32 orig_size (bytes the application asked for; > size when truncated)
 *   u8  data[size]
 *   zero padding so that the RAW field (u32 raw_size + raw) is 8-byte aligned
 *
 * perfmark:printf samples carry the bare string, NUL terminated, so stock
 * perf script prints it as `BPF string: "..."`.  Strings that were truncated
 * or unreadable are written as perfmark:uevent type 0 instead, with flags.
 */
#ifndef PERFMARK_UEVENT_H
#define PERFMARK_UEVENT_H

#include <stdint.h>

#include "perfmark.h"   /* enum perfmark_type, PERFMARK_MAX_PAYLOAD */

/* the events markers are samples of */
#define PERFMARK_EV_PRINTF "perfmark:printf"
#define PERFMARK_EV_UEVENT "perfmark:uevent"

#define PERFMARK_UEVENT_VERSION 1
#define PERFMARK_UEVENT_F_TRUNCATED 0x1   /* the BPF side's PM_F_TRUNCATED */
#define PERFMARK_UEVENT_F_FAULT     0x2   /* the BPF side's PM_F_FAULT */

struct perfmark_uevent_hdr {
	uint16_t version;
	uint16_t flags;
	uint32_t type;
	uint32_t size;
	uint32_t orig_size;
};

#endif

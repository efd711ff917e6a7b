/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Locate a USDT probe (.note.stapsdt) in an ELF file with libelf:
 * the probe address and its semaphore, both as file offsets (what
 * uprobe attach and ref_ctr_offset need), plus the argument string.
 */
#ifndef PERFMARK_USDT_H
#define PERFMARK_USDT_H

#include <stddef.h>
#include <stdint.h>

struct usdt_probe {
	uint64_t pc_vaddr, sema_vaddr;   /* as in the note (after .stapsdt.base fixup) */
	uint64_t pc_offset;              /* file offset of the probe instruction */
	uint64_t sema_offset;            /* file offset of the semaphore, 0 if none */
	char name[64];
	char args[128];
};

/* a probe found; return 0 to go on, > 0 to stop, < 0 to stop with that error */
typedef int (*usdt_probe_fn)(void *ctx, const struct usdt_probe *p);

/* 0, -ENOENT (no such probe), or another negative errno. */
int usdt_find(const char *path, const char *provider, const char *name, struct usdt_probe *out);
/*
 * Every probe of provider in the ELF file open at fd, in note order.
 * Returns how many were found (>= 0) or a negative errno.
 */
int usdt_foreach_fd(int fd, const char *provider, usdt_probe_fn fn, void *ctx);

#endif

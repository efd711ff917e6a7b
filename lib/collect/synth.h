/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Synthesized sideband for what existed before recording began: the
 * kernel map, and COMM / MMAP2 / FORK(for threads) of running processes read
 * from /proc.  Records are complete perf records with the sample_id trailer
 * (perfdata_encode_sample_id, given id and time) and are handed to a callback.
 */
#ifndef PERFMARK_SYNTH_H
#define PERFMARK_SYNTH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef int (*synth_cb)(void *ctx, const void *rec, size_t len);

struct synth_opts {
	uint64_t id;          /* sample id to put in the trailers */
	uint64_t time;        /* timestamp for every synthesized record */
	uint32_t uid_filter;  /* (uint32_t)-1 = any uid */
	bool data_maps;       /* also file mappings that are not executable (perf's mmap_data:
			       * an unwinder reads .eh_frame_hdr from them) */
	bool comm_only;       /* the COMM alone: a command held before its exec maps the
			       * recorder's own files, which the exec throws away */
};

/*
 * PERF_RECORD_MMAP, pid -1, misc KERNEL, "[kernel.kallsyms]_text", start at
 * _text from /proc/kallsyms (or the lowest kernel text symbol), len to the end
 * of the address space, pgoff = start.  Plus one MMAP per loaded module
 * (/proc/modules) named "[modname]".
 */
int synth_kernel(const struct synth_opts *o, synth_cb cb, void *ctx);
/*
 * For one process: COMM for each thread (misc 0), FORK for each non-leader
 * thread, MMAP2 for every executable file mapping in /proc/PID/maps (with
 * maj/min/ino/prot/flags; with PERF_RECORD_MISC_MMAP_BUILD_ID and the build-id
 * when the ELF has a .note.gnu.build-id).  A vanished pid returns -ESRCH.
 */
int synth_process(pid_t pid, const struct synth_opts *o, synth_cb cb, void *ctx);
/* Every process in /proc (matching uid_filter); vanished ones are skipped. */
int synth_all(const struct synth_opts *o, synth_cb cb, void *ctx);

/*
 * The uid pid's records belong to (PM_UID_PRIVILEGED unless real, effective
 * and saved uid agree and the process is dumpable) and its tgid.  -ESRCH
 * when it is gone.
 */
int synth_task_owner(pid_t pid, uint32_t *uid, pid_t *tgid);
/*
 * Would perf show kernel addresses and kernel stacks to an unprivileged user
 * here?  perf_event_paranoid <= 1 (kernel profiling allowed) and
 * kptr_restrict == 0 (/proc/kallsyms shows addresses).
 */
bool synth_kernel_visible_to_users(void);
/* The address of the kernel's text symbol name (not a module's): 0, -ENOENT, or -EACCES (hidden). */
int synth_kernel_symbol(const char *name, uint64_t *addr);

/*
 * The file pid maps at [start, end), open for reading: through
 * /proc/PID/map_files (the very file mapped, even deleted or in another
 * mount namespace), else by the path /proc/PID/maps gave, which the process
 * controls (it may have put a FIFO, a symlink or another file there since
 * it mapped it): opened without blocking and without following any
 * symlink, and kept only when it is a regular file with the device and
 * inode of the maps line (-ESTALE else).  An fd or -errno.
 */
int synth_open_mapped(pid_t pid, uint64_t start, uint64_t end, uint32_t maj, uint32_t min,
		      uint64_t ino, const char *path);
/* Read the GNU build-id of an ELF file (libelf).  Returns its length (<= 20), 0 if none, or -errno. */
int synth_read_build_id(const char *path, uint8_t *buf, size_t size);

#endif

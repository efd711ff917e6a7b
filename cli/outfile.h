/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The output file a command writes (record -o, session snapshot/attach -o).
 *
 * RULE: a command removes only what it created.  "A failed command leaves no
 * half-written output" must never become "a failed command unlinks whatever
 * the user named": `-o /dev/full`, a FIFO or someone's file stays.  So the
 * output is created with O_EXCL (a previous recording is first moved to
 * FILE.old, as perf does), the inode made is remembered, and on failure the
 * path is unlinked only while it still names that inode.  A path that
 * already exists (device, FIFO, an empty or unmovable file) is opened as it
 * is and never removed.
 *
 * outfile__open_atomic() (session snapshot, attach): nothing at path changes
 * until the command succeeds.  A new or regular file is written as a
 * temporary beside it (O_EXCL) and renamed over it by outfile__commit(); a
 * failure removes only the temporary.  A failed snapshot used to have
 * truncated the file already.
 */
#ifndef PERFMARK_CLI_OUTFILE_H
#define PERFMARK_CLI_OUTFILE_H

#include <stdbool.h>
#include <sys/types.h>

struct outfile {
	const char *path;
	int fd;
	bool created;   /* this run made the inode dev/ino at path */
	bool pipe;      /* a FIFO (or stdout for "-"): pipe mode */
	dev_t dev;
	ino_t ino;
	char *tmp;      /* atomic: the temporary, renamed over path on commit */
};

/*
 * Open path for writing ("-": stdout, refused on a terminal).  keep_old:
 * move a non-empty regular file to path.old first.  0, or 1 after one
 * "perfmark: " line.
 */
int outfile__open(struct outfile *o, const char *path, bool keep_old);
/* The same, through a temporary when path is new or a regular file (see above). */
int outfile__open_atomic(struct outfile *o, const char *path);
/* Success: the temporary takes path's place.  0, or 1 after one "perfmark: " line. */
int outfile__commit(struct outfile *o);
/* After a failure: unlink the output if this run created it and it is still there. */
void outfile__discard(struct outfile *o);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The durable store of session definitions (sessdef.h): one JSON file per
 * session under STATE_DIR/sessions/NAME.json, written to a temporary file,
 * fsynced, renamed over, and the directory fsynced.  perfmarkd's alone.
 */
#ifndef PERFMARK_STORE_H
#define PERFMARK_STORE_H

#include <stdbool.h>

#include "sessdef.h"

struct store;

/* dir: STATE_DIR; creates STATE_DIR/sessions (0700). */
int store__open(struct store **out, const char *dir);
int store__save(struct store *st, const struct sessdef *d);
int store__remove(struct store *st, const char *name);
/* Does d's file hold d as store__save would write it now (not an older form)? */
bool store__current(struct store *st, const struct sessdef *d);
/*
 * Call fn for every stored definition; unreadable ones are reported through
 * bad(ctx, file, reason) and skipped.
 */
int store__load(struct store *st, int (*fn)(void *ctx, const struct sessdef *d),
		void (*bad)(void *ctx, const char *file, const char *reason), void *ctx);
void store__free(struct store *st);

#endif

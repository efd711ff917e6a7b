// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Who may hold how much of perfmarkd.
 *
 * DESIGN (issue 8 case 5): no user can deny service to another, and root
 * always gets in.  Every resource a member controls has a limit per user as
 * well as one for all members together, and root has room beyond the
 * members' total, so members filling everything never lock root out:
 *
 *   connections  USER_MAX_CLIENTS per member, MAX_CLIENTS for all members,
 *                ROOT_EXTRA_CLIENTS more for root.  Outsiders are refused at
 *                accept() and never hold a slot.
 *   idle         a connection that neither streams nor records and sends no
 *                request for the idle timeout (--idle-timeout, default
 *                IDLE_TIMEOUT_S) is told so and closed (conn.c).
 *   sessions     USER_MAX_SESSIONS named sessions per member, MAX_SESSIONS
 *                for all members, ROOT_EXTRA_SESSIONS more for root.
 *   memory       a member's flight-recorder rings and the BPF ring buffers
 *                they ask for, over named and anonymous sessions, at most
 *                USER_MEM_MAX together (two 256 MiB rings of one member took
 *                the daemon from 5 MB to 642 MB).
 *   kept rings   the fast lane's areas perfmarkd keeps in systemd's fd store
 *                (lib/collect/fastlane.h): KEPT_PER_UID per member, KEPT_MAX
 *                in all (the unit's FileDescriptorStoreMax=), of which
 *                KEPT_ROOT only root's.  An area beyond is read as before,
 *                only not kept across a restart.
 *
 * Before: 64 idle connections of one member made root's `session list` and
 * `perfmark record` fail, and one member could take all 64 sessions.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "perfmarkd.h"
#include "proto.h"

const char *limits__connection(const struct client *c, char *buf, size_t len)
{
	const struct client *o;
	size_t mine = 0, members = 0;

	for (o = D.clients; o; o = o->next) {
		if (o->root)
			continue;
		members++;
		if (o->cred.uid == c->cred.uid)
			mine++;
	}
	if (c->root) {
		if (D.nr_clients >= MAX_CLIENTS + ROOT_EXTRA_CLIENTS)
			snprintf(buf, len, "too many connections (limit %d)",
				 MAX_CLIENTS + ROOT_EXTRA_CLIENTS);
		else
			return NULL;
	} else if (mine >= USER_MAX_CLIENTS) {
		snprintf(buf, len, "too many connections of uid %u (limit %d per user)",
			 (unsigned)c->cred.uid, USER_MAX_CLIENTS);
	} else if (members >= MAX_CLIENTS) {
		snprintf(buf, len, "too many connections (limit %d)", MAX_CLIENTS);
	} else {
		return NULL;
	}
	return buf;
}

/* Ring and BPF ring bytes a definition holds */
static uint64_t def_memory(const struct sessdef *def)
{
	return (def->sink == SESSDEF_SINK_RING ? def->ring_size : 0) + def->spec.ringbuf_size;
}

/* What uid holds now: its named sessions and its anonymous recordings */
static uint64_t user_memory(uid_t uid)
{
	const struct dsess *d;
	const struct client *c;
	uint64_t sum = 0;

	for (d = D.sessions; d; d = d->next)
		if (d->def.owner == uid)
			sum += def_memory(&d->def);
	for (c = D.clients; c; c = c->next)
		if (c->cred.uid == uid)
			sum += c->rec_bytes;
	return sum;
}

static const char *memory_check(const struct client *c, uint64_t more, char *buf, size_t len)
{
	uint64_t have;

	if (c->root)
		return NULL;
	have = user_memory(c->cred.uid);
	if (have + more <= USER_MEM_MAX)
		return NULL;
	snprintf(buf, len, "ring memory of uid %u would reach %llu MiB (limit %llu MiB per user; "
		 "%llu MiB in use)", (unsigned)c->cred.uid, (unsigned long long)((have + more) >> 20),
		 USER_MEM_MAX >> 20, (unsigned long long)(have >> 20));
	return buf;
}

const char *limits__session(const struct client *c, const struct sessdef *def, char *buf,
			    size_t len)
{
	const struct dsess *d;
	size_t mine = 0, members = 0;

	for (d = D.sessions; d; d = d->next) {
		if (!d->def.owner)
			continue;
		members++;
		if (d->def.owner == c->cred.uid)
			mine++;
	}
	if (c->root) {
		if (D.nr_sessions >= MAX_SESSIONS + ROOT_EXTRA_SESSIONS) {
			snprintf(buf, len, "too many sessions (limit %d)",
				 MAX_SESSIONS + ROOT_EXTRA_SESSIONS);
			return buf;
		}
		return NULL;
	}
	if (mine >= USER_MAX_SESSIONS) {
		snprintf(buf, len, "too many sessions of uid %u (limit %d per user)",
			 (unsigned)c->cred.uid, USER_MAX_SESSIONS);
		return buf;
	}
	if (members >= MAX_SESSIONS) {
		snprintf(buf, len, "too many sessions (limit %d)", MAX_SESSIONS);
		return buf;
	}
	return memory_check(c, def_memory(def), buf, len);
}

const char *limits__record(const struct client *c, const struct recspec *spec, char *buf,
			   size_t len)
{
	return memory_check(c, spec->ringbuf_size + ANON_BACKLOG, buf, len);
}

/*
 * Kept rings, counted per user.  The fast lane's keeper calls these one at
 * a time under its lock, from whichever thread attaches or lets go of an
 * area (the pump's too): this state is theirs alone.
 */
static struct {
	struct { uint32_t uid, n; } *v;   /* n 0: a free entry */
	size_t nr;
	uint32_t members, root;           /* areas in the store: of non-root users, of root */
} kept;

/* uid's count (NULL: no room for a new user's) */
static uint32_t *kept_of(uint32_t uid, bool add)
{
	size_t i, free_one = kept.nr;
	void *nv;

	for (i = 0; i < kept.nr; i++) {
		if (kept.v[i].n && kept.v[i].uid == uid)
			return &kept.v[i].n;
		if (!kept.v[i].n && free_one == kept.nr)
			free_one = i;
	}
	if (!add)
		return NULL;
	if (free_one == kept.nr) {
		nv = realloc(kept.v, (kept.nr + 1) * sizeof(*kept.v));
		if (!nv)
			return NULL;
		kept.v = nv;
		kept.nr++;
	}
	kept.v[free_one].uid = uid;
	kept.v[free_one].n = 0;
	return &kept.v[free_one].n;
}

bool limits__keep_ring(uint32_t uid)
{
	uint32_t *n;

	if (!uid) {
		if (kept.root + kept.members >= KEPT_MAX)
			return false;
		kept.root++;
		return true;
	}
	if (kept.members >= KEPT_MAX - KEPT_ROOT || !(n = kept_of(uid, true)) || *n >= KEPT_PER_UID)
		return false;
	++*n;
	kept.members++;
	return true;
}

void limits__unkeep_ring(uint32_t uid)
{
	uint32_t *n;

	if (!uid) {
		kept.root -= kept.root > 0;
		return;
	}
	n = kept_of(uid, false);
	if (n && *n) {
		--*n;
		kept.members--;
	}
}

_Static_assert(COLLECTOR_MAX_SUBS >= MAX_ALL_SESSIONS + MAX_ALL_CLIENTS,
	       "one collector must take every session and recording the limits allow");

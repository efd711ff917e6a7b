/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the analysis model (profile.h), shared by its two files:
 *   profile.c       loading: the replay's records become threads, samples,
 *                   range instances, counters and kept markers; accessors
 *   profile_tree.c  strings, mappings, frames (an address cache per
 *                   process generation) and the call tree's nodes
 */
#ifndef PERFMARK_PROFILE_INT_H
#define PERFMARK_PROFILE_INT_H

#include "callchain.h"
#include "profile.h"
#include "replay.h"
#include "table.h"

#define PROFILE_MAX_EVENTS 64

/* A growing array of one element type. */
struct vec {
	void *v;
	size_t n, cap;
};

void *profile_vec_push(struct vec *a, size_t elsize);

#define VEC_PUSH(a, type) ((type *)profile_vec_push(&(a), sizeof(type)))
#define VEC_AT(a, type, i) (&((type *)(a).v)[i])

/* Per-thread reading state (kept beside struct profile_thread). */
struct thread_state {
	bool comm_dirty;
};

struct profile {
	struct replay *rp;          /* its reader and symbolizer outlive the run */
	struct symbolizer *sym;
	struct profile_opts o;
	struct strtab strs;
	struct vec mappings, frames, nodes, samples, ranges, threads, tstate, counters, marks, offcpus;
	struct vec locs, anodes;    /* keep_addrs */
	uint8_t *mark_data;
	size_t mark_len, mark_cap;
	struct idmap mapping_ids;   /* file string id -> mapping */
	struct idmap frame_ids;     /* name << 32 | mapping -> frame */
	struct idmap node_ids;      /* parent << 32 | frame -> node */
	struct idmap thread_ids;    /* tid -> thread */
	struct idmap counter_ids;   /* name -> counter */
	struct idmap addr_cache;    /* kernel addr, or gen << 47 | user addr -> frame */
	struct idmap proc_gen;      /* pid -> generation of its address cache entries */
	struct idmap loc_exact, loc_call;   /* as addr_cache -> loc (keep_addrs) */
	struct idmap comm_locs;     /* comm frame -> loc */
	struct idmap anode_ids;     /* parent << 32 | loc -> anode */
	uint32_t next_gen;
	uint32_t unknown;           /* string id of "[unknown]" */
	const struct perfread_event *sample_event;
	/* the event sample_event would be from the samples outside --cpu/--time */
	const struct perfread_event *dropped_event;
	uint64_t dropped;           /* samples outside --cpu/--time */
	/* sampling events seen, and their samples: few, searched in a line */
	const struct perfread_event *seen[PROFILE_MAX_EVENTS];
	struct profile_event seen_n[PROFILE_MAX_EVENTS];
	size_t nr_seen;
	uint64_t start, end;        /* of every sample with a time (start valid once any) */
	bool any_time;
	uint64_t lost;              /* PERF_RECORD_LOST and LOST_SAMPLES counts */
	uint64_t hidden_samples, hidden_period;    /* of the analysed event, by the filter */
	int err;                    /* the first -ENOMEM of a table */
};

/* profile_tree.c: each TABLE_NONE when out of memory (p->err set by the interning ones) */
uint32_t profile_intern(struct profile *p, const char *s, size_t len);
uint32_t profile_frame_of(struct profile *p, uint32_t name, uint32_t mapping, uint32_t kind,
			  uint64_t addr);
/* The frame of an address of process pid, symbolized once per process generation. */
uint32_t profile_frame_at(struct profile *p, uint32_t pid, const struct callchain_ip *ip);
uint32_t profile_node_of(struct profile *p, uint32_t parent, uint32_t frame);
/* keep_addrs: the loc of an address of pid (call: a caller's return address), of a comm frame */
uint32_t profile_loc_at(struct profile *p, uint32_t pid, const struct callchain_ip *ip, bool call);
uint32_t profile_comm_loc(struct profile *p, uint32_t frame);
uint32_t profile_anode_of(struct profile *p, uint32_t parent, uint32_t loc);
/* A user mapping changed in pid: its cached addresses may now mean other code. */
void profile_cache_forget(struct profile *p, uint32_t pid);

#endif

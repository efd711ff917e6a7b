/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The events of a perf.data file and the decoding that depends on them:
 * which event a record belongs to (by its sample id), the fields of a
 * PERF_RECORD_SAMPLE, and the sample_id trailer of every other record.
 * Shared by the writer (perfdata.c) and the reader (perfread.c): this is the
 * one place that knows where a record keeps its id and its time.
 *
 * Where the id is (as perf finds it, tools/perf/util/evlist.c):
 *   one event                 every record is that event's
 *   PERF_SAMPLE_IDENTIFIER    first u64 of a sample, last u64 of a trailer
 *   PERF_SAMPLE_ID only       after IP, TID, TIME, ADDR (those present) in a
 *                             sample; before STREAM_ID and CPU from a
 *                             trailer's end.  Taken from the first event's
 *                             sample_type, as perf does (it requires all
 *                             events to agree).
 *
 * Bounds: at most EVLIST_MAX_EVENTS events; the id index holds each id once
 * (the first event that claims it) in an open-addressing table of at most
 * 4 x 16 bytes per id, so inserts and lookups stay O(1) whatever the order.
 */
#ifndef PERFMARK_EVLIST_H
#define PERFMARK_EVLIST_H

#include "perfread.h"

#define EVLIST_MAX_EVENTS 4096

struct evlist;

int evlist__new(struct evlist **out);
void evlist__free(struct evlist *l);
/*
 * Add an event: attr_size bytes of attr (a shorter attr is zero-extended, a
 * longer one cut to the uapi struct), its name (NULL: the default perf name
 * for type/config) and nr_ids ids (unaligned).  0, -E2BIG past
 * EVLIST_MAX_EVENTS, -ENOMEM.
 */
int evlist__add(struct evlist *l, const void *attr, size_t attr_size, const char *name,
		const void *ids, uint32_t nr_ids);
size_t evlist__nr(const struct evlist *l);
struct perfread_event *evlist__event(const struct evlist *l, size_t i);
struct perfread_event *evlist__find(const struct evlist *l, uint64_t id);
/* Replace an event's name (copied).  0 or -ENOMEM. */
int evlist__set_name(struct perfread_event *e, const char *name);

/* Decode a PERF_RECORD_SAMPLE.  0, -EINVAL if malformed or of no event. */
int evlist__parse_sample(const struct evlist *l, const struct perf_event_header *rec,
			 struct perfread_sample *s);
/*
 * Time, pid/tid, cpu and id of any record: a sample's fields, else its
 * sample_id trailer.  0; -ENOENT when the record has none (sample_id_all
 * off, a perf-internal record type); -EINVAL when malformed.
 */
int evlist__sample_id(const struct evlist *l, const struct perf_event_header *rec,
		      struct perfread_sample_id *sid);

#endif

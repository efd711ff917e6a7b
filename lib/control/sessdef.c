// SPDX-License-Identifier: LGPL-2.1-or-later
/* A named session's definition and its JSON document.  See sessdef.h. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "errline.h"
#include "jsonf.h"
#include "sessdef.h"

void sessdef_init(struct sessdef *d)
{
	memset(d, 0, sizeof(*d));
	recspec_init(&d->spec);
	d->sink = SESSDEF_SINK_RING;
	d->ring_size = SESSDEF_RING_DEFAULT;
}

/* the keys of the document (sessdef.h), and of the sink object, as a client may send them */
#define DEF_KEYS   "name,spec,sink,count,owner,resolved,seq,stopped,error,message"
#define SINK_KEYS  "type,size,dir,rotate_size,rotate_secs,keep"
/* earlier perfmark: the recspec's and the sink's keys beside them */
#define FLAT_SINK_KEYS "ring_size,dir,rotate_size,rotate_secs,keep"

/*
 * "sink": {"type":..., ...}; earlier perfmark wrote "sink":"ring"|"file"
 * with "ring_size", "dir", "rotate_*" and "keep" beside it.
 */
static int sink_from_json(struct json_object *o, struct sessdef *d, bool trusted,
			  char *err, size_t errlen)
{
	struct json_object *so = NULL, *x;
	const char *type = NULL, *dir, *size_key = "size";
	uint64_t keep = 0;
	int e;

	if (json_object_object_get_ex(o, "sink", &x) && json_object_is_type(x, json_type_string)) {
		so = o;
		size_key = "ring_size";
		type = json_object_get_string(x);
	} else if ((e = jsonf_object(o, "sink", &so, err, errlen)) ||
		   (!trusted && (e = jsonf_known_keys(so, SINK_KEYS, "sink setting", err, errlen))) ||
		   (e = jsonf_str(so, "type", &type, err, errlen))) {
		return e;
	}
	if (type && strcmp(type, "ring") && strcmp(type, "file"))
		return errline(err, errlen, "the sink's type must be \"ring\" or \"file\"");
	d->sink = type && !strcmp(type, "file") ? SESSDEF_SINK_FILE : SESSDEF_SINK_RING;
	if ((e = jsonf_u64(so, size_key, &d->ring_size, SESSDEF_RING_MIN, SESSDEF_RING_MAX, err, errlen)) ||
	    (e = jsonf_u64(so, "rotate_size", &d->rotate_size, 0, UINT64_MAX >> 1, err, errlen)) ||
	    (e = jsonf_u64(so, "rotate_secs", &d->rotate_secs, 0, 366ull * 86400, err, errlen)) ||
	    (e = jsonf_u64(so, "keep", &keep, 0, SESSDEF_KEEP_MAX, err, errlen)) ||
	    (e = jsonf_str(so, "dir", &dir, err, errlen)))
		return e;
	d->keep = (uint32_t)keep;
	if (d->rotate_size && d->rotate_size < SESSDEF_ROTATE_MIN)
		return errline(err, errlen, "rotation size must be at least 64K");
	if (dir) {
		if (dir[0] != '/' || strlen(dir) >= sizeof(d->dir))
			return errline(err, errlen, "output directory must be an absolute path");
		snprintf(d->dir, sizeof(d->dir), "%s", dir);
	}
	if (d->sink == SESSDEF_SINK_FILE && !d->dir[0])
		return errline(err, errlen, "a file sink needs an output directory");
	if (d->sink == SESSDEF_SINK_RING && (d->rotate_size || d->rotate_secs || d->keep))
		return errline(err, errlen, "--rotate and --keep need --output DIR");
	return 0;
}

/* "count": [EVENT, ...], each one event as perf stat names it (no globs) */
static int count_from_json(struct json_object *o, struct sessdef *d, char *err, size_t errlen)
{
	struct json_object *arr, *x;
	size_t i;
	int e = jsonf_array(o, "count", &arr, SESSDEF_MAX_COUNT, err, errlen);

	if (e)
		return e;
	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		x = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(x, json_type_string) ||
		    evspec_lookup_for(json_object_get_string(x), EVSPEC_COUNTING, &d->count[i]))
			return errline(err, errlen, "cannot count '%.64s': unknown event",
				       json_object_is_type(x, json_type_string) ?
				       json_object_get_string(x) : "?");
		d->nr_count = i + 1;
	}
	return 0;
}

static int state_from_json(struct json_object *o, struct sessdef *d, char *err, size_t errlen)
{
	struct json_object *arr, *x;
	struct evspec tmp;
	const char *s;
	uint64_t v = 0;
	size_t i;
	int e;

	if ((e = jsonf_u64(o, "owner", &v, 0, UINT32_MAX, err, errlen)) ||
	    (e = jsonf_array(o, "resolved", &arr, RECSPEC_MAX_EVENTS, err, errlen)))
		return e;
	d->owner = (uint32_t)v;
	for (i = 0; arr && i < json_object_array_length(arr); i++) {
		x = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(x, json_type_string) ||
		    evspec_lookup(json_object_get_string(x), &tmp))
			return errline(err, errlen, "bad resolved event");
		snprintf(d->resolved[i], sizeof(d->resolved[i]), "%s", tmp.name);
		d->nr_resolved = i + 1;
	}
	if ((e = jsonf_u64(o, "seq", &d->seq, 0, UINT64_MAX >> 1, err, errlen)) ||
	    (e = jsonf_bool(o, "stopped", &d->stopped, err, errlen)) ||
	    (e = jsonf_bool(o, "error", &d->error, err, errlen)) ||
	    (e = jsonf_str(o, "message", &s, err, errlen)))
		return e;
	if (s)
		snprintf(d->message, sizeof(d->message), "%s", s);
	return 0;
}

/* earlier perfmark's flat document: every key of it */
static const char *flat_keys(char *buf, size_t len)
{
	snprintf(buf, len, "%s,%s,%s", DEF_KEYS, FLAT_SINK_KEYS, recspec_json_keys);
	return buf;
}

int sessdef_from_json(struct json_object *o, struct sessdef *d, bool trusted,
		      char *err, size_t errlen)
{
	struct json_object *spec;
	char flat[512];
	const char *name;
	int e;

	sessdef_init(d);
	if (!json_object_is_type(o, json_type_object))
		return errline(err, errlen, "definition must be an object");
	if ((e = jsonf_str(o, "name", &name, err, errlen)) ||
	    (e = jsonf_object(o, "spec", &spec, err, errlen)))
		return e;
	/* a client's document: what this daemon does not know is refused, not dropped */
	if (!trusted && (e = jsonf_known_keys(o, spec ? DEF_KEYS : flat_keys(flat, sizeof(flat)),
					      spec ? "session setting" : "option", err, errlen)))
		return e;
	if (name) {
		if (!proto_name_valid(name))
			return errline(err, errlen, "invalid session name");
		snprintf(d->name, sizeof(d->name), "%s", name);
	}
	/* earlier perfmark: the recspec's keys at the top level */
	if ((e = spec ? recspec_from_json(spec, &d->spec, err, errlen) :
			recspec_from_json_in(o, &d->spec, err, errlen)) ||
	    (e = sink_from_json(o, d, trusted, err, errlen)) ||
	    (e = count_from_json(o, d, err, errlen)))
		return e;
	if (d->spec.target == RECSPEC_TARGET_PIDS && !d->spec.nr_pids)
		return errline(err, errlen, "target \"pids\" needs at least one pid");
	return trusted ? state_from_json(o, d, err, errlen) : 0;
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

static struct json_object *sink_to_json(const struct sessdef *d, bool all)
{
	struct json_object *o = json_object_new_object();

	if (d->sink == SESSDEF_SINK_RING) {
		json_object_object_add(o, "type", json_object_new_string("ring"));
		if (all || d->ring_size != SESSDEF_RING_DEFAULT)
			add_u64(o, "size", d->ring_size);
		return o;
	}
	json_object_object_add(o, "type", json_object_new_string("file"));
	json_object_object_add(o, "dir", json_object_new_string(d->dir));
	if (d->rotate_size)
		add_u64(o, "rotate_size", d->rotate_size);
	if (d->rotate_secs)
		add_u64(o, "rotate_secs", d->rotate_secs);
	if (d->keep)
		add_u64(o, "keep", d->keep);
	return o;
}

struct json_object *sessdef_to_json(const struct sessdef *d, bool with_state)
{
	struct json_object *o = json_object_new_object(), *a;
	size_t i;

	if (!o)
		return NULL;
	if (d->name[0])
		json_object_object_add(o, "name", json_object_new_string(d->name));
	/* without the state: a client's request, only what differs from the defaults */
	json_object_object_add(o, "spec", recspec_to_json(&d->spec, with_state));
	json_object_object_add(o, "sink", sink_to_json(d, with_state));
	if (d->nr_count) {
		a = json_object_new_array();
		for (i = 0; i < d->nr_count; i++)
			json_object_array_add(a, json_object_new_string(d->count[i].name));
		json_object_object_add(o, "count", a);
	}
	if (!with_state)
		return o;
	add_u64(o, "owner", d->owner);
	a = json_object_new_array();
	for (i = 0; i < d->nr_resolved; i++)
		json_object_array_add(a, json_object_new_string(d->resolved[i]));
	json_object_object_add(o, "resolved", a);
	add_u64(o, "seq", d->seq);
	json_object_object_add(o, "stopped", json_object_new_boolean(d->stopped));
	json_object_object_add(o, "error", json_object_new_boolean(d->error));
	if (d->message[0])
		json_object_object_add(o, "message", json_object_new_string(d->message));
	return o;
}

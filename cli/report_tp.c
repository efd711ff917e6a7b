// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark report -e TRACEPOINT --sort KEY[,KEY...] [--json]: a
 * tracepoint's hits counted by the values of its keys, as perf report
 * --sort counts them: comm, pid, tid, cpu, or any field of the event
 * ("--sort comm,prev_state").  Rows by hits, most first.
 *
 * The recording is read once, in file order (a count needs no time
 * order); a thread's comm is the last COMM record read for it, or its
 * parent's at its FORK.  Memory:
 * one string per distinct row and per thread name (bounded by the input).
 * Values are data: escaped for the terminal and for JSON (escape.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commname.h"
#include "analysis.h"
#include "commands.h"
#include "escape.h"
#include "grow.h"
#include "perfread.h"
#include "report_tp.h"
#include "table.h"
#include "tracepoint.h"

#define KEYS_MAX 4
#define SEP '\x1f'         /* between the keys of a row (never in a value: escaped) */

enum key_kind { KEY_COMM, KEY_PID, KEY_TID, KEY_CPU, KEY_FIELD };

struct key {
	char name[64];
	enum key_kind kind;
	int field;             /* KEY_FIELD: the field's index */
};

struct tpreport {
	struct perfread *r;
	struct tpdecode *d;
	const struct perfread_event *event;
	const struct tpdecode_event *tev;
	struct key keys[KEYS_MAX];
	bool numeric[KEYS_MAX];     /* KEY_FIELD: a number */
	size_t nkeys;
	struct strtab comms;   /* thread names */
	struct idmap comm_of;  /* tid -> name id */
	struct strtab rows;    /* the keys' values joined by SEP */
	uint64_t *hits;        /* per row id */
	size_t nhits, caphits;
	uint64_t total, undecoded;
};

static const char *evname(const struct tpreport *t)
{
	return t->event->name ? t->event->name : "the tracepoint";
}

static int parse_keys(struct tpreport *t, const char *list, const char *input)
{
	static const struct { const char *name; enum key_kind kind; } fixed[] = {
		{ "comm", KEY_COMM }, { "pid", KEY_PID }, { "tid", KEY_TID }, { "cpu", KEY_CPU },
	};
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ","), i;
		struct key *k = &t->keys[t->nkeys];

		if (!n || n >= sizeof(k->name))
			return pm_err("bad --sort '%s'", list);
		if (t->nkeys == KEYS_MAX)
			return pm_err("--sort: at most %d keys", KEYS_MAX);
		memcpy(k->name, p, n);
		k->name[n] = '\0';
		for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			if (!strcmp(k->name, fixed[i].name))
				break;
		if (i < sizeof(fixed) / sizeof(fixed[0])) {
			k->kind = fixed[i].kind;
		} else {
			k->kind = KEY_FIELD;
			k->field = tpdecode__field_index(t->tev, k->name);
			if (k->field < 0)
				return pm_err("%s: %s has no field '%s' (sort by comm, pid, tid, cpu or its "
					      "fields)", pm_input_name(input), evname(t), k->name);
			t->numeric[t->nkeys] = tpdecode__field_numeric(t->tev, (size_t)k->field);
		}
		t->nkeys++;
		p += n + (p[n] == ',');
	}
	return t->nkeys ? 0 : pm_err("bad --sort '%s'", list);
}

/* the event to count: the one named, else the first tracepoint */
static int find_event(struct tpreport *t, const char *name, const char *input)
{
	size_t i, n = perfread__nr_events(t->r);
	const uint8_t *data;
	char err[160];
	size_t len;

	for (i = 0; i < n && !t->event; i++) {
		const struct perfread_event *e = perfread__event(t->r, i);

		if (e->attr.type == PERF_TYPE_TRACEPOINT && (!name || (e->name && !strcmp(e->name, name))))
			t->event = e;
	}
	if (!t->event)
		return name ? pm_err("%s: no tracepoint '%s' in this recording", pm_input_name(input), name)
			    : pm_err("%s: no tracepoint in this recording: --sort by fields needs one "
				     "(record -e SUBSYS:NAME)", pm_input_name(input));
	data = perfread__tracing_data(t->r, &len);
	if (!data)
		return pm_err("%s: no tracing data: the fields of %s cannot be read", pm_input_name(input),
			      evname(t));
	if (tpdecode__new(&t->d, data, len, err, sizeof(err)) < 0)
		return pm_err("%s: %s", pm_input_name(input), err);
	t->tev = tpdecode__event(t->d, t->event->attr.config);
	if (!t->tev)
		return pm_err("%s: the recording has no format for %s", pm_input_name(input), evname(t));
	return 0;
}

/* one key's value as text into b */
static void key_text(struct tpreport *t, const struct key *k, const struct perfread_sample *s,
		     char *b, size_t len)
{
	struct tpvalue v;
	char cb[COMMNAME_LEN];
	uint32_t id;

	switch (k->kind) {
	case KEY_COMM:
		id = idmap__get(&t->comm_of, s->tid);
		if (id != TABLE_NONE)
			snprintf(b, len, "%s", strtab__str(&t->comms, id));
		else
			snprintf(b, len, "%s", comm_or_tid(NULL, s->tid, cb));
		return;
	case KEY_PID:
		snprintf(b, len, "%u", s->pid);
		return;
	case KEY_TID:
		snprintf(b, len, "%u", s->tid);
		return;
	case KEY_CPU:
		snprintf(b, len, "%u", s->cpu);
		return;
	case KEY_FIELD:
		break;
	}
	tpdecode__value(t->tev, s->raw, s->raw_size, (size_t)k->field, &v);
	switch (v.kind) {
	case TPV_INT:
		snprintf(b, len, "%" PRId64, v.i);
		break;
	case TPV_UINT:
		snprintf(b, len, "%" PRIu64, v.u);
		break;
	case TPV_STR:
		snprintf(b, len, "%.*s", (int)(v.len < len ? v.len : len - 1), v.s);
		break;
	case TPV_ARRAY:
		snprintf(b, len, "[%zu]", v.n);
		break;
	}
}

static int count(struct tpreport *t, const struct perfread_sample *s)
{
	const struct tpdecode_event *ev;
	char row[1024], one[256];
	size_t n = 0, k;
	uint32_t id;

	if (!s->raw || tpdecode__entry(t->d, s->raw, s->raw_size, &ev) || ev != t->tev) {
		t->undecoded++;
		return 0;
	}
	for (k = 0; k < t->nkeys; k++) {
		key_text(t, &t->keys[k], s, one, sizeof(one));
		for (char *c = one; *c; c++)
			if (*c == SEP)
				*c = '?';
		n += (size_t)snprintf(row + n, sizeof(row) - n, "%s%s", k ? "\x1f" : "", one);
		if (n >= sizeof(row))
			n = sizeof(row) - 1;
	}
	id = strtab__intern(&t->rows, row, n);
	if (id == TABLE_NONE || grow_to(&t->hits, &t->caphits, (size_t)id + 1, sizeof(*t->hits), 64))
		return -ENOMEM;
	if (id == t->nhits)            /* a new row */
		t->hits[t->nhits++] = 0;
	t->hits[id]++;
	t->total++;
	return 0;
}

static int read_all(struct tpreport *t, const char *input)
{
	const struct perf_event_header *rec;
	struct perfread_sample s;
	int r;

	while ((r = perfread__next(t->r, &rec)) > 0) {
		if (rec->type == PERF_RECORD_COMM && rec->size >= sizeof(*rec) + 8 + 1) {
			const char *name = (const char *)(rec + 1) + 8;
			uint32_t tid, id;

			memcpy(&tid, (const char *)(rec + 1) + 4, 4);
			id = strtab__intern(&t->comms, name, strnlen(name, rec->size - sizeof(*rec) - 8));
			if (id == TABLE_NONE || idmap__put(&t->comm_of, tid, id) < 0)
				return pm_err("out of memory");
		} else if (rec->type == PERF_RECORD_FORK && rec->size >= sizeof(*rec) + 16) {
			/* a new thread has its parent's name until it execs (pid, ppid, tid, ptid) */
			uint32_t tid, ptid, id;

			memcpy(&tid, (const char *)(rec + 1) + 8, 4);
			memcpy(&ptid, (const char *)(rec + 1) + 12, 4);
			id = idmap__get(&t->comm_of, ptid);
			if (id != TABLE_NONE && idmap__put(&t->comm_of, tid, id) < 0)
				return pm_err("out of memory");
		} else if (rec->type == PERF_RECORD_SAMPLE && !perfread__parse_sample(t->r, rec, &s) &&
			   s.event == t->event && count(t, &s) < 0) {
			return pm_err("out of memory");
		}
	}
	if (r < 0)
		return pm_err("%s: %s", pm_input_name(input), perfread__error(t->r));
	return 0;
}

/* row ids by hits, most first (ties: first seen first) */
static uint32_t *order(const struct tpreport *t)
{
	uint32_t *ids = malloc((t->nhits + 1) * sizeof(*ids)), i, j, v;

	for (i = 0; ids && i < t->nhits; i++) {
		v = i;
		for (j = i; j > 0 && t->hits[ids[j - 1]] < t->hits[v]; j--)
			ids[j] = ids[j - 1];
		ids[j] = v;
	}
	return ids;
}

static void print_text(const struct tpreport *t, const uint32_t *ids)
{
	size_t k;

	printf("# %" PRIu64 " hits of ", t->total);
	escape_term(stdout, evname(t), strlen(evname(t)), 0);
	printf(", by");
	for (k = 0; k < t->nkeys; k++)
		printf("%s %s", k ? "," : "", t->keys[k].name);
	if (t->undecoded)
		printf(" (%" PRIu64 " more not decoded)", t->undecoded);
	printf("\n#\n#     Hits  Percent");
	for (k = 0; k < t->nkeys; k++)
		printf(k + 1 < t->nkeys ? "  %-16s" : "  %s", t->keys[k].name);
	printf("\n");
	for (size_t i = 0; i < t->nhits; i++) {
		const char *row = strtab__str(&t->rows, ids[i]);

		printf("%10" PRIu64 " %7.2f%%", t->hits[ids[i]],
		       t->total ? 100.0 * (double)t->hits[ids[i]] / (double)t->total : 0.0);
		for (k = 0; k < t->nkeys; k++) {
			size_t n = strcspn(row, "\x1f"), w;

			fputs("  ", stdout);
			w = escape_term(stdout, row, n, 0);
			for (; k + 1 < t->nkeys && w < 16; w++)
				putchar(' ');
			row += n + (row[n] != '\0');
		}
		printf("\n");
	}
}

static void print_json(const struct tpreport *t, const uint32_t *ids, const char *input)
{
	struct json_object *doc = json_object_new_object(), *rows = json_object_new_array(), *sort;
	size_t k;

	sort = json_object_new_array();
	for (k = 0; k < t->nkeys; k++)
		json_object_array_add(sort, json_object_new_string(t->keys[k].name));
	json_object_object_add(doc, "input", escape_json_object(input, strlen(input)));
	json_object_object_add(doc, "event", escape_json_object(evname(t), strlen(evname(t))));
	json_object_object_add(doc, "hits", json_object_new_uint64(t->total));
	json_object_object_add(doc, "undecoded", json_object_new_uint64(t->undecoded));
	json_object_object_add(doc, "sort", sort);
	for (size_t i = 0; i < t->nhits; i++) {
		const char *row = strtab__str(&t->rows, ids[i]);
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "hits", json_object_new_uint64(t->hits[ids[i]]));
		for (k = 0; k < t->nkeys; k++) {
			size_t n = strcspn(row, "\x1f");
			const struct key *key = &t->keys[k];
			bool num = key->kind == KEY_PID || key->kind == KEY_TID || key->kind == KEY_CPU;

			/* a number field's value as a number, a string's as a string */
			if (key->kind == KEY_FIELD)
				num = t->numeric[k];
			if (num && row[0] == '-')
				json_object_object_add(o, key->name, json_object_new_int64(strtoll(row, NULL, 10)));
			else if (num)
				json_object_object_add(o, key->name, json_object_new_uint64(strtoull(row, NULL, 10)));
			else
				json_object_object_add(o, key->name, escape_json_object(row, n));
			row += n + (row[n] != '\0');
		}
		json_object_array_add(rows, o);
	}
	json_object_object_add(doc, "rows", rows);
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
}

int report_tp(const char *input, const char *event, const char *sort, bool json)
{
	struct tpreport t = { 0 };
	uint32_t *ids = NULL;
	int fd, r;

	fd = strcmp(input, "-") ? open(input, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0)
		return pm_err("%s: %s", input, strerror(errno));
	r = perfread__open(&t.r, fd);
	if (r < 0)
		r = pm_err("%s: %s", pm_input_name(input), t.r ? perfread__error(t.r) : strerror(-r));
	if (!r)
		r = find_event(&t, event, input);
	if (!r)
		r = parse_keys(&t, sort, input);
	if (!r)
		r = read_all(&t, input);
	if (!r && !(ids = order(&t)))
		r = pm_err("out of memory");
	if (!r && json)
		print_json(&t, ids, input);
	else if (!r)
		print_text(&t, ids);
	free(ids);
	free(t.hits);
	strtab__free(&t.rows);
	strtab__free(&t.comms);
	idmap__free(&t.comm_of);
	tpdecode__free(t.d);
	perfread__free(t.r);
	if (fd > STDIN_FILENO)
		close(fd);
	if (!r)
		r = pm_output_close(stdout, NULL);
	return r ? 1 : 0;
}

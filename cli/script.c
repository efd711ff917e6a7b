/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark script [-i FILE|-] [--type N] [--json]
 *
 * Reads a perf.data file (file or pipe mode, compressed or not), keeps the
 * samples, markers, lost counts and sideband, orders them by time (stable,
 * so records of equal time keep the file's order) and prints them
 * (script_print.c): text like `perf script`, or one JSON object per line
 * (perfmark(1)).  Sideband feeds the symbolizer as it comes in time order,
 * so a sample is named with the maps of its moment.  Bounds: script.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opts.h"
#include "marker.h"
#include "tracepoint.h"
#include "script.h"
#include "uevent.h"
#include "grow.h"

/* ---- loading ---------------------------------------------------------------- */

static int arena_add(struct script *sc, const struct perf_event_header *rec, uint64_t time)
{
	size_t len = (rec->size + 7) & ~(size_t)7;

	if (grow_to(&sc->arena, &sc->arena_cap, sc->arena_len + len, 1, 1u << 20) ||
	    grow_to(&sc->ents, &sc->capents, sc->nents + 1, sizeof(*sc->ents), 4096))
		return -ENOMEM;
	memcpy(sc->arena + sc->arena_len, rec, rec->size);
	memset(sc->arena + sc->arena_len + rec->size, 0, len - rec->size);
	sc->ents[sc->nents] = (struct entry){ .time = time, .seq = sc->nents, .off = sc->arena_len };
	sc->nents++;
	sc->arena_len += len;
	return 0;
}

bool script__is_marker(const struct perfread_sample *s, bool *uevent)
{
	const char *n = s->event ? s->event->name : NULL;

	if (!n)
		return false;
	if (!strcmp(n, EV_PRINTF)) {
		*uevent = false;
		return true;
	}
	if (!strcmp(n, EV_UEVENT)) {
		*uevent = true;
		return true;
	}
	return false;
}

/* The uevent header and payload of a raw field, or NULL when malformed. */
const struct perfmark_uevent_hdr *script__uevent_hdr(const struct perfread_sample *s,
						     const uint8_t **data)
{
	static struct perfmark_uevent_hdr h;

	if (!s->raw || s->raw_size < sizeof(h))
		return NULL;
	memcpy(&h, s->raw, sizeof(h));
	if (h.size > s->raw_size - sizeof(h))
		return NULL;
	*data = (const uint8_t *)s->raw + sizeof(h);
	return &h;
}

/* JIT code markers name code for the symbolizer before any sample is printed. */
static void note_jit(struct script *sc, const struct perfread_sample *s)
{
	const struct perfmark_uevent_hdr *h;
	const uint8_t *d;
	const char *name;
	char buf[PERFMARK_MAX_PAYLOAD + 1];
	uint64_t addr, size;
	size_t len;
	bool uevent;

	if (!script__is_marker(s, &uevent) || !uevent)
		return;
	h = script__uevent_hdr(s, &d);
	if (!h || h->version != PERFMARK_UEVENT_VERSION || h->type != PERFMARK_TYPE_JIT_CODE ||
	    h->size < 17 || !(name = marker_name(d + 16, h->size - 16, &len)))
		return;
	memcpy(&addr, d, 8);
	memcpy(&size, d + 8, 8);
	len = len < PERFMARK_MAX_PAYLOAD ? len : PERFMARK_MAX_PAYLOAD;
	memcpy(buf, name, len);
	buf[len] = '\0';
	symbolizer__add_jit(sc->sym, s->pid, addr, size, buf);
}

/*
 * Keep every record of interest, with its time (perfread__sample_id: the
 * one decoder of where and when a record happened).  0, or a negative
 * errno with the reason in *why (what was read before is kept and printed).
 */
static int load(struct script *sc, const char **why)
{
	const struct perf_event_header *rec;
	int r;

	while ((r = perfread__next(sc->r, &rec)) > 0) {
		struct perfread_sample_id sid;

		if (!perfread_for_samples(rec->type))
			continue;
		if (rec->type == PERF_RECORD_SAMPLE) {
			struct perfread_sample s;

			if (perfread__parse_sample(sc->r, rec, &s) < 0)
				continue;   /* malformed sample: skip it, as perf does */
			note_jit(sc, &s);
		}
		perfread__sample_id(sc->r, rec, &sid);   /* time 0 when it has none */
		if (arena_add(sc, rec, sid.time) < 0) {
			*why = "out of memory";
			return -ENOMEM;
		}
	}
	if (r < 0) {
		const char *msg = perfread__error(sc->r);

		*why = msg && *msg ? msg : strerror(-r);
		return r;
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- ranges --------------------------------------------------------------------- */

/*
 * Open ranges by (tid, name): each key's innermost open range, each range
 * the one it nests in.  O(1) per begin and end, whatever the input holds
 * (a scan over all open ranges took 7.6 s for 60,000 unmatched ones).
 */
static uint64_t range_key(struct script *sc, uint32_t tid, const char *name, size_t len)
{
	uint32_t id = strtab__intern(&sc->range_names, name, len);

	return id == TABLE_NONE ? UINT64_MAX : (uint64_t)tid << 32 | id;
}

void script__range_begin(struct script *sc, uint32_t tid, const char *name, size_t len,
			 uint64_t time)
{
	uint64_t key = range_key(sc, tid, name, len);
	uint32_t top;

	if (key == UINT64_MAX || sc->nranges >= UINT32_MAX - 1)
		return;
	if (grow_to(&sc->ranges, &sc->capranges, sc->nranges + 1, sizeof(*sc->ranges), 64))
		return;
	top = idmap__get(&sc->open_idx, key);
	if (idmap__put(&sc->open_idx, key, (uint32_t)sc->nranges + 1) < 0)
		return;
	sc->ranges[sc->nranges++] = (struct open_range){
		.time = time, .prev = top == TABLE_NONE ? 0 : top };
}

/* The innermost open range of tid named name: its duration, closed. */
bool script__range_end(struct script *sc, uint32_t tid, const char *name, size_t len,
		       uint64_t time, uint64_t *dur)
{
	uint64_t key = range_key(sc, tid, name, len);
	uint32_t top = key == UINT64_MAX ? TABLE_NONE : idmap__get(&sc->open_idx, key);
	const struct open_range *o;

	if (top == TABLE_NONE || top == 0)
		return false;
	o = &sc->ranges[top - 1];
	*dur = time >= o->time ? time - o->time : 0;
	idmap__put(&sc->open_idx, key, o->prev);
	return true;
}

/* ---- the run ------------------------------------------------------------------------ */

/* In time order; stops at the first output error (errno in *write_err). */
static void print_all(struct script *sc, int *write_err)
{
	for (size_t i = 0; i < sc->nents && !ferror(sc->out); i++) {
		const struct perf_event_header *rec =
			(const struct perf_event_header *)(sc->arena + sc->ents[i].off);
		struct perfread_sample s;
		bool uevent;

		errno = 0;
		switch (rec->type) {
		case PERF_RECORD_SAMPLE:
			if (perfread__parse_sample(sc->r, rec, &s) < 0)
				break;
			if (script__is_marker(&s, &uevent))
				script__print_marker(sc, &s, uevent);
			else if (!sc->o.filter_type)
				script__print_sample(sc, &s);
			break;
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			script__print_lost(sc, rec);
			break;
		default:
			symbolizer__record(sc->sym, rec);
			break;
		}
		if (ferror(sc->out))
			*write_err = errno ? errno : EIO;
	}
}

int script__run(struct script *sc, int fd, const char **why, int *write_err)
{
	int r;

	*why = NULL;
	*write_err = 0;
	r = perfread__open_opts(&sc->r, fd, &sc->o.read);
	if (r < 0) {
		const char *msg = sc->r ? perfread__error(sc->r) : NULL;

		*why = msg && *msg ? msg : strerror(-r);
		return 1;
	}
	r = symbolizer__new(&sc->sym);
	if (r < 0) {
		*why = strerror(-r);
		return 1;
	}
	r = load(sc, why);
	if (sc->nents)
		qsort(sc->ents, sc->nents, sizeof(*sc->ents), entry_cmp);
	print_all(sc, write_err);
	if (!*write_err && fflush(sc->out) == EOF)
		*write_err = errno ? errno : EIO;
	if (!*why && symbolizer__error(sc->sym))
		*why = symbolizer__error(sc->sym);
	return *write_err || r < 0 || *why ? 1 : 0;
}

void script__free(struct script *sc)
{
	free(sc->ranges);
	idmap__free(&sc->open_idx);
	strtab__free(&sc->range_names);
	free(sc->arena);
	free(sc->ents);
	symbolizer__free(sc->sym);
	tpdecode__free(sc->tp);
	perfread__free(sc->r);
}

/* ---- command ----------------------------------------------------------------------- */

static int set_type(void *ctx, const struct opt *opt, const char *arg)
{
	struct script_opts *o = ctx;
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!*arg || *end || arg[0] == '-' || arg[0] == '+' || arg[0] == ' ' || errno ||
	    v > UINT32_MAX)
		return pm_err("bad --type '%s'", arg);
	o->filter_type = true;
	o->type = (uint32_t)v;
	return 0;
}

static const struct opt script_table[] = {
	OPT_INPUT(struct script_opts, input),
	{ .name = "type", .arg = "N",
	  .help = "only markers of this type (0 strings, 1/2 range begin/end, "
	    "3 counters, 4 JIT code, 65536 up: the application's)",
	  .def = "every record", .set = set_type },
	{ .name = "json", .help = "one JSON object a line instead of text", .set = opt_set_true,
	  .off = offsetof(struct script_opts, json) },
	{ 0 },
};

const struct opts_cmd script_cmd = {
	.name = "script",
	.brief = "print samples and markers in time order (text or JSON)",
	.about = "Print a recording's samples and markers in time order, as text or JSON.",
	.in_order = true,
	.tables = { script_table },
};

/* 0: go on; 1: --help printed; -EINVAL after the error line */
static int parse_args(int argc, char **argv, struct script_opts *o)
{
	void *ctx[] = { o };
	int e;

	o->input = "perf.data";
	e = opts_parse(&script_cmd, ctx, argc, argv);
	if (e)
		return e == OPTS_HELP ? 1 : -EINVAL;
	if (optind < argc) {
		pm_err("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_script(int argc, char **argv)
{
	struct script sc = { .out = stdout };
	const char *why = NULL;
	int fd, r, werr;

	r = parse_args(argc, argv, &sc.o);
	if (r)
		return r > 0 ? 0 : 1;
	if (!strcmp(sc.o.input, "-")) {
		fd = STDIN_FILENO;
	} else {
		fd = open(sc.o.input, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return pm_err("%s: %s", sc.o.input, strerror(errno));
	}
	r = script__run(&sc, fd, &why, &werr);
	if (werr)
		pm_err("write error: %s", strerror(werr));
	else if (why)
		pm_err("%s: %s", strcmp(sc.o.input, "-") ? sc.o.input : "<stdin>", why);
	script__free(&sc);
	if (fd > STDIN_FILENO)
		close(fd);
	return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark script [-i FILE|-] [--type N] [--json]
 *                 [perf's filters: --comm --pid --tid --dso --sym --cpu --time]
 *
 * Reads a perf.data file (file or pipe mode, compressed or not) in time
 * order, as report, flamegraph and export do (lib/analyze/replay.h: sorted
 * per round as perf does, the sideband fed to the symbolizer as it comes,
 * so a sample is named with the maps of its moment; markers decoded and
 * ranges paired), and prints its samples, markers and lost counts: text
 * like `perf script` (script_text.c), or one JSON object per line
 * (script_json.c, perfmark(1)).  Bounds: script.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callchain.h"
#include "commands.h"
#include "evnames.h"
#include "filteropts.h"
#include "obuf.h"
#include "opts.h"
#include "replay.h"
#include "script.h"

/* ---- decoding -------------------------------------------------------------------- */

static const char *event_name(const struct perfread_event *e, char *buf, size_t size)
{
	const char *n;

	if (!e)
		return "unknown";
	if (e->name && *e->name)
		return e->name;
	n = evname_of(e->attr.type, e->attr.config);
	if (n)
		return n;
	snprintf(buf, size, "%u:%llu", e->attr.type, (unsigned long long)e->attr.config);
	return buf;
}

static struct script_head head_of(struct script *sc, const struct perfread_sample *s,
				  const char *event)
{
	return (struct script_head){ .time = s->time, .pid = s->pid, .tid = s->tid, .cpu = s->cpu,
		.comm = symbolizer__comm(sc->sym, s->tid), .event = event };
}

static int cpumode_kernel(uint16_t misc)
{
	uint16_t m = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL;
}

/* The sample's ip and call chain (as report has it: dwarf samples unwound), symbolized. */
static void decode_sample(struct script *sc, const struct perfread_sample *s,
			  struct script_sample *out)
{
	static struct callchain_ip ips[CALLCHAIN_MAX];
	size_t n = 0;

	out->period = s->period;
	if (s->nr_ips || s->stack_size)
		n = callchain__get(sc->sym, sc->r, s, ips, CALLCHAIN_MAX);
	/* after the unwinding, which may read maps: the versions are the lookups' */
	frame_cache__sample(sc->frames, s->pid);
	frame_cache__get(sc->frames, s->ip, cpumode_kernel(s->misc), &out->at);
	for (size_t i = 0; i < n; i++)
		frame_cache__get(sc->frames, ips[i].ip, ips[i].kernel, &sc->chain[i]);
	out->chain = sc->chain;
	out->nchain = n;
	out->tp = script_tp__decode(sc, s);
}

/* ---- the run ------------------------------------------------------------------------ */

/* After a printer wrote: an output error stops the run (errno in sc->write_err). */
static int printed(struct script *sc)
{
	if (!sc->ob->err)
		return 0;
	sc->write_err = sc->ob->err;
	return -EIO;
}

static int on_sample(void *ctx, const struct perfread_sample *s)
{
	struct script *sc = ctx;
	struct script_sample ss;
	struct offcpu off;
	char nb[48];

	if (sc->o.filter_type)
		return 0;   /* --type shows markers only */
	ss.h = head_of(sc, s, event_name(s->event, nb, sizeof(nb)));
	decode_sample(sc, s, &ss);
	ss.off = NULL;
	ss.waker = sc->waker;
	ss.nwaker = 0;
	if (offcpu__event(ss.h.event)) {
		offcpu__decode(&off, s->raw, s->raw_size);
		ss.off = &off;
		/* where the waker was, in its own process (the decoder bounds the count) */
		for (uint32_t i = 0; i < off.nr_waker_kstack + off.nr_waker_ustack; i++, ss.nwaker++) {
			sc->waker[i].ip = offcpu__waker_ip(&off, i);
			symbolizer__lookup(sc->sym, off.waker_pid, sc->waker[i].ip,
					   i < off.nr_waker_kstack, &sc->waker[i].loc);
		}
	}
	sc->pr->sample(sc->ob, &ss);
	return printed(sc);
}

static int on_marker(void *ctx, const struct perfread_sample *s, const struct replay_marker *rm)
{
	struct script *sc = ctx;
	const struct marker *m = &rm->m;
	struct script_marker sm = { .m = m };

	if (rm->outside || (sc->o.filter_type && (m->state != MARKER_OK || m->type != sc->o.type)))
		return 0;
	sm.h = head_of(sc, s, m->event == MARKER_UEVENT ? PERFMARK_EV_UEVENT : PERFMARK_EV_PRINTF);
	if (m->type == PERFMARK_TYPE_RANGE_END && rm->pair.id != MARKER_NO_RANGE) {
		sm.has_duration = true;
		sm.duration = rm->pair.duration;
	}
	sc->pr->marker(sc->ob, &sm);
	return printed(sc);
}

static int on_lost(void *ctx, const struct perf_event_header *rec, uint64_t lost)
{
	struct script *sc = ctx;
	struct perfread_sample_id sid;
	struct script_head h;

	if (sc->o.filter_type)
		return 0;
	perfread__sample_id(sc->r, rec, &sid);   /* zeros when it has none */
	h = (struct script_head){ .time = sid.time, .pid = sid.pid, .tid = sid.tid, .cpu = sid.cpu,
		.event = "lost" };
	sc->pr->lost(sc->ob, &h, lost);
	return printed(sc);
}

int script__run(struct script *sc, int fd, const char **why, int *write_err)
{
	static const struct replay_ops ops = {
		.sample = on_sample, .marker = on_marker, .lost = on_lost,
	};
	int r;

	*why = NULL;
	*write_err = 0;
	sc->pr = sc->o.json ? &script_json : &script_text;
	sc->chain = calloc(CALLCHAIN_MAX, sizeof(*sc->chain));
	sc->ob = malloc(sizeof(*sc->ob));
	if (sc->ob)
		obuf__init(sc->ob, sc->out);
	r = replay__open(&sc->rp, fd, &sc->o.read);
	if (r < 0 || !sc->chain || !sc->ob) {
		*why = r < 0 ? replay__error(sc->rp) : strerror(ENOMEM);
		return 1;
	}
	sc->sym = replay__symbolizer(sc->rp);
	sc->r = replay__reader(sc->rp);
	if (frame_cache__new(&sc->frames, sc->sym, !sc->o.json) < 0) {
		*why = strerror(ENOMEM);
		return 1;
	}
	if (sc->o.filter && replay__set_filter(sc->rp, sc->o.filter) < 0) {
		*why = replay__error(sc->rp);
		return 1;
	}
	r = replay__run(sc->rp, &ops, sc);
	if (!sc->write_err)
		sc->write_err = obuf__flush(sc->ob);
	errno = 0;
	if (!sc->write_err && fflush(sc->out) == EOF)
		sc->write_err = errno ? errno : EIO;
	*write_err = sc->write_err;
	if (r < 0 && !sc->write_err)
		*why = replay__error(sc->rp);
	if (!*why && symbolizer__error(sc->sym))
		*why = symbolizer__error(sc->sym);
	return *write_err || r < 0 || *why ? 1 : 0;
}

void script__free(struct script *sc)
{
	script_tp__free(sc);
	free(sc->chain);
	free(sc->ob);
	frame_cache__free(sc->frames);
	replay__free(sc->rp);
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
	.tables = { script_table, pm_filter_table },
};

/* 0: go on; 1: --help printed; -EINVAL after the error line */
static int parse_args(int argc, char **argv, struct script_opts *o, struct pm_filters *pf)
{
	void *ctx[] = { o, pf };
	int e;

	o->input = "perf.data";
	e = opts_parse(&script_cmd, ctx, argc, argv);
	o->filter = pf->f;
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
	struct pm_filters pf = { 0 };
	const char *why = NULL;
	int fd, r, werr;

	r = parse_args(argc, argv, &sc.o, &pf);
	if (r) {
		pm_filters__free(&pf);
		return r > 0 ? 0 : 1;
	}
	if (!strcmp(sc.o.input, "-")) {
		fd = STDIN_FILENO;
	} else {
		fd = open(sc.o.input, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			pm_filters__free(&pf);
			return pm_err("%s: %s", sc.o.input, strerror(errno));
		}
	}
	r = script__run(&sc, fd, &why, &werr);
	if (werr)
		pm_err("write error: %s", strerror(werr));
	else if (why)
		pm_err("%s: %s", strcmp(sc.o.input, "-") ? sc.o.input : "<stdin>", why);
	script__free(&sc);
	pm_filters__free(&pf);
	if (fd > STDIN_FILENO)
		close(fd);
	return r;
}

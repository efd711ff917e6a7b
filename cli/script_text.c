// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark script's text, like `perf script`: a line per sample (its call
 * chain below it), marker and loss.  Every name and text from the
 * recording goes through escape_term (lib/common/escape.h).
 */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "escape.h"
#include "script.h"

/* A name as it is, escaped for the terminal */
static void put_name(FILE *f, const char *s, size_t n)
{
	escape_term(f, s, n, 0);
}

/* A quoted string, escaped for the terminal */
static void put_quoted(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	escape_term(f, s, n, ESC_TERM_QUOTED);
	fputc('"', f);
}

/* Bytes as lowercase hex, a chunk at a time (a printf per byte was most of the run) */
static void put_hex(FILE *f, const uint8_t *d, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char buf[256];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		buf[k++] = digits[d[i] >> 4];
		buf[k++] = digits[d[i] & 15];
		if (k == sizeof(buf) || i + 1 == n) {
			fwrite(buf, 1, k, f);
			k = 0;
		}
	}
}

/* "COMM  PID/TID [CPU] SECONDS: " */
static void prefix(FILE *f, const struct script_head *h)
{
	char cb[24];
	const char *comm = h->comm;

	if (!comm) {
		snprintf(cb, sizeof(cb), ":%u", h->tid);
		comm = cb;
	}
	escape_term_pad(f, comm, 16);
	fprintf(f, " %6u/%-6u [%03u] %" PRIu64 ".%09" PRIu64 ": ",
		h->pid, h->tid, h->cpu, h->time / 1000000000U, h->time % 1000000000U);
}

/*
 * An address's symbol; an unsymbolized one by its place, its file after it
 * as perf script shows it: "liblzma.so.5.4.1+0x1692b
 * (/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1)" (symbolize.h), or
 * "[unknown] ([unknown])" outside any file.
 */
static void put_sym(FILE *f, const struct symbolizer_loc *loc)
{
	char frame[SYMBOLIZER_FRAME_NAME_MAX], buf[PATH_MAX + SYMBOLIZER_FRAME_NAME_MAX + 8];
	const char *s = symbolizer_loc__frame(loc, frame, sizeof(frame));

	if (!symbolizer_loc__has_sym(loc)) {
		snprintf(buf, sizeof(buf), "%s (%s)", s, loc->dso ? loc->dso : "[unknown]");
		s = buf;
	}
	put_name(f, s, strlen(s));
}

/*
 * An off-CPU sample's state, time away and waker: " off-cpu S 20104310 ns
 * (runqueue 30211 ns) woken by 1234/1235", " ... woken by an interrupt",
 * " ... sum of 12".
 */
static void offcpu_fields(FILE *f, const struct script_sample *s)
{
	const struct offcpu *o = s->off;

	if (o->state != OFFCPU_OK) {
		fprintf(f, " off-cpu %" PRIu64 " ns (%s)", s->period,
			o->state == OFFCPU_VERSION ? "a later payload version" : "no payload");
		return;
	}
	fprintf(f, " off-cpu %s %" PRIu64 " ns", offcpu__state_letter(o), s->period);
	if (o->runq_ns && !o->runnable)
		fprintf(f, " (runqueue %" PRIu64 " ns)", o->runq_ns);
	if (o->count > 1)
		fprintf(f, " sum of %u", o->count);
	if (o->waker_flags & PERFMARK_OFFCPU_WAKER_IRQ)
		fputs(" woken by an interrupt", f);
	else if ((o->waker_flags & PERFMARK_OFFCPU_WAKER_TASK) && o->waker_tid)
		fprintf(f, " woken by %u/%u", o->waker_pid, o->waker_tid);
	else if (o->waker_flags & PERFMARK_OFFCPU_WAKER_TASK)
		fputs(" woken by a task not shown", f);
}

static void text_sample(FILE *f, const struct script_sample *s)
{
	prefix(f, &s->h);
	put_name(f, s->h.event, strlen(s->h.event));
	if (s->tp && s->tp->decoded) {        /* a tracepoint: its fields, as perf prints them */
		fputs(": ", f);
		put_name(f, s->tp->text, s->tp->len);
	} else {
		fprintf(f, ": %16" PRIx64 " ", s->at.ip);
		put_sym(f, &s->at.loc);
	}
	if (s->off)
		offcpu_fields(f, s);
	fputc('\n', f);
	for (size_t i = 0; i < s->nchain; i++) {
		fprintf(f, "\t%16" PRIx64 " ", s->chain[i].ip);
		put_sym(f, &s->chain[i].loc);
		fputc('\n', f);
	}
	/* an off-CPU sample's waker: where it was as it woke the thread, leaf first */
	for (size_t i = 0; i < s->nwaker; i++) {
		fputs(i ? " <- " : "\twoken at: ", f);
		put_sym(f, &s->waker[i].loc);
		if (i + 1 == s->nwaker)
			fputc('\n', f);
	}
	if (s->nchain || s->nwaker)
		fputc('\n', f);
}

/* What a well-known type shows after the header; false when its payload has none of it. */
static bool marker_fields(FILE *f, const struct script_marker *sm)
{
	const struct marker *m = sm->m;

	switch (m->type) {
	case PERFMARK_TYPE_STRING:
		fputc(' ', f);
		put_quoted(f, m->text, m->text_len);
		break;
	case PERFMARK_TYPE_RANGE_BEGIN:
	case PERFMARK_TYPE_RANGE_END:
		if (!m->text)
			return false;
		fprintf(f, " range %s ", m->type == PERFMARK_TYPE_RANGE_BEGIN ? "begin" : "end");
		put_quoted(f, m->text, m->text_len);
		if (sm->has_duration)
			fprintf(f, " duration=%" PRIu64 ".%09" PRIu64 "s (%" PRIu64 " ns)",
				sm->duration / 1000000000U, sm->duration % 1000000000U, sm->duration);
		break;
	case PERFMARK_TYPE_COUNTER:
		if (!m->has_value || !m->text)
			return false;
		fputs(" counter ", f);
		put_name(f, m->text, m->text_len);
		fprintf(f, "=%" PRId64, m->value);
		break;
	case PERFMARK_TYPE_JIT_CODE:
		if (!m->has_code || !m->text)
			return false;
		fprintf(f, " jit code addr=0x%" PRIx64 " size=%" PRIu64 " ", m->code_addr,
			m->code_size);
		put_name(f, m->text, m->text_len);
		break;
	default:
		return false;
	}
	fputc('\n', f);
	return true;
}

static void text_marker(FILE *f, const struct script_marker *sm)
{
	const struct marker *m = sm->m;

	prefix(f, &sm->h);
	if (m->event == MARKER_PRINTF) {
		fprintf(f, "%s: ", PERFMARK_EV_PRINTF);
		put_quoted(f, m->text, m->text_len);
		fputc('\n', f);
		return;
	}
	fputs(PERFMARK_EV_UEVENT, f);
	if (m->type != MARKER_TYPE_NONE)
		fprintf(f, " type=%u", m->type);
	fprintf(f, " size=%u", m->size);
	if (m->flags & PERFMARK_UEVENT_F_TRUNCATED)
		fputs(" truncated", f);
	if (m->flags & PERFMARK_UEVENT_F_FAULT)
		fputs(" fault", f);
	if (m->version != PERFMARK_UEVENT_VERSION)
		fprintf(f, " version=%u", m->version);
	fputc(':', f);
	if (m->state == MARKER_OK && marker_fields(f, sm))
		return;
	/* an unknown type or version, or a payload its decoder cannot read */
	fputc(' ', f);
	put_hex(f, m->data, m->len);
	fputc('\n', f);
}

static void text_lost(FILE *f, const struct script_head *h, uint64_t lost)
{
	fprintf(f, "LOST %" PRIu64 " samples\n", lost);
}

const struct script_printer script_text = {
	.sample = text_sample,
	.marker = text_marker,
	.lost = text_lost,
};

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark script's text, like `perf script`: a line per sample (its call
 * chain below it), marker and loss.  Every name and text from the
 * recording goes through escape_term (lib/common/escape.h).
 */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "commname.h"
#include "escape.h"
#include "obuf.h"
#include "script.h"

#define SYM_TEXT_MAX (PATH_MAX + SYMBOLIZER_FRAME_NAME_MAX + 8)

/* A name as it is, escaped for the terminal */
static void put_name(struct obuf *f, const char *s, size_t n)
{
	escape_term_obuf(f, s, n, 0);
}

/* A quoted string, escaped for the terminal */
static void put_quoted(struct obuf *f, const char *s, size_t n)
{
	obuf__putc(f, '"');
	escape_term_obuf(f, s, n, ESC_TERM_QUOTED);
	obuf__putc(f, '"');
}

/* Bytes as lowercase hex, a chunk at a time (a printf per byte was most of the run) */
static void put_hex(struct obuf *f, const uint8_t *d, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char buf[256];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		buf[k++] = digits[d[i] >> 4];
		buf[k++] = digits[d[i] & 15];
		if (k == sizeof(buf) || i + 1 == n) {
			obuf__put(f, buf, k);
			k = 0;
		}
	}
}

/* "COMM  PID/TID [CPU] SECONDS: " (formatted by hand: printf was a tenth of the run) */
static void prefix(struct obuf *f, const struct script_head *h)
{
	char cb[COMMNAME_LEN];
	const char *comm = comm_or_tid(h->comm, h->tid, cb);

	escape_term_pad_obuf(f, comm, 16);
	obuf__putc(f, ' ');
	obuf__u64_pad(f, h->pid, 6, ' ');
	obuf__putc(f, '/');
	obuf__u64_left(f, h->tid, 6);
	obuf__put(f, " [", 2);
	obuf__u64_pad(f, h->cpu, 3, '0');
	obuf__put(f, "] ", 2);
	obuf__u64(f, h->time / 1000000000U);
	obuf__putc(f, '.');
	obuf__u64_pad(f, h->time % 1000000000U, 9, '0');
	obuf__put(f, ": ", 2);
}

/*
 * An address's symbol; an unsymbolized one by its place, its file after it
 * as perf script shows it: "liblzma.so.5.4.1+0x1692b
 * (/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1)" (symbolize.h), or
 * "[unknown] ([unknown])" outside any file.  Not escaped yet.
 */
static const char *sym_text(const struct symbolizer_loc *loc,
			    char frame[static SYMBOLIZER_FRAME_NAME_MAX], char buf[static SYM_TEXT_MAX])
{
	const char *s = symbolizer_loc__frame(loc, frame, SYMBOLIZER_FRAME_NAME_MAX);

	if (symbolizer_loc__has_sym(loc))
		return s;
	snprintf(buf, SYM_TEXT_MAX, "%s (%s)", s, loc->dso ? loc->dso : "[unknown]");
	return buf;
}

/* A frame as its line shows it after the tab: "%16llx SYMBOL" (frame->text when made) */
static void put_frame(struct obuf *f, const struct script_frame *fr)
{
	char frame[SYMBOLIZER_FRAME_NAME_MAX], buf[SYM_TEXT_MAX];
	const char *s;

	if (fr->text) {
		obuf__put(f, fr->text, fr->text_len);
		return;
	}
	obuf__hex_pad(f, fr->ip, 16);
	obuf__putc(f, ' ');
	s = sym_text(&fr->loc, frame, buf);
	put_name(f, s, strlen(s));
}

/*
 * An off-CPU sample's state, time away and waker: " off-cpu S 20104310 ns
 * (runqueue 30211 ns) woken by 1234/1235", " ... woken by an interrupt",
 * " ... sum of 12".
 */
static void offcpu_fields(struct obuf *f, const struct script_sample *s)
{
	const struct offcpu *o = s->off;

	if (o->state != OFFCPU_OK) {
		obuf__printf(f, " off-cpu %" PRIu64 " ns (%s)", s->period,
			     o->state == OFFCPU_VERSION ? "a later payload version" : "no payload");
		return;
	}
	obuf__printf(f, " off-cpu %s %" PRIu64 " ns", offcpu__state_letter(o), s->period);
	if (o->runq_ns && !o->runnable)
		obuf__printf(f, " (runqueue %" PRIu64 " ns)", o->runq_ns);
	if (o->count > 1)
		obuf__printf(f, " sum of %u", o->count);
	if (o->waker_flags & PERFMARK_OFFCPU_WAKER_IRQ)
		obuf__puts(f, " woken by an interrupt");
	else if ((o->waker_flags & PERFMARK_OFFCPU_WAKER_TASK) && o->waker_tid)
		obuf__printf(f, " woken by %u/%u", o->waker_pid, o->waker_tid);
	else if (o->waker_flags & PERFMARK_OFFCPU_WAKER_TASK)
		obuf__puts(f, " woken by a task not shown");
}

/* an off-CPU sample's waker: where it was as it woke the thread, leaf first */
static void waker_frames(struct obuf *f, const struct script_sample *s)
{
	char frame[SYMBOLIZER_FRAME_NAME_MAX], buf[SYM_TEXT_MAX];

	for (size_t i = 0; i < s->nwaker; i++) {
		const char *t = sym_text(&s->waker[i].loc, frame, buf);

		obuf__puts(f, i ? " <- " : "\twoken at: ");
		put_name(f, t, strlen(t));
		if (i + 1 == s->nwaker)
			obuf__putc(f, '\n');
	}
}

size_t script_text__frame(char *dst, size_t cap, const struct script_frame *fr)
{
	static const char digits[] = "0123456789abcdef";
	char frame[SYMBOLIZER_FRAME_NAME_MAX], buf[SYM_TEXT_MAX], hex[16];
	const char *s = sym_text(&fr->loc, frame, buf);
	size_t n = strlen(s), k = 0, h = sizeof(hex);
	uint64_t v = fr->ip;

	if (cap < 17 || ESCAPE_TERM_MAX(n) > cap - 17)
		return 0;
	do {
		hex[--h] = digits[v & 15];
		v >>= 4;
	} while (v);
	while (k < h)   /* %16llx: right-aligned in 16 columns (an address has at most 16 digits) */
		dst[k++] = ' ';
	memcpy(dst + k, hex + h, sizeof(hex) - h);
	k += sizeof(hex) - h;
	dst[k++] = ' ';
	return k + escape_term_mem(dst + k, s, n, 0);
}

static void text_sample(struct obuf *f, const struct script_sample *s)
{
	prefix(f, &s->h);
	put_name(f, s->h.event, strlen(s->h.event));
	if (s->tp && s->tp->decoded) {        /* a tracepoint: its fields, as perf prints them */
		obuf__put(f, ": ", 2);
		put_name(f, s->tp->text, s->tp->len);
	} else {
		obuf__put(f, ": ", 2);
		put_frame(f, &s->at);
	}
	if (s->off)
		offcpu_fields(f, s);
	obuf__putc(f, '\n');
	for (size_t i = 0; i < s->nchain; i++) {
		obuf__putc(f, '\t');
		put_frame(f, &s->chain[i]);
		obuf__putc(f, '\n');
	}
	waker_frames(f, s);
	if (s->nchain || s->nwaker)
		obuf__putc(f, '\n');
}

/* What a well-known type shows after the header; false when its payload has none of it. */
static bool marker_fields(struct obuf *f, const struct script_marker *sm)
{
	const struct marker *m = sm->m;

	switch (m->type) {
	case PERFMARK_TYPE_STRING:
		obuf__putc(f, ' ');
		put_quoted(f, m->text, m->text_len);
		break;
	case PERFMARK_TYPE_RANGE_BEGIN:
	case PERFMARK_TYPE_RANGE_END:
		if (!m->text)
			return false;
		obuf__puts(f, m->type == PERFMARK_TYPE_RANGE_BEGIN ? " range begin " : " range end ");
		put_quoted(f, m->text, m->text_len);
		if (sm->has_duration)
			obuf__printf(f, " duration=%" PRIu64 ".%09" PRIu64 "s (%" PRIu64 " ns)",
				     sm->duration / 1000000000U, sm->duration % 1000000000U,
				     sm->duration);
		break;
	case PERFMARK_TYPE_COUNTER:
		if (!m->has_value || !m->text)
			return false;
		obuf__puts(f, " counter ");
		put_name(f, m->text, m->text_len);
		obuf__printf(f, "=%" PRId64, m->value);
		break;
	case PERFMARK_TYPE_JIT_CODE:
		if (!m->has_code || !m->text)
			return false;
		obuf__printf(f, " jit code addr=0x%" PRIx64 " size=%" PRIu64 " ", m->code_addr,
			     m->code_size);
		put_name(f, m->text, m->text_len);
		break;
	default:
		return false;
	}
	obuf__putc(f, '\n');
	return true;
}

static void text_marker(struct obuf *f, const struct script_marker *sm)
{
	const struct marker *m = sm->m;

	prefix(f, &sm->h);
	if (m->event == MARKER_PRINTF) {
		obuf__puts(f, PERFMARK_EV_PRINTF ": ");
		put_quoted(f, m->text, m->text_len);
		obuf__putc(f, '\n');
		return;
	}
	obuf__puts(f, PERFMARK_EV_UEVENT);
	if (m->type != MARKER_TYPE_NONE) {
		obuf__puts(f, " type=");
		obuf__u64(f, m->type);
	}
	obuf__puts(f, " size=");
	obuf__u64(f, m->size);
	if (m->flags & PERFMARK_UEVENT_F_TRUNCATED)
		obuf__puts(f, " truncated");
	if (m->flags & PERFMARK_UEVENT_F_FAULT)
		obuf__puts(f, " fault");
	if (m->version != PERFMARK_UEVENT_VERSION) {
		obuf__puts(f, " version=");
		obuf__u64(f, m->version);
	}
	obuf__putc(f, ':');
	if (m->state == MARKER_OK && marker_fields(f, sm))
		return;
	/* an unknown type or version, or a payload its decoder cannot read */
	obuf__putc(f, ' ');
	put_hex(f, m->data, m->len);
	obuf__putc(f, '\n');
}

static void text_lost(struct obuf *f, const struct script_head *h, uint64_t lost)
{
	obuf__puts(f, "LOST ");
	obuf__u64(f, lost);
	obuf__puts(f, " samples\n");
}

const struct script_printer script_text = {
	.sample = text_sample,
	.marker = text_marker,
	.lost = text_lost,
};

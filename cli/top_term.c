// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark top's terminal (top.h): plain ANSI sequences, no library: the
 * alternate screen and a hidden cursor while top runs, input without echo
 * or line buffering (signals stay on: Ctrl-C is SIGINT), and everything
 * given back as it was by top_term__close(), which the loop calls on every
 * way out.  A frame is built in memory and written at once: the cursor goes
 * home, each line is cleared to its end, the rest of the screen below.
 *
 * Every name (command, file, function, range, event) goes through
 * escape_term() and is cut to its column by characters of that escaped text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "escape.h"
#include "top.h"

#define ESC "\033"
#define COMM_W 16
#define DSO_W 22
#define PCT_W 8

struct top_term {
	struct termios saved;
	bool raw;          /* fd 0 is a terminal we set raw */
	bool screen;       /* the alternate screen is on */
};

static void put_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

int top_term__open(struct top_term **out)
{
	static const char enter[] = ESC "[?1049h" ESC "[?25l" ESC "[H" ESC "[2J";
	struct top_term *t = calloc(1, sizeof(*t));

	*out = t;
	if (!t)
		return -ENOMEM;
	if (isatty(0) && !tcgetattr(0, &t->saved)) {
		struct termios raw = t->saved;

		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		t->raw = !tcsetattr(0, TCSANOW, &raw);
	}
	put_all(1, enter, sizeof(enter) - 1);
	t->screen = true;
	return 0;
}

void top_term__close(struct top_term *t)
{
	static const char leave[] = ESC "[?25h" ESC "[?1049l";

	if (!t)
		return;
	if (t->screen)
		put_all(1, leave, sizeof(leave) - 1);
	t->screen = false;
	if (t->raw)
		tcsetattr(0, TCSANOW, &t->saved);
	t->raw = false;
}

void top_term__size(struct top_term *t, int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (!ioctl(1, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

static enum top_key key_of(const unsigned char *b, size_t n, size_t *used)
{
	*used = 1;
	if (b[0] == 033 && n >= 3 && (b[1] == '[' || b[1] == 'O')) {
		*used = 3;
		return b[2] == 'A' ? TOP_KEY_UP : b[2] == 'B' ? TOP_KEY_DOWN : TOP_KEY_NONE;
	}
	switch (b[0]) {
	case 'q': case 'Q': case 3:
		return TOP_KEY_QUIT;
	case 's':
		return TOP_KEY_SORT;
	case 'c':
		return TOP_KEY_COMM;
	case 'd':
		return TOP_KEY_DSO;
	case 'u':
		return TOP_KEY_UNZOOM;
	case 'k':
		return TOP_KEY_UP;
	case 'j':
		return TOP_KEY_DOWN;
	default:
		return TOP_KEY_NONE;
	}
}

size_t top_term__keys(struct top_term *t, enum top_key *keys, size_t max)
{
	unsigned char b[64];
	size_t n = 0, off = 0, used;
	ssize_t r = read(0, b, sizeof(b));

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r <= 0) {            /* the terminal hung up (EIO) or input ended */
		keys[0] = TOP_KEY_GONE;
		return 1;
	}
	while (off < (size_t)r && n < max) {
		enum top_key k = key_of(b + off, (size_t)r - off, &used);

		off += used;
		if (k != TOP_KEY_NONE)
			keys[n++] = k;
	}
	return n;
}

/* ---- one frame ------------------------------------------------------------------------ */

struct out {
	FILE *f;
	int width;         /* columns; 0: no limit */
	bool ansi;
	int lines, max;    /* lines written, at most (ansi) */
};

/*
 * s escaped for a terminal, cut to width columns (< 0: no limit) and, with
 * pad, filled with spaces to it; returns the columns used.
 */
static int cell(FILE *f, const char *s, int width, bool pad)
{
	char buf[6 * TOP_NAME_MAX + 16];
	size_t len, cut, chars;
	FILE *m = fmemopen(buf, sizeof(buf), "w");

	if (!m)
		return 0;
	escape_term(m, s, strlen(s), 0);
	fflush(m);
	len = (size_t)ftell(m);
	fclose(m);
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	cut = escape_utf8_cut(buf, len, width < 0 ? SIZE_MAX : (size_t)width, &chars);
	fwrite(buf, 1, cut, f);
	for (; pad && width >= 0 && (int)chars < width; chars++)
		putc(' ', f);
	return (int)chars;
}

/* room left on the line after used columns, for a cell */
static int room(const struct out *o, int used)
{
	if (!o->width)
		return -1;
	return o->width > used ? o->width - used : 0;
}

static bool line_room(const struct out *o)
{
	return !o->ansi || o->lines < o->max;
}

static void line_end(struct out *o)
{
	if (o->ansi)
		fputs(ESC "[K", o->f);
	o->lines++;
	if (!o->ansi || o->lines < o->max)
		fputs(o->ansi ? "\r\n" : "\n", o->f);
}

/* plain text of our own (no names in it), cut to the width */
static void text_line(struct out *o, const char *s)
{
	if (!line_room(o))
		return;
	fprintf(o->f, "%.*s", o->width ? o->width : (int)strlen(s), s);
	line_end(o);
}

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 10000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 10000000000ull)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

static void header(struct out *o, const struct top_view *v, const char *status)
{
	char buf[160];
	int used;

	used = fprintf(o->f, "perfmark top: ");
	used += cell(o->f, v->event[0] ? v->event : "(no samples yet)", room(o, used), false);
	snprintf(buf, sizeof(buf), ", %llu samples in the last interval (%llu in all, %llu lost%s%s)",
		 (unsigned long long)v->samples, (unsigned long long)v->total_samples,
		 (unsigned long long)v->lost, v->refused ? ", refused " : "",
		 v->refused ? "some: table full" : "");
	fprintf(o->f, "%.*s", room(o, used) < 0 ? (int)strlen(buf) : room(o, used), buf);
	line_end(o);
	if (!line_room(o))
		return;
	used = 0;
	if (v->zoom_comm[0] || v->zoom_dso[0]) {
		used += fprintf(o->f, "zoom:");
		if (v->zoom_comm[0]) {
			used += fprintf(o->f, " command ");
			used += cell(o->f, v->zoom_comm, room(o, used), false);
		}
		if (v->zoom_dso[0]) {
			used += fprintf(o->f, " dso ");
			used += cell(o->f, v->zoom_dso, room(o, used), false);
		}
		used += fprintf(o->f, "  ");
	}
	cell(o->f, status ? status : "", room(o, used), false);
	line_end(o);
}

static void row_line(struct out *o, const struct top_view *v, const struct top_row *r, bool sel)
{
	char pct[32];
	int used = 0;

	if (sel && o->ansi)
		fputs(ESC "[7m", o->f);
	snprintf(pct, sizeof(pct), "%7.2f%%", r->self);
	used += fprintf(o->f, "%.*s", room(o, 0) < 0 ? PCT_W : room(o, 0), pct);
	if (v->children) {
		snprintf(pct, sizeof(pct), " %7.2f%%", r->total);
		used += fprintf(o->f, "%.*s", room(o, used) < 0 ? PCT_W + 1 : room(o, used), pct);
	}
	used += fprintf(o->f, "%s", room(o, used) ? "  " : "");
	used += cell(o->f, r->comm_s, room(o, used) < 0 ? COMM_W : room(o, used) < COMM_W ?
		     room(o, used) : COMM_W, true);
	used += fprintf(o->f, "%s", room(o, used) ? " " : "");
	used += cell(o->f, r->dso_s, room(o, used) < 0 ? DSO_W : room(o, used) < DSO_W ?
		     room(o, used) : DSO_W, true);
	used += fprintf(o->f, "%s", room(o, used) ? " " : "");
	used += cell(o->f, r->sym_s, room(o, used), sel && o->ansi);
	if (sel && o->ansi)
		fputs(ESC "[m", o->f);
	line_end(o);
}

static void ranges(struct out *o, const struct top_view *v)
{
	char l[160], p50[24], p99[24], mx[24], rate[24];
	size_t i;

	text_line(o, "");
	snprintf(l, sizeof(l), "%-24s %10s %10s %10s %10s %10s", "Range", "rate/s", "p50", "p99",
		 "max", "count");
	text_line(o, l);
	for (i = 0; i < v->nr_ranges && line_room(o); i++) {
		const struct top_range *r = &v->ranges[i];
		int used = cell(o->f, r->name, room(o, 0) < 0 || room(o, 0) > 24 ? 24 : room(o, 0), true);

		fmt_ns(p50, sizeof(p50), r->p50_ns);
		fmt_ns(p99, sizeof(p99), r->p99_ns);
		fmt_ns(mx, sizeof(mx), r->max_ns);
		if (r->rate < 0)    /* first seen in this interval: no rate to show yet */
			snprintf(rate, sizeof(rate), "-");
		else
			snprintf(rate, sizeof(rate), "%.1f", r->rate);
		snprintf(l, sizeof(l), " %10s %10s %10s %10s %10llu", rate, p50, p99, mx,
			 (unsigned long long)r->count);
		fprintf(o->f, "%.*s", room(o, used) < 0 ? (int)strlen(l) : room(o, used), l);
		line_end(o);
	}
}

/* the frame; cursor: the selected row, or SIZE_MAX for none */
static void frame(struct out *o, const struct top_view *v, const char *status, size_t cursor)
{
	char l[160];
	size_t i;

	header(o, v, status);
	text_line(o, "");
	snprintf(l, sizeof(l), "%8s%s  %-*s %-*s %s", "Self", v->children ? "    Total" : "",
		 COMM_W, "Command", DSO_W, "Shared Object", "Symbol");
	text_line(o, l);
	for (i = 0; i < v->nr_rows && line_room(o); i++)
		row_line(o, v, &v->rows[i], i == cursor);
	if (v->more && line_room(o)) {
		snprintf(l, sizeof(l), "(%zu more)", v->more);
		text_line(o, l);
	}
	if (v->nr_ranges)
		ranges(o, v);
}

int top_term__draw(struct top_term *t, const struct top_view *v, const char *status,
		   size_t *cursor)
{
	struct out o = { .ansi = true };
	char *buf = NULL;
	size_t len = 0;
	int rows, cols;
	ssize_t w;

	top_term__size(t, &rows, &cols);
	o.width = cols;
	o.max = rows;
	if (*cursor >= v->nr_rows)
		*cursor = v->nr_rows ? v->nr_rows - 1 : 0;
	o.f = open_memstream(&buf, &len);
	if (!o.f)
		return -ENOMEM;
	fputs(ESC "[H", o.f);
	frame(&o, v, status, *cursor);
	fputs(ESC "[J", o.f);
	fclose(o.f);
	w = write(1, buf, len);     /* one write: a frame never shows half drawn */
	if (w >= 0 && (size_t)w < len)
		put_all(1, buf + w, len - (size_t)w);
	free(buf);
	return w < 0 && errno != EINTR && errno != EAGAIN ? -errno : 0;
}

void top_print_frame(FILE *f, const struct top_view *v, const char *status, int width)
{
	struct out o = { .f = f, .width = width };

	frame(&o, v, status, SIZE_MAX);
	fputc('\n', f);
	fflush(f);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* Options from declarative tables: see opts.h. */
#include <errno.h>
#include <string.h>

#include "commands.h"
#include "opts.h"

#define WIDTH 80        /* usage and help wrap here */
#define HELP_COL 30     /* where an option's help starts */

static const struct opt help_row = { .flag = 'h', .name = "help", .help = "show this help and exit" };

static bool row_end(const struct opt *o)
{
	return !o->flag && !o->name;
}

/* Every row of c in order, the built-in --help last: row and its table's index. */
struct flat {
	const struct opt *row[OPTS_MAX + 1];
	int table[OPTS_MAX + 1];
	size_t n;
};

static int flatten(const struct opts_cmd *c, struct flat *f)
{
	size_t t;

	f->n = 0;
	for (t = 0; t < OPTS_MAX_TABLES && c->tables[t]; t++) {
		for (const struct opt *o = c->tables[t]; !row_end(o); o++) {
			if (f->n == OPTS_MAX)
				return -E2BIG;
			f->row[f->n] = o;
			f->table[f->n++] = (int)t;
		}
	}
	f->row[f->n] = &help_row;
	f->table[f->n++] = -1;
	return 0;
}

int opts_getopt(const struct opts_cmd *c, char *shortopts, size_t len,
		struct option *longopts, size_t max)
{
	struct flat f;
	size_t i, j, s = 0, l = 0;
	int e = flatten(c, &f);

	if (e)
		return e;
	if (len < 3)
		return -E2BIG;
	if (c->in_order)
		shortopts[s++] = '+';
	shortopts[s++] = ':';   /* a missing argument returns ':', not '?' */
	for (i = 0; i < f.n; i++) {
		const struct opt *o = f.row[i];

		for (j = 0; j < i; j++) {
			if ((o->flag && o->flag == f.row[j]->flag) ||
			    (o->name && f.row[j]->name && !strcmp(o->name, f.row[j]->name)))
				return -EEXIST;   /* two rows, one spelling: a table's bug */
		}
		if (o->flag) {
			if (s + 4 > len)
				return -E2BIG;
			shortopts[s++] = o->flag;
			if (o->arg)
				shortopts[s++] = ':';
			if (o->arg && o->optional)
				shortopts[s++] = ':';
		}
		if (o->name) {
			if (l + 2 > max)
				return -E2BIG;
			longopts[l++] = (struct option){
				o->name, !o->arg ? no_argument : o->optional ? optional_argument :
				required_argument, NULL, o->flag ? o->flag : 256 + (int)i,
			};
		}
	}
	shortopts[s] = '\0';
	if (l + 1 > max)
		return -E2BIG;
	longopts[l] = (struct option){ 0 };
	return 0;
}

/* the argv element getopt_long just took the option from ("--name=x", "--name", "-v") */
static const char *option_text(char **argv)
{
	if (optarg && optind >= 2 && optarg == argv[optind - 1])
		return argv[optind - 2];   /* "--name x": the argument came separately */
	return argv[optind - 1];
}

/*
 * getopt_long takes any unambiguous prefix of a long name; the tables do
 * not: "--ring" must never quietly mean --ringbuf.
 */
static bool spelled_out(char **argv, const char *name)
{
	const char *t = option_text(argv);
	size_t n;

	if (t[0] != '-' || t[1] != '-')
		return true;
	n = strcspn(t + 2, "=");
	return n == strlen(name) && !strncmp(t + 2, name, n);
}

int opts_parse(const struct opts_cmd *c, void *const *ctx, int argc, char **argv)
{
	struct option longopts[OPTS_MAX + 2];
	char shortopts[3 * OPTS_MAX + 8];
	struct flat f;
	int ch, e, li = -1;
	size_t i;

	e = opts_getopt(c, shortopts, sizeof(shortopts), longopts, OPTS_MAX + 2);
	if (e)
		return pm_err("%s: bad option table (%s)", c->name, strerror(-e));
	flatten(c, &f);
	optind = 0;     /* a full restart: argv[0] is the command's name */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shortopts, longopts, &li)) != -1) {
		const struct opt *o = NULL;
		int t = -1;

		if (ch == ':')
			return pm_err("option '%s' needs an argument", argv[optind - 1]);
		if (li >= 0 && !spelled_out(argv, longopts[li].name)) {
			ch = '?';   /* getopt took an abbreviation: --ring for --ringbuf */
			optopt = 0;
		}
		li = -1;
		if (ch >= 256 && (size_t)(ch - 256) < f.n) {
			o = f.row[ch - 256];
			t = f.table[ch - 256];
		}
		for (i = 0; !o && ch != '?' && i < f.n; i++) {
			if (f.row[i]->flag == ch) {
				o = f.row[i];
				t = f.table[i];
			}
		}
		if (!o) {
			if (optopt && optopt < 256)
				return pm_err("unknown option '-%c' (try 'perfmark %s --help')", optopt, c->name);
			return pm_err("unknown option '%.*s' (try 'perfmark %s --help')",
				      (int)strcspn(option_text(argv), "="), option_text(argv), c->name);
		}
		if (o == &help_row) {
			opts_help(c, stdout);
			return OPTS_HELP;
		}
		if (o->set && o->set(ctx[t], o, optarg))
			return 1;
	}
	return 0;
}

/* ---- usage and help ----------------------------------------------------------- */

/* how an option is written in the usage line: "-e EVENT", "-z[LEVEL]", "--duration S" */
static void spelling(const struct opt *o, char *buf, size_t len)
{
	const char *a = o->arg;

	if (o->flag)
		snprintf(buf, len, "-%c%s%s%s", o->flag, a && !o->optional ? " " : a ? "[" : "",
			 a ? a : "", a && o->optional ? "]" : "");
	else
		snprintf(buf, len, "--%s%s%s%s", o->name, a && !o->optional ? " " : a ? "[=" : "",
			 a ? a : "", a && o->optional ? "]" : "");
}

struct wrap {
	FILE *f;
	size_t col, indent;
	bool bol;       /* nothing on this line yet but the indent */
};

/* one word (never broken) after a space, or on a new line indented */
static void put_word(struct wrap *w, const char *s)
{
	size_t n = strlen(s);

	if (!w->bol && w->col + 1 + n > WIDTH) {
		fprintf(w->f, "\n%*s", (int)w->indent, "");
		w->col = w->indent;
		w->bol = true;
	}
	if (!w->bol) {
		fputc(' ', w->f);
		w->col++;
	}
	fputs(s, w->f);
	w->col += n;
	w->bol = false;
}

/* text split at spaces (an argument list in brackets stays one word: "[-- CMD [ARG...]]") */
static void put_text(struct wrap *w, const char *s)
{
	char word[256];

	while (*s) {
		size_t n = 0;
		int depth = 0;

		while (*s == ' ')
			s++;
		while (s[n] && (depth || s[n] != ' ')) {
			depth += s[n] == '[' ? 1 : s[n] == ']' && depth ? -1 : 0;
			n++;
		}
		if (!n)
			break;
		snprintf(word, sizeof(word), "%.*s", (int)n, s);
		put_word(w, word);
		s += n;
	}
}

void opts_usage(const struct opts_cmd *c, FILE *f)
{
	opts_synopsis(c, f, "usage: ");
}

void opts_synopsis(const struct opts_cmd *c, FILE *f, const char *lead)
{
	struct wrap w = { .f = f };
	char tok[512], one[160];
	struct flat fl;
	size_t i, j;

	if (flatten(c, &fl))
		fl.n = 1;
	w.col = (size_t)fprintf(f, "%sperfmark %s", lead, c->name);
	w.indent = w.col + 1;
	if (c->args)
		put_text(&w, c->args);
	for (i = 0; i + 1 < fl.n; i++) {      /* not the --help row */
		const struct opt *o = fl.row[i];
		bool seen = false;

		if (o->hidden)
			continue;
		for (j = 0; o->alt && j < i; j++)
			seen |= fl.row[j]->alt == o->alt && !fl.row[j]->hidden;
		if (seen)
			continue;   /* shown with the first of its group */
		spelling(o, one, sizeof(one));
		snprintf(tok, sizeof(tok), "%s%s", o->required ? "" : "[", one);
		for (j = i + 1; o->alt && j + 1 < fl.n; j++) {
			if (fl.row[j]->alt != o->alt || fl.row[j]->hidden)
				continue;
			spelling(fl.row[j], one, sizeof(one));
			snprintf(tok + strlen(tok), sizeof(tok) - strlen(tok), " | %s", one);
		}
		if (!o->required)
			snprintf(tok + strlen(tok), sizeof(tok) - strlen(tok), "]");
		put_word(&w, tok);
	}
	if (c->trail)
		put_text(&w, c->trail);
	fputc('\n', f);
}

void opts_help(const struct opts_cmd *c, FILE *f)
{
	struct flat fl;
	size_t i;

	opts_usage(c, f);
	if (c->about) {
		struct wrap w = { .f = f, .bol = true };

		fputc('\n', f);
		put_text(&w, c->about);
		fputc('\n', f);
	}
	if (flatten(c, &fl))
		return;
	fprintf(f, "\noptions:\n");
	for (i = 0; i < fl.n; i++) {
		const struct opt *o = fl.row[i];
		struct wrap w = { .f = f, .indent = HELP_COL };
		char left[160], def[192];
		const char *a = o->arg;
		int n;

		if (o->hidden)
			continue;
		if (o->flag && o->name)
			snprintf(left, sizeof(left), "-%c, --%s", o->flag, o->name);
		else if (o->flag)
			snprintf(left, sizeof(left), "-%c", o->flag);
		else
			snprintf(left, sizeof(left), "    --%s", o->name);
		if (a)
			snprintf(left + strlen(left), sizeof(left) - strlen(left), "%s%s%s",
				 !o->optional ? " " : o->name ? "[=" : "[", a, o->optional ? "]" : "");
		n = fprintf(f, "  %s", left);
		if (n + 2 > HELP_COL) {
			fprintf(f, "\n%*s", HELP_COL, "");
		} else {
			fprintf(f, "%*s", HELP_COL - n, "");
		}
		w.col = HELP_COL;
		w.bol = true;
		put_text(&w, o->help ? o->help : "");
		if (o->def) {
			snprintf(def, sizeof(def), "(default: %s)", o->def);
			put_text(&w, def);
		}
		fputc('\n', f);
	}
}

/* ---- stock setters ------------------------------------------------------------ */

int opt_set_str(void *ctx, const struct opt *o, const char *arg)
{
	*(const char **)((char *)ctx + o->off) = arg;
	return 0;
}

int opt_set_true(void *ctx, const struct opt *o, const char *arg)
{
	*(bool *)((char *)ctx + o->off) = true;
	return 0;
}

int opt_set_false(void *ctx, const struct opt *o, const char *arg)
{
	*(bool *)((char *)ctx + o->off) = false;
	return 0;
}

int opt_set_count(void *ctx, const struct opt *o, const char *arg)
{
	(*(int *)((char *)ctx + o->off))++;
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a recording's format must look like before libtraceevent reads it.
 * libtraceevent 1.7 (and perf with it) dereferences NULL on some malformed
 * print fmts (an unbalanced quote inside its arguments, found by
 * fuzz-tpdecode); the kernel writes none of those.  A format is taken as
 * the kernel writes it, in printable ASCII: "name:", "ID:", "format:",
 * field lines, then the print fmt, a string and its arguments, made of
 * C's tokens, brackets balanced, REC->X only for fields X of the format.  A print fmt
 * that is not is dropped (the event's fields are printed as name=value
 * instead); a field line that is not, and the whole format is left out.
 *
 * Checked as they are, formats can still be odd enough to bring
 * libtraceevent down (a SEGV in its parser: fuzz-tpdecode keeps finding
 * new ones), so they are parsed once in a child process first: what the
 * child does not come through is left out, and a hostile recording costs
 * `perfmark script` a few forks, never a crash.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "tpcheck.h"

#define DEPTH_MAX  32
#define TOKENS_MAX 16384
#define FIELDS_MAX 256
#define IDENT_MAX  64

struct fields {
	char name[FIELDS_MAX][IDENT_MAX];
	size_t n;
};

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* digits, then ';' (a field line's number) */
static const char *number(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && isdigit((unsigned char)*p))
		p++;
	return p > s && p - s <= 10 && p < end && *p == ';' ? p + 1 : NULL;
}

/*
 * "\tfield:TYPE NAME[N];\toffset:N;\tsize:N;\tsigned:N;" (after "\tfield:"):
 * a declaration of letters, digits, '_', ' ', '*' and [digits], then the
 * numbers; NAME into f
 */
static bool field_line(const char *s, size_t n, struct fields *f)
{
	const char *end = s + n, *semi = memchr(s, ';', n), *decl_end, *start, *p;
	static const char *const keys[] = { "\toffset:", "\tsize:", "\tsigned:" };
	size_t i;

	if (!semi || f->n == FIELDS_MAX)
		return false;
	for (p = s; p < semi; p++) {
		if (*p == '[') {
			for (p++; p < semi && isdigit((unsigned char)*p); p++)
				;
			if (p == semi || *p != ']')
				return false;
		} else if (!ident_char(*p) && *p != ' ' && *p != '*') {
			return false;
		}
	}
	/* the name is the last identifier before ';' (or before its [N]) */
	decl_end = semi;
	if (decl_end > s && decl_end[-1] == ']')
		while (decl_end > s && *decl_end != '[')
			decl_end--;
	start = decl_end;
	while (start > s && ident_char(start[-1]))
		start--;
	if (start == decl_end || (size_t)(decl_end - start) >= IDENT_MAX || !ident_start(*start))
		return false;
	memcpy(f->name[f->n], start, (size_t)(decl_end - start));
	f->name[f->n][decl_end - start] = '\0';
	f->n++;
	for (p = semi + 1, i = 0; i < 3; i++) {
		size_t k = strlen(keys[i]);

		if ((size_t)(end - p) < k || memcmp(p, keys[i], k) || !(p = number(p + k, end)))
			return false;
	}
	return p == end;
}

static bool is_field(const struct fields *f, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (strlen(f->name[i]) == n && !memcmp(f->name[i], s, n))
			return true;
	return false;
}

static bool print_fmt(const char *s, size_t n, const struct fields *f)
{
	static const char *const ops2[] = { "->", "<<", ">>", "==", "!=", "<=", ">=", "&&", "||" };
	char stack[DEPTH_MAX];
	size_t i = 0, depth = 0, tokens = 0, k;
	bool first = true;

	while (i < n) {
		char c = s[i];

		if (c == ' ' || c == '\t' || c == '\n') {
			i++;
			continue;
		}
		if (++tokens > TOKENS_MAX)
			return false;
		if (c == '"' || c == '\'') {
			/* the kernel's strings may hold tabs and newlines */
			for (i++; i < n && s[i] != c; i++)
				if (s[i] == '\\' && ++i < n && (unsigned char)s[i] < 0x20)
					return false;
			if (i >= n)
				return false;          /* no closing quote */
			i++;
		} else if (first) {
			return false;                  /* the format string comes first */
		} else if (isdigit((unsigned char)c)) {
			while (i < n && isalnum((unsigned char)s[i]))
				i++;
		} else if (ident_start(c)) {
			k = i;
			while (i < n && ident_char(s[i]))
				i++;
			if (i - k == 3 && !memcmp(s + k, "REC", 3)) {
				if (i + 2 > n || memcmp(s + i, "->", 2))
					return false;
				for (i += 2, k = i; i < n && ident_char(s[i]); i++)
					;
				if (!is_field(f, s + k, i - k))
					return false;
			}
		} else if (strchr("([{", c)) {
			if (depth == DEPTH_MAX)
				return false;
			stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
			i++;
		} else if (strchr(")]}", c)) {
			if (!depth || stack[--depth] != c)
				return false;
			i++;
		} else {
			for (k = 0; k < sizeof(ops2) / sizeof(ops2[0]); k++)
				if (i + 1 < n && !memcmp(s + i, ops2[k], 2))
					break;
			if (k < sizeof(ops2) / sizeof(ops2[0]))
				i += 2;
			else if (strchr("+-*/%&|^~!<>=?:,.", c))
				i++;
			else if (c == ';' && depth && stack[depth - 1] == '}')
				i++;                   /* statements: inside ({ ... }) only */
			else
				return false;
		}
		first = false;
	}
	return !depth && !first;
}

int tpcheck_format(char *text, size_t len)
{
	static struct fields f;        /* one format at a time; 16 KiB off the stack */
	char *p = text, *end = text + len, *nl;
	size_t n;
	bool in_fields = false;

	f.n = 0;
	/* the kernel writes ASCII text: printable, tabs and newlines */
	for (n = 0; n < len; n++)
		if ((text[n] < 0x20 || text[n] > 0x7e) && text[n] != '\t' && text[n] != '\n')
			return -1;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n >= 11 && !strncmp(p, "print fmt: ", 11)) {
			/* the last part: its strings may go on over several lines */
			n = (size_t)(end - p);
			if (!in_fields || n < 13)
				return -1;
			if (print_fmt(p + 11, n - 11, &f))
				return 0;
			/* dropped: an empty string, which libtraceevent prints as nothing */
			memcpy(p + 11, "\"\"", 2);
			memset(p + 13, ' ', n - 13);
			return 1;
		}
		if (n >= 7 && !strncmp(p, "\tfield:", 7)) {
			if (!in_fields || !field_line(p + 7, n - 7, &f))
				return -1;
		} else if (!strncmp(p, "format:", 7)) {
			in_fields = true;
		} else if (n && (n > 128 || (strncmp(p, "name: ", 6) && strncmp(p, "ID: ", 4)))) {
			return -1;
		}
		p += n + 1;
	}
	return in_fields ? 0 : -1;
}

/* parse every format of f[] not yet bad in a child; true when it came through */
static bool child_parses(struct tpcheck_fmt *f, size_t n)
{
	pid_t pid;
	int st = 0;
	size_t i;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		struct tep_handle *tep = tep_alloc();

		tep_set_loglevel(TEP_LOG_NONE);
		for (i = 0; tep && i < n; i++) {
			struct tep_event *ev = NULL;

			if (!f[i].bad)
				(void)tep_parse_format(tep, &ev, f[i].text, f[i].len, f[i].sys);
		}
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

void tpcheck_isolate(struct tpcheck_fmt *f, size_t n)
{
	size_t i;

	if (!n || child_parses(f, n))
		return;
	/* one of them brings libtraceevent down: each on its own, to find which */
	for (i = 0; i < n; i++)
		if (!f[i].bad && !child_parses(&f[i], 1))
			f[i].bad = true;
	/* and the rest together again: what only fails with others goes too */
	if (!child_parses(f, n))
		for (i = 0; i < n; i++)
			f[i].bad = true;
}

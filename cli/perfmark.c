// SPDX-License-Identifier: LGPL-2.1-or-later
/* perfmark: command table and shared error helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "commands.h"
#include "opts.h"
#include "escape.h"

bool pm_verbose;

/*
 * libbpf's messages, set once in main: with -vv all of them as they come;
 * else its warnings are held and shown with the next notice or at exit,
 * unless an error line follows that says what went wrong (a permission
 * denied is one line, not a stack of libbpf noise).
 */
static struct {
	char text[8][256];
	size_t n;
} held;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (pm_verbose)
		return vfprintf(stderr, fmt, ap);
	if (level != LIBBPF_WARN || held.n == sizeof(held.text) / sizeof(held.text[0]))
		return 0;
	return vsnprintf(held.text[held.n++], sizeof(held.text[0]), fmt, ap);
}

void pm_warnings(void)
{
	size_t i;

	for (i = 0; i < held.n; i++)
		fputs(held.text[i], stderr);
	held.n = 0;
}

/*
 * One line on stderr, escaped for the terminal: messages quote names from
 * recordings and perfmarkd (escape.h), which must neither drive the
 * terminal nor break the line in two.  Built whole and written in one
 * write: stderr is unbuffered, and a command record runs shares it.
 */
static void vline(const char *fmt, va_list ap)
{
	char *buf = NULL, *line = NULL;
	size_t len = 0;
	int n = vasprintf(&buf, fmt, ap);
	FILE *m = open_memstream(&line, &len);

	if (!m) {
		fputs("perfmark: out of memory\n", stderr);
		free(buf);
		return;
	}
	fputs("perfmark: ", m);
	if (n >= 0)
		escape_term(m, buf, (size_t)n, 0);
	else
		fputs("out of memory", m);
	fputc('\n', m);
	free(buf);
	if (fclose(m) == 0)
		fwrite(line, 1, len, stderr);
	free(line);
}

int pm_err(const char *fmt, ...)
{
	va_list ap;

	held.n = 0;
	va_start(ap, fmt);
	vline(fmt, ap);
	va_end(ap);
	return 1;
}

void pm_notice(const char *fmt, ...)
{
	va_list ap;

	pm_warnings();
	va_start(ap, fmt);
	vline(fmt, ap);
	va_end(ap);
}

static int cmd_help(int argc, char **argv);

/* the commands; each one's options, usage and --help come from its table (opts.h) */
static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const struct opts_cmd *opts;
} cmds[] = {
	{ "record", cmd_record, &record_cmd },
	{ "script", cmd_script, &script_cmd },
	{ "report", cmd_report, &report_cmd },
	{ "flamegraph", cmd_flamegraph, &flamegraph_cmd },
	{ "export", cmd_export, &export_cmd },
	{ "diff", cmd_diff, &diff_cmd },
	{ "session", cmd_session, &session_cmd },
	{ "stat", cmd_stat, &stat_cmd },
	{ "top", cmd_top, &top_cmd },
	{ "help", cmd_help, NULL },
	{ NULL, NULL, NULL },
};

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c;

	printf("usage: perfmark COMMAND [OPTIONS]\n"
	       "       perfmark --version\n\ncommands:\n");
	for (c = cmds; c->name; c++)
		if (c->opts)
			printf("  %-12s %s\n", c->name, c->opts->brief);
	printf("\n'perfmark COMMAND --help' lists a command's options and their defaults.\n");
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	libbpf_set_print(print_libbpf);
	atexit(pm_warnings);
	if (argc < 2)
		return cmd_help(argc, argv), 1;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc, argv);
	if (!strcmp(argv[1], "--version")) {
		printf("perfmark %s\n", PERFMARK_VERSION);
		return 0;
	}
	for (c = cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	return pm_err("unknown command '%s' (try 'perfmark help')", argv[1]);
}

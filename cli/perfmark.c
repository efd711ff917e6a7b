// SPDX-License-Identifier: LGPL-2.1-or-later
/* perfmark: command table and shared error helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "commands.h"
#include "escape.h"

bool pm_verbose;

/*
 * libbpf's messages, set once in main: with -v all of them as they come;
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
 * terminal nor break the line in two.
 */
static void vline(const char *fmt, va_list ap)
{
	char *buf = NULL;
	int n = vasprintf(&buf, fmt, ap);

	fputs("perfmark: ", stderr);
	if (n >= 0) {
		escape_term(stderr, buf, (size_t)n, 0);
		free(buf);
	} else {
		fputs("out of memory", stderr);
	}
	fputc('\n', stderr);
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

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
} cmds[] = {
	{ "record", cmd_record,
	  "record [-e EVENT[,EVENT...]] [-F HZ | -c PERIOD] [-g | --call-graph fp|dwarf[,SIZE]|ehframe]\n"
	  "                [-a | -p PID[,PID...] | -- CMD [ARG...]]\n"
	  "                [--no-markers] [-z[LEVEL]] [-o FILE|-] [--duration SECONDS] [-v]" },
	{ "script", cmd_script, "script [-i FILE|-] [--type N] [--json]" },
	{ "report", cmd_report,
	  "report [-i FILE|-] [-e EVENT] [--by-marker] [--range NAME] [--sort self|total] [--json]" },
	{ "flamegraph", cmd_flamegraph, "flamegraph [-i FILE|-] [-o FILE.svg|FILE.html] [-e EVENT] [--range NAME]" },
	{ "export", cmd_export, "export [-i FILE|-] [-e EVENT] --format chrome|pprof|collapsed [-o FILE]" },
	{ "session", cmd_session,
	  "session create NAME [record options] [--ring SIZE | --output DIR [--rotate SIZE|TIME] [--keep N]]\n"
	  "                | list [--json] | show NAME [--json] | snapshot NAME -o FILE|-\n"
	  "                | attach NAME -o FILE|- | stop NAME | start NAME | delete NAME" },
	{ "help", cmd_help, "help" },
	{ NULL, NULL, NULL },
};

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c;

	printf("usage: perfmark COMMAND [OPTIONS]\n\n");
	for (c = cmds; c->name; c++)
		printf("  perfmark %s\n", c->usage);
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

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Command-line options from one declarative table per command.  From the
 * same rows come getopt's short string and long options, the usage line,
 * the --help text (every option with its default) and the dispatch to each
 * option's setter, so an option is one row and cannot be parsed without
 * being documented, nor documented without being parsed.
 *
 * A command may take several tables (record and session create share the
 * recording options of recopts.c), each with its own context pointer.
 * -h/--help is added to every command.
 */
#ifndef PERFMARK_CLI_OPTS_H
#define PERFMARK_CLI_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct opt;

/* 0, or 1 after its one error line (pm_err) */
typedef int (*opt_set_fn)(void *ctx, const struct opt *o, const char *arg);

struct opt {
	char flag;              /* short letter, or 0 */
	const char *name;       /* long name, or NULL */
	const char *arg;        /* its argument's name in usage/help ("EVENT[,EVENT...]"); NULL: none */
	bool optional;          /* the argument may be left out: -zLEVEL, --compress=LEVEL */
	const char *help;       /* one sentence */
	const char *def;        /* the default, shown as "(default: ...)"; NULL: none */
	opt_set_fn set;
	size_t off;             /* the stock setters' field in ctx */
	int alt;                /* usage: options sharing a non-zero alt show as [-a | -b] */
	bool hidden;            /* an old spelling kept working: parsed, not listed */
	bool required;          /* usage shows it without brackets (the command checks it) */
};

/* stock setters, on the field at o->off of ctx */
int opt_set_str(void *ctx, const struct opt *o, const char *arg);   /* const char * = arg */
int opt_set_true(void *ctx, const struct opt *o, const char *arg);  /* bool = true */
int opt_set_false(void *ctx, const struct opt *o, const char *arg); /* bool = false */
int opt_set_count(void *ctx, const struct opt *o, const char *arg); /* int += 1 (-v -vv) */

/* rows the commands that read a recording share (script, report, flamegraph, export) */
#define OPT_INPUT(type, field) \
	{ .flag = 'i', .name = "input", .arg = "FILE|-", \
	  .help = "the recording to read; - reads pipe-mode perf.data from stdin", \
	  .def = "perf.data", .set = opt_set_str, .off = offsetof(type, field) }
#define OPT_EVENT(type, field) \
	{ .flag = 'e', .name = "event", .arg = "EVENT", \
	  .help = "which sampling event's samples, in a recording of several (cycles, cpu-clock, ...)", \
	  .def = "the first that has samples", .set = opt_set_str, .off = offsetof(type, field) }

#define OPTS_MAX_TABLES 3
#define OPTS_MAX 64             /* options of one command, all tables together */

struct opts_cmd {
	const char *name;       /* "record", "session create" */
	const char *args;       /* operands before the options in the usage ("NAME"); NULL: none */
	const char *trail;      /* ... and after them ("[-- CMD [ARG...]]"); NULL: none */
	const char *brief;      /* a few words for the list of 'perfmark --help' */
	const char *about;      /* what the command does, for its --help */
	bool in_order;          /* options end at the first non-option (a command follows) */
	const struct opt *tables[OPTS_MAX_TABLES + 1];  /* each ends with a row of name and flag 0 */
};

#define OPTS_HELP 2
/*
 * Parse argv (argv[0] is the command's name) with getopt_long, calling each
 * option's setter with ctx[i] for tables[i].  0: done, optind at the first
 * operand; 1: after one error line; OPTS_HELP: --help was printed to stdout.
 */
int opts_parse(const struct opts_cmd *c, void *const *ctx, int argc, char **argv);

/* "usage: perfmark NAME ..." wrapped at 80 columns */
void opts_usage(const struct opts_cmd *c, FILE *f);
/* the same line after lead instead of "usage: " (a list of commands) */
void opts_synopsis(const struct opts_cmd *c, FILE *f, const char *lead);
/* the usage, what the command does, and every option with its default */
void opts_help(const struct opts_cmd *c, FILE *f);

/*
 * getopt_long's short string and long options for c (exposed for the unit
 * test): 0, or -E2BIG when they do not fit.  longopts gets a final zero row.
 */
int opts_getopt(const struct opts_cmd *c, char *shortopts, size_t len,
		struct option *longopts, size_t max);

#endif

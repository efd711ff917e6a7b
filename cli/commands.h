/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef PERFMARK_CLI_COMMANDS_H
#define PERFMARK_CLI_COMMANDS_H

#include <stdbool.h>

/* Each subcommand gets argv[0] = its own name. */
struct opts_cmd;
/* their option tables (opts.h): usage, --help and the list of 'perfmark --help' */
extern const struct opts_cmd record_cmd, script_cmd, report_cmd, flamegraph_cmd, export_cmd,
	session_cmd, stat_cmd, diff_cmd, top_cmd;
int cmd_record(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_session(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* -vv: libbpf's debug messages too (its warnings are always shown) */
extern bool pm_verbose;

/* "perfmark: " + message on stderr; returns 1 (the exit status) */
int pm_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pm_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* libbpf's warnings held so far, shown now (pm_err drops them: it says why) */
void pm_warnings(void);

#endif

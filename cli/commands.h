/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef PERFMARK_CLI_COMMANDS_H
#define PERFMARK_CLI_COMMANDS_H

/* Each subcommand gets argv[0] = its own name. */
int cmd_record(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_session(int argc, char **argv);

/* "perfmark: " + message on stderr; returns 1 (the exit status) */
int pm_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pm_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

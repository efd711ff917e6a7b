/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perfmark report -e TRACEPOINT --sort KEY[,KEY...]: hits counted by comm,
 * pid, tid, cpu and the tracepoint's fields (report_tp.c).
 */
#ifndef PERFMARK_CLI_REPORT_TP_H
#define PERFMARK_CLI_REPORT_TP_H

#include <stdbool.h>

/* event: its name, NULL for the first tracepoint; the exit status (error printed) */
int report_tp(const char *input, const char *event, const char *sort, bool json);

#endif

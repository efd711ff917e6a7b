// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A session's counters on the client's side (issue 20): `session create
 * --counters EVENTS` parsed as `perfmark stat -e` parses its list, and the
 * totals and rates perfmarkd reports, as `session show` prints them.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "escape.h"
#include "evspec.h"
#include "jsonf.h"
#include "sessdef.h"
#include "session_verbs.h"

int session_parse_count(const char *list, struct sessdef *sd)
{
	char err[256];
	int n = evspec_parse(list, EVSPEC_COUNTING, sd->count, SESSDEF_MAX_COUNT, err, sizeof(err));

	if (n < 0)
		return pm_err("--counters: %s", err);
	sd->nr_count = (size_t)n;
	return 0;
}

/* 1234567 -> "1,234,567" (perf stat's grouping) */
static void grouped(char *buf, size_t len, double v)
{
	char raw[64];
	size_t n, i, o = 0;

	snprintf(raw, sizeof(raw), "%.0f", v);
	n = strlen(raw);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0 && raw[i - 1] != '-')
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = '\0';
}

void session_show_counts(struct json_object *s)
{
	struct json_object *c, *arr, *x;
	char v[64];
	size_t i;

	if (!json_object_object_get_ex(s, "counts", &c) ||
	    !json_object_object_get_ex(c, "counters", &arr) || !json_object_is_type(arr, json_type_array))
		return;
	printf("counted:  %.3f s (since the session last started)\n", jsonf_get_double(c, "seconds"));
	for (i = 0; i < json_object_array_length(arr); i++) {
		const char *ev;

		x = json_object_array_get_idx(arr, i);
		ev = jsonf_get_str(x, "event") ? jsonf_get_str(x, "event") : "?";
		printf("  ");
		if (!jsonf_get_bool(x, "counted")) {
			printf("%20s      ", "<not counted>");
			escape_term(stdout, ev, strlen(ev), 0);
			printf("\n");
			continue;
		}
		if (jsonf_get_str(x, "unit") && !strcmp(jsonf_get_str(x, "unit"), "msec")) {
			printf("%20.2f msec ", jsonf_get_double(x, "value"));
			escape_term(stdout, ev, strlen(ev), 0);
			printf("  %.3f CPUs utilized", jsonf_get_double(x, "rate") / 1e3);
		} else {
			grouped(v, sizeof(v), jsonf_get_double(x, "value"));
			printf("%20s      ", v);
			escape_term(stdout, ev, strlen(ev), 0);
			printf("  %.3f/s", jsonf_get_double(x, "rate"));
		}
		if (jsonf_get_bool(x, "scaled"))
			printf("  (%.2f%%)", jsonf_get_double(x, "pct_running"));
		printf("\n");
	}
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Markers by lane, as record -v and session show tell them: how many came
 * through the fast lane, and why the others took the trap lane (the reason
 * their library passed to the trap site, enum pm_trap_why).
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "collector.h"
#include "perfmark_wire.h"

/* JSON keys and words of text, by enum pm_trap_why */
static const struct {
	const char *key, *text;
} whys[PM_TRAP_NR] = {
	[PM_TRAP_UNKNOWN] = { "unknown", "not said (an older libperfmark)" },
	[PM_TRAP_NO_AREA] = { "first", "the first marker: it offers the area" },
	[PM_TRAP_NOT_JOINED] = { "not_joined", "before the recorders joined" },
	[PM_TRAP_RING_FULL] = { "ring_full", "ring full" },
	[PM_TRAP_SILENT] = { "silent", "a reader silent" },
	[PM_TRAP_NO_SLOT] = { "vfork", "vfork child" },
	[PM_TRAP_TRAPALL] = { "trapall", "a recorder without a site" },
	[PM_TRAP_OFF] = { "off", "PERFMARK_FASTLANE=0" },
};

struct json_object *collector_lanes_json(uint64_t fast, const uint64_t *trap)
{
	struct json_object *o = json_object_new_object(), *t = json_object_new_object();

	json_object_object_add(o, "fast", json_object_new_uint64(fast));
	for (int i = 0; i < PM_TRAP_NR; i++)
		if (trap[i])
			json_object_object_add(t, whys[i].key, json_object_new_uint64(trap[i]));
	json_object_object_add(o, "trap", t);
	return o;
}

void collector_lanes_from_json(struct json_object *o, uint64_t *fast, uint64_t *trap)
{
	struct json_object *v, *t;

	*fast = 0;
	memset(trap, 0, PM_TRAP_NR * sizeof(*trap));
	if (json_object_object_get_ex(o, "fast", &v))
		*fast = json_object_get_uint64(v);
	if (!json_object_object_get_ex(o, "trap", &t))
		return;
	for (int i = 0; i < PM_TRAP_NR; i++)
		if (json_object_object_get_ex(t, whys[i].key, &v))
			trap[i] = json_object_get_uint64(v);
}

void collector_lanes_text(uint64_t fast, const uint64_t *trap, char *buf, size_t len)
{
	uint64_t total = 0;
	size_t n;

	for (int i = 0; i < PM_TRAP_NR; i++)
		total += trap[i];
	n = (size_t)snprintf(buf, len, "%llu markers through the fast lane, %llu through the trap lane",
			     (unsigned long long)fast, (unsigned long long)total);
	for (int i = 0, first = 1; i < PM_TRAP_NR && n < len; i++) {
		if (!trap[i])
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%llu %s", first ? " (" : ", ",
				      (unsigned long long)trap[i], whys[i].text);
		first = 0;
	}
	if (total && n < len)
		snprintf(buf + n, len - n, ")");
}

// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "jsonf.h"

/* the value at key when it is there, else NULL */
static struct json_object *field(struct json_object *o, const char *key)
{
	struct json_object *x;

	return o && json_object_object_get_ex(o, key, &x) ? x : NULL;
}

static int bad(char *err, size_t errlen, const char *key, const char *what)
{
	snprintf(err, errlen, "'%s' must be %s", key, what);
	return -EINVAL;
}

int jsonf_u64(struct json_object *o, const char *key, uint64_t *v, uint64_t lo, uint64_t hi,
	      char *err, size_t errlen)
{
	struct json_object *x = field(o, key);
	int64_t n;

	if (!x)
		return 0;
	if (!json_object_is_type(x, json_type_int))
		return bad(err, errlen, key, "an integer");
	n = json_object_get_int64(x);
	if (n < 0 || (uint64_t)n < lo || (uint64_t)n > hi) {
		snprintf(err, errlen, "'%s' out of range (%llu..%llu)", key,
			 (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	*v = (uint64_t)n;
	return 0;
}

int jsonf_bool(struct json_object *o, const char *key, bool *v, char *err, size_t errlen)
{
	struct json_object *x = field(o, key);

	if (!x)
		return 0;
	if (!json_object_is_type(x, json_type_boolean))
		return bad(err, errlen, key, "true or false");
	*v = json_object_get_boolean(x);
	return 0;
}

int jsonf_str(struct json_object *o, const char *key, const char **v, char *err, size_t errlen)
{
	struct json_object *x = field(o, key);

	*v = NULL;
	if (!x)
		return 0;
	if (!json_object_is_type(x, json_type_string))
		return bad(err, errlen, key, "a string");
	*v = json_object_get_string(x);
	return 0;
}

int jsonf_array(struct json_object *o, const char *key, struct json_object **arr, size_t max,
		char *err, size_t errlen)
{
	*arr = field(o, key);
	if (!*arr)
		return 0;
	if (!json_object_is_type(*arr, json_type_array)) {
		*arr = NULL;
		return bad(err, errlen, key, "a list");
	}
	if (json_object_array_length(*arr) > max) {
		snprintf(err, errlen, "'%s': too many entries (max %zu)", key, max);
		*arr = NULL;
		return -EINVAL;
	}
	return 0;
}

int jsonf_object(struct json_object *o, const char *key, struct json_object **obj,
		 char *err, size_t errlen)
{
	*obj = field(o, key);
	if (*obj && !json_object_is_type(*obj, json_type_object)) {
		*obj = NULL;
		return bad(err, errlen, key, "an object");
	}
	return 0;
}

static bool listed(const char *key, const char *known)
{
	size_t n = strlen(key);

	for (const char *p = known; *p; ) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !memcmp(p, key, n))
			return true;
		p += len + (end ? 1 : 0);
	}
	return false;
}

int jsonf_known_keys(struct json_object *o, const char *known, const char *what,
		     char *err, size_t errlen)
{
	if (!o || !json_object_is_type(o, json_type_object))
		return 0;
	json_object_object_foreach(o, key, val) {
		char shown[65];
		size_t i;

		(void)val;
		if (listed(key, known))
			continue;
		/* the client's bytes, bounded and with nothing a terminal acts on */
		for (i = 0; key[i] && i < sizeof(shown) - 1; i++)
			shown[i] = (unsigned char)key[i] < 0x20 || key[i] == 0x7f ? '?' : key[i];
		shown[i] = '\0';
		snprintf(err, errlen, "perfmarkd does not know %s '%s'", what, shown);
		return -EINVAL;
	}
	return 0;
}

const char *jsonf_get_str(struct json_object *o, const char *key)
{
	struct json_object *x = field(o, key);

	return x && json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
}

long long jsonf_get_int(struct json_object *o, const char *key)
{
	struct json_object *x = field(o, key);

	return x ? (long long)json_object_get_int64(x) : 0;
}

double jsonf_get_double(struct json_object *o, const char *key)
{
	struct json_object *x = field(o, key);

	return x ? json_object_get_double(x) : 0;
}

bool jsonf_get_bool(struct json_object *o, const char *key)
{
	struct json_object *x = field(o, key);

	return x && json_object_get_boolean(x);
}

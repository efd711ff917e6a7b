/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fields of a JSON object (json-c), read one way everywhere.
 *
 * Checked readers, for input that must be validated (requests, stored
 * definitions): an absent key leaves *v alone and returns 0; a wrong type or
 * a value out of range returns -EINVAL with one line in err naming the key.
 *
 * Lenient readers, for replies the program trusts: a default when absent.
 */
#ifndef PERFMARK_JSONF_H
#define PERFMARK_JSONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

int jsonf_u64(struct json_object *o, const char *key, uint64_t *v, uint64_t lo, uint64_t hi,
	      char *err, size_t errlen);
int jsonf_bool(struct json_object *o, const char *key, bool *v, char *err, size_t errlen);
/* *v: the string (owned by o), NULL when absent */
int jsonf_str(struct json_object *o, const char *key, const char **v, char *err, size_t errlen);
/* *arr: the list (owned by o) of at most max entries, NULL when absent */
int jsonf_array(struct json_object *o, const char *key, struct json_object **arr, size_t max,
		char *err, size_t errlen);
/* *obj: the object (owned by o), NULL when absent */
int jsonf_object(struct json_object *o, const char *key, struct json_object **obj,
		 char *err, size_t errlen);

/*
 * The protocol's rule: a request an older perfmarkd cannot honour in full is
 * refused, not half done.  0 when every key of o is in known ("a,b,c"),
 * else -EINVAL with "perfmarkd does not know WHAT 'KEY'" in err (the key cut
 * at 64 bytes, control characters shown as '?').
 */
int jsonf_known_keys(struct json_object *o, const char *known, const char *what,
		     char *err, size_t errlen);

const char *jsonf_get_str(struct json_object *o, const char *key);   /* NULL */
long long jsonf_get_int(struct json_object *o, const char *key);     /* 0 */
bool jsonf_get_bool(struct json_object *o, const char *key);         /* false */
double jsonf_get_double(struct json_object *o, const char *key);     /* 0 */

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of struct recspec's options beside test-control.c's (which is
 * near the 800-line limit): --max-stack, its check and its JSON key.
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jsonf.h"
#include "recspec.h"

static struct json_object *parse(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return o;
}

/* --max-stack N: 1..127, fp and ehframe only, carried as "max_stack" */
static void test_recspec_max_stack(void **state)
{
	static const char *bad[] = { "0", "128", "-1", "", "5x", "99999999999999999999" };
	/* the key table of a perfmarkd from before max_stack */
	static const char old_keys[] =
		"events,freq,period,call_graph,callchain,markers,target,pids,zstd,ringbuf,filters";
	struct recspec r, back;
	struct json_object *o;
	char err[256];
	size_t i;

	(void)state;
	recspec_init(&r);
	assert_int_equal(r.max_stack, 127);
	assert_int_equal(recspec_parse_max_stack("1", &r, err, sizeof(err)), 0);
	assert_int_equal(r.max_stack, 1);
	assert_int_equal(recspec_parse_max_stack("127", &r, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(recspec_parse_max_stack(bad[i], &r, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "--max-stack"));
	}
	/* perf unwinds dwarf copies itself: a limit there would not hold */
	recspec_init(&r);
	r.max_stack = 10;
	assert_int_equal(recspec_validate(&r, err, sizeof(err)), -EINVAL);
	r.call_graph = RECSPEC_CG_DWARF;
	assert_int_equal(recspec_validate(&r, err, sizeof(err)), -EINVAL);
	r.call_graph = RECSPEC_CG_EHFRAME;
	assert_int_equal(recspec_validate(&r, err, sizeof(err)), 0);

	/* sent only when asked for; read back */
	o = recspec_to_json(&r, false);
	assert_non_null(json_object_object_get(o, "max_stack"));
	assert_int_equal(recspec_from_json(o, &back, err, sizeof(err)), 0);
	assert_int_equal(back.max_stack, 10);
	/* an older daemon refuses it by name rather than record deeper stacks */
	err[0] = '\0';
	assert_int_equal(jsonf_known_keys(o, old_keys, "option", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "max_stack"));
	json_object_put(o);
	recspec_init(&r);
	r.call_graph = RECSPEC_CG_FP;
	o = recspec_to_json(&r, false);
	assert_null(json_object_object_get(o, "max_stack"));
	json_object_put(o);
	for (i = 0; i < 3; i++) {
		static const char *js[] = { "{\"max_stack\":0}", "{\"max_stack\":128}",
					    "{\"max_stack\":\"9\"}" };

		o = parse(js[i]);
		assert_int_equal(recspec_from_json(o, &back, err, sizeof(err)), -EINVAL);
		json_object_put(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recspec_max_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

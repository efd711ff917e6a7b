// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of the tracepoint pieces that need no BPF: formats
 * (lib/collect/tpformat.c), filters compiled and evaluated by the
 * reference evaluator the BPF program mirrors (tpfilter.c), and the
 * decoding of entries through HEADER_TRACING_DATA (lib/analyze/tracepoint.c),
 * from a format of our own and from the running kernel's tracefs
 * (lib/write/tracedata.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdbuf.h"
#include "perfdata.h"
#include "test-util.h"
#include "tpfilter.h"
#include "tpformat.h"
#include "tracedata.h"
#include "tracepoint.h"
#include "tp-testfmt.h"
#include "tpcheck.h"

#include <tracefs.h>

static struct tpformat *format(void)
{
	struct tpformat *f = NULL;
	char err[256] = "";

	assert_int_equal(tpformat__parse(&f, "test", fmt_text, sizeof(fmt_text) - 1, err, sizeof(err)), 0);
	return f;
}

static void test_format(void **state)
{
	struct tpformat *f = format();
	const struct tpfield *fd;

	assert_int_equal(tpformat__id(f), 999);
	assert_string_equal(tpformat__name(f), "tevt");
	assert_int_equal(tpformat__fixed(f), 76);
	assert_int_equal(tpformat__nr_fields(f), 13);
	fd = tpformat__find(f, "comm");
	assert_int_equal(fd->kind, TPFIELD_CHARS);
	assert_int_equal(fd->size, 16);
	fd = tpformat__find(f, "name");
	assert_int_equal(fd->kind, TPFIELD_DYNSTR);
	assert_true(fd->dyn);
	assert_false(fd->rel);
	assert_true(tpformat__find(f, "rname")->rel);
	assert_int_equal(tpformat__find(f, "args")->kind, TPFIELD_OTHER);
	assert_true(tpformat__find(f, "val")->sgn);
	assert_true(tpformat__find(f, "ptr")->pointer);
	assert_int_equal(tpformat__find(f, "common_pid")->kind, TPFIELD_NUM);
	tpformat__free(f);
}

struct fcase {
	const char *expr;
	bool want;
};

static void test_filter_eval(void **state)
{
	struct tpformat *f = format();
	struct pm_tp_cfg *c = calloc(1, sizeof(*c));
	uint8_t e[256];
	size_t size = entry(e, "kworker/0:1", -5, 0x14, 200, -300, "/etc/passwd", "relative");
	static const struct fcase cases[] = {
		{ "val == -5", true }, { "val != -5", false }, { "val < 0", true }, { "val <= -5", true },
		{ "val > -6", true }, { "val >= -4", false }, { "mask & 4", true }, { "mask & 8", false },
		{ "mask == 0x14", true }, { "mask > 1", true }, { "small == 200", true },
		{ "small > 100", true }, { "neg == -300", true }, { "neg < -299", true },
		{ "comm == \"kworker/0:1\"", true }, { "comm == kworker/0:1", true },
		{ "comm == 'kworker'", false }, { "comm != \"kworker/0:1\"", false },
		{ "comm ~ \"kworker*\"", true }, { "comm ~ \"*0:1\"", true }, { "comm ~ \"*er/*\"", true },
		{ "comm ~ \"*\"", true }, { "comm ~ \"worker*\"", false }, { "comm ~ \"*0:2\"", false },
		{ "comm ~ \"kworker/0:1\"", true }, { "comm ~ \"*kworker/0:1*\"", true },
		{ "comm ~ \"*kworker/0:1x*\"", false },
		{ "name == \"/etc/passwd\"", true }, { "name ~ \"*passwd\"", true },
		{ "name ~ \"/etc*\"", true }, { "name ~ \"*tc/pa*\"", true }, { "name == \"/etc\"", false },
		{ "rname == \"relative\"", true }, { "rname ~ \"rel*\"", true }, { "rname ~ \"*x*\"", false },
		{ "ptr != 0", true }, { "common_type == 999", true },
		{ "val == -5 && comm ~ \"k*\"", true }, { "val == 1 && comm ~ \"k*\"", false },
		{ "val == 1 || comm ~ \"k*\"", true }, { "val == 1 || comm ~ \"x*\"", false },
		{ "!(val == 1)", true }, { "!val == -5", false }, { "!!(val == -5)", true },
		{ "val == 1 || val == -5 && small == 200", true },
		{ "(val == 1 || val == -5) && small == 1", false },
		{ "val == 1 || (val == 2 || (val == 3 || val == -5))", true },
		{ "(((val == -5)))", true }, { "  val==-5&&small==200  ", true },
	};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		memset(c, 0, sizeof(*c));
		if (tpfilter_compile(cases[i].expr, f, c, err, sizeof(err)))
			fail_msg("'%s' refused: %s", cases[i].expr, err);
		if (tpfilter_eval(c, e, size) != cases[i].want)
			fail_msg("'%s' is %s", cases[i].expr, cases[i].want ? "false" : "true");
	}
	/* an entry cut short: its fields past the end are not read, they do not match */
	assert_int_equal(tpfilter_compile("mask == 0x14", f, c, err, sizeof(err)), 0);
	assert_false(tpfilter_eval(c, e, 32));
	assert_int_equal(tpfilter_compile("name ~ \"*passwd\"", f, c, err, sizeof(err)), 0);
	assert_false(tpfilter_eval(c, e, 80));
	free(c);
	tpformat__free(f);
}

static void test_filter_refused(void **state)
{
	struct tpformat *f = format();
	struct pm_tp_cfg *c = calloc(1, sizeof(*c));
	char big[1100], err[256];
	static const char *const bad[] = {
		"", "   ", "nope == 1", "val = 1", "val == ", "val == 1 &&", "(val == 1", "val == 1)",
		"val == 1 val == 2", "comm < \"a\"", "comm ~ \"a?b\"", "comm ~ \"a*b\"", "comm ~ \"[ab]\"",
		"val == \"x\"", "val ~ \"1\"", "val == 4294967296", "small == 256", "neg == 40000",
		"args == 1", "val == 1x", "val == --1", "comm == \"open", "!", "()", "val == 1 | val == 2",
		"val =~ \"x\"", "val == +1",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (!tpfilter_compile(bad[i], f, c, err, sizeof(err)))
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(c->nr_insns, 0);
		assert_non_null(strstr(err, "tevt"));
	}
	/* the bounds: depth, steps, strings, length */
	memset(big, 0, sizeof(big));
	for (i = 0; i < 17; i++)
		strcat(big, "(");
	strcat(big, "val == 1");
	for (i = 0; i < 17; i++)
		strcat(big, ")");
	assert_int_equal(tpfilter_compile(big, f, c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nested"));
	big[0] = '\0';
	for (i = 0; i < 40; i++)
		strcat(big, i ? " || val == 1" : "val == 1");
	assert_int_equal(tpfilter_compile(big, f, c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "steps"));
	big[0] = '\0';
	for (i = 0; i < 9; i++)
		strcat(big, i ? " || comm == a" : "comm == a");
	assert_int_equal(tpfilter_compile(big, f, c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "strings"));
	memset(big, ' ', sizeof(big) - 1);
	memcpy(big, "val == 1", 8);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(tpfilter_compile(big, f, c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer"));
	/* a message never carries what a terminal would act on */
	assert_int_equal(tpfilter_compile("nope\x1b[2J == 1", f, c, err, sizeof(err)), -EINVAL);
	assert_null(strchr(err, '\x1b'));
	free(c);
	tpformat__free(f);
}

/* HEADER_TRACING_DATA with tevt in system "test" */
static void tracing_data(struct pdbuf *b, const char *text, size_t len)
{
	static const char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	static const char page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n";
	uint8_t el[2] = { 0, 8 };

	pdbuf_put(b, magic, 10);
	pdbuf_put(b, "0.6", 4);
	pdbuf_put(b, el, 2);
	pdbuf_u32(b, 4096);
	pdbuf_put(b, "header_page", 12);
	pdbuf_u64(b, sizeof(page) - 1);
	pdbuf_put(b, page, sizeof(page) - 1);
	pdbuf_put(b, "header_event", 13);
	pdbuf_u64(b, 0);
	pdbuf_u32(b, 0);                 /* ftrace */
	pdbuf_u32(b, 1);
	pdbuf_put(b, "test", 5);
	pdbuf_u32(b, 1);
	pdbuf_u64(b, len);
	pdbuf_put(b, text, len);
	pdbuf_u32(b, 0);                 /* kallsyms */
	pdbuf_u32(b, 0);                 /* printk */
	pdbuf_u64(b, 0);                 /* cmdlines */
	assert_int_equal(b->err, 0);
}

static void test_decode(void **state)
{
	const struct tpdecode_event *ev;
	struct pdbuf b = { 0 };
	struct tpdecode *d;
	struct tpvalue v;
	uint8_t e[256];
	char err[256], text[256];
	size_t size = entry(e, "kworker/0:1", -5, 0x14, 200, -300, "/etc/passwd", "relative"), i;

	tracing_data(&b, fmt_text, sizeof(fmt_text) - 1);
	assert_int_equal(tpdecode__new(&d, b.p, b.len, err, sizeof(err)), 0);
	assert_int_equal(tpdecode__nr_events(d), 1);
	assert_int_equal(tpdecode__entry(d, e, size, &ev), 0);
	assert_string_equal(tpdecode__sys(ev), "test");
	assert_string_equal(tpdecode__name(ev), "tevt");
	assert_int_equal(tpdecode__nr_fields(ev), 9);
	tpdecode__text(d, ev, e, size, text, sizeof(text));
	assert_string_equal(text, "comm=kworker/0:1 val=-5 name=/etc/passwd rname=relative");
	i = (size_t)tpdecode__field_index(ev, "val");
	tpdecode__value(ev, e, size, i, &v);
	assert_int_equal(v.kind, TPV_INT);
	assert_int_equal(v.i, -5);
	tpdecode__value(ev, e, size, (size_t)tpdecode__field_index(ev, "neg"), &v);
	assert_int_equal(v.i, -300);
	tpdecode__value(ev, e, size, (size_t)tpdecode__field_index(ev, "mask"), &v);
	assert_int_equal(v.kind, TPV_UINT);
	assert_int_equal(v.u, 0x14);
	tpdecode__value(ev, e, size, (size_t)tpdecode__field_index(ev, "comm"), &v);
	assert_int_equal(v.kind, TPV_STR);
	assert_int_equal(v.len, 11);
	assert_memory_equal(v.s, "kworker/0:1", 11);
	tpdecode__value(ev, e, size, (size_t)tpdecode__field_index(ev, "name"), &v);
	assert_int_equal(v.len, 11);
	assert_memory_equal(v.s, "/etc/passwd", 11);
	tpdecode__value(ev, e, size, (size_t)tpdecode__field_index(ev, "rname"), &v);
	assert_int_equal(v.len, 8);
	assert_memory_equal(v.s, "relative", 8);
	tpdecode__value(ev, e, size, (size_t)tpdecode__field_index(ev, "args"), &v);
	assert_int_equal(v.kind, TPV_ARRAY);
	assert_int_equal(v.n, 2);
	assert_int_equal(tpvalue_elem(&v, 1), 8);
	assert_int_equal(tpdecode__field_index(ev, "common_pid"), -1);

	/* entries that do not hold what the format says are not decoded */
	assert_int_equal(tpdecode__entry(d, e, 60, &ev), -EINVAL);
	e[46] = 0xff;                    /* name's length past the end */
	assert_int_equal(tpdecode__entry(d, e, size, &ev), -EINVAL);
	e[46] = 12;
	e[0] = 1;                        /* an id with no format */
	assert_int_equal(tpdecode__entry(d, e, size, &ev), -ENOENT);
	assert_int_equal(tpdecode__entry(d, e, 4, &ev), -EINVAL);
	tpdecode__free(d);

	/* tracing data cut anywhere is refused, never read past */
	for (i = 0; i < b.len; i++)
		if (!tpdecode__new(&d, b.p, i, err, sizeof(err)))
			fail_msg("tracing data cut at %zu of %zu accepted", i, b.len);
	pdbuf_free(&b);
}

/* the running kernel's sched_switch, through tracedata_build, decoded as perf prints it */
static void test_tracefs(void **state)
{
	struct perfdata_event ev[2];
	const struct tpdecode_event *te;
	struct tpformat *f = NULL;
	struct tpdecode *d;
	uint8_t *data = NULL, e[256] = { 0 };
	size_t len = 0, i;
	char err[256], text[256];
	int32_t pid = 42, prio = 120;
	uint64_t one = 1;
	uint16_t id;

	if (tpformat__read(&f, "sched", "sched_switch", err, sizeof(err)))
		skip_because("no readable tracefs here (%s)", err);
	memset(ev, 0, sizeof(ev));
	ev[0].attr.type = PERF_TYPE_TRACEPOINT;
	ev[0].attr.config = tpformat__id(f);
	ev[0].name = "sched:sched_switch";
	ev[1].attr.type = PERF_TYPE_SOFTWARE;
	ev[1].name = "cpu-clock";
	assert_int_equal(tracedata_build(ev, 2, &data, &len), 0);
	assert_non_null(data);
	assert_int_equal(tpdecode__new(&d, data, len, err, sizeof(err)), 0);
	assert_int_equal(tpdecode__nr_events(d), 1);
	/* an entry laid out by the format's offsets */
	id = (uint16_t)tpformat__id(f);
	memcpy(e, &id, 2);
	strcpy((char *)e + tpformat__find(f, "prev_comm")->off, "a");
	memcpy(e + tpformat__find(f, "prev_pid")->off, &pid, 4);
	memcpy(e + tpformat__find(f, "prev_prio")->off, &prio, 4);
	memcpy(e + tpformat__find(f, "prev_state")->off, &one, 8);
	strcpy((char *)e + tpformat__find(f, "next_comm")->off, "b");
	memcpy(e + tpformat__find(f, "next_prio")->off, &prio, 4);
	assert_int_equal(tpdecode__entry(d, e, tpformat__fixed(f), &te), 0);
	tpdecode__text(d, te, e, tpformat__fixed(f), text, sizeof(text));
	assert_string_equal(text, "prev_comm=a prev_pid=42 prev_prio=120 prev_state=S ==> "
			    "next_comm=b next_pid=0 next_prio=120");
	tpdecode__free(d);
	free(data);
	/* an id that is not the tracepoint's any more (another boot): its format is left out */
	ev[0].attr.config = tpformat__id(f) + 100000;
	assert_int_equal(tracedata_build(ev, 2, &data, &len), 0);
	assert_int_equal(tpdecode__new(&d, data, len, err, sizeof(err)), 0);
	assert_int_equal(tpdecode__nr_events(d), 0);
	tpdecode__free(d);
	free(data);
	/* no tracepoint, no tracing data; names that are not names make no path */
	assert_int_equal(tracedata_build(&ev[1], 1, &data, &len), 0);
	assert_null(data);
	ev[0].attr.config = tpformat__id(f);
	ev[0].name = "sched:../../../etc";
	assert_int_equal(tracedata_build(ev, 1, &data, &len), 0);
	assert_null(data);
	for (i = 0; i < 1; i++)
		tpformat__free(f);
}

/* every format of the running kernel passes tpcheck as it is: none loses its print fmt */
static void test_tracefs_all(void **state)
{
	char **systems = tracefs_event_systems(NULL), **events;
	size_t i, j, n = 0, dropped = 0;
	int size, r;

	if (!systems)
		skip_because("no readable tracefs here");
	for (i = 0; systems[i]; i++) {
		events = tracefs_system_events(NULL, systems[i]);
		for (j = 0; events && events[j]; j++) {
			char *text = tracefs_event_file_read(NULL, systems[i], events[j], "format", &size);

			if (!text || size <= 0) {
				free(text);
				continue;
			}
			r = tpcheck_format(text, (size_t)size);
			if (r) {
				printf("%s:%s: %s\n", systems[i], events[j], r < 0 ? "refused" : "print fmt dropped");
				dropped++;
			}
			n++;
			free(text);
		}
		tracefs_list_free(events);
	}
	tracefs_list_free(systems);
	printf("%zu formats checked, %zu not as they are\n", n, dropped);
	assert_true(n > 100);
	assert_int_equal(dropped, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_filter_eval),
		cmocka_unit_test(test_filter_refused),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_tracefs),
		cmocka_unit_test(test_tracefs_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

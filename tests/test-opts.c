/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for cli/opts.c (option tables) and the recording options'
 * table of cli/recopts.c: the getopt strings, the parse, the errors, and
 * the usage and --help generated from the same rows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "opts.h"
#include "recopts.h"

/* cli/perfmark.c's error line, kept for the assertions */
static char last_err[512];

int pm_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_err, sizeof(last_err), fmt, ap);
	va_end(ap);
	return 1;
}

struct toy {
	const char *out;
	bool json;
	int verbose;
	int level;
	const char *long_only;
};

static int set_level(void *ctx, const struct opt *o, const char *arg)
{
	struct toy *t = ctx;

	t->level = arg ? atoi(arg) : 1;
	if (t->level > 9)
		return pm_err("bad level '%s'", arg);
	return 0;
}

static const struct opt toy_table[] = {
	{ .flag = 'o', .name = "output", .arg = "FILE", .help = "where it goes", .def = "toy.out",
	  .set = opt_set_str, .off = offsetof(struct toy, out), .alt = 1 },
	{ .name = "json", .help = "JSON instead", .set = opt_set_true,
	  .off = offsetof(struct toy, json), .alt = 1 },
	{ .flag = 'v', .name = "verbose", .help = "say more", .set = opt_set_count,
	  .off = offsetof(struct toy, verbose) },
	{ .flag = 'z', .name = "level", .arg = "N", .optional = true, .help = "a level",
	  .set = set_level },
	{ .name = "only-long", .arg = "X", .help = "long only", .def = "none", .set = opt_set_str,
	  .off = offsetof(struct toy, long_only) },
	{ .name = "old-spelling", .help = "hidden", .set = opt_set_true,
	  .off = offsetof(struct toy, json), .hidden = true },
	{ 0 },
};

static const struct opts_cmd toy_cmd = {
	.name = "toy", .args = "NAME", .trail = "[-- CMD [ARG...]]",
	.about = "A toy command.", .in_order = true, .tables = { toy_table },
};

static char *capture(void (*fn)(const struct opts_cmd *, FILE *), const struct opts_cmd *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(c, f);
	fclose(f);
	return buf;
}

static int parse(const struct opts_cmd *c, void **ctx, char *const *args)
{
	char *argv[32];
	int argc = 0;

	while (args[argc]) {
		argv[argc] = args[argc];
		argc++;
	}
	argv[argc] = NULL;
	last_err[0] = '\0';
	return opts_parse(c, ctx, argc, argv);
}

static void test_getopt_strings(void **state)
{
	struct option lo[16];
	char so[64];
	size_t i, n = 0;

	(void)state;
	assert_int_equal(opts_getopt(&toy_cmd, so, sizeof(so), lo, 16), 0);
	/* in order, ':' for missing arguments, an optional argument, --help's h */
	assert_string_equal(so, "+:o:vz::h");
	for (i = 0; lo[i].name; i++)
		n++;
	assert_int_equal(n, 7);   /* 6 rows + help */
	assert_string_equal(lo[0].name, "output");
	assert_int_equal(lo[0].has_arg, required_argument);
	assert_int_equal(lo[0].val, 'o');
	assert_int_equal(lo[3].has_arg, optional_argument);
	assert_string_equal(lo[4].name, "only-long");
	assert_true(lo[4].val >= 256);   /* long only: no letter */
	assert_string_equal(lo[6].name, "help");
	assert_int_equal(opts_getopt(&toy_cmd, so, 4, lo, 16), -E2BIG);
}

static void test_duplicate_row(void **state)
{
	static const struct opt dup[] = {
		{ .flag = 'o', .name = "output", .arg = "F", .set = opt_set_str },
		{ .flag = 'x', .name = "output", .set = opt_set_true },
		{ 0 },
	};
	static const struct opt dup_help[] = {
		{ .flag = 'h', .name = "host", .set = opt_set_true },
		{ 0 },
	};
	const struct opts_cmd c1 = { .name = "d", .tables = { dup } };
	const struct opts_cmd c2 = { .name = "d", .tables = { dup_help } };
	struct option lo[8];
	char so[32];

	(void)state;
	assert_int_equal(opts_getopt(&c1, so, sizeof(so), lo, 8), -EEXIST);
	assert_int_equal(opts_getopt(&c2, so, sizeof(so), lo, 8), -EEXIST);
}

static void test_parse(void **state)
{
	struct toy t = { 0 };
	void *ctx[] = { &t };

	(void)state;
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "-vv", "--output", "a.out",
				"-z7", "--only-long=x", "--old-spelling", "NAME", "-v", NULL }), 0);
	assert_string_equal(t.out, "a.out");
	assert_int_equal(t.verbose, 2);
	assert_int_equal(t.level, 7);
	assert_string_equal(t.long_only, "x");
	assert_true(t.json);
	/* in order: NAME ends the options, the -v after it is an operand */
	assert_int_equal(optind, 7);

	memset(&t, 0, sizeof(t));
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "-z", "--level", NULL }), 0);
	assert_int_equal(t.level, 1);     /* an optional argument left out */
}

static void test_errors(void **state)
{
	struct toy t = { 0 };
	void *ctx[] = { &t };

	(void)state;
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "--output", NULL }), 1);
	assert_string_equal(last_err, "option '--output' needs an argument");
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "-o", NULL }), 1);
	assert_string_equal(last_err, "option '-o' needs an argument");
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "--bogus", NULL }), 1);
	assert_string_equal(last_err, "unknown option '--bogus' (try 'perfmark toy --help')");
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "-q", NULL }), 1);
	assert_string_equal(last_err, "unknown option '-q' (try 'perfmark toy --help')");
	/* no abbreviations: --out is not --output, --only is not --only-long */
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "--out", "x", NULL }), 1);
	assert_string_equal(last_err, "unknown option '--out' (try 'perfmark toy --help')");
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "--only=x", NULL }), 1);
	assert_string_equal(last_err, "unknown option '--only' (try 'perfmark toy --help')");
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "--json", "--lev", NULL }), 1);
	assert_string_equal(last_err, "unknown option '--lev' (try 'perfmark toy --help')");
	/* a setter's own error stops the parse */
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "-z42", "-v", NULL }), 1);
	assert_string_equal(last_err, "bad level '42'");
	assert_int_equal(t.verbose, 0);
}

static void test_usage_and_help(void **state)
{
	char *u = capture(opts_usage, &toy_cmd), *h;

	(void)state;
	/* the alt group in one bracket, the optional argument, operands before and after */
	assert_string_equal(u, "usage: perfmark toy NAME [-o FILE | --json] [-v] [-z[N]] [--only-long X]\n"
			       "                    [-- CMD [ARG...]]\n");
	free(u);
	h = capture(opts_help, &toy_cmd);
	assert_non_null(strstr(h, "A toy command."));
	assert_non_null(strstr(h, "  -o, --output FILE"));
	assert_non_null(strstr(h, "(default: toy.out)"));
	assert_non_null(strstr(h, "      --json"));
	assert_non_null(strstr(h, "  -z, --level[=N]"));
	assert_non_null(strstr(h, "      --only-long X"));
	assert_non_null(strstr(h, "(default: none)"));
	assert_non_null(strstr(h, "  -h, --help"));
	assert_null(strstr(h, "old-spelling"));    /* hidden: parsed, not listed */
	for (char *l = h; *l; l = strchr(l, '\n') + 1)
		assert_true(strchr(l, '\n') - l <= 80);
	free(h);
}

static void test_help_returns(void **state)
{
	struct toy t = { 0 };
	void *ctx[] = { &t };
	FILE *saved = stdout;

	(void)state;
	stdout = fopen("/dev/null", "w");
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "-v", "--help", "-o", NULL }), OPTS_HELP);
	assert_int_equal(parse(&toy_cmd, ctx, (char *[]){ "toy", "-h", NULL }), OPTS_HELP);
	fclose(stdout);
	stdout = saved;
}

/* the table record and session create share: every INTERFACE.md spelling */
static const struct opts_cmd rec_cmd = { .name = "rec", .tables = { recopts_table } };

static void test_recopts(void **state)
{
	static const char *const spellings[] = {
		"-e, --event EVENT[,EVENT...]", "-F, --freq HZ", "-c, --count PERIOD", "  -g  ",
		"--call-graph fp|dwarf[,SIZE]|ehframe", "-a, --all-cpus", "-p, --pid PID[,PID...]",
		"--no-markers", "-z, --compress[=LEVEL]", "--ringbuf SIZE", "(default: 4000)",
	};
	struct recopts ro;
	void *ctx[] = { &ro };
	char *h = capture(opts_help, &rec_cmd), *u = capture(opts_usage, &rec_cmd);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
		if (!strstr(h, spellings[i]))
			fail_msg("recording options' --help lacks '%s':\n%s", spellings[i], h);
	assert_non_null(strstr(u, "[-F HZ | -c PERIOD]"));
	assert_non_null(strstr(u, "[-g | --call-graph fp|dwarf[,SIZE]|ehframe]"));
	assert_non_null(strstr(u, "[-a | -p PID[,PID...]]"));
	free(h);
	free(u);

	recopts_init(&ro);
	assert_int_equal(parse(&rec_cmd, ctx, (char *[]){ "rec", "-e", "cpu-clock,page-faults",
				"-F", "99", "--call-graph", "dwarf,1024", "-p", "1,2", "-z3",
				"--no-markers", "--ringbuf", "64K", NULL }), 0);
	assert_int_equal(ro.spec.nr_events, 2);
	assert_string_equal(ro.spec.events[1].name, "page-faults");
	assert_int_equal(ro.spec.freq, 99);
	assert_int_equal(ro.spec.call_graph, RECSPEC_CG_DWARF);
	assert_int_equal(ro.spec.stack_size, 1024);
	assert_int_equal(ro.spec.nr_pids, 2);
	assert_int_equal(ro.spec.target, RECSPEC_TARGET_PIDS);
	assert_int_equal(ro.spec.zstd_level, 3);
	assert_false(ro.spec.markers);
	assert_int_equal(ro.spec.ringbuf_size, 64 << 10);
	assert_int_equal(recopts_check(&ro), 0);

	recopts_init(&ro);
	assert_int_equal(parse(&rec_cmd, ctx, (char *[]){ "rec", "-F", "99", "-c", "5", NULL }), 0);
	assert_int_equal(recopts_check(&ro), 1);
	assert_string_equal(last_err, "-F and -c cannot be used together");
	recopts_init(&ro);
	assert_int_equal(parse(&rec_cmd, ctx, (char *[]){ "rec", "--ringbuf", "5000", NULL }), 0);
	assert_int_equal(recopts_check(&ro), 1);
	assert_non_null(strstr(last_err, "power of two"));
	assert_int_equal(parse(&rec_cmd, ctx, (char *[]){ "rec", "--compress=23", NULL }), 1);
	assert_string_equal(last_err, "bad compression level '23' (1-22)");
	assert_int_equal(parse(&rec_cmd, ctx, (char *[]){ "rec", "-e", "bogus", NULL }), 1);
	assert_non_null(strstr(last_err, "bogus"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getopt_strings),
		cmocka_unit_test(test_duplicate_row),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_usage_and_help),
		cmocka_unit_test(test_help_returns),
		cmocka_unit_test(test_recopts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

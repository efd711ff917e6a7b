/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests for perfmark top's model (cli/top_model.c): self and total as
 * perf counts them (a function once per sample, however often it recurs on
 * the stack), both orders, the zoom into a command and a DSO, the decay of
 * each interval, the event and start-time filters, range rates and
 * percentiles, names cut on a character boundary, and the bound on rows.  Addresses are named
 * through the symbolizer's JIT code names, so no file is read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "perfread.h"
#include "symbolize.h"
#include "top.h"

#define PID_A 100
#define PID_B 200

struct fixture {
	struct top_model *m;
	struct symbolizer *sym;
	struct top_view v;
	struct perfread_event ev, other;
};

static void comm(struct symbolizer *sym, uint32_t pid, const char *name)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
	} rec = { .h = { .type = PERF_RECORD_COMM, .size = sizeof(rec) }, .pid = pid, .tid = pid };

	snprintf(rec.comm, sizeof(rec.comm), "%s", name);
	symbolizer__record(sym, &rec.h);
}

static int setup(void **state, bool children, uint64_t since)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct top_model_opts o = { .children = children, .event = "cpu-clock", .since = since };

	assert_non_null(f);
	assert_int_equal(top_model__new(&f->m, &o), 0);
	assert_int_equal(symbolizer__new(&f->sym), 0);
	f->ev.name = "cpu-clock";
	f->other.name = "page-faults";
	comm(f->sym, PID_A, "app");
	comm(f->sym, PID_B, "other");
	assert_int_equal(symbolizer__add_jit(f->sym, PID_A, 0x1000, 0x100, "leaf"), 0);
	assert_int_equal(symbolizer__add_jit(f->sym, PID_A, 0x2000, 0x100, "mid"), 0);
	assert_int_equal(symbolizer__add_jit(f->sym, PID_A, 0x3000, 0x100, "root"), 0);
	assert_int_equal(symbolizer__add_jit(f->sym, PID_B, 0x1000, 0x100, "b_work"), 0);
	*state = f;
	return 0;
}

static int setup_children(void **state)
{
	return setup(state, true, 0);
}

static int setup_flat(void **state)
{
	return setup(state, false, 1000);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	top_model__free(f->m);
	symbolizer__free(f->sym);
	free(f);
	return 0;
}

static void sample(struct fixture *f, const struct perfread_event *ev, uint32_t pid,
		   uint64_t time, uint64_t period, const uint64_t *ips, uint32_t n)
{
	struct perfread_sample s = {
		.event = ev, .pid = pid, .tid = pid, .time = time, .period = period,
		.ip = ips[0], .ips = ips, .nr_ips = n, .misc = PERF_RECORD_MISC_USER,
	};

	assert_int_equal(top_model__sample(f->m, f->sym, NULL, &s), 0);
}

static const struct top_row *row(const struct top_view *v, const char *sym)
{
	for (size_t i = 0; i < v->nr_rows; i++)
		if (!strcmp(v->rows[i].sym_s, sym))
			return &v->rows[i];
	return NULL;
}

static struct top_query all(enum top_sort by)
{
	return (struct top_query){ .sort = by, .comm = TABLE_NONE, .dso = TABLE_NONE,
				   .max_rows = TOP_VIEW_ROWS };
}

/* leaf <- mid <- root (period 10), and mid <- mid <- root (30): mid's total is 40, not 70 */
static void feed_tree(struct fixture *f)
{
	static const uint64_t a[] = { 0x1000, 0x2000, 0x3000 };
	static const uint64_t b[] = { 0x2010, 0x2020, 0x3000 };

	sample(f, &f->ev, PID_A, 1, 10, a, 3);
	sample(f, &f->ev, PID_A, 2, 30, b, 3);
}

static void test_self_total(void **state)
{
	struct fixture *f = *state;
	struct top_query q = all(TOP_SORT_SELF);
	const struct top_row *r;

	feed_tree(f);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_rows, 3);
	assert_string_equal(f->v.event, "cpu-clock");
	assert_string_equal(f->v.rows[0].sym_s, "mid");
	assert_string_equal(f->v.rows[0].comm_s, "app");
	assert_string_equal(f->v.rows[1].sym_s, "leaf");
	assert_string_equal(f->v.rows[2].sym_s, "root");
	r = row(&f->v, "mid");
	assert_true(r->self == 75.0 && r->total == 100.0);
	r = row(&f->v, "leaf");
	assert_true(r->self == 25.0 && r->total == 25.0);
	r = row(&f->v, "root");
	assert_true(r->self == 0.0 && r->total == 100.0);
	/* by total: mid and root tie at 100 %, mid's self decides */
	q.sort = TOP_SORT_TOTAL;
	top_model__view(f->m, &q, &f->v);
	assert_string_equal(f->v.rows[0].sym_s, "mid");
	assert_string_equal(f->v.rows[1].sym_s, "root");
	assert_string_equal(f->v.rows[2].sym_s, "leaf");
	/* a row cut: said, not silent */
	q.max_rows = 2;
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_rows, 2);
	assert_int_equal(f->v.more, 1);
}

static void test_zoom(void **state)
{
	struct fixture *f = *state;
	static const uint64_t b[] = { 0x1000 };
	static const uint64_t u[] = { 0x9000 };
	struct top_query q = all(TOP_SORT_SELF);
	uint32_t other;

	feed_tree(f);
	sample(f, &f->ev, PID_B, 3, 40, b, 1);
	sample(f, &f->ev, PID_B, 4, 40, u, 1);    /* in no map: [unknown] */
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_rows, 5);
	assert_true(row(&f->v, "mid")->self == 25.0);
	other = row(&f->v, "b_work")->comm;
	q.comm = other;
	top_model__view(f->m, &q, &f->v);
	assert_string_equal(f->v.zoom_comm, "other");
	assert_int_equal(f->v.nr_rows, 2);
	assert_true(row(&f->v, "b_work")->self == 50.0);     /* of the zoom's samples */
	/* a DSO: the JIT code's is [unknown]; the [unknown] address's too */
	q.comm = TABLE_NONE;
	q.dso = f->v.rows[0].dso;
	top_model__view(f->m, &q, &f->v);
	assert_string_equal(f->v.zoom_dso, f->v.rows[0].dso_s);
	for (size_t i = 0; i < f->v.nr_rows; i++)
		assert_string_equal(f->v.rows[i].dso_s, f->v.zoom_dso);
}

static void test_decay(void **state)
{
	struct fixture *f = *state;
	struct top_query q = all(TOP_SORT_SELF);
	int i;

	feed_tree(f);
	top_model__tick(f->m, 1.0);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.samples, 2);        /* of the interval that ended */
	assert_true(row(&f->v, "mid")->self == 75.0);   /* decay keeps the shares */
	top_model__tick(f->m, 1.0);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.samples, 0);
	assert_int_equal(f->v.total_samples, 2);
	for (i = 0; i < 64; i++)
		top_model__tick(f->m, 1.0);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_rows, 0);        /* what stopped running leaves the view */
}

/* flat (no -g): the leaf only; other events and samples before since are not counted */
static void test_flat_filters(void **state)
{
	struct fixture *f = *state;
	static const uint64_t a[] = { 0x1000, 0x2000, 0x3000 };
	struct top_query q = all(TOP_SORT_TOTAL);

	sample(f, &f->ev, PID_A, 999, 10, a, 3);          /* before since */
	sample(f, &f->other, PID_A, 2000, 10, a, 3);      /* another event */
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_rows, 0);
	sample(f, &f->ev, PID_A, 2000, 10, a, 3);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_rows, 1);
	assert_string_equal(f->v.rows[0].sym_s, "leaf");
	assert_false(f->v.children);
	assert_int_equal(f->v.total_samples, 1);
}

static void test_ranges(void **state)
{
	struct fixture *f = *state;
	struct top_query q = all(TOP_SORT_SELF);
	const struct top_range *r;
	uint64_t i;

	/* 1..100 ms, in a shuffled order; one before since is not counted */
	for (i = 0; i < 100; i++)
		assert_int_equal(top_model__range_end(f->m, "render", 6, 2000 + i,
						      ((i * 37) % 100 + 1) * 1000000), 0);
	assert_int_equal(top_model__range_end(f->m, "render", 6, 10, 999000000), 0);
	top_model__tick(f->m, 2.0);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_ranges, 1);
	r = &f->v.ranges[0];
	assert_string_equal(r->name, "render");
	assert_int_equal(r->count, 100);
	assert_true(r->rate == 50.0);
	assert_int_equal(r->p50_ns, 50000000);
	assert_int_equal(r->p99_ns, 99000000);
	assert_int_equal(r->max_ns, 100000000);
	/* only the latest TOP_RANGE_KEEP: 2000 more of 1 ms push the long ones out */
	for (i = 0; i < 2000; i++)
		top_model__range_end(f->m, "render", 6, 5000 + i, 1000000);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.ranges[0].kept, TOP_RANGE_KEEP);
	assert_int_equal(f->v.ranges[0].p99_ns, 1000000);
}

/* a name longer than a row keeps is cut between characters, never inside one */
static void test_long_name(void **state)
{
	struct fixture *f = *state;
	static const uint64_t a[] = { 0x5000 };
	struct top_query q = all(TOP_SORT_SELF);
	char name[601];

	for (int i = 0; i < 300; i++)
		memcpy(name + 2 * i, "\xc3\xa9", 2);      /* é */
	name[600] = '\0';
	assert_int_equal(symbolizer__add_jit(f->sym, PID_A, 0x5000, 0x100, name), 0);
	sample(f, &f->ev, PID_A, 1, 1, a, 1);
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.nr_rows, 1);
	assert_int_equal(strlen(f->v.rows[0].sym_s), TOP_NAME_MAX - 2);
	assert_int_equal(memcmp(f->v.rows[0].sym_s, name, TOP_NAME_MAX - 2), 0);
}

/* a workload of endless threads: the rows stop at TOP_MAX_ENTRIES, the rest counted refused */
static void test_caps(void **state)
{
	struct fixture *f = *state;
	static const uint64_t a[] = { 0x1000 };
	struct top_query q = all(TOP_SORT_SELF);
	struct perfread_sample s = {
		.event = &f->ev, .period = 1, .ip = a[0], .ips = a, .nr_ips = 1,
		.misc = PERF_RECORD_MISC_USER,
	};
	uint32_t extra = 100;

	for (uint32_t tid = 1000; tid < 1000 + TOP_MAX_ENTRIES + extra; tid++) {
		s.pid = PID_A;            /* threads without a COMM: named ":TID", a row each */
		s.tid = tid;
		assert_int_equal(top_model__sample(f->m, f->sym, NULL, &s), 0);
	}
	q.max_rows = 10;
	top_model__view(f->m, &q, &f->v);
	assert_int_equal(f->v.total_samples, TOP_MAX_ENTRIES + extra);
	assert_int_equal(f->v.refused, extra);
	assert_int_equal(f->v.nr_rows + f->v.more, TOP_MAX_ENTRIES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_self_total, setup_children, teardown),
		cmocka_unit_test_setup_teardown(test_zoom, setup_children, teardown),
		cmocka_unit_test_setup_teardown(test_decay, setup_children, teardown),
		cmocka_unit_test_setup_teardown(test_flat_filters, setup_flat, teardown),
		cmocka_unit_test_setup_teardown(test_ranges, setup_flat, teardown),
		cmocka_unit_test_setup_teardown(test_long_name, setup_children, teardown),
		cmocka_unit_test_setup_teardown(test_caps, setup_children, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

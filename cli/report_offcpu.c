// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark report --by-marker with off-CPU time in the recording: where
 * each range's wall time went (on CPU, blocked, waiting for a CPU) and the
 * stacks it blocked in most, as text and in each range's JSON object.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "aggregate.h"
#include "analysis.h"
#include "escape.h"
#include "report.h"

#define STACK_FRAMES 64         /* frames of a blocking stack shown (leaf first) */
#define TEXT_STACK_FRAMES 12

/* A node's frames, leaf first, without the command at its root; how many. */
static size_t stack_frames(const struct profile *p, uint32_t node, uint32_t *names, size_t max)
{
	size_t nn, nf, n = 0;
	const struct profile_node *nv = profile__nodes(p, &nn);
	const struct profile_frame *fv = profile__frames(p, &nf);

	for (; node && node < nn && n < max; node = nv[node].parent) {
		const struct profile_frame *f = &fv[nv[node].frame];

		if (f->kind != PROFILE_FRAME_COMM)
			names[n++] = f->name;
	}
	return n;
}

/* The ranges' wall time: on CPU, blocked, waiting for a CPU; their blocking stacks */
void report_text_offcpu(const struct profile *p, const struct rangestats *rs, const char *only)
{
	char b[4][32];
	uint32_t names[STACK_FRAMES];

	printf("\n# where the wall time went (outermost instances, nested ranges included): on CPU\n"
	       "# (%s), blocked, and runnable but waiting for a CPU (off-cpu time)\n",
	       rs->oncpu ? "estimated from the samples" : "not known from this event");
	printf("%-20s %6s %11s %11s %11s %11s\n", "RANGE", "N", "WALL", "ON-CPU", "BLOCKED", "RUNQUEUE");
	for (size_t k = 0; k < rs->n; k++) {
		const struct rangestat *r = &rs->v[k];
		uint64_t n = r->instances ? r->instances : 1;

		if (only && strcmp(only, profile__str(p, r->name)))
			continue;
		escape_term_pad(stdout, profile__str(p, r->name), -20);
		printf(" %6" PRIu64 " %11s %11s %11s %11s\n", r->instances,
		       pm_fmt_ns(r->wall_ns, b[0], 32), rs->oncpu ? pm_fmt_ns(r->oncpu_ns, b[1], 32) : "-",
		       pm_fmt_ns(r->blocked_ns, b[2], 32), pm_fmt_ns(r->runq_ns, b[3], 32));
		printf("%-20s %6s %11s %11s %11s %11s\n", "  mean", "", pm_fmt_ns(r->wall_ns / n, b[0], 32),
		       rs->oncpu ? pm_fmt_ns(r->oncpu_ns / n, b[1], 32) : "-",
		       pm_fmt_ns(r->blocked_ns / n, b[2], 32), pm_fmt_ns(r->runq_ns / n, b[3], 32));
	}
	for (size_t k = 0; k < rs->n; k++) {
		const struct rangestat *r = &rs->v[k];

		if ((only && strcmp(only, profile__str(p, r->name))) || !r->nstacks)
			continue;
		putchar('\n');
		report_term(profile__str(p, r->name));
		printf(": where it blocked (its own time, innermost frame first)\n");
		for (size_t i = 0; i < r->nstacks; i++) {
			size_t n = stack_frames(p, r->stacks[i].node, names, STACK_FRAMES);

			printf("  %11s %5" PRIu64 "x  ", pm_fmt_ns(r->stacks[i].ns, b[0], 32),
			       r->stacks[i].intervals);
			for (size_t j = 0; j < n && j < TEXT_STACK_FRAMES; j++) {
				fputs(j ? " <- " : "", stdout);
				report_term(profile__str(p, names[j]));
			}
			puts(n > TEXT_STACK_FRAMES ? " <- ..." : "");
		}
	}
}

/* A range's wall time, where it went, and its blocking stacks (frames leaf first) */
void report_json_offcpu(const struct profile *p, const struct rangestats *rs,
			const struct rangestat *r, struct json_object *o)
{
	struct json_object *arr = json_object_new_array();
	uint32_t names[STACK_FRAMES];
	uint64_t n = r->instances ? r->instances : 1;

#define U(k, v) json_object_object_add(o, k, json_object_new_uint64(v))
	U("instances", r->instances);
	U("wall_ns", r->wall_ns);
	json_object_object_add(o, "oncpu_ns", rs->oncpu ? json_object_new_uint64(r->oncpu_ns) : NULL);
	U("blocked_ns", r->blocked_ns);
	U("runqueue_ns", r->runq_ns);
	U("mean_wall_ns", r->wall_ns / n);
	json_object_object_add(o, "mean_oncpu_ns",
			       rs->oncpu ? json_object_new_uint64(r->oncpu_ns / n) : NULL);
	U("mean_blocked_ns", r->blocked_ns / n);
	U("mean_runqueue_ns", r->runq_ns / n);
#undef U
	for (size_t i = 0; i < r->nstacks; i++) {
		struct json_object *s = json_object_new_object(), *fr = json_object_new_array();
		size_t nf = stack_frames(p, r->stacks[i].node, names, STACK_FRAMES);

		json_object_object_add(s, "ns", json_object_new_uint64(r->stacks[i].ns));
		json_object_object_add(s, "intervals", json_object_new_uint64(r->stacks[i].intervals));
		for (size_t j = 0; j < nf; j++)
			json_object_array_add(fr, report_jstr(profile__str(p, names[j])));
		json_object_object_add(s, "frames", fr);
		json_object_array_add(arr, s);
	}
	json_object_object_add(o, "blocking_stacks", arr);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/* perf's sample filters, one predicate for every command: see filter.h. */
#include "commname.h"
#include "filter.h"
#include "errline.h"
#include "symbolize.h"
#include "table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_SEC 1000000000ULL

struct time_range {
	uint64_t start, end;    /* inclusive; 0: open at that end (absolute ranges) */
	bool pct;               /* percentages, resolved by filter__set_span() */
	double from, to;        /* fractions of the span */
};

struct filter {
	bool has[FILTER_NR_KEYS];
	uint32_t count[FILTER_NR_KEYS];
	struct strtab comms, dsos, syms;
	struct idmap pids, tids;
	uint64_t cpus[FILTER_MAX_CPU / 64];
	struct time_range times[FILTER_MAX_RANGES];
	size_t ntimes;
	bool span_set;
};

static const char *const key_opt[FILTER_NR_KEYS] = {
	[FILTER_COMM] = "--comm", [FILTER_PID] = "--pid", [FILTER_TID] = "--tid",
	[FILTER_DSO] = "--dso", [FILTER_SYM] = "--sym", [FILTER_CPU] = "--cpu",
	[FILTER_TIME] = "--time",
};

int filter__new(struct filter **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void filter__free(struct filter *f)
{
	if (!f)
		return;
	strtab__free(&f->comms);
	strtab__free(&f->dsos);
	strtab__free(&f->syms);
	idmap__free(&f->pids);
	idmap__free(&f->tids);
	free(f);
}

bool filter__has(const struct filter *f, enum filter_key key)
{
	return f && key < FILTER_NR_KEYS && f->has[key];
}

/* ---- parsing ---------------------------------------------------------------------- */

/* A decimal number of at most max, the whole of s[0..len) */
static bool parse_uint(const char *s, size_t len, uint64_t max, uint64_t *v)
{
	*v = 0;
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || *v > (max - (uint64_t)(s[i] - '0')) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return true;
}

/* Seconds with up to nine decimals ("12345.678901"), as perf parses them */
static bool parse_seconds(const char *s, size_t len, uint64_t *ns)
{
	const char *dot = memchr(s, '.', len);
	size_t ilen = dot ? (size_t)(dot - s) : len, flen = dot ? len - ilen - 1 : 0;
	uint64_t sec, frac = 0;

	if (!parse_uint(s, ilen, UINT64_MAX / NS_PER_SEC - 1, &sec) || flen > 9 ||
	    (dot && flen && !parse_uint(dot + 1, flen, 999999999, &frac)))
		return false;
	for (size_t i = flen; i < 9; i++)
		frac *= 10;
	*ns = sec * NS_PER_SEC + frac;
	return true;
}

/* A percentage "12.5%" of s[0..len): a fraction in [0, 1] */
static bool parse_pct(const char *s, size_t len, double *v)
{
	char buf[32], *end;

	if (len < 2 || len >= sizeof(buf) || s[len - 1] != '%' || s[0] == '-' || s[0] == '+' ||
	    s[0] == ' ')
		return false;
	memcpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	*v = strtod(buf, &end) / 100.0;
	return end != buf && !*end && *v >= 0.0 && *v <= 1.0;
}

static int add_range(struct filter *f, struct time_range r, const char *arg,
		     char *err, size_t errlen)
{
	if (f->ntimes == FILTER_MAX_RANGES)
		return errline_code(err, errlen, -E2BIG, "--time '%s': more than %d ranges", arg,
				    FILTER_MAX_RANGES);
	f->times[f->ntimes++] = r;
	return 0;
}

/* "10%/2" (the second tenth) or "10%-20%" */
static int add_pct(struct filter *f, const char *s, size_t len, const char *arg,
		   char *err, size_t errlen)
{
	const char *slash = memchr(s, '/', len), *dash = memchr(s, '-', len);
	struct time_range r = { .pct = true };
	uint64_t nth;
	double p;

	if (slash) {
		if (!parse_pct(s, (size_t)(slash - s), &p) || p <= 0.0 ||
		    !parse_uint(slash + 1, len - (size_t)(slash - s) - 1, 1000000, &nth) || !nth ||
		    (double)(nth - 1) * p >= 1.0)
			return errline(err, errlen, "bad --time '%s' (P%%/N: the Nth slice of "
				       "P%% of the recording)", arg);
		r.from = (double)(nth - 1) * p;
		r.to = (double)nth * p;
	} else if (dash && dash > s) {
		if (!parse_pct(s, (size_t)(dash - s), &r.from) ||
		    !parse_pct(dash + 1, len - (size_t)(dash - s) - 1, &r.to) || r.from >= r.to)
			return errline(err, errlen, "bad --time '%s' (A%%-B%%, A below B)", arg);
	} else {
		return errline(err, errlen, "bad --time '%s' (P%%/N or A%%-B%%)", arg);
	}
	return add_range(f, r, arg, err, errlen);
}

/* "START,END" in seconds, either end left out */
static int add_abs(struct filter *f, const char *s, size_t len, const char *arg,
		   char *err, size_t errlen)
{
	const char *comma = memchr(s, ',', len);
	size_t l1 = comma ? (size_t)(comma - s) : len;
	struct time_range r = { 0 };

	if (!comma || (l1 && !parse_seconds(s, l1, &r.start)) ||
	    (len - l1 - 1 && !parse_seconds(comma + 1, len - l1 - 1, &r.end)) ||
	    (r.end && r.start > r.end))
		return errline(err, errlen, "bad --time '%s' (START,END in seconds as perf "
			       "script prints them, either may be left out; or P%%/N, A%%-B%%)", arg);
	return add_range(f, r, arg, err, errlen);
}

static int add_time(struct filter *f, const char *arg, char *err, size_t errlen)
{
	bool pct = strchr(arg, '%') != NULL;
	const char *sep = pct ? "," : " ";
	const char *s = arg;
	int r;

	if (!*arg)
		return errline(err, errlen, "empty --time");
	while (*s) {
		size_t len = strcspn(s, sep);

		if (len) {
			r = pct ? add_pct(f, s, len, arg, err, errlen) : add_abs(f, s, len, arg, err, errlen);
			if (r < 0)
				return r;
		}
		s += len;
		s += *s != '\0';
	}
	if (!f->ntimes)
		return errline(err, errlen, "empty --time");
	return 0;
}

/* "0-2,5": CPUs 0, 1, 2 and 5 */
static int add_cpus(struct filter *f, const char *arg, char *err, size_t errlen)
{
	const char *s = arg;

	do {
		size_t len = strcspn(s, ",");
		const char *dash = memchr(s, '-', len);
		uint64_t lo, hi;

		if (dash ? !parse_uint(s, (size_t)(dash - s), FILTER_MAX_CPU - 1, &lo) ||
			   !parse_uint(dash + 1, len - (size_t)(dash - s) - 1, FILTER_MAX_CPU - 1, &hi)
			 : !parse_uint(s, len, FILTER_MAX_CPU - 1, &lo))
			return errline(err, errlen, "bad --cpu '%s' (a list like 0-2,5; CPUs below %d)",
				       arg, FILTER_MAX_CPU);
		if (!dash)
			hi = lo;
		if (lo > hi)
			return errline(err, errlen, "bad --cpu '%s' (%llu-%llu goes down)", arg,
				       (unsigned long long)lo, (unsigned long long)hi);
		for (uint64_t c = lo; c <= hi; c++)
			f->cpus[c / 64] |= 1ULL << (c % 64);
		s += len;
	} while (*s++ == ',');
	return 0;
}

static int add_list(struct filter *f, enum filter_key key, const char *arg, char *err,
		    size_t errlen)
{
	struct strtab *t = key == FILTER_COMM ? &f->comms : key == FILTER_DSO ? &f->dsos : &f->syms;
	struct idmap *m = key == FILTER_PID ? &f->pids : &f->tids;
	bool numeric = key == FILTER_PID || key == FILTER_TID;
	const char *s = arg;

	do {
		size_t len = strcspn(s, ",");
		uint64_t v;

		if (!len || (numeric && !parse_uint(s, len, UINT32_MAX, &v)))
			return errline(err, errlen, "bad %s '%s' (a list like %s)", key_opt[key], arg,
				       numeric ? "1234,5678" : "a,b");
		if (f->count[key] == FILTER_MAX_VALUES)
			return errline_code(err, errlen, -E2BIG, "%s: more than %d values",
					    key_opt[key], FILTER_MAX_VALUES);
		if (numeric ? idmap__put(m, v, 1) < 0 : strtab__intern(t, s, len) == TABLE_NONE)
			return errline_code(err, errlen, -ENOMEM, "out of memory");
		f->count[key]++;
		s += len;
	} while (*s++ == ',');
	return 0;
}

int filter__add(struct filter *f, enum filter_key key, const char *arg, char *err, size_t errlen)
{
	int r;

	if (!f || key >= FILTER_NR_KEYS || !arg)
		return errline(err, errlen, "bad filter");
	switch (key) {
	case FILTER_CPU:
		r = add_cpus(f, arg, err, errlen);
		break;
	case FILTER_TIME:
		r = add_time(f, arg, err, errlen);
		break;
	default:
		r = add_list(f, key, arg, err, errlen);
		break;
	}
	if (!r)
		f->has[key] = true;
	return r;
}

int filter__set_span(struct filter *f, bool known, uint64_t first, uint64_t last,
		     char *err, size_t errlen)
{
	uint64_t span = last > first ? last - first : 0;

	for (size_t i = 0; f && i < f->ntimes; i++) {
		struct time_range *r = &f->times[i];

		if (!r->pct)
			continue;
		if (!known)
			return errline(err, errlen, "--time in percent needs the recording's first "
				       "and last sample times, which a pipe does not give: use START,END");
		/* the Nth slice ends a nanosecond before the next begins; the last at the end */
		r->start = first + (uint64_t)(r->from * (double)span);
		r->end = r->to >= 1.0 ? last : first + (uint64_t)(r->to * (double)span) - 1;
		if (r->end < r->start)
			r->end = r->start;
	}
	if (f)
		f->span_set = true;
	return 0;
}

/* ---- matching ------------------------------------------------------------------- */

static bool in_time(const struct filter *f, uint64_t t)
{
	for (size_t i = 0; i < f->ntimes; i++) {
		const struct time_range *r = &f->times[i];

		if (r->pct && !f->span_set)
			continue;
		if ((!r->start || t >= r->start) && (!r->end || t <= r->end))
			return true;
	}
	return false;
}

bool filter__where(const struct filter *f, uint32_t cpu, uint64_t time)
{
	if (!f)
		return true;
	if (f->has[FILTER_CPU] &&
	    (cpu >= FILTER_MAX_CPU || !(f->cpus[cpu / 64] & (1ULL << (cpu % 64)))))
		return false;
	return !f->has[FILTER_TIME] || in_time(f, time);
}

bool filter__task(const struct filter *f, uint32_t pid, uint32_t tid, const char *comm)
{
	char buf[COMMNAME_LEN];

	if (!f)
		return true;
	if (f->has[FILTER_PID] && idmap__get(&f->pids, pid) == TABLE_NONE)
		return false;
	if (f->has[FILTER_TID] && idmap__get(&f->tids, tid) == TABLE_NONE)
		return false;
	if (f->has[FILTER_COMM]) {
		comm = comm_or_tid(comm, tid, buf);
		if (strtab__find(&f->comms, comm, strlen(comm)) == TABLE_NONE)
			return false;
	}
	return true;
}

bool filter__wants_leaf(const struct filter *f)
{
	return f && (f->has[FILTER_DSO] || f->has[FILTER_SYM]);
}

bool filter__leaf(const struct filter *f, const char *dso, const char *frame)
{
	if (!f)
		return true;
	if (f->has[FILTER_DSO]) {
		const char *d = dso ? dso : "[unknown]", *b = symbolizer_dso_short(d);

		if (strtab__find(&f->dsos, d, strlen(d)) == TABLE_NONE &&
		    strtab__find(&f->dsos, b, strlen(b)) == TABLE_NONE)
			return false;
	}
	return !f->has[FILTER_SYM] || strtab__find(&f->syms, frame, strlen(frame)) != TABLE_NONE;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event specifications and the numeric option values of `perfmark record`.
 * Every parser is strict: the whole string must be consumed, no sign, no
 * surrounding blanks, no silent wrap-around.
 */
#include "errline.h"
#include "evnames.h"
#include "evspec_int.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

/* a named event: any of the table's when counting, those record samples when not */
static const struct evname *evspec_find(const char *name, size_t len, int use)
{
	const struct evname *d = evname_find(name, len);

	return d && (use == EVSPEC_COUNTING || d->record) ? d : NULL;
}

static void evspec_fill(const struct evname *d, struct evspec *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", d->name);
	out->type = d->type;
	out->config = d->config;
	out->hardware = d->type == PERF_TYPE_HARDWARE;
}

/*
 * perf's u/k/h: naming any of them excludes the others ("u": user only).
 * 0 or -EINVAL + err.
 */
static int evspec_modifiers(const char *m, size_t len, struct evspec *e, char *err, size_t errlen)
{
	bool u = false, k = false, h = false;
	size_t i;

	if (!len)
		return errline(err, errlen, "empty modifier in '%s'", e->name);
	for (i = 0; i < len; i++) {
		bool *b = m[i] == 'u' ? &u : m[i] == 'k' ? &k : m[i] == 'h' ? &h : NULL;

		if (!b || *b)
			return errline(err, errlen, "unknown modifier '%.*s' in '%s' (u, k, h or a mix: uk)",
				       (int)(len > 16 ? 16 : len), m, e->name);
		*b = true;
	}
	e->exclude_user = !u;
	e->exclude_kernel = !k;
	e->exclude_hv = !h;
	return 0;
}

static bool has_glob(const char *s, size_t len)
{
	return memchr(s, '*', len) || memchr(s, '?', len);
}

/*
 * One event of a list, s[0..len): into out[*n] (tracepoint globs: several).
 * 0 or -EINVAL + err.
 */
static int evspec_one(const char *s, size_t len, int use, bool glob, struct evspec *out,
		      size_t max, size_t *n, char *err, size_t errlen)
{
	const char *colon = memchr(s, ':', len), *slash = memchr(s, '/', len), *mod = NULL;
	size_t blen = colon ? (size_t)(colon - s) : len, mlen = 0;
	const struct evname *d;
	struct evspec e;
	int r;

	if (len >= EVSPEC_NAME_MAX)
		return errline(err, errlen, "event name too long: '%.64s...'", s);
	if (slash) {
		/* PMU/TERMS/ and its modifiers after the closing slash */
		const char *close = memchr(slash + 1, '/', len - (size_t)(slash + 1 - s));

		if (!close)
			return errline(err, errlen, "missing '/' after the terms in '%.*s'", (int)len, s);
		blen = (size_t)(close + 1 - s);
		mod = close + 1;
		mlen = len - blen;
		if (mlen && *mod == ':')
			mod++, mlen--;
		r = evspec_pmu(s, blen, &e, err, errlen);
		if (r < 0)
			return r;
	} else if ((d = evname_find(s, blen))) {
		if (!evspec_find(s, blen, use))
			return errline(err, errlen, "%s cannot be sampled (perfmark stat counts it)",
				       d->name);
		evspec_fill(d, &e);
	} else if ((r = evspec_raw(s, blen, &e, err, errlen)) != 0) {
		if (r < 0)
			return r;
	} else if (colon) {
		const char *name = colon + 1, *end = memchr(name, ':', len - blen - 1);
		size_t nlen = end ? (size_t)(end - name) : len - blen - 1;

		if (end)
			return errline(err, errlen, "modifiers are not taken on tracepoints: '%.*s'",
				       (int)len, s);
		if (!glob && (has_glob(s, blen) || has_glob(name, nlen)))
			return errline(err, errlen, "a glob names several events: '%.*s'", (int)len, s);
		return evspec_tracepoints(s, blen, name, nlen, glob, out, max, n, err, errlen);
	} else {
		return errline(err, errlen, "unknown event '%.*s'", (int)(len > 64 ? 64 : len), s);
	}
	if (colon && !slash) {
		mod = colon + 1;
		mlen = len - blen - 1;
	}
	if (mod && (mlen || !slash)) {
		size_t at = strnlen(e.name, sizeof(e.name));

		r = evspec_modifiers(mod, mlen, &e, err, errlen);
		if (r)
			return r;
		/* perf's spelling, on the canonical name: cycles:u, r003c:k, cpu/event=0x3c/u */
		if (at + 1 + mlen >= sizeof(e.name))
			return errline(err, errlen, "event name too long: '%.64s...'", s);
		if (!slash)
			e.name[at++] = ':';
		memcpy(e.name + at, mod, mlen);
		e.name[at + mlen] = '\0';
	}
	if (*n >= max)
		return errline(err, errlen, "too many events (at most %zu)", max);
	out[(*n)++] = e;
	return 0;
}

int evspec_parse(const char *list, int use, struct evspec *out, size_t max, char *err, size_t errlen)
{
	const char *p;
	size_t n = 0;

	if (!list || !*list)
		return errline(err, errlen, "empty event list");
	if (!out && max > 0)
		return -EINVAL;

	for (p = list;;) {
		size_t len = 0;
		bool in = false;      /* between PMU/ and its closing / */
		int r;

		for (; p[len] && (in || p[len] != ','); len++)
			if (p[len] == '/')
				in = !in;
		if (len == 0)
			return errline(err, errlen, "empty event name in '%s'", list);
		r = evspec_one(p, len, use, true, out, max, &n, err, errlen);
		if (r)
			return r;
		if (!p[len])
			break;
		p += len + 1;
	}
	return (int)n;
}

int evspec_lookup_for(const char *name, int use, struct evspec *out)
{
	size_t n = 0;

	if (!name || !out || !*name)
		return -EINVAL;
	if (evspec_one(name, strlen(name), use, false, out, 1, &n, NULL, 0) || n != 1)
		return -EINVAL;
	return 0;
}

int evspec_lookup(const char *name, struct evspec *out)
{
	return evspec_lookup_for(name, EVSPEC_SAMPLING, out);
}

bool evspec_same(const struct evspec *a, const struct evspec *b)
{
	return a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
	       a->config2 == b->config2 && a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel && a->exclude_hv == b->exclude_hv;
}

void evspec_attr(const struct evspec *e, struct perf_event_attr *a)
{
	*a = (struct perf_event_attr){
		.size = sizeof(*a), .type = e->type,
		.config = e->config, .config1 = e->config1, .config2 = e->config2,
		/* :u / :k; the kernel drops what the excluded side does before anything runs */
		.exclude_user = e->exclude_user, .exclude_kernel = e->exclude_kernel,
		.exclude_hv = e->exclude_hv,
	};
}

bool evspec_is_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
}

int evspec_rebase(struct evspec *e, const char *base)
{
	const struct evname *d = evname_find(base, strlen(base));
	const char *mod = e->tracepoint || strchr(e->name, '/') ? NULL : strchr(e->name, ':');
	struct evspec r;

	if (!d)
		return -EINVAL;
	evspec_fill(d, &r);
	snprintf(r.name, sizeof(r.name), "%s%s", d->name, mod ? mod : "");
	r.exclude_user = e->exclude_user;
	r.exclude_kernel = e->exclude_kernel;
	r.exclude_hv = e->exclude_hv;
	*e = r;
	return 0;
}

/*
 * Unsigned decimal, digits only, no overflow.  Returns 0, -EINVAL (garbage)
 * or -ERANGE (does not fit in 64 bits).  *endp gets the first non-digit.
 */
static int evspec_u64(const char *s, uint64_t *out, const char **endp)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	*endp = p;
	return 0;
}

static int evspec_u64_full(const char *s, uint64_t *out)
{
	const char *end;
	int r = evspec_u64(s, out, &end);

	if (r < 0)
		return r;
	return *end ? -EINVAL : 0;
}

int evspec_parse_freq(const char *s, uint64_t *out, char *err, size_t errlen)
{
	uint64_t v;
	int r;

	if (!s)
		return errline(err, errlen, "missing frequency");
	r = evspec_u64_full(s, &v);
	if (r == -ERANGE || (r == 0 && (v < 1 || v > EVSPEC_FREQ_MAX)))
		return errline(err, errlen, "frequency %.64s out of range (1..%llu)",
				   s, (unsigned long long)EVSPEC_FREQ_MAX);
	if (r < 0)
		return errline(err, errlen, "bad frequency '%.64s'", s);
	*out = v;
	return 0;
}

int evspec_parse_period(const char *s, uint64_t *out, char *err, size_t errlen)
{
	uint64_t v;
	int r;

	if (!s)
		return errline(err, errlen, "missing period");
	r = evspec_u64_full(s, &v);
	if (r == -ERANGE || (r == 0 && v < 1))
		return errline(err, errlen, "period %.64s out of range", s);
	if (r < 0)
		return errline(err, errlen, "bad period '%.64s'", s);
	*out = v;
	return 0;
}

int evspec_parse_pids(const char *s, int *pids, size_t max, char *err, size_t errlen)
{
	const char *p;
	size_t n = 0;

	if (!s || !*s)
		return errline(err, errlen, "empty pid list");
	p = s;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char buf[32];
		uint64_t v;
		int r;

		if (len == 0 || len >= sizeof(buf))
			return errline(err, errlen, "bad pid '%.*s'",
					   (int)(len > 32 ? 32 : len), p);
		memcpy(buf, p, len);
		buf[len] = '\0';
		r = evspec_u64_full(buf, &v);
		if (r < 0 || v < 1 || v > EVSPEC_PID_MAX)
			return errline(err, errlen, "bad pid '%s'", buf);
		if (n >= max)
			return errline(err, errlen, "too many pids (at most %zu)", max);
		pids[n++] = (int)v;
		if (!end)
			break;
		p = end + 1;
	}
	return (int)n;
}

int evspec_parse_size(const char *s, uint64_t *out, char *err, size_t errlen)
{
	const char *end;
	uint64_t v, mul = 1;
	int r;

	if (!s)
		return errline(err, errlen, "missing size");
	r = evspec_u64(s, &v, &end);
	if (r == -ERANGE)
		return errline(err, errlen, "size '%.64s' out of range", s);
	if (r < 0)
		return errline(err, errlen, "bad size '%.64s'", s);
	switch (*end) {
	case '\0':
	case 'B':
		break;
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	default:
		return errline(err, errlen, "bad size '%.64s'", s);
	}
	/* optional "B" or "iB" after a unit, "B" alone after a plain number */
	if (mul > 1 && end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (end[0] == 'B')
		end++;
	if (*end)
		return errline(err, errlen, "bad size '%.64s'", s);
	if (v == 0)
		return errline(err, errlen, "size 0 out of range");
	if (v > UINT64_MAX / mul)
		return errline(err, errlen, "size '%.64s' out of range", s);
	*out = v * mul;
	return 0;
}

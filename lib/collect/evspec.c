/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event specifications and the numeric option values of `perfmark record`.
 * Every parser is strict: the whole string must be consumed, no sign, no
 * surrounding blanks, no silent wrap-around.
 */
#include "errline.h"
#include "evnames.h"
#include "evspec.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

/* a name -e takes (the table: lib/common/evnames.c) */
static const struct evname *evspec_find(const char *name, size_t len)
{
	const struct evname *d = evname_find(name, len);

	return d && d->record ? d : NULL;
}

static void evspec_fill(const struct evname *d, struct evspec *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", d->name);
	out->type = d->type;
	out->config = d->config;
	out->hardware = d->type == PERF_TYPE_HARDWARE;
}

int evspec_lookup(const char *name, struct evspec *out)
{
	const struct evname *d;

	if (!name || !out)
		return -EINVAL;
	d = evspec_find(name, strlen(name));
	if (!d)
		return -EINVAL;
	evspec_fill(d, out);
	return 0;
}

int evspec_parse(const char *list, struct evspec *out, size_t max, char *err, size_t errlen)
{
	const char *p;
	size_t n = 0;

	if (!list || !*list)
		return errline(err, errlen, "empty event list");
	if (!out && max > 0)
		return -EINVAL;

	p = list;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const struct evname *d;

		if (len == 0)
			return errline(err, errlen, "empty event name in '%s'", list);
		d = evspec_find(p, len);
		if (!d)
			return errline(err, errlen, "unknown event '%.*s'",
					   (int)(len > 64 ? 64 : len), p);
		if (n >= max)
			return errline(err, errlen, "too many events (at most %zu)", max);
		evspec_fill(d, &out[n++]);
		if (!end)
			break;
		p = end + 1;
	}
	return (int)n;
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

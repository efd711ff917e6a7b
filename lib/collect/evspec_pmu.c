// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Raw PMU events for -e: "rHEX" (PERF_TYPE_RAW, the CPU's PMU) and
 * "PMU/TERMS/" where PMU is a directory of sysfs's event_source devices:
 * its type from PMU/type, each term "name=value" placed in config,
 * config1 or config2 at the bits PMU/format/name gives ("config:0-7",
 * "config:0-7,32-35"), a bare term 1, or one of the PMU's named events
 * (PMU/events/NAME holds its terms: "event=0x00").  Names are checked
 * before they become part of a path.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errline.h"
#include "evspec_int.h"

#define PMU_ROOT "/sys/bus/event_source/devices"
#define TERM_MAX 32

static char pmu_root[512] = PMU_ROOT;

void evspec_set_pmu_root(const char *dir)
{
	snprintf(pmu_root, sizeof(pmu_root), "%s", dir ? dir : PMU_ROOT);
}

/* a small sysfs file, NUL-terminated, trailing newline dropped: 0 or -errno */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, len - 1);
	if (r < 0)
		e = -errno;
	close(fd);
	if (e)
		return e;
	buf[r] = '\0';
	while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == ' '))
		buf[--r] = '\0';
	return 0;
}

static bool good_name(const char *s, size_t len, size_t max)
{
	size_t i;

	if (!len || len > max || s[0] == '.' || s[0] == '-')
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* 0x hex or decimal, all of s[0..len): 0 or -EINVAL */
static int number(const char *s, size_t len, uint64_t *v)
{
	char buf[32], *end;

	if (!len || len >= sizeof(buf) || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/* the CPU's PMU's type, or -errno when this machine has none */
static int cpu_pmu(void)
{
	char path[600], buf[32];
	uint64_t t;
	int e;

	snprintf(path, sizeof(path), "%s/cpu/type", pmu_root);
	e = read_small(path, buf, sizeof(buf));
	if (e)
		return e;
	return number(buf, strlen(buf), &t) || t > INT32_MAX ? -EINVAL : (int)t;
}

int evspec_raw(const char *s, size_t len, struct evspec *e, char *err, size_t errlen)
{
	uint64_t v = 0;
	size_t i;

	if (len < 2 || len > 17 || s[0] != 'r')
		return 0;
	for (i = 1; i < len; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;

		if (d == 16)
			return 0;
		v = v << 4 | d;
	}
	if (cpu_pmu() < 0)
		return errline(err, errlen, "raw event '%.*s' needs the CPU's PMU, which this machine "
			       "lacks (no %s/cpu)", (int)len, s, pmu_root);
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%.*s", (int)len, s);
	e->type = PERF_TYPE_RAW;
	e->config = v;
	e->hardware = true;
	return 1;
}

/*
 * A format file's "config1:0-7,32-35": value into cfg at those bits.
 * 0 or -EINVAL (bad format, or value wider than its bits: *bits says how many).
 */
static int place(const char *fmt, uint64_t value, uint64_t cfg[3], unsigned *bits)
{
	const char *p;
	uint64_t out = 0;
	unsigned total = 0;
	int which;

	if (!strncmp(fmt, "config1:", 8))
		which = 1, p = fmt + 8;
	else if (!strncmp(fmt, "config2:", 8))
		which = 2, p = fmt + 8;
	else if (!strncmp(fmt, "config:", 7))
		which = 0, p = fmt + 7;
	else
		return -EINVAL;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo, w;

		if (end == p || lo > 63)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1 || hi > 63 || hi < lo)
				return -EINVAL;
			p = end;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
		w = hi - lo + 1;
		if (total + w > 64)
			return -EINVAL;
		/* the next w bits of value go to bits lo..hi */
		out |= ((w == 64 ? value : (value >> total) & ((1ull << w) - 1))) << lo;
		total += (unsigned)w;
	}
	*bits = total;
	if (total < 64 && value >> total)
		return -ERANGE;
	cfg[which] |= out;
	return 0;
}

static int encode(const char *pmu_dir, const char *terms, size_t len, uint64_t cfg[3],
		  int depth, char *err, size_t errlen)
{
	const char *p = terms, *end = terms + len;

	if (!len)
		return errline(err, errlen, "no terms in %s//", strrchr(pmu_dir, '/') + 1);
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p)), *t_end = comma ? comma : end;
		const char *eq = memchr(p, '=', (size_t)(t_end - p));
		size_t klen = eq ? (size_t)(eq - p) : (size_t)(t_end - p);
		char key[TERM_MAX + 1], path[1024], buf[256];
		uint64_t v = 1;
		unsigned bits = 0;
		int r;

		if (!good_name(p, klen, TERM_MAX) || memchr(p, '.', klen))
			return errline(err, errlen, "bad term '%.*s'", (int)((size_t)(t_end - p) > 64 ? 64 :
				       (size_t)(t_end - p)), p);
		memcpy(key, p, klen);
		key[klen] = '\0';
		if (eq && number(eq + 1, (size_t)(t_end - eq - 1), &v))
			return errline(err, errlen, "bad value in term '%.*s' (a number: 0x3c, 60)",
				       (int)((size_t)(t_end - p) > 64 ? 64 : (size_t)(t_end - p)), p);
		if (!strcmp(key, "config") || !strcmp(key, "config1") || !strcmp(key, "config2")) {
			cfg[key[6] ? key[6] - '0' : 0] |= v;
		} else if (snprintf(path, sizeof(path), "%s/format/%s", pmu_dir, key),
			   !read_small(path, buf, sizeof(buf))) {
			r = place(buf, v, cfg, &bits);
			if (r == -ERANGE)
				return errline(err, errlen, "value of '%s' too wide (%u bits)", key, bits);
			if (r)
				return errline(err, errlen, "cannot read the format of '%s' (%s)", key, buf);
		} else if (!eq && !depth &&
			   (snprintf(path, sizeof(path), "%s/events/%s", pmu_dir, key),
			    !read_small(path, buf, sizeof(buf)))) {
			r = encode(pmu_dir, buf, strlen(buf), cfg, depth + 1, err, errlen);
			if (r)
				return r;
		} else {
			return errline(err, errlen, "unknown term '%s' for PMU %s", key,
				       strrchr(pmu_dir, '/') + 1);
		}
		p = comma ? comma + 1 : end;
		if (comma && p == end)
			return errline(err, errlen, "empty term after ','");
	}
	return 0;
}

int evspec_pmu_encode(const char *pmu_dir, const char *terms, size_t len, uint64_t cfg[3],
		      char *err, size_t errlen)
{
	if (!strrchr(pmu_dir, '/'))
		return -EINVAL;
	cfg[0] = cfg[1] = cfg[2] = 0;
	return encode(pmu_dir, terms, len, cfg, 0, err, errlen);
}

int evspec_pmu(const char *s, size_t len, struct evspec *e, char *err, size_t errlen)
{
	const char *slash = memchr(s, '/', len);
	size_t plen = (size_t)(slash - s);
	char dir[700], path[800], buf[32];
	uint64_t cfg[3], type;
	int r;

	if (!good_name(s, plen, 64))
		return errline(err, errlen, "bad PMU name in '%.*s'", (int)(len > 64 ? 64 : len), s);
	snprintf(dir, sizeof(dir), "%s/%.*s", pmu_root, (int)plen, s);
	snprintf(path, sizeof(path), "%s/type", dir);
	r = read_small(path, buf, sizeof(buf));
	if (r == -ENOENT && plen == 3 && !memcmp(s, "cpu", 3))
		return errline(err, errlen, "'%.*s' needs the CPU's PMU, which this machine lacks "
			       "(no %s)", (int)(len > 64 ? 64 : len), s, dir);
	if (r == -ENOENT)
		return errline(err, errlen, "unknown PMU '%.*s' (none in %s)", (int)plen, s, pmu_root);
	if (r || number(buf, strlen(buf), &type) || type > UINT32_MAX)
		return errline(err, errlen, "cannot read %s", path);
	/* the terms: between the two slashes */
	r = evspec_pmu_encode(dir, slash + 1, len - plen - 2, cfg, err, errlen);
	if (r)
		return r;
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%.*s", (int)len, s);
	e->type = (uint32_t)type;
	e->config = cfg[0];
	e->config1 = cfg[1];
	e->config2 = cfg[2];
	e->hardware = true;
	return 0;
}

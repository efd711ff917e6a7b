// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perf.data header features: the write/process pairs and the table
 * (perffeat.h), and the host facts the writer describes.
 *
 * Writers are straight-line: struct pdbuf keeps its first error, the writer
 * (perfdata.c) looks at it once.  Readers take a bounds-checked cursor and
 * copy at most what the section holds: a feature never costs more memory
 * than its bytes in the file, and a malformed one is -EINVAL.
 */
#include "perffeat.h"
#include "tracedata.h"
#include "evlist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef PERFMARK_VERSION
#define PERFMARK_VERSION "unknown"
#endif

/* ---- strings: HOSTNAME OSRELEASE VERSION ARCH CPUDESC CPUID ----------------- */

static bool write_string(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	if (!e->str[id])
		return false;
	pdbuf_string(b, e->str[id]);
	return true;
}

static int process_string(struct perfdata_env *e, struct pdcursor *c, int id)
{
	char *s = pdcursor_string(c);

	if (!s)
		return -EINVAL;
	free(e->str[id]);
	e->str[id] = s;
	return 0;
}

/* ---- NRCPUS, TOTAL_MEM -------------------------------------------------------- */

static bool write_nrcpus(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	pdbuf_u32(b, e->nr_cpus_avail);
	pdbuf_u32(b, e->nr_cpus_online);
	return true;
}

static int process_nrcpus(struct perfdata_env *e, struct pdcursor *c, int id)
{
	return pdcursor_u32(c, &e->nr_cpus_avail) && pdcursor_u32(c, &e->nr_cpus_online) ?
	       0 : -EINVAL;
}

static bool write_total_mem(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	pdbuf_u64(b, e->total_mem_kb);
	return true;
}

static int process_total_mem(struct perfdata_env *e, struct pdcursor *c, int id)
{
	return pdcursor_u64(c, &e->total_mem_kb) ? 0 : -EINVAL;
}

/* ---- CMDLINE -------------------------------------------------------------------- */

static bool write_cmdline(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	pdbuf_u32(b, e->argc);
	for (uint32_t i = 0; i < e->argc; i++)
		pdbuf_string(b, e->argv[i]);
	return true;
}

/*
 * Linear in the section, and two allocations whatever nr is: the argument
 * pointers with the strings behind them (argv_block), and the joined line.
 * Every argument takes at least its 4-byte length, so nr is bounded by the
 * section size (a per-argument malloc cost 140 MB for a 12.8 MB section).
 */
static int process_cmdline(struct perfdata_env *e, struct pdcursor *c, int id)
{
	struct pdcursor scan;
	uint32_t nr, len;
	size_t strings = 0, pos = 0;
	char **argv, *arena;

	if (!pdcursor_u32(c, &nr) || nr > (c->len - c->off) / 4)
		return -EINVAL;
	scan = *c;
	for (uint32_t i = 0; i < nr; i++) {
		if (!pdcursor_u32(&scan, &len) || len > scan.len - scan.off)
			return -EINVAL;
		strings += strnlen((const char *)scan.p + scan.off, len) + 1;
		scan.off += len;
	}
	argv = malloc((size_t)nr * sizeof(char *) + strings + 1);
	if (!argv)
		return -ENOMEM;
	perfdata_env__set_cmdline(e, 0, NULL);
	e->cmdline = malloc(strings + 1);
	if (!e->cmdline) {
		free(argv);
		return -ENOMEM;
	}
	arena = (char *)(argv + nr);
	for (uint32_t i = 0; i < nr; i++) {
		size_t n;

		pdcursor_u32(c, &len);
		n = strnlen((const char *)c->p + c->off, len);
		argv[i] = arena;
		memcpy(arena, c->p + c->off, n);
		arena[n] = '\0';
		arena += n + 1;
		c->off += len;
		if (i)
			e->cmdline[pos++] = ' ';
		memcpy(e->cmdline + pos, argv[i], n);
		pos += n;
	}
	e->cmdline[pos] = '\0';
	e->argc = nr;
	e->argv = argv;
	e->argv_block = true;
	return 0;
}

/* ---- EVENT_DESC ---------------------------------------------------------------- */

static bool write_event_desc(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	size_t n = evlist__nr(e->evlist);

	pdbuf_u32(b, (uint32_t)n);
	pdbuf_u32(b, PERFDATA_ATTR_SIZE);
	for (size_t i = 0; i < n; i++) {
		const struct perfread_event *ev = evlist__event(e->evlist, i);
		struct perf_event_attr a = ev->attr;

		a.size = PERFDATA_ATTR_SIZE;
		pdbuf_put(b, &a, PERFDATA_ATTR_SIZE);
		pdbuf_u32(b, ev->nr_ids);
		pdbuf_string(b, ev->name);
		pdbuf_put(b, ev->ids, (size_t)ev->nr_ids * 8);
	}
	return true;
}

/* Names the events already known (from the attrs), by their first id. */
static int process_event_desc(struct perfdata_env *e, struct pdcursor *c, int id)
{
	uint32_t nre, sz;

	if (!e->evlist || !pdcursor_u32(c, &nre) || !pdcursor_u32(c, &sz) ||
	    sz < PERF_ATTR_SIZE_VER0 || nre > EVLIST_MAX_EVENTS)
		return -EINVAL;
	for (uint32_t i = 0; i < nre; i++) {
		struct perfread_event *ev = NULL;
		uint32_t nr;
		uint64_t first;
		char *name;
		int err = 0;

		if (!pdcursor_skip(c, sz) || !pdcursor_u32(c, &nr))
			return -EINVAL;
		name = pdcursor_string(c);
		if (!name)
			return -EINVAL;
		if (nr > (c->len - c->off) / 8) {
			free(name);
			return -EINVAL;
		}
		if (nr) {
			memcpy(&first, c->p + c->off, 8);
			ev = evlist__find(e->evlist, first);
		} else {
			ev = evlist__event(e->evlist, i);
		}
		c->off += (size_t)nr * 8;
		if (ev)
			err = evlist__set_name(ev, name);
		free(name);
		if (err)
			return err;
	}
	return 0;
}

/* ---- SAMPLE_TIME, CLOCKID, COMPRESSED, CLOCK_DATA ------------------------------ */

static bool write_sample_time(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	/* only known at the end: file mode only */
	if (e->pipe || !e->have_time)
		return false;
	pdbuf_u64(b, e->first_time);
	pdbuf_u64(b, e->last_time);
	return true;
}

static int process_sample_time(struct perfdata_env *e, struct pdcursor *c, int id)
{
	e->have_time = pdcursor_u64(c, &e->first_time) && pdcursor_u64(c, &e->last_time);
	return e->have_time ? 0 : -EINVAL;
}

static bool write_clockid(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	pdbuf_u64(b, e->clock_res_ns);
	return true;
}

static int process_clockid(struct perfdata_env *e, struct pdcursor *c, int id)
{
	return pdcursor_u64(c, &e->clock_res_ns) ? 0 : -EINVAL;
}

static bool write_compressed(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	if (!e->have_comp)
		return false;
	pdbuf_u32(b, 0);                 /* version */
	pdbuf_u32(b, 1);                 /* zstd */
	pdbuf_u32(b, e->comp_level);
	pdbuf_u32(b, e->comp_ratio ? e->comp_ratio : 1);
	pdbuf_u32(b, e->comp_mmap_len);
	return true;
}

static int process_compressed(struct perfdata_env *e, struct pdcursor *c, int id)
{
	uint32_t ver, type;

	if (!pdcursor_u32(c, &ver) || !pdcursor_u32(c, &type) || !pdcursor_u32(c, &e->comp_level) ||
	    !pdcursor_u32(c, &e->comp_ratio) || !pdcursor_u32(c, &e->comp_mmap_len))
		return -EINVAL;
	e->have_comp = type == 1;
	return 0;
}

static bool write_clock_data(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	if (!e->have_clock_data)
		return false;
	pdbuf_u32(b, 1);                 /* version */
	pdbuf_u32(b, e->clockid);
	pdbuf_u64(b, e->tod_ns);
	pdbuf_u64(b, e->clockid_ns);
	return true;
}

static int process_clock_data(struct perfdata_env *e, struct pdcursor *c, int id)
{
	uint32_t ver;

	e->have_clock_data = pdcursor_u32(c, &ver) && pdcursor_u32(c, &e->clockid) &&
			     pdcursor_u64(c, &e->tod_ns) && pdcursor_u64(c, &e->clockid_ns);
	return e->have_clock_data ? 0 : -EINVAL;
}

/* the tracing data (tracedata.h), as it is: file mode only */
static bool write_tracing(struct pdbuf *b, const struct perfdata_env *e, int id)
{
	if (!e->tracing || e->pipe)
		return false;
	pdbuf_put(b, e->tracing, e->tracing_len);
	return true;
}

static int process_tracing(struct perfdata_env *e, struct pdcursor *c, int id)
{
	size_t n = c->len - c->off;
	uint8_t *p;

	if (n > TRACEDATA_MAX)
		return -EINVAL;
	p = malloc(n ? n : 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, c->p + c->off, n);
	free(e->tracing);
	e->tracing = p;
	e->tracing_len = n;
	c->off = c->len;
	return 0;
}

/* ---- the table ----------------------------------------------------------------- */

#define FEAT(ID, name, w, p) { PERFDATA_FEAT_##ID, name, w, p }
const struct perfdata_feature perfdata_features[] = {
	FEAT(TRACING_DATA, "tracing_data", write_tracing, process_tracing),
	FEAT(HOSTNAME, "hostname", write_string, process_string),
	FEAT(OSRELEASE, "osrelease", write_string, process_string),
	FEAT(VERSION, "version", write_string, process_string),
	FEAT(ARCH, "arch", write_string, process_string),
	FEAT(NRCPUS, "nrcpus", write_nrcpus, process_nrcpus),
	FEAT(CPUDESC, "cpudesc", write_string, process_string),
	FEAT(CPUID, "cpuid", write_string, process_string),
	FEAT(TOTAL_MEM, "total_mem", write_total_mem, process_total_mem),
	FEAT(CMDLINE, "cmdline", write_cmdline, process_cmdline),
	FEAT(EVENT_DESC, "event_desc", write_event_desc, process_event_desc),
	FEAT(SAMPLE_TIME, "sample_time", write_sample_time, process_sample_time),
	FEAT(CLOCKID, "clockid", write_clockid, process_clockid),
	FEAT(COMPRESSED, "compressed", write_compressed, process_compressed),
	FEAT(CLOCK_DATA, "clock_data", write_clock_data, process_clock_data),
};
#undef FEAT
const unsigned perfdata_nr_features = sizeof(perfdata_features) / sizeof(perfdata_features[0]);

const struct perfdata_feature *perfdata_feature(uint64_t id)
{
	for (unsigned i = 0; i < perfdata_nr_features; i++)
		if ((uint64_t)perfdata_features[i].id == id)
			return &perfdata_features[i];
	return NULL;
}

/* ---- the environment ------------------------------------------------------------ */

int perfdata_env__set_cmdline(struct perfdata_env *e, int argc, char *const *argv)
{
	for (uint32_t i = 0; i < e->argc && !e->argv_block; i++)
		free(e->argv[i]);
	e->argv_block = false;
	free(e->argv);
	free(e->cmdline);
	e->argv = NULL;
	e->cmdline = NULL;
	e->argc = 0;
	if (argc <= 0)
		return 0;
	e->argv = calloc((size_t)argc, sizeof(char *));
	if (!e->argv)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		e->argv[i] = strdup(argv[i] ? argv[i] : "");
		if (!e->argv[i])
			return -ENOMEM;
		e->argc = (uint32_t)i + 1;
	}
	return 0;
}

void perfdata_env__clear(struct perfdata_env *e)
{
	for (size_t i = 0; i < sizeof(e->str) / sizeof(e->str[0]); i++)
		free(e->str[i]);
	perfdata_env__set_cmdline(e, 0, NULL);
	memset(e->str, 0, sizeof(e->str));
	free(e->tracing);
	e->tracing = NULL;
	e->tracing_len = 0;
}

static int read_small_file(const char *path, char *dst, size_t sz)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, dst, sz - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	dst[n] = 0;
	return 0;
}

/*
 * From /proc/cpuinfo: "model name" with runs of spaces squashed (CPUDESC),
 * and x86 perf's CPUID "vendor,family,model,stepping".
 */
static void cpu_strings(char *desc, size_t dsz, char *id, size_t isz)
{
	char line[512], vendor[64] = "unknown";
	unsigned family = 0, model = 0, stepping = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(desc, dsz, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':'), *q = desc;

		if (line[0] == '\n')
			break;
		if (!p)
			continue;
		if (!strncmp(line, "vendor_id", 9))
			sscanf(p + 1, " %63s", vendor);
		else if (!strncmp(line, "cpu family", 10))
			sscanf(p + 1, " %u", &family);
		else if (!strncmp(line, "model\t", 6))
			sscanf(p + 1, " %u", &model);
		else if (!strncmp(line, "stepping", 8))
			sscanf(p + 1, " %u", &stepping);
		if (strncmp(line, "model name", 10))
			continue;
		for (p++; *p == ' ' || *p == '\t'; p++)
			;
		for (; *p && *p != '\n' && q < desc + dsz - 1; p++) {
			if ((*p == ' ' || *p == '\t') && q > desc && q[-1] == ' ')
				continue;
			*q++ = (*p == '\t') ? ' ' : *p;
		}
		*q = 0;
	}
	if (f)
		fclose(f);
	snprintf(id, isz, "%s,%u,%u,%u", vendor, family, model, stepping);
}

static uint64_t total_mem_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* cpu__max_present_cpu(): last cpu of /sys/.../present + 1 */
static uint32_t nr_cpus_present(void)
{
	char s[256];
	char *p;
	long last;

	if (read_small_file("/sys/devices/system/cpu/present", s, sizeof(s)) == 0) {
		p = s + strlen(s);
		while (p > s && (p[-1] < '0' || p[-1] > '9'))
			p--;
		while (p > s && p[-1] >= '0' && p[-1] <= '9')
			p--;
		return (uint32_t)strtol(p, NULL, 10) + 1;
	}
	last = sysconf(_SC_NPROCESSORS_CONF);
	return last > 0 ? (uint32_t)last : 1;
}

int perfdata_env__host(struct perfdata_env *e)
{
	char desc[512], id[160];
	struct utsname u;
	struct timespec res;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	cpu_strings(desc, sizeof(desc), id, sizeof(id));
	e->str[PERFDATA_FEAT_HOSTNAME] = strdup(u.nodename);
	e->str[PERFDATA_FEAT_OSRELEASE] = strdup(u.release);
	e->str[PERFDATA_FEAT_VERSION] = strdup("perfmark " PERFMARK_VERSION);
	e->str[PERFDATA_FEAT_ARCH] = strdup(u.machine);
	e->str[PERFDATA_FEAT_CPUDESC] = strdup(desc);
	e->str[PERFDATA_FEAT_CPUID] = strdup(id);
	for (int i = PERFDATA_FEAT_HOSTNAME; i <= PERFDATA_FEAT_CPUID; i++)
		if (i != PERFDATA_FEAT_NRCPUS && !e->str[i])
			return -ENOMEM;
	e->nr_cpus_avail = nr_cpus_present();
	e->nr_cpus_online = online > 0 ? (uint32_t)online : 1;
	e->total_mem_kb = total_mem_kb();
	if (clock_getres(CLOCK_MONOTONIC, &res) < 0 || res.tv_sec)
		res.tv_nsec = 1;
	e->clock_res_ns = (uint64_t)res.tv_nsec;
	return 0;
}

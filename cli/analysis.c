// SPDX-License-Identifier: LGPL-2.1-or-later
/* Shared by report, flamegraph and export: see analysis.h. */
#include "analysis.h"
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *pm_input_name(const char *input)
{
	return strcmp(input, "-") ? input : "<stdin>";
}

int pm_load(const char *input, const struct profile_opts *opts, struct profile **out)
{
	char why[256];
	int fd, r;

	if (!strcmp(input, "-")) {
		fd = STDIN_FILENO;
	} else {
		fd = open(input, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return pm_err("%s: %s", input, strerror(errno));
	}
	r = profile__load(out, fd, opts, why, sizeof(why));
	if (fd > STDIN_FILENO)
		close(fd);
	if (r < 0)
		return pm_err("%s: %s", pm_input_name(input), why[0] ? why : strerror(-r));
	return 0;
}

int pm_range_id(const struct profile *p, const char *input, const char *name, uint32_t *id)
{
	size_t n;
	const struct profile_range *rv = profile__ranges(p, &n);

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(profile__str(p, rv[i].name), name)) {
			*id = rv[i].name;
			return 0;
		}
	}
	if (!n)
		return pm_err("%s: no marker ranges in this recording", pm_input_name(input));
	return pm_err("%s: no range named '%s'", pm_input_name(input), name);
}

FILE *pm_output(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "we");
	if (!f)
		pm_err("%s: %s", path, strerror(errno));
	return f;
}

int pm_output_close(FILE *f, const char *path)
{
	int bad = fflush(f) != 0 || ferror(f);
	int err = errno;

	if (f != stdout && fclose(f) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	if (bad)
		return pm_err("%s: write error: %s", path && strcmp(path, "-") ? path : "<stdout>",
			      strerror(err));
	return 0;
}

const char *pm_fmt_ns(uint64_t ns, char *buf, size_t size)
{
	if (ns < 1000)
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.2f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", ns / 1e9);
	return buf;
}

void pm_json_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

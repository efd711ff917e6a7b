/* pm-plugin: a shared object with its own copy of libperfmark compiled in
 * (a "vendored" copy, as a library that embeds perfmark's sources would
 * carry one), linked -Bsymbolic so its calls stay in its own copy.  Loaded
 * by prog-twocopies with dlopen().
 */
#include <stdint.h>
#include <time.h>

#include "perfmark.h"

#define TYPE_PLUGIN (PERFMARK_TYPE_APP_FIRST + 401)

/*
 * Until a recorder has found this copy (at most 60 s): it learns of it
 * from the mapping, at its next drain (every 100 ms; later on a loaded
 * machine).  Then 300 ms more, for every recorder on the machine to have
 * found it, not only the first one.
 */
__attribute__((visibility("default"))) int pm_plugin_wait(void)
{
	struct timespec d = { 0, 2 * 1000 * 1000 }, more = { 0, 300 * 1000 * 1000 };

	for (int i = 0; i < 30000 && !perfmark_enabled(); i++)
		nanosleep(&d, NULL);
	nanosleep(&more, NULL);
	return perfmark_enabled();
}

__attribute__((visibility("default"))) void pm_plugin_emit(long n)
{
	for (long i = 0; i < n; i++) {
		uint32_t v[2] = { 0x9106e1aau, (uint32_t)i };

		perfmark_emit(TYPE_PLUGIN, v, sizeof(v));
	}
}

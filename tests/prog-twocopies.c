/* prog-twocopies: two copies of libperfmark in one process.
 *
 *   prog-twocopies PLUGIN N
 *
 * This executable carries one copy (linked with libperfmark.a) and emits N
 * markers of type TYPE_MAIN; then it dlopen()s PLUGIN (tests/pm-plugin.c,
 * a vendored copy), waits until a recorder has found that copy too, and
 * has it emit N markers of its own type.  Payload {u32 magic, u32 seq}.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfmark.h"

#define TYPE_MAIN (PERFMARK_TYPE_APP_FIRST + 400)

int main(int argc, char **argv)
{
	int (*wait_fn)(void);
	void (*emit_fn)(long);
	long n;
	void *h;

	if (argc != 3) {
		fprintf(stderr, "usage: prog-twocopies PLUGIN N\n");
		return 2;
	}
	n = atol(argv[2]);
	printf("main enabled %d\n", (int)perfmark_enabled());
	for (long i = 0; i < n; i++) {
		uint32_t v[2] = { 0x3a13a13au, (uint32_t)i };

		perfmark_emit(TYPE_MAIN, v, sizeof(v));
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "prog-twocopies: %s\n", dlerror());
		return 1;
	}
	wait_fn = (int (*)(void))dlsym(h, "pm_plugin_wait");
	emit_fn = (void (*)(long))dlsym(h, "pm_plugin_emit");
	if (!wait_fn || !emit_fn)
		return 1;
	printf("plugin enabled %d\n", wait_fn());
	emit_fn(n);
	printf("done\n");
	return 0;
}

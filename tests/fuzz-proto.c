// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target for perfmarkd's request path: framing, request
 * validation and session definitions, as the daemon runs them on bytes
 * from a client.  Built by tests/t-daemon-fuzz.sh with clang -fsanitize=fuzzer.
 */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	size_t off = 0;

	while (off < size) {
		struct json_object *msg = NULL, *enc;
		struct proto_request rq;
		struct sessdef d;
		size_t used = 0;
		int r = proto_parse_frame(data + off, size - off, &used, &msg, err, sizeof(err));

		if (r <= 0 && !used)
			break;
		if (r == 1 && !proto_request_parse(msg, &rq, err, sizeof(err)) && rq.def) {
			if (!sessdef_from_json(rq.def, &d, false, err, sizeof(err))) {
				enc = sessdef_to_json(&d, true);
				json_object_put(enc);
			}
			sessdef_from_json(rq.def, &d, true, err, sizeof(err));
		}
		json_object_put(msg);
		off += used;
	}
	return 0;
}
